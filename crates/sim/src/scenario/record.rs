//! Reading `[record]`: what to measure and write, with channel names (`"r1->r2"`) and flow
//! names resolved.

use super::error::{ErrorKind, ScenarioError};
use super::model::{ChannelRef, FlowIdx, FlowKind, FlowSpec, RecordSpec};
use super::network::Network;
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::time::Duration;
use std::collections::{HashMap, HashSet};

/// The keys of `[record]`.
const KEYS: [&str; 11] = [
    "bin",
    "warmup",
    "queues",
    "queue_interval",
    "cwnd",
    "estimator",
    "application_delay",
    "pcap",
    "pcap_snaplen",
    "pcap_format",
    "bottleneck",
];

/// The `[record]` table in `field` (defaults if absent).
pub(crate) fn read_record(
    field: Option<&Field<'_>>,
    net: &Network,
    flows: &[FlowSpec],
    duration: Duration,
) -> Result<RecordSpec, ScenarioError> {
    let mut r = RecordSpec::default();
    let Some(field) = field else { return Ok(r) };
    let table = Table::of(field, "[record]")?.allow(&KEYS)?;
    if let Some(f) = table.get("bin") {
        r.bin = f.positive_duration()?;
    }
    r.queue_interval = r.bin;
    if let Some(f) = table.get("warmup") {
        r.warmup = f.duration()?;
        if r.warmup >= duration {
            return Err(f.error(
                ErrorKind::Inconsistent,
                format!(
                    "warmup ({}) leaves nothing to measure: the run ends at {duration}",
                    r.warmup
                ),
                "make warmup shorter than `duration`",
            ));
        }
    }
    if let Some(f) = table.get("queues") {
        r.queues = channels(&f, net)?;
    }
    if let Some(f) = table.get("queue_interval") {
        r.queue_interval = f.positive_duration()?;
    }
    if let Some(f) = table.get("cwnd") {
        r.cwnd = tcp_flows(&f, flows)?;
    }
    if let Some(f) = table.get("estimator") {
        r.estimator = tcp_flows(&f, flows)?;
    }
    if let Some(f) = table.get("application_delay") {
        r.application_delay = tcp_flows(&f, flows)?;
    }
    if let Some(f) = table.get("pcap") {
        r.pcap = channels(&f, net)?;
    }
    if let Some(f) = table.get("pcap_snaplen") {
        let n = f.integer(1, 65_535)?;
        r.pcap_snaplen = u32::try_from(n).unwrap_or(65_535);
    }
    if let Some(f) = table.get("pcap_format") {
        r.pcap_format = match f.str()? {
            "pcap" => crate::trace::TraceFormat::Pcap,
            "pcapng" => crate::trace::TraceFormat::Pcapng,
            other => {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown trace format `{other}`"),
                    suggest::did_you_mean(
                        other,
                        ["pcap", "pcapng"],
                        "write \"pcap\" or \"pcapng\"",
                    ),
                ))
            }
        };
    }
    if let Some(f) = table.get("bottleneck") {
        r.bottleneck = Some(channel(&f, net)?);
    }
    Ok(r)
}

/// An array of channel names, each at most once.
fn channels(field: &Field<'_>, net: &Network) -> Result<Vec<ChannelRef>, ScenarioError> {
    let mut out: Vec<ChannelRef> = Vec::new();
    let mut seen: HashSet<ChannelRef> = HashSet::new();
    for e in field.entries()? {
        let c = channel(&e, net)?;
        if !seen.insert(c) {
            return Err(e.error(
                ErrorKind::Duplicate,
                format!(
                    "channel `{}` is listed twice in `{}`",
                    e.str().unwrap_or_default(),
                    field.key
                ),
                "list each channel once",
            ));
        }
        out.push(c);
    }
    Ok(out)
}

/// A channel name `"a->b"`: the direction a to b of the link joining them.
fn channel(field: &Field<'_>, net: &Network) -> Result<ChannelRef, ScenarioError> {
    let text = field.str()?;
    let Some((a, b)) = text.split_once("->") else {
        return Err(field.error(
            ErrorKind::BadValue,
            format!("{} = \"{text}\" is not a channel name", field.label()),
            "name a direction of a link as \"<from>-><to>\", e.g. \"r1->r2\"",
        ));
    };
    let (a, b) = (a.trim(), b.trim());
    for end in [a, b] {
        if net.node(end).is_none() {
            return Err(field.error(
                ErrorKind::UnknownName,
                format!("channel `{text}` names no node `{end}`"),
                net.nodes_hint(end),
            ));
        }
    }
    let (Some(na), Some(nb)) = (net.node(a), net.node(b)) else {
        return Err(field.error(
            ErrorKind::UnknownName,
            format!("channel `{text}` names a missing node"),
            net.nodes_hint(a),
        ));
    };
    net.channel(na, nb).ok_or_else(|| {
        let linked: Vec<&str> = net
            .neighbours(na)
            .into_iter()
            .map(|n| net.name(n))
            .collect();
        let fix = if linked.is_empty() {
            format!("`{a}` has no links")
        } else {
            format!("`{a}` is linked to: {}", suggest::list(linked))
        };
        field.error(
            ErrorKind::UnknownName,
            format!("no link joins `{a}` and `{b}`"),
            fix,
        )
    })
}

/// An array of names of TCP flows.
fn tcp_flows(field: &Field<'_>, flows: &[FlowSpec]) -> Result<Vec<FlowIdx>, ScenarioError> {
    let by_name: HashMap<&str, FlowIdx> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut out: Vec<FlowIdx> = Vec::new();
    let mut seen: HashSet<FlowIdx> = HashSet::new();
    for e in field.entries()? {
        let name = e.str()?;
        let Some(&i) = by_name.get(name) else {
            let names = || flows.iter().map(|f| f.name.as_str());
            let fix = if flows.is_empty() {
                "there are no flows; add [[flow]] sections".to_string()
            } else {
                suggest::did_you_mean(
                    name,
                    names(),
                    &format!("flows are: {}", suggest::list(names())),
                )
            };
            return Err(e.error(
                ErrorKind::UnknownName,
                format!("no flow named `{name}`"),
                fix,
            ));
        };
        if !matches!(flows.get(i).map(|f| &f.kind), Some(FlowKind::Tcp { .. })) {
            return Err(e.error(
                ErrorKind::Inconsistent,
                format!("flow `{name}` is not a TCP flow, so it has no window to trace"),
                format!("list only tcp flows in `{}`", field.key),
            ));
        }
        if !seen.insert(i) {
            return Err(e.error(
                ErrorKind::Duplicate,
                format!("flow `{name}` is listed twice in `{}`", field.key),
                "list each flow once",
            ));
        }
        out.push(i);
    }
    Ok(out)
}
