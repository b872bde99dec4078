//! Reading GCCA's settings: the `kind = "gcca"` queue of a router's output channel and a node's
//! `gcca` key (Liu, Cheung & Baras, sections 3.2 and 3.3).

use super::error::{ErrorKind, ScenarioError};
use super::model::{BucketSpec, GccaNodeSpec, GccaQueueSpec, RateShare, RestoreSpec};
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::units::{parse_fraction, Rate};
use toml::de::DeValue;

/// The keys of a GCCA queue beyond RED's (`kind`, `limit`, `min_th`, `max_th`, `w_q`, `max_p`,
/// `gentle`, `mean_pktsize`).
pub(crate) const GCCA_QUEUE_KEYS: [&str; 15] = [
    "kind",
    "limit",
    "min_th",
    "max_th",
    "w_q",
    "max_p",
    "gentle",
    "mean_pktsize",
    "congestion_interval",
    "decrease_step",
    "min_rate",
    "restore",
    "ramp_step",
    "ramp_interval",
    "burst",
];
/// The keys of a host's `gcca = { ... }` table.
const GCCA_HOST_KEYS: [&str; 7] = [
    "decrease_step",
    "min_rate",
    "restore",
    "ramp_step",
    "ramp_interval",
    "burst",
    "udp_queue",
];
/// The ways a bucket restores its rate.
const RESTORES: [&str; 2] = ["immediate", "ramp"];

/// The GCCA-only keys of a queue table whose RED keys the caller reads.
pub(crate) fn read_gcca_queue(table: &Table<'_>) -> Result<GccaQueueSpec, ScenarioError> {
    let mut spec = GccaQueueSpec::default();
    if let Some(f) = table.get("congestion_interval") {
        spec.congestion_interval = f.duration()?;
    }
    spec.bucket = read_bucket(table)?;
    Ok(spec)
}

/// A node's `gcca`: `true`, `false`, or (for a host) a table of UDP bucket settings. Returns
/// `None` for `false`.
pub(crate) fn read_gcca_node(
    field: &Field<'_>,
    owner: &str,
    is_host: bool,
) -> Result<Option<GccaNodeSpec>, ScenarioError> {
    if let DeValue::Table(_) = field.value.get_ref() {
        if !is_host {
            return Err(field.error(
                ErrorKind::BadValue,
                format!("{owner} is a router; a `gcca` table holds a host's UDP bucket settings"),
                "write `gcca = true` for a router; its settings go on its queues, \
                 `queue = { kind = \"gcca\", ... }`",
            ));
        }
        let table = Table::of(field, format!("`gcca` of {owner}"))?.allow(&GCCA_HOST_KEYS)?;
        let mut spec = GccaNodeSpec {
            udp_bucket: read_bucket(&table)?,
            ..GccaNodeSpec::default()
        };
        if let Some(f) = table.get("udp_queue") {
            spec.udp_queue = u32::try_from(f.integer(1, i64::from(u32::MAX))?).unwrap_or(1);
        }
        return Ok(Some(spec));
    }
    Ok(field.boolean()?.then(GccaNodeSpec::default))
}

/// The leaky bucket keys of `table`.
fn read_bucket(table: &Table<'_>) -> Result<BucketSpec, ScenarioError> {
    let mut b = BucketSpec::default();
    if let Some(f) = table.get("decrease_step") {
        b.decrease_step = rate_share(&f)?;
    }
    if let Some(f) = table.get("min_rate") {
        b.min_rate = rate_share(&f)?;
    }
    if let Some(f) = table.get("burst") {
        b.burst = f.size_in(1, u64::from(u32::MAX))?;
    }
    let restore =
        match table.get("restore") {
            Some(f) => match f.str()? {
                "immediate" => "immediate",
                "ramp" => "ramp",
                other => return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown restore `{other}`"),
                    suggest::did_you_mean(
                        other,
                        RESTORES,
                        "write \"immediate\" (back to the configured rate at once) or \"ramp\" \
                         (up by `ramp_step` every `ramp_interval`)",
                    ),
                )),
            },
            None => "immediate",
        };
    let step = table.get("ramp_step");
    let interval = table.get("ramp_interval");
    if restore == "immediate" {
        if let Some(f) = step.or(interval) {
            return Err(f.error(
                ErrorKind::BadValue,
                format!("{} applies to a ramp, but restore is immediate", f.label()),
                "add `restore = \"ramp\"` or remove the ramp settings",
            ));
        }
    } else {
        b.restore = RestoreSpec::Ramp {
            step: match step {
                Some(f) => rate_share(&f)?,
                None => RateShare::Share(0.05),
            },
            interval: match interval {
                Some(f) => f.positive_duration()?,
                None => concord_cc::time::Duration::from_millis(10),
            },
        };
    }
    Ok(b)
}

/// A rate (`"1Mbps"`) or a share of the configured rate (`"10%"`, in (0, 100%]).
fn rate_share(f: &Field<'_>) -> Result<RateShare, ScenarioError> {
    if let DeValue::String(s) = f.value.get_ref() {
        if s.trim_end().ends_with('%') {
            let share = parse_fraction(s).map_err(|_| {
                f.error(
                    ErrorKind::BadValue,
                    format!("{} = \"{s}\" is not a share in (0%, 100%]", f.label()),
                    format!(
                        "write a share of the configured rate like {}",
                        f.example("\"10%\"")
                    ),
                )
            })?;
            if !(share > 0.0 && share <= 1.0) {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("{} = \"{s}\" is outside (0%, 100%]", f.label()),
                    format!("give a share above zero, e.g. {}", f.example("\"10%\"")),
                ));
            }
            return Ok(RateShare::Share(share));
        }
    }
    let rate: Rate = f.rate()?;
    Ok(RateShare::Absolute(rate))
}
