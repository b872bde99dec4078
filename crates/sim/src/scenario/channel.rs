//! Reading a link's settings (`rate`, `delay`, `queue`, `loss`, `loss_applies_to` and the
//! `reverse` overrides) and resolving them into the two [`ChannelSpec`]s of a link.
//!
//! For each direction a setting comes from, in order: `reverse` (for b -> a only), the link's
//! own keys (both directions), the link it replaces (same direction), and the defaults
//! (`[defaults].queue`, no loss, loss applied to all packets). `rate` and `delay` have no
//! default.

use super::eca::read_eca_queue;
use super::error::{ErrorKind, ScenarioError};
use super::model::{ChannelSpec, EcaQueueSpec, GccaQueueSpec, LossFilter};
use super::queue::read_channel_queue;
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::aqm::AqmConfig;
use concord_cc::time::Duration;
use concord_cc::units::Rate;

/// The settings of one direction.
pub(crate) const CHANNEL_KEYS: [&str; 7] = [
    "rate",
    "delay",
    "queue",
    "loss",
    "loss_applies_to",
    "eca",
    "framing_bytes",
];
/// The settings of a link: those of a direction, plus the `reverse` overrides.
pub(crate) const LINK_KEYS: [&str; 8] = [
    "rate",
    "delay",
    "queue",
    "loss",
    "loss_applies_to",
    "eca",
    "framing_bytes",
    "reverse",
];

/// The values `loss_applies_to` takes.
const LOSS_FILTERS: [&str; 2] = ["all", "data"];

/// Settings written for a direction; `None` where the file is silent.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChannelKeys {
    rate: Option<Rate>,
    delay: Option<Duration>,
    queue: Option<(AqmConfig, Option<GccaQueueSpec>)>,
    loss: Option<f64>,
    loss_applies_to: Option<LossFilter>,
    eca: Option<EcaQueueSpec>,
    framing_bytes: Option<u32>,
}

/// Settings written for a link: for both directions, and overrides for b -> a.
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkKeys {
    both: ChannelKeys,
    reverse: ChannelKeys,
}

impl LinkKeys {
    /// Reads the link keys of `table` (whose keys the caller has already checked);
    /// `default_queue` gives the limit of a RED table that has none.
    pub(crate) fn read(
        table: &Table<'_>,
        default_queue: &AqmConfig,
    ) -> Result<LinkKeys, ScenarioError> {
        let both = read_channel(table, default_queue)?;
        let reverse = match table.get("reverse") {
            Some(f) => {
                let rt = Table::of(&f, format!("`reverse` of {}", table.what()))?
                    .allow(&CHANNEL_KEYS)?;
                read_channel(&rt, default_queue)?
            }
            None => ChannelKeys::default(),
        };
        Ok(LinkKeys { both, reverse })
    }

    /// Replaces the delay of both directions (a dumbbell's `access_delays`).
    pub(crate) fn set_delay(&mut self, delay: Duration) {
        self.both.delay = Some(delay);
        self.reverse.delay = None;
    }

    /// The a -> b and b -> a channels; `inherited` is the pair of the link being replaced, in the
    /// same orientation. `table` is where a missing `rate` or `delay` is reported.
    pub(crate) fn resolve(
        &self,
        inherited: Option<(&ChannelSpec, &ChannelSpec)>,
        default_queue: &AqmConfig,
        table: &Table<'_>,
    ) -> Result<(ChannelSpec, ChannelSpec), ScenarioError> {
        let forward = resolve_one(&[&self.both], inherited.map(|p| p.0), default_queue, table)?;
        let reverse = resolve_one(
            &[&self.reverse, &self.both],
            inherited.map(|p| p.1),
            default_queue,
            table,
        )?;
        Ok((forward, reverse))
    }
}

/// One direction: the first of `layers` that sets a key wins, then `inherited`, then defaults.
fn resolve_one(
    layers: &[&ChannelKeys],
    inherited: Option<&ChannelSpec>,
    default_queue: &AqmConfig,
    table: &Table<'_>,
) -> Result<ChannelSpec, ScenarioError> {
    let rate = layers
        .iter()
        .find_map(|l| l.rate)
        .or(inherited.map(|c| c.rate));
    let delay = layers
        .iter()
        .find_map(|l| l.delay)
        .or(inherited.map(|c| c.delay));
    let Some(rate) = rate else {
        return Err(missing(table, "rate", "\"10Mbps\""));
    };
    let Some(delay) = delay else {
        return Err(missing(table, "delay", "\"10ms\""));
    };
    let (queue, gcca) = layers
        .iter()
        .find_map(|l| l.queue.clone())
        .or_else(|| inherited.map(|c| (c.queue.clone(), c.gcca)))
        .unwrap_or_else(|| (default_queue.clone(), None));
    if let Some(g) = &gcca {
        if let Err(e) = g.bucket.config(rate).validate() {
            return Err(table.error(
                ErrorKind::BadValue,
                format!(
                    "the gcca queue's leaky bucket of {} cannot run at {rate}: {e}",
                    table.what()
                ),
                "keep min_rate below the link rate, e.g. `min_rate = \"1%\"`",
            ));
        }
    }
    let loss = layers
        .iter()
        .find_map(|l| l.loss)
        .or(inherited.map(|c| c.loss))
        .unwrap_or(0.0);
    let loss_applies_to = layers
        .iter()
        .find_map(|l| l.loss_applies_to)
        .or(inherited.map(|c| c.loss_applies_to))
        .unwrap_or_default();
    let eca = layers
        .iter()
        .find_map(|l| l.eca)
        .or(inherited.and_then(|c| c.eca));
    let framing_bytes = layers
        .iter()
        .find_map(|l| l.framing_bytes)
        .or(inherited.map(|c| c.framing_bytes))
        .unwrap_or(0);
    Ok(ChannelSpec {
        rate,
        delay,
        queue,
        loss,
        loss_applies_to,
        gcca,
        eca,
        framing_bytes,
    })
}

/// The error for a direction that ends up without `key`.
fn missing(table: &Table<'_>, key: &str, example: &str) -> ScenarioError {
    table.error(
        ErrorKind::MissingKey,
        format!("{} has no `{key}`, which is required", table.what()),
        format!("add `{key} = {example}`"),
    )
}

/// The direction keys written in `table`.
fn read_channel(
    table: &Table<'_>,
    default_queue: &AqmConfig,
) -> Result<ChannelKeys, ScenarioError> {
    let mut keys = ChannelKeys::default();
    if let Some(f) = table.get("rate") {
        keys.rate = Some(f.rate()?);
    }
    if let Some(f) = table.get("delay") {
        keys.delay = Some(f.duration()?);
    }
    if let Some(f) = table.get("queue") {
        keys.queue = Some(read_channel_queue(&f, table.what(), default_queue.limit())?);
    }
    if let Some(f) = table.get("loss") {
        keys.loss = Some(f.fraction()?);
    }
    if let Some(f) = table.get("loss_applies_to") {
        keys.loss_applies_to = Some(loss_filter(&f)?);
    }
    if let Some(f) = table.get("eca") {
        keys.eca = Some(read_eca_queue(&f)?);
    }
    if let Some(f) = table.get("framing_bytes") {
        // Link-layer bytes per packet: PPP's 2 (ns-3), Ethernet's 38 with preamble and gap.
        keys.framing_bytes = Some(u32::try_from(f.integer(0, 1024)?).unwrap_or(0));
    }
    Ok(keys)
}

/// `"all"` or `"data"`.
fn loss_filter(f: &Field<'_>) -> Result<LossFilter, ScenarioError> {
    match f.str()? {
        "all" => Ok(LossFilter::All),
        "data" => Ok(LossFilter::Data),
        other => Err(f.error(
            ErrorKind::BadValue,
            format!("unknown loss_applies_to `{other}`"),
            suggest::did_you_mean(
                other,
                LOSS_FILTERS,
                "write \"all\" (every packet) or \"data\" (packets with payload)",
            ),
        )),
    }
}
