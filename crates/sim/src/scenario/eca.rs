//! Reading ECA's settings (Barham, sections III.A and IV.A): a channel's `eca` table (the
//! router's load estimator on that output queue) and a flow's `eca` table (its WTP shaper or
//! its high-priority class).

use super::error::{ErrorKind, ScenarioError};
use super::model::{EcaFlowSpec, EcaQueueSpec};
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::eca::{LoadCombine, LoadEncoding};
use concord_cc::units::Rate;

/// The keys of a channel's `eca` table.
const QUEUE_KEYS: [&str; 6] = ["target", "interval", "up", "down", "combine", "encoding"];
/// The keys of a flow's `eca` table.
const FLOW_KEYS: [&str; 5] = ["weight", "unit", "bucket", "queue", "priority"];

/// A channel's `eca = { target = 0.9, interval = "100ms", ... }`.
pub(crate) fn read_eca_queue(field: &Field<'_>) -> Result<EcaQueueSpec, ScenarioError> {
    let table = Table::of(field, "`eca`")?.allow(&QUEUE_KEYS)?;
    let mut spec = EcaQueueSpec::default();
    if let Some(f) = table.get("target") {
        spec.target = f.number()?;
        if !(spec.target > 0.0 && spec.target <= 1.0) {
            return Err(f.error(
                ErrorKind::BadValue,
                format!("target = {} is outside (0, 1]", spec.target),
                "give the target utilisation as a fraction, e.g. `target = 0.9`",
            ));
        }
    }
    if let Some(f) = table.get("interval") {
        spec.interval = f.positive_duration()?;
    }
    if let Some(f) = table.get("up") {
        spec.up = f.number()?;
        if !(spec.up >= 1.0 && spec.up.is_finite()) {
            return Err(f.error(
                ErrorKind::BadValue,
                format!("up = {} is below 1", spec.up),
                "L grows by this factor after a busy interval, e.g. `up = 1.05`",
            ));
        }
    }
    if let Some(f) = table.get("down") {
        spec.down = f.number()?;
        if !(spec.down > 0.0 && spec.down <= 1.0) {
            return Err(f.error(
                ErrorKind::BadValue,
                format!("down = {} is outside (0, 1]", spec.down),
                "L shrinks by this factor after a quiet interval, e.g. `down = 0.99`",
            ));
        }
    }
    if let Some(f) = table.get("combine") {
        spec.combine = match f.str()? {
            "max" => LoadCombine::Max,
            "sum" => LoadCombine::Sum,
            other => {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown combine `{other}`"),
                    suggest::did_you_mean(
                        other,
                        ["max", "sum"],
                        "write \"max\" (the bottleneck's load) or \"sum\" (every hop's)",
                    ),
                ))
            }
        };
    }
    if let Some(f) = table.get("encoding") {
        spec.encoding =
            match f.str()? {
                "float" => LoadEncoding::Float,
                "tos8" => LoadEncoding::Tos8,
                other => return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown encoding `{other}`"),
                    suggest::did_you_mean(
                        other,
                        ["float", "tos8"],
                        "write \"float\" (the simulation's field) or \"tos8\" (the 8-bit TOS code)",
                    ),
                )),
            };
    }
    Ok(spec)
}

/// A flow's `eca = { weight = 2 }` (managed) or `eca = { priority = "2Mbps" }` (high priority).
pub(crate) fn read_eca_flow(field: &Field<'_>) -> Result<EcaFlowSpec, ScenarioError> {
    let table = Table::of(field, "`eca`")?.allow(&FLOW_KEYS)?;
    if let Some(f) = table.get("priority") {
        if let Some(other) = ["weight", "unit", "bucket", "queue"]
            .iter()
            .find(|k| table.has(k))
        {
            return Err(f.error(
                ErrorKind::BadValue,
                format!("a priority flow bypasses WTP, so `{other}` does not apply"),
                "remove `priority` to shape the flow, or the WTP keys to make it high priority",
            ));
        }
        let peak = f.rate()?;
        if peak == Rate::ZERO {
            return Err(f.error(
                ErrorKind::BadValue,
                "a priority flow's peak rate is zero".to_string(),
                "give its peak rate, e.g. `priority = \"5Mbps\"`",
            ));
        }
        return Ok(EcaFlowSpec::Priority { peak });
    }
    let weight_field = table.require("weight", "2")?;
    let weight = weight_field.number()?;
    if !(weight > 0.0 && weight.is_finite()) {
        return Err(weight_field.error(
            ErrorKind::BadValue,
            format!("weight = {weight} is not above zero"),
            "give a positive weight, e.g. `weight = 2`",
        ));
    }
    let unit = match table.get("unit") {
        Some(f) => {
            let r = f.rate()?;
            if r == Rate::ZERO {
                return Err(f.error(
                    ErrorKind::BadValue,
                    "unit is zero".to_string(),
                    "give the rate of weight 1 at load 1, e.g. `unit = \"1Mbps\"`",
                ));
            }
            r
        }
        None => Rate::from_mbps(1),
    };
    let bucket = match table.get("bucket") {
        Some(f) => f.size_in(1, u64::from(u32::MAX))?,
        None => concord_cc::eca::wtp::DEFAULT_BUCKET_DEPTH,
    };
    let queue = match table.get("queue") {
        Some(f) => u32::try_from(f.integer(1, i64::from(u32::MAX))?).unwrap_or(1),
        None => 1000,
    };
    Ok(EcaFlowSpec::Managed {
        weight,
        unit,
        bucket,
        queue,
    })
}
