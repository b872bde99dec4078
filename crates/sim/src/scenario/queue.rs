//! Reading a queue: `"100pkt"`, `"64KB"`, or a `{ kind = "red", ... }` table, into an
//! [`AqmConfig`] that [`AqmConfig::validate`] accepts.

use super::error::{ErrorKind, ScenarioError};
use super::gcca::{read_gcca_queue, GCCA_QUEUE_KEYS};
use super::model::GccaQueueSpec;
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::aqm::{
    AqmConfig, AqmConfigError, CodelConfig, FqCodelConfig, QueueLimit, RedConfig,
};
use concord_cc::time::Duration;
use concord_cc::units::{parse_bytes, parse_fraction, ParseQuantityError};
use toml::de::DeValue;

/// The queue disciplines a scenario may name.
const KINDS: [&str; 5] = ["droptail", "red", "gcca", "codel", "fq_codel"];
/// The keys of a CoDel queue table (RFC 8289).
const CODEL_KEYS: [&str; 5] = ["kind", "limit", "target", "interval", "ecn"];
/// The keys of an FQ-CoDel queue table (RFC 8290).
const FQ_CODEL_KEYS: [&str; 7] = [
    "kind", "limit", "target", "interval", "ecn", "flows", "quantum",
];
/// The keys of a DropTail queue table.
const DROPTAIL_KEYS: [&str; 2] = ["kind", "limit"];
/// The keys of a RED queue table.
const RED_KEYS: [&str; 11] = [
    "kind",
    "limit",
    "min_th",
    "max_th",
    "w_q",
    "max_p",
    "gentle",
    "ecn",
    "mean_pktsize",
    "wait",
    "spare_short_queue",
];

/// How to write a queue limit, for fixes.
const LIMIT_FORMS: &str =
    "write `\"<n>pkt\"` for a limit in packets or a size like `\"64KB\"` for a limit in bytes";

/// The queue written in `field`; `owner` names where it sits (`[[link]] #2`), and a RED table
/// without `limit` gets `default_limit`.
pub(crate) fn read_queue(
    field: &Field<'_>,
    owner: &str,
    default_limit: QueueLimit,
) -> Result<AqmConfig, ScenarioError> {
    let config = match field.value.get_ref() {
        DeValue::Table(_) => {
            let table = Table::of(field, format!("`{}` of {owner}", field.key))?;
            read_table(&table, default_limit)?
        }
        _ => {
            let limit = read_limit(field)?;
            let config = AqmConfig::DropTail { limit };
            config
                .validate()
                .map_err(|e| validation_error(&e, field, None))?;
            config
        }
    };
    Ok(config)
}

/// The queue written in `field`, which may be a GCCA queue (`kind = "gcca"`, GCCA section 3.2):
/// its detector's RED parameters, and its GCCA settings.
pub(crate) fn read_channel_queue(
    field: &Field<'_>,
    owner: &str,
    default_limit: QueueLimit,
) -> Result<(AqmConfig, Option<GccaQueueSpec>), ScenarioError> {
    if let DeValue::Table(_) = field.value.get_ref() {
        let table = Table::of(field, format!("`{}` of {owner}", field.key))?;
        if let Some(kind_field) = table.get("kind") {
            if kind_field.str()? == "gcca" {
                let table = table.clone().allow(&GCCA_QUEUE_KEYS)?;
                let red = read_red(&table, kind_field, default_limit)?;
                return Ok((red, Some(read_gcca_queue(&table)?)));
            }
        }
    }
    Ok((read_queue(field, owner, default_limit)?, None))
}

/// A queue table.
fn read_table(table: &Table<'_>, default_limit: QueueLimit) -> Result<AqmConfig, ScenarioError> {
    let kind_field = table.require("kind", "\"droptail\"")?;
    let kind = kind_field.str()?;
    match kind {
        "droptail" => {
            let table = table.clone().allow_explained(&DROPTAIL_KEYS, |key| {
                RED_KEYS.contains(&key).then(|| {
                    (
                        format!(
                            "`{key}` is a RED setting, but {} is a droptail queue",
                            table.what()
                        ),
                        format!("set `kind = \"red\"` or remove `{key}`"),
                    )
                })
            })?;
            let limit_field = table.require("limit", "\"100pkt\"")?;
            let config = AqmConfig::DropTail {
                limit: read_limit(&limit_field)?,
            };
            config
                .validate()
                .map_err(|e| validation_error(&e, &limit_field, Some(&table)))?;
            Ok(config)
        }
        "red" => {
            let table = table.clone().allow(&RED_KEYS)?;
            read_red(&table, kind_field, default_limit)
        }
        "codel" => {
            let table = table.clone().allow(&CODEL_KEYS)?;
            let mut c = CodelConfig::default();
            read_codel_common(
                &table,
                &mut c.limit,
                &mut c.target,
                &mut c.interval,
                &mut c.ecn,
            )?;
            Ok(AqmConfig::CoDel(c))
        }
        "fq_codel" => {
            let table = table.clone().allow(&FQ_CODEL_KEYS)?;
            let mut c = FqCodelConfig::default();
            read_codel_common(
                &table,
                &mut c.limit,
                &mut c.target,
                &mut c.interval,
                &mut c.ecn,
            )?;
            if let Some(f) = table.get("flows") {
                c.flows = f.integer(1, 65_536)? as u32;
            }
            if let Some(f) = table.get("quantum") {
                c.quantum = f.size_in(1, 1 << 20)?;
            }
            Ok(AqmConfig::FqCodel(c))
        }
        "gcca" => Err(kind_field.error(
            ErrorKind::BadValue,
            format!("a gcca queue cannot be used in {}", table.what()),
            "put `queue = { kind = \"gcca\", ... }` on a router's link (or its `reverse`)",
        )),
        other => Err(kind_field.error(
            ErrorKind::BadValue,
            format!("unknown queue kind `{other}`"),
            suggest::did_you_mean(
                other,
                KINDS,
                &format!("queue kinds are: {}", KINDS.join(", ")),
            ),
        )),
    }
}

/// The keys CoDel and FQ-CoDel share: a limit (the discipline's own default if absent), the
/// target and interval (positive durations) and ECN marking.
fn read_codel_common(
    table: &Table<'_>,
    limit: &mut QueueLimit,
    target: &mut Duration,
    interval: &mut Duration,
    ecn: &mut bool,
) -> Result<(), ScenarioError> {
    if let Some(f) = table.get("limit") {
        *limit = read_limit(&f)?;
        if limit.value() <= 0.0 {
            return Err(validation_error(
                &AqmConfigError::ZeroLimit,
                &f,
                Some(table),
            ));
        }
    }
    if let Some(f) = table.get("target") {
        *target = f.positive_duration()?;
    }
    if let Some(f) = table.get("interval") {
        *interval = f.positive_duration()?;
    }
    if let Some(f) = table.get("ecn") {
        *ecn = f.boolean()?;
    }
    Ok(())
}

/// The RED keys of `table` (already checked for unknown keys); `kind_field` is where an error
/// about the whole table points.
fn read_red(
    table: &Table<'_>,
    kind_field: Field<'_>,
    default_limit: QueueLimit,
) -> Result<AqmConfig, ScenarioError> {
    let limit = match table.get("limit") {
        Some(f) => read_limit(&f)?,
        None => default_limit,
    };
    let mut red = RedConfig::for_limit(limit);
    if let Some(f) = table.get("min_th") {
        red.min_th = read_threshold(&f, limit)?;
    }
    if let Some(f) = table.get("max_th") {
        red.max_th = read_threshold(&f, limit)?;
    }
    if let Some(f) = table.get("w_q") {
        red.w_q = f.number()?;
    }
    if let Some(f) = table.get("max_p") {
        red.max_p = f.number()?;
    }
    if let Some(f) = table.get("gentle") {
        red.gentle = f.boolean()?;
    }
    if let Some(f) = table.get("ecn") {
        red.ecn = f.boolean()?;
    }
    if let Some(f) = table.get("mean_pktsize") {
        red.mean_pktsize = f.size_in(1, 65_535)?;
    }
    if let Some(f) = table.get("wait") {
        red.wait = f.boolean()?;
    }
    if let Some(f) = table.get("spare_short_queue") {
        red.spare_short_queue = f.boolean()?;
    }
    let config = AqmConfig::Red(red);
    let at = table.get("limit").unwrap_or(kind_field);
    config
        .validate()
        .map_err(|e| validation_error(&e, &at, Some(table)))?;
    Ok(config)
}

/// A queue limit: `"<n>pkt"` (packets) or a size (bytes).
fn read_limit(field: &Field<'_>) -> Result<QueueLimit, ScenarioError> {
    let text = match field.value.get_ref() {
        DeValue::String(s) => s.trim(),
        DeValue::Integer(i) => {
            return Err(field.error(
                ErrorKind::WrongType,
                format!("{} = {} has no unit", field.label(), i.as_str()),
                format!(
                    "{LIMIT_FORMS}, e.g. {}",
                    field.example(&format!("\"{}pkt\"", i.as_str()))
                ),
            ))
        }
        _ => return Err(field.wrong_type("a queue limit", "\"100pkt\"")),
    };
    let packets = ["packets", "pkts", "pkt"]
        .iter()
        .find_map(|unit| text.strip_suffix(unit));
    if let Some(number) = packets {
        let number = number.trim();
        return match number.parse::<u32>() {
            Ok(n) => Ok(QueueLimit::Packets(n)),
            Err(_) if number.starts_with('-') => Err(field.error(
                ErrorKind::BadValue,
                format!("{} = \"{text}\" is negative", field.label()),
                format!(
                    "give a positive number of packets, e.g. {}",
                    field.example("\"100pkt\"")
                ),
            )),
            Err(_) if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) => {
                Err(field.error(
                    ErrorKind::BadValue,
                    format!("{} = \"{text}\" is too large", field.label()),
                    format!("give at most {} packets", u32::MAX),
                ))
            }
            Err(_) => Err(field.error(
                ErrorKind::BadValue,
                format!(
                    "{} = \"{text}\" is not a whole number of packets",
                    field.label()
                ),
                format!("write it like {}", field.example("\"100pkt\"")),
            )),
        };
    }
    match parse_bytes(text) {
        Ok(b) => Ok(QueueLimit::Bytes(b)),
        Err(ParseQuantityError::BadUnit { unit, .. }) => Err(field.error(
            ErrorKind::BadValue,
            if unit.is_empty() {
                format!("{} = \"{text}\" has no unit", field.label())
            } else {
                format!("{} = \"{text}\" has unknown unit `{unit}`", field.label())
            },
            format!("{LIMIT_FORMS} (B, KB, MB, GB, KiB, MiB, GiB)"),
        )),
        // Negative, missing or oversized numbers: the size reader words these.
        Err(_) => field.size().map(QueueLimit::Bytes),
    }
}

/// A RED threshold: a number in the limit's unit, or a percentage of the limit.
fn read_threshold(field: &Field<'_>, limit: QueueLimit) -> Result<f64, ScenarioError> {
    if let DeValue::String(s) = field.value.get_ref() {
        if !s.trim_end().ends_with('%') {
            return Err(field.error(
                ErrorKind::BadValue,
                format!(
                    "{} = \"{s}\" is neither a number nor a percentage",
                    field.label()
                ),
                format!(
                    "write a number of {} like {}, or a share of the limit like {}",
                    unit_of(limit),
                    field.example("25"),
                    field.example("\"25%\"")
                ),
            ));
        }
        let share = match parse_fraction(s) {
            Ok(share) => share,
            Err(_) => return field.fraction(),
        };
        return Ok(share * limit.value());
    }
    let v = field.number()?;
    if v < 0.0 {
        return Err(field.error(
            ErrorKind::BadValue,
            format!("{} = {v} is negative", field.label()),
            format!(
                "give a threshold between 0 and the limit ({} {})",
                limit.value(),
                unit_of(limit)
            ),
        ));
    }
    Ok(v)
}

/// `packets` or `bytes`.
fn unit_of(limit: QueueLimit) -> &'static str {
    match limit {
        QueueLimit::Packets(_) => "packets",
        QueueLimit::Bytes(_) => "bytes",
    }
}

/// [`AqmConfig::validate`]'s complaint, pointing at the offending key of `table` if it was
/// written, else at `at`.
fn validation_error(
    e: &AqmConfigError,
    at: &Field<'_>,
    table: Option<&Table<'_>>,
) -> ScenarioError {
    let key = |name: &str| {
        table
            .and_then(|t| t.get(name))
            .unwrap_or_else(|| at.clone())
    };
    match e {
        AqmConfigError::ZeroLimit => at.error(
            ErrorKind::BadValue,
            "the queue limit is zero",
            format!(
                "give room for at least one packet, e.g. {}",
                at.example("\"100pkt\"")
            ),
        ),
        AqmConfigError::ThresholdOrder { min_th, max_th } => {
            let f = if table.is_some_and(|t| t.has("max_th")) {
                key("max_th")
            } else {
                key("min_th")
            };
            f.error(
                ErrorKind::BadValue,
                format!("RED's min_th ({min_th}) is not below max_th ({max_th})"),
                "make min_th smaller than max_th, e.g. min_th = \"25%\" and max_th = \"75%\"",
            )
        }
        AqmConfigError::ThresholdRange { name, value, limit } => key(name).error(
            ErrorKind::BadValue,
            format!("RED's {name} = {value} lies outside the queue (0 to {limit})"),
            format!("give {name} within the limit, or as a share of it like \"25%\""),
        ),
        AqmConfigError::Weight(w) => key("w_q").error(
            ErrorKind::BadValue,
            format!("RED's w_q = {w} is outside (0, 1]"),
            "use a small weight; Floyd & Jacobson suggest w_q = 0.002",
        ),
        AqmConfigError::MaxP(p) => key("max_p").error(
            ErrorKind::BadValue,
            format!("RED's max_p = {p} is outside (0, 1]"),
            "give a probability above zero, e.g. max_p = 0.1",
        ),
        // The reader refuses these before validation (positive durations, flows >= 1,
        // quantum >= 1 byte); worded here for completeness.
        AqmConfigError::ZeroCodelTime(name) => key(name).error(
            ErrorKind::BadValue,
            format!("CoDel's {name} is zero"),
            "give a positive duration, e.g. target = \"5ms\" and interval = \"100ms\"",
        ),
        AqmConfigError::ZeroFqSetting(name) => key(name).error(
            ErrorKind::BadValue,
            format!("FQ-CoDel's {name} is zero"),
            "give flows = 1024 and quantum = \"1514B\", or other positive values",
        ),
    }
}
