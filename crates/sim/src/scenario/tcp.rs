//! Reading TCP settings (`[defaults.tcp]`, a flow's `tcp = { ... }`) as overrides of a
//! [`TcpConfig`].

use super::error::{ErrorKind, ScenarioError};
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::tcp::abe::MAX_INSTABILITY_WINDOW;
use concord_cc::tcp::config::{CcAlgorithm, Recovery, TcpConfig};
use concord_cc::tcp::handshake::HandshakeConfig;
use concord_cc::tcp::mccp::MccpConfig;
use concord_cc::tcp::ns3_departures::{Departure, Ns3Departures};
use concord_cc::tcp::pacing::PacingConfig;
use concord_cc::tcp::prr::ReductionBound;
use concord_cc::time::Duration;
use concord_cc::units::Bytes;
use toml::de::DeValue;

/// The keys of a TCP settings table, one per [`TcpConfig`] field.
const KEYS: [&str; 23] = [
    "cc",
    "mccp",
    "mss",
    "header_bytes",
    "initial_cwnd",
    "initial_ssthresh",
    "rwnd",
    "dupack_threshold",
    "limited_transmit",
    "recovery",
    "sack",
    "delayed_ack",
    "ack_every",
    "delayed_ack_timeout",
    "quickack",
    "ecn",
    "min_rto",
    "max_rto",
    "initial_rto",
    "clock_granularity",
    "handshake",
    "pacing",
    "ns3_departures",
];

/// The keys of a `handshake = { ... }` table, one per [`HandshakeConfig`] field.
const HANDSHAKE_KEYS: [&str; 4] = ["syn_rto", "syn_retries", "synack_retries", "ect_syn"];

/// The keys of a `pacing = { ... }` table, one per [`PacingConfig`] field.
const PACING_KEYS: [&str; 3] = ["ss_ratio", "ca_ratio", "gso"];

/// The largest pacing ratio, percent (Linux's bound on `net.ipv4.tcp_pacing_*_ratio`).
const MAX_PACING_RATIO: i64 = 1000;

/// The window controllers a scenario may name.
const ALGORITHMS: [&str; 4] = ["newreno", "westwood+", "mccp", "cubic"];

/// The fast-recovery algorithms a scenario may name.
const RECOVERIES: [&str; 3] = ["classic", "prr", "prr-crb"];

/// The largest IP packet, in bytes.
const MAX_PACKET: Bytes = 65_535;

/// `ns3_departures = ["recover", "loss-exit", "ecn-once"]`: which of ns-3 3.44's departures
/// from the RFCs the sender reproduces (`concord_cc::tcp::ns3_departures`); `[]` for none.
fn read_ns3_departures(f: &Field<'_>) -> Result<Ns3Departures, ScenarioError> {
    let names = Departure::ALL.map(Departure::name);
    let mut d = Ns3Departures::default();
    for e in f.entries()? {
        let name = e.str()?;
        match Departure::from_name(name) {
            Some(one) => d = d.with(one),
            None => {
                return Err(e.error(
                    ErrorKind::BadValue,
                    format!("unknown ns-3 departure `{name}`"),
                    suggest::did_you_mean(
                        name,
                        names,
                        &format!("the departures are: {}", names.join(", ")),
                    ),
                ))
            }
        }
    }
    Ok(d)
}

/// `base` with the settings written in `table` applied.
pub(crate) fn read_tcp(table: &Table<'_>, base: &TcpConfig) -> Result<TcpConfig, ScenarioError> {
    let table = table.clone().allow(&KEYS)?;
    let mut c = base.clone();
    if let Some(f) = table.get("cc") {
        let name = f.str()?;
        c.cc = match name.to_ascii_lowercase().as_str() {
            "newreno" | "new_reno" => CcAlgorithm::NewReno,
            "westwood+" | "westwood" | "westwoodplus" => CcAlgorithm::WestwoodPlus,
            "cubic" => CcAlgorithm::Cubic,
            // A flow that names MCCP again keeps the parameters `[defaults.tcp]` gave it.
            "mccp" => match base.cc {
                CcAlgorithm::Mccp(m) => CcAlgorithm::Mccp(m),
                _ => CcAlgorithm::Mccp(MccpConfig::default()),
            },
            _ => {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown congestion control `{name}`"),
                    suggest::did_you_mean(
                        name,
                        ALGORITHMS,
                        &format!("the algorithms are: {}", ALGORITHMS.join(", ")),
                    ),
                ))
            }
        };
    }
    if let Some(f) = table.get("mccp") {
        let CcAlgorithm::Mccp(m) = &mut c.cc else {
            return Err(f.error(
                ErrorKind::Inconsistent,
                format!(
                    "`mccp` parameters given, but the congestion control is `{}`",
                    c.cc.name()
                ),
                "add `cc = \"mccp\"` beside them, or remove `mccp`",
            ));
        };
        read_mccp(&Table::of(&f, "`mccp`")?, m)?;
    }
    if let Some(f) = table.get("mss") {
        c.mss = f.size_in(1, MAX_PACKET)?;
    }
    if let Some(f) = table.get("header_bytes") {
        c.header_bytes = f.size_in(40, 120)?;
    }
    if let Some(f) = table.get("initial_cwnd") {
        c.initial_cwnd = segments(&f)?;
    }
    if let Some(f) = table.get("initial_ssthresh") {
        c.initial_ssthresh = unbounded_or_size(&f)?;
    }
    if let Some(f) = table.get("rwnd") {
        c.rwnd = unbounded_or_size(&f)?;
    }
    if let Some(f) = table.get("dupack_threshold") {
        c.dupack_threshold = segments(&f)?;
    }
    if let Some(f) = table.get("limited_transmit") {
        c.limited_transmit = f.boolean()?;
    }
    if let Some(f) = table.get("recovery") {
        let name = f.str()?;
        c.recovery = match name.to_ascii_lowercase().as_str() {
            "classic" => Recovery::Classic,
            "prr" | "prr-ssrb" => Recovery::Prr(ReductionBound::SlowStart),
            "prr-crb" => Recovery::Prr(ReductionBound::Conservative),
            _ => {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown recovery `{name}`"),
                    suggest::did_you_mean(
                        name,
                        RECOVERIES,
                        &format!("the recoveries are: {}", RECOVERIES.join(", ")),
                    ),
                ))
            }
        };
    }
    if let Some(f) = table.get("sack") {
        c.sack = f.boolean()?;
    }
    if let Some(f) = table.get("delayed_ack") {
        c.delayed_ack = f.boolean()?;
    }
    if let Some(f) = table.get("ack_every") {
        c.ack_every = segments(&f)?;
    }
    if let Some(f) = table.get("delayed_ack_timeout") {
        c.delayed_ack_timeout = f.positive_duration()?;
        if c.delayed_ack_timeout > Duration::from_millis(500) {
            return Err(f.error(
                ErrorKind::BadValue,
                format!(
                    "delayed_ack_timeout = {} is above 500ms",
                    c.delayed_ack_timeout
                ),
                "RFC 5681 section 4.2 caps the delayed-ACK timer at 500ms; 200ms is usual",
            ));
        }
    }
    if let Some(f) = table.get("quickack") {
        c.quickack = quickack(&f)?;
    }
    if let Some(f) = table.get("ecn") {
        c.ecn = f.boolean()?;
    }
    if let Some(f) = table.get("min_rto") {
        c.min_rto = f.duration()?;
    }
    if let Some(f) = table.get("max_rto") {
        c.max_rto = f.positive_duration()?;
    }
    if let Some(f) = table.get("initial_rto") {
        c.initial_rto = f.positive_duration()?;
    }
    if let Some(f) = table.get("clock_granularity") {
        c.clock_granularity = f.duration()?;
    }
    if let Some(f) = table.get("handshake") {
        c.handshake = read_handshake(&f, base.handshake)?;
    }
    if let Some(f) = table.get("pacing") {
        c.pacing = read_pacing(&f, base.pacing)?;
    }
    if let Some(f) = table.get("ns3_departures") {
        c.ns3_departures = read_ns3_departures(&f)?;
    }
    if c.mss.saturating_add(c.header_bytes) > MAX_PACKET {
        let at = table.get("mss").or_else(|| table.get("header_bytes"));
        let message = format!(
            "mss + header_bytes = {} bytes is more than an IP packet holds",
            c.mss + c.header_bytes
        );
        let fix = format!("keep mss + header_bytes at or below {MAX_PACKET}; 1448 + 52 is usual");
        return Err(match at {
            Some(f) => f.error(ErrorKind::Inconsistent, message, fix),
            None => table.error(ErrorKind::Inconsistent, message, fix),
        });
    }
    if c.rwnd < c.mss {
        let at = table.get("rwnd").or_else(|| table.get("mss"));
        let message = format!(
            "rwnd ({} B) is smaller than one segment (mss {} B): nothing could be sent",
            c.rwnd, c.mss
        );
        let fix = "give rwnd at least one mss, or \"unbounded\"";
        return Err(match at {
            Some(f) => f.error(ErrorKind::Inconsistent, message, fix),
            None => table.error(ErrorKind::Inconsistent, message, fix),
        });
    }
    if c.min_rto > c.max_rto {
        let at = table.get("min_rto").or_else(|| table.get("max_rto"));
        let message = format!("min_rto ({}) is above max_rto ({})", c.min_rto, c.max_rto);
        let fix = "make min_rto at most max_rto (RFC 6298: max_rto at least 60s)";
        return Err(match at {
            Some(f) => f.error(ErrorKind::Inconsistent, message, fix),
            None => table.error(ErrorKind::Inconsistent, message, fix),
        });
    }
    Ok(c)
}

/// A count of segments or ACKs, at least one.
/// `handshake`: `true` (the default settings, or those `[defaults.tcp]` gave), `false`, or a
/// table of settings, which turns the handshake on.
fn read_handshake(
    f: &Field<'_>,
    base: Option<HandshakeConfig>,
) -> Result<Option<HandshakeConfig>, ScenarioError> {
    if let DeValue::Boolean(on) = f.value.get_ref() {
        return Ok(on.then(|| base.unwrap_or_default()));
    }
    if !matches!(f.value.get_ref(), DeValue::Table(_)) {
        return Err(f.wrong_type("a boolean or a table", "true, or { syn_rto = \"3s\" }"));
    }
    let table = Table::of(f, "`handshake`")?.allow(&HANDSHAKE_KEYS)?;
    let mut h = base.unwrap_or_default();
    if let Some(f) = table.get("syn_rto") {
        h.syn_rto = f.positive_duration()?;
    }
    if let Some(f) = table.get("syn_retries") {
        h.syn_retries = retries(&f)?;
    }
    if let Some(f) = table.get("synack_retries") {
        h.synack_retries = retries(&f)?;
    }
    if let Some(f) = table.get("ect_syn") {
        h.ect_syn = f.boolean()?;
    }
    Ok(Some(h))
}

/// `pacing`: `true` (Linux's ratios, or those `[defaults.tcp]` gave), `false`, or a table of
/// ratios, which turns pacing on.
fn read_pacing(
    f: &Field<'_>,
    base: Option<PacingConfig>,
) -> Result<Option<PacingConfig>, ScenarioError> {
    if let DeValue::Boolean(on) = f.value.get_ref() {
        return Ok(on.then(|| base.unwrap_or_default()));
    }
    if !matches!(f.value.get_ref(), DeValue::Table(_)) {
        return Err(f.wrong_type(
            "a boolean or a table",
            "true, or { ss_ratio = 200, ca_ratio = 120, gso = false }",
        ));
    }
    let table = Table::of(f, "`pacing`")?.allow(&PACING_KEYS)?;
    let mut p = base.unwrap_or_default();
    if let Some(f) = table.get("ss_ratio") {
        p.ss_ratio = ratio(&f)?;
    }
    if let Some(f) = table.get("ca_ratio") {
        p.ca_ratio = ratio(&f)?;
    }
    if let Some(f) = table.get("gso") {
        p.gso = f.boolean()?;
    }
    Ok(Some(p))
}

/// A pacing ratio, percent, 0 to 1000 as Linux's sysctls (0: no pacing gap).
fn ratio(f: &Field<'_>) -> Result<u32, ScenarioError> {
    let n = f.integer(0, MAX_PACING_RATIO)?;
    Ok(u32::try_from(n).unwrap_or(0))
}

/// `quickack`: how many of the first in-order data segments the receiver acknowledges at once,
/// an integer from 0 (the default) up.
fn quickack(f: &Field<'_>) -> Result<u32, ScenarioError> {
    let n = f.integer(0, i64::from(u32::MAX)).map_err(|mut e| {
        e.fix = format!(
            "{}; 0 is RFC 5681 alone (the default), 1 ns-3's first-segment ACK, 16 Linux's start",
            e.fix
        );
        e
    })?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// A retransmission count, 0 to 255 (Linux keeps them in a byte).
fn retries(f: &Field<'_>) -> Result<u32, ScenarioError> {
    let n = f.integer(0, 255)?;
    Ok(u32::try_from(n).unwrap_or(0))
}

fn segments(f: &Field<'_>) -> Result<u32, ScenarioError> {
    let n = f.integer(1, i64::from(u32::MAX))?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// `"unbounded"` (stored as `u64::MAX`) or a size of at least one byte.
fn unbounded_or_size(f: &Field<'_>) -> Result<Bytes, ScenarioError> {
    if let DeValue::String(s) = f.value.get_ref() {
        if s.trim().eq_ignore_ascii_case("unbounded") {
            return Ok(u64::MAX);
        }
        if s.trim()
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        {
            return Err(f.error(
                ErrorKind::BadValue,
                format!(
                    "{} = \"{s}\" is neither a size nor \"unbounded\"",
                    f.label()
                ),
                format!(
                    "write a size like {} or {}",
                    f.example("\"64KB\""),
                    f.example("\"unbounded\"")
                ),
            ));
        }
    }
    f.size_in(1, u64::MAX)
}

/// The keys of an `mccp = { ... }` table, one per [`MccpConfig`] field (the estimator's
/// [`concord_cc::tcp::abe::AbeConfig`] fields flattened into it).
const MCCP_KEYS: [&str; 8] = [
    "instability_gain",
    "tau_factor",
    "instability_window",
    "adaptive_sampling",
    "ncd_beta",
    "expected_rate_lag",
    "ncd_skip_rtts",
    "ncd",
];

/// Applies an `mccp` table's parameters to `m`, each checked against its range (the ranges of
/// [`MccpConfig::validate`], reported at the value).
fn read_mccp(table: &Table<'_>, m: &mut MccpConfig) -> Result<(), ScenarioError> {
    let table = table.clone().allow(&MCCP_KEYS)?;
    let out_of_range = |f: &Field<'_>, x: f64, range: &str, paper: &str| {
        f.error(
            ErrorKind::BadValue,
            format!("{} = {x} is out of range", f.label()),
            format!("give a number {range} ({paper})"),
        )
    };
    if let Some(f) = table.get("instability_gain") {
        let x = f.number()?;
        if !(0.0..1.0).contains(&x) {
            return Err(out_of_range(
                &f,
                x,
                "from 0 up to but not including 1",
                "beta of eq. 5; paper: 0.6",
            ));
        }
        m.abe.instability_gain = x;
    }
    if let Some(f) = table.get("tau_factor") {
        let x = f.number()?;
        if x < 0.0 {
            return Err(out_of_range(&f, x, "of 0 or more", "N of eq. 6; paper: 10"));
        }
        m.abe.tau_factor = x;
    }
    if let Some(f) = table.get("instability_window") {
        let n = f.integer(1, MAX_INSTABILITY_WINDOW as i64)?;
        m.abe.instability_window = usize::try_from(n).unwrap_or(1);
    }
    if let Some(f) = table.get("adaptive_sampling") {
        m.abe.adaptive_sampling = f.boolean()?;
    }
    if let Some(f) = table.get("ncd_beta") {
        let x = f.number()?;
        if !(x > 0.0 && x < 1.0) {
            return Err(out_of_range(
                &f,
                x,
                "strictly between 0 and 1",
                "the congestion boundary's beta; default 0.6",
            ));
        }
        m.ncd_beta = x;
    }
    if let Some(f) = table.get("expected_rate_lag") {
        let x = f.number()?;
        if x < 0.0 {
            return Err(out_of_range(&f, x, "of 0 or more segments", "paper: 1.5"));
        }
        m.expected_rate_lag = x;
    }
    if let Some(f) = table.get("ncd_skip_rtts") {
        let n = f.integer(0, i64::from(u32::MAX))?;
        m.ncd_skip_rtts = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(f) = table.get("ncd") {
        m.ncd = f.boolean()?;
    }
    Ok(())
}
