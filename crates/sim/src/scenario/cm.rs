//! Reading the Congestion Manager's settings (CM paper sections 2 and 3): the `[cm]` section
//! that every host's CM follows, a flow's `cm` table (its weight and receiver hint), and the
//! keys of the `audio` and `cmudp` flow kinds.

use super::error::{ErrorKind, ScenarioError};
use super::model::{CmFlowSpec, CmSpec, CmUdpFeedback};
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::cm::AgingPolicy;
use concord_cc::units::Rate;

/// The keys of `[cm]`.
const CM_KEYS: [&str; 4] = ["aging", "probes_per_rtt", "probe_loss", "segregation"];
/// The keys of a flow's `cm` table.
const FLOW_KEYS: [&str; 4] = ["weight", "hint", "representations", "latency"];
/// The most representations one object may list.
const MAX_REPRESENTATIONS: usize = 64;
/// The layered audio server's encodings (CM paper section 4.2), in kbit/s.
pub(crate) const AUDIO_ENCODINGS_KBPS: [u64; 6] = [10, 20, 40, 80, 160, 320];
/// The most encodings an audio flow may list.
const MAX_ENCODINGS: usize = 64;

/// The `[cm]` section (defaults if absent).
pub(crate) fn read_cm(field: Option<&Field<'_>>) -> Result<CmSpec, ScenarioError> {
    let mut spec = CmSpec::default();
    let Some(field) = field else {
        return Ok(spec);
    };
    let table = Table::of(field, "[cm]")?.allow(&CM_KEYS)?;
    if let Some(f) = table.get("aging") {
        spec.aging = match f.str()? {
            "min_rtt" => AgingPolicy::MinRtt,
            "mean_rtt" => AgingPolicy::MeanRtt,
            "off" => AgingPolicy::Disabled,
            other => {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown aging `{other}`"),
                    suggest::did_you_mean(
                        other,
                        ["min_rtt", "mean_rtt", "off"],
                        "write \"min_rtt\" (halve every minimum RTT), \"mean_rtt\" (every \
                         smoothed RTT) or \"off\"",
                    ),
                ))
            }
        };
    }
    if let Some(f) = table.get("probes_per_rtt") {
        let p = f.number()?;
        if !(1e-3..=1000.0).contains(&p) {
            let what = if p < 1e-3 { "too small" } else { "too large" };
            return Err(f.error(
                ErrorKind::BadValue,
                format!("{} = {p} is {what}", f.label()),
                "give from 0.001 to 1000 probes per RTT, e.g. `probes_per_rtt = 2` or 0.5 (one \
                 probe every two RTTs)",
            ));
        }
        spec.probes_per_rtt = p;
    }
    if let Some(f) = table.get("probe_loss") {
        spec.probe_loss = f.fraction()?;
        if spec.probe_loss >= 1.0 {
            return Err(f.error(
                ErrorKind::BadValue,
                "probe_loss = 1 loses every probe and response".to_string(),
                "give a fraction below 1, e.g. `probe_loss = 0.3`",
            ));
        }
    }
    if let Some(f) = table.get("segregation") {
        spec.segregation = f.boolean()?;
    }
    Ok(spec)
}

/// A flow's `cm = { weight = 2, hint = 1 }` (an empty table keeps the defaults), with
/// `representations = ["16KB", "64KB"]` and `latency = "2s"` for a Web server's object.
pub(crate) fn read_cm_flow(field: &Field<'_>) -> Result<CmFlowSpec, ScenarioError> {
    let table = Table::of(field, "`cm`")?.allow(&FLOW_KEYS)?;
    let mut spec = CmFlowSpec::default();
    for (key, slot) in [("weight", &mut spec.weight), ("hint", &mut spec.hint)] {
        if let Some(f) = table.get(key) {
            let v = f.number()?;
            // The scheduler's range (concord_cc::cm::scheduler::WEIGHT_RANGE).
            if !(0.001..=1e6).contains(&v) {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("{key} = {v} is outside 0.001 to 1000000"),
                    format!("give a positive factor, e.g. `{key} = 2`"),
                ));
            }
            *slot = v;
        }
    }
    if let Some(f) = table.get("representations") {
        let entries = f.entries()?;
        if entries.is_empty() || entries.len() > MAX_REPRESENTATIONS {
            return Err(f.error(
                ErrorKind::BadValue,
                format!("{} representations given", entries.len()),
                format!(
                    "list 1 to {MAX_REPRESENTATIONS} sizes, e.g. [\"16KB\", \"64KB\", \"256KB\"]"
                ),
            ));
        }
        for e in &entries {
            let b = e.size_in(1, u64::MAX)?;
            if spec.representations.last().is_some_and(|last| *last >= b) {
                return Err(e.error(
                    ErrorKind::BadValue,
                    format!("representation of {b} bytes is not larger than the one before it"),
                    "list the representations' sizes in ascending order, each once",
                ));
            }
            spec.representations.push(b);
        }
    }
    match (table.get("latency"), spec.representations.is_empty()) {
        (Some(f), false) => spec.latency = f.positive_duration()?,
        (Some(f), true) => {
            return Err(f.error(
                ErrorKind::Inconsistent,
                "`latency` without `representations`".to_string(),
                "latency is the time a representation must be delivered in: give \
                 `representations` too, or remove `latency`",
            ))
        }
        (None, _) => {}
    }
    Ok(spec)
}

/// An audio flow's `encodings` (default the paper's six), ascending and non-zero.
pub(crate) fn read_encodings(table: &Table<'_>) -> Result<Vec<Rate>, ScenarioError> {
    let Some(f) = table.get("encodings") else {
        return Ok(AUDIO_ENCODINGS_KBPS.map(Rate::from_kbps).to_vec());
    };
    let entries = f.entries()?;
    if entries.is_empty() || entries.len() > MAX_ENCODINGS {
        return Err(f.error(
            ErrorKind::BadValue,
            format!("{} encodings given", entries.len()),
            format!("list 1 to {MAX_ENCODINGS} rates, e.g. [\"10kbps\", \"20kbps\", \"40kbps\"]"),
        ));
    }
    let mut rates: Vec<Rate> = Vec::with_capacity(entries.len());
    for e in &entries {
        let r = e.rate()?;
        if r == Rate::ZERO {
            return Err(e.error(
                ErrorKind::BadValue,
                "an encoding of 0 bit/s".to_string(),
                "give each encoding's rate, e.g. \"10kbps\"",
            ));
        }
        if rates.last().is_some_and(|last| *last >= r) {
            return Err(e.error(
                ErrorKind::BadValue,
                format!("encoding {r} is not above the one before it"),
                "list the encodings in ascending order, each once",
            ));
        }
        rates.push(r);
    }
    Ok(rates)
}

/// A `cmudp` flow's `feedback`: `"probes"` (default) or `"ack"`.
pub(crate) fn read_cmudp_feedback(table: &Table<'_>) -> Result<CmUdpFeedback, ScenarioError> {
    let Some(f) = table.get("feedback") else {
        return Ok(CmUdpFeedback::default());
    };
    match f.str()? {
        "probes" => Ok(CmUdpFeedback::Probes),
        "ack" => Ok(CmUdpFeedback::Ack),
        other => Err(f.error(
            ErrorKind::BadValue,
            format!("unknown feedback `{other}`"),
            suggest::did_you_mean(
                other,
                ["probes", "ack"],
                "write \"probes\" (the CM's probe protocol) or \"ack\" (the receiver \
                 acknowledges every packet, each ACK a cm_update)",
            ),
        )),
    }
}
