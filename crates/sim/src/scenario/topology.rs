//! The `[topology]` shorthands: a dumbbell, a line of routers, a parking lot.
//!
//! Links are oriented in the direction the main traffic flows, so that a link's forward
//! channel carries data: `si -> r1`, `r1 -> r2`, `r2 -> di` in a dumbbell; `src -> r1`,
//! `ri -> ri+1`, `rN -> dst` in a line; and in a parking lot also `ci -> ri` and
//! `ri+1 -> xi`.

use super::channel::{LinkKeys, LINK_KEYS};
use super::error::{ErrorKind, ScenarioError};
use super::model::{ChannelSpec, LinkSpec, NodeIdx, NodeKind};
use super::network::{LinkOrigin, Network, NodeOrigin};
use super::suggest;
use super::table::Table;
use concord_cc::aqm::AqmConfig;

/// The shorthand kinds.
const KINDS: [&str; 3] = ["dumbbell", "line", "parking_lot"];
/// The keys of a dumbbell.
const DUMBBELL_KEYS: [&str; 5] = ["kind", "pairs", "bottleneck", "access", "access_delays"];
/// The keys of a line or a parking lot.
const CHAIN_KEYS: [&str; 4] = ["kind", "routers", "link", "access"];
/// The most host pairs or routers a shorthand builds.
pub(crate) const MAX_SIZE: usize = 100_000;

/// An example link spec, for fixes.
const LINK_EXAMPLE: &str = "{ rate = \"10Mbps\", delay = \"25ms\" }";

/// Builds the shorthand `table` describes into `net` (which is empty).
pub(crate) fn build(
    table: &Table<'_>,
    default_queue: &AqmConfig,
    net: &mut Network,
) -> Result<(), ScenarioError> {
    let kind_field = table.require("kind", "\"dumbbell\"")?;
    let kind = kind_field.str()?;
    let keys: &[&str] = match kind {
        "dumbbell" => &DUMBBELL_KEYS,
        "line" | "parking_lot" => &CHAIN_KEYS,
        other => {
            return Err(kind_field.error(
                ErrorKind::BadValue,
                format!("unknown topology kind `{other}`"),
                suggest::did_you_mean(
                    other,
                    KINDS,
                    &format!("topology kinds are: {}", KINDS.join(", ")),
                ),
            ))
        }
    };
    let table = table.clone().allow_explained(keys, |key| {
        let (owner, instead) = if DUMBBELL_KEYS.contains(&key) {
            ("a dumbbell", "`routers`, `link` and `access`")
        } else if CHAIN_KEYS.contains(&key) {
            (
                "a line or parking_lot",
                "`pairs`, `bottleneck`, `access` and `access_delays`",
            )
        } else {
            return None;
        };
        Some((
            format!("`{key}` belongs to {owner}, not to a {kind} topology"),
            format!("a {kind} takes {instead}"),
        ))
    })?;
    match kind {
        "dumbbell" => dumbbell(&table, default_queue, net),
        _ => chain(&table, kind == "parking_lot", default_queue, net),
    }
}

/// `pairs` senders `s1..sN` on router `r1`, receivers `d1..dN` on `r2`, `r1 - r2` the
/// bottleneck.
fn dumbbell(
    table: &Table<'_>,
    default_queue: &AqmConfig,
    net: &mut Network,
) -> Result<(), ScenarioError> {
    let pairs = size(
        table,
        "pairs",
        1,
        "a dumbbell needs at least 1 pair of hosts",
    )?;
    let bottleneck = link_spec(table, "bottleneck", default_queue)?;
    let (access_table, access) = link_keys(table, "access", default_queue)?;
    let mut delays = Vec::new();
    if let Some(f) = table.get("access_delays") {
        let entries = f.entries()?;
        if entries.len() != pairs {
            return Err(f.error(
                ErrorKind::Inconsistent,
                format!(
                    "`access_delays` has {} entries but pairs = {pairs}",
                    entries.len()
                ),
                format!("give one delay per pair ({pairs}), or remove `access_delays`"),
            ));
        }
        for e in &entries {
            delays.push(e.duration()?);
        }
    }
    let r1 = node(net, "r1", NodeKind::Router);
    let r2 = node(net, "r2", NodeKind::Router);
    let senders: Vec<NodeIdx> = (1..=pairs)
        .map(|i| node(net, &format!("s{i}"), NodeKind::Host))
        .collect();
    let receivers: Vec<NodeIdx> = (1..=pairs)
        .map(|i| node(net, &format!("d{i}"), NodeKind::Host))
        .collect();
    link(net, r1, r2, &bottleneck);
    let access_channels = access.resolve(None, default_queue, &access_table)?;
    for (i, &s) in senders.iter().enumerate() {
        match delays.get(i) {
            Some(&d) => {
                let mut keys = access.clone();
                keys.set_delay(d);
                link(
                    net,
                    s,
                    r1,
                    &keys.resolve(None, default_queue, &access_table)?,
                );
            }
            None => link(net, s, r1, &access_channels),
        }
    }
    for &d in &receivers {
        link(net, r2, d, &access_channels);
    }
    Ok(())
}

/// `routers` routers in a row; `src` on the first, `dst` on the last; in a parking lot, a
/// cross-traffic source `ci` on `ri` and sink `xi` on `ri+1` for each hop.
fn chain(
    table: &Table<'_>,
    parking_lot: bool,
    default_queue: &AqmConfig,
    net: &mut Network,
) -> Result<(), ScenarioError> {
    let n = size(
        table,
        "routers",
        2,
        "a chain needs at least 2 routers; for one router, use [[node]] and [[link]]",
    )?;
    let hop = link_spec(table, "link", default_queue)?;
    let access = link_spec(table, "access", default_queue)?;
    let routers: Vec<NodeIdx> = (1..=n)
        .map(|i| node(net, &format!("r{i}"), NodeKind::Router))
        .collect();
    let src = node(net, "src", NodeKind::Host);
    let dst = node(net, "dst", NodeKind::Host);
    let mut cross = Vec::new();
    if parking_lot {
        for i in 1..n {
            let c = node(net, &format!("c{i}"), NodeKind::Host);
            let x = node(net, &format!("x{i}"), NodeKind::Host);
            cross.push((c, x));
        }
    }
    for w in routers.windows(2) {
        if let [a, b] = *w {
            link(net, a, b, &hop);
        }
    }
    if let (Some(&first), Some(&last)) = (routers.first(), routers.last()) {
        link(net, src, first, &access);
        link(net, last, dst, &access);
    }
    for (i, &(c, x)) in cross.iter().enumerate() {
        if let (Some(&ri), Some(&rnext)) = (routers.get(i), routers.get(i + 1)) {
            link(net, c, ri, &access);
            link(net, rnext, x, &access);
        }
    }
    Ok(())
}

/// The count under `key`, from `min` to [`MAX_SIZE`]; `why` explains the minimum.
fn size(table: &Table<'_>, key: &str, min: usize, why: &str) -> Result<usize, ScenarioError> {
    let field = table.require(key, "4")?;
    let n = field.integer(i64::MIN, i64::MAX)?;
    let max = MAX_SIZE as i64;
    if n < min as i64 || n > max {
        let fix = if n > max {
            format!("give at most {MAX_SIZE}")
        } else {
            why.to_string()
        };
        return Err(field.error(
            ErrorKind::BadValue,
            format!("{key} = {n} is out of range ({min} to {MAX_SIZE})"),
            fix,
        ));
    }
    Ok(usize::try_from(n).unwrap_or(min))
}

/// The link keys under `key` of `table`, with the table they came from.
fn link_keys<'a>(
    table: &Table<'a>,
    key: &str,
    default_queue: &AqmConfig,
) -> Result<(Table<'a>, LinkKeys), ScenarioError> {
    let field = table.require(key, LINK_EXAMPLE)?;
    let spec = Table::of(&field, format!("`{key}` of [topology]"))?.allow(&LINK_KEYS)?;
    let keys = LinkKeys::read(&spec, default_queue)?;
    Ok((spec, keys))
}

/// The two channels of the link spec under `key` of `table`.
fn link_spec(
    table: &Table<'_>,
    key: &str,
    default_queue: &AqmConfig,
) -> Result<(ChannelSpec, ChannelSpec), ScenarioError> {
    let (spec, keys) = link_keys(table, key, default_queue)?;
    keys.resolve(None, default_queue, &spec)
}

/// Adds a shorthand node (names are fresh: the shorthand is built first).
fn node(net: &mut Network, name: &str, kind: NodeKind) -> NodeIdx {
    net.add_node(name, kind, NodeOrigin::Shorthand)
        .unwrap_or_else(|(i, _)| i)
}

/// Adds a shorthand link `a - b`.
fn link(net: &mut Network, a: NodeIdx, b: NodeIdx, channels: &(ChannelSpec, ChannelSpec)) {
    let (forward, reverse) = channels.clone();
    net.put_link(
        LinkSpec {
            a,
            b,
            forward,
            reverse,
        },
        LinkOrigin::Shorthand,
    );
}
