//! Reading the `[[flow]]` sections: expanding `count` with `{i}`, resolving hosts, drawing
//! start jitter, and checking that every flow can run.

use super::error::{ErrorKind, ScenarioError};
use super::model::{CmFlowSpec, DropWhen, EcaFlowSpec, FlowKind, FlowSpec, NodeKind};
use super::network::{Network, Reach};
use super::suggest;
use super::table::Table;
use super::tcp::read_tcp;
use super::value::Field;
use concord_cc::rng::Rng;
use concord_cc::tcp::TcpConfig;
use concord_cc::time::Duration;
use concord_cc::units::Bytes;
use std::collections::HashMap;

/// The random stream start jitter is drawn from.
pub const JITTER_STREAM: u64 = 0xF10;
/// The most flows one `[[flow]]` section may expand to.
pub(crate) const MAX_COUNT: usize = 100_000;

/// Keys every flow takes.
const COMMON_KEYS: [&str; 10] = [
    "cm",
    "eca",
    "name",
    "kind",
    "from",
    "to",
    "count",
    "start",
    "start_jitter",
    "stop",
];
/// The flow kinds and the keys each adds.
const KINDS: [(&str, &[&str]); 7] = [
    ("tcp", &["bytes", "tcp", "drop_when"]),
    ("cbr", &["rate", "packet_size"]),
    (
        "onoff",
        &["rate", "packet_size", "on", "off", "distribution"],
    ),
    ("tfrc", &["packet_size"]),
    ("cudp", &["app", "packet_size"]),
    ("audio", &["encodings", "packet_size"]),
    ("cmudp", &["bytes", "packet_size", "feedback"]),
];
/// The smallest UDP packet: a 20-byte IP header and an 8-byte UDP header.
const MIN_PACKET: Bytes = 28;
/// The smallest TFRC data packet: IP and UDP headers and the TFRC data header.
const TFRC_MIN_PACKET: Bytes = MIN_PACKET + crate::tfrc::DATA_HEADER as Bytes;
/// The largest IP packet.
const MAX_PACKET: Bytes = 65_535;
/// The default UDP packet size, in bytes.
const DEFAULT_PACKET: Bytes = 1000;

/// What every flow needs from the rest of the scenario.
pub(crate) struct FlowContext<'n> {
    /// The finished nodes and links.
    pub(crate) net: &'n Network,
    /// Which nodes reach which.
    pub(crate) reach: &'n Reach,
    /// `[defaults.tcp]` applied to [`TcpConfig::default`].
    pub(crate) tcp: &'n TcpConfig,
    /// The scenario seed.
    pub(crate) seed: u64,
    /// The scenario duration.
    pub(crate) duration: Duration,
    /// The applications of the `[[cp]]` sections.
    pub(crate) cp_apps: &'n [u32],
}

/// Where a flow's times and settings come from, shared by the flows one section expands to.
struct Section<'a> {
    table: Table<'a>,
    count: usize,
    name: Option<(Field<'a>, &'a str)>,
    from: (Field<'a>, &'a str),
    to: (Field<'a>, &'a str),
    start: Duration,
    jitter: Option<Duration>,
    stop: Option<Duration>,
    kind: FlowKind,
    drop_when: Option<DropWhen>,
    eca: Option<EcaFlowSpec>,
    cm: Option<CmFlowSpec>,
}

/// The flows of the `flow` array in `field` (none if absent).
pub(crate) fn read_flows(
    field: Option<&Field<'_>>,
    cx: &FlowContext<'_>,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let Some(field) = field else {
        return Ok(Vec::new());
    };
    let mut flows: Vec<FlowSpec> = Vec::new();
    // Line of each name's first use, for duplicate errors.
    let mut lines: HashMap<String, usize> = HashMap::new();
    let mut rng = Rng::stream(cx.seed, JITTER_STREAM);
    for table in Table::array_of(field)? {
        let s = read_section(table, cx)?;
        for i in 1..=s.count {
            let expand = |p: &str| p.replace("{i}", &i.to_string());
            let from = cx.net.resolve(&expand(s.from.1), &s.from.0)?;
            let to = cx.net.resolve(&expand(s.to.1), &s.to.0)?;
            let name = match &s.name {
                Some((_, pattern)) => expand(pattern),
                None => format!("f{}", flows.len() + 1),
            };
            let name_at = s.name.as_ref().map(|(f, _)| f);
            check_ends(&name, from, to, &s, cx)?;
            let line = name_at.map_or_else(|| s.table.src().line(&s.table.span()), Field::line);
            if let Some(&first) = lines.get(&name) {
                let message = format!("two flows are named `{name}`");
                let fix = format!("the other is at line {first}; give this one a different `name`");
                return Err(match name_at {
                    Some(f) => f.error(ErrorKind::Duplicate, message, fix),
                    None => s.table.error(ErrorKind::Duplicate, message, fix),
                });
            }
            lines.insert(name.clone(), line);
            let start = match s.jitter {
                Some(j) => s.start + Duration::from_nanos(rng.below(j.as_nanos())),
                None => s.start,
            };
            flows.push(FlowSpec {
                name,
                from,
                to,
                start,
                stop: s.stop,
                kind: s.kind.clone(),
                drop_when: s.drop_when,
                eca: s.eca,
                cm: s.cm.clone(),
            });
        }
    }
    Ok(flows)
}

/// One `[[flow]]` section, checked on its own.
fn read_section<'a>(table: Table<'a>, cx: &FlowContext<'_>) -> Result<Section<'a>, ScenarioError> {
    let kind_field = table.require("kind", "\"tcp\"")?;
    let kind = kind_field.str()?;
    let Some(&(_, extra)) = KINDS.iter().find(|(k, _)| *k == kind) else {
        let names = KINDS.map(|(k, _)| k);
        return Err(kind_field.error(
            ErrorKind::BadValue,
            format!("unknown flow kind `{kind}`"),
            suggest::did_you_mean(
                kind,
                names,
                &format!("flow kinds are: {}", names.join(", ")),
            ),
        ));
    };
    let allowed: Vec<&str> = COMMON_KEYS.iter().chain(extra).copied().collect();
    let table = table.allow_explained(&allowed, |key| {
        let owners: Vec<&str> = KINDS
            .iter()
            .filter(|(_, keys)| keys.contains(&key))
            .map(|(k, _)| *k)
            .collect();
        (!owners.is_empty()).then(|| {
            (
                format!("`{key}` does not apply to a {kind} flow"),
                format!(
                    "`{key}` is for {} flows; remove it or change `kind`",
                    owners.join(" and ")
                ),
            )
        })
    })?;

    let count = match table.get("count") {
        Some(f) => {
            let n = f.integer(i64::MIN, i64::MAX)?;
            if n < 1 || n > MAX_COUNT as i64 {
                let fix = if n < 1 {
                    "give count = 1 or more, or remove the [[flow]] section".to_string()
                } else {
                    format!("give at most {MAX_COUNT}")
                };
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("count = {n} is out of range (1 to {MAX_COUNT})"),
                    fix,
                ));
            }
            usize::try_from(n).unwrap_or(1)
        }
        None => 1,
    };
    let name = match table.get("name") {
        Some(f) => {
            let pattern = f.name()?;
            if count > 1 && !pattern.contains("{i}") {
                return Err(f.error(
                    ErrorKind::Duplicate,
                    format!("all {count} flows of this [[flow]] would be named `{pattern}`"),
                    format!("put {{i}} in the name, e.g. `name = \"{pattern}{{i}}\"`"),
                ));
            }
            Some((f, pattern))
        }
        None => None,
    };
    let from_field = table.require("from", "\"s1\"")?;
    let from = from_field.name()?;
    let to_field = table.require("to", "\"d1\"")?;
    let to = to_field.name()?;

    let (start, jitter, stop) = read_times(&table, cx.duration)?;
    let kind = match kind {
        "tcp" => read_tcp_flow(&table, cx.tcp)?,
        "cudp" => read_cudp_flow(&table, cx.cp_apps)?,
        "tfrc" => FlowKind::Tfrc {
            packet_size: read_packet_size(&table, TFRC_MIN_PACKET)?,
        },
        "audio" => FlowKind::Audio {
            encodings: super::cm::read_encodings(&table)?,
            packet_size: read_packet_size(&table, MIN_PACKET)?,
        },
        "cmudp" => FlowKind::CmUdp {
            packet_size: read_packet_size(&table, MIN_PACKET)?,
            bytes: match table.get("bytes") {
                Some(f) => Some(f.size_in(1, u64::MAX)?),
                None => None,
            },
            feedback: super::cm::read_cmudp_feedback(&table)?,
        },
        _ => read_udp_flow(&table, kind == "onoff")?,
    };
    let drop_when = match table.get("drop_when") {
        Some(f) => Some(read_drop_when(&f, cx.duration)?),
        None => None,
    };
    let eca = match table.get("eca") {
        Some(f) => Some(super::eca::read_eca_flow(&f)?),
        None => None,
    };
    let cm = match table.get("cm") {
        Some(f) => {
            if !matches!(
                kind,
                FlowKind::Tcp { .. } | FlowKind::Audio { .. } | FlowKind::CmUdp { .. }
            ) {
                return Err(f.error(
                    ErrorKind::BadValue,
                    "only tcp, audio and cmudp flows run over the Congestion Manager".to_string(),
                    "remove `cm`, or make the flow `kind = \"tcp\"` (TCP/CM), \"audio\" or \"cmudp\"",
                ));
            }
            let spec = super::cm::read_cm_flow(&f)?;
            if !spec.representations.is_empty() {
                match &kind {
                    FlowKind::Tcp { bytes: Some(_), .. } => {
                        return Err(f.error(
                            ErrorKind::Inconsistent,
                            "a flow with `representations` sends the one it picks, not `bytes`"
                                .to_string(),
                            "remove `bytes`, or `representations`",
                        ))
                    }
                    FlowKind::Tcp { .. } => {}
                    _ => {
                        return Err(f.error(
                            ErrorKind::BadValue,
                            "only a TCP/CM flow (a Web server's object) picks a representation"
                                .to_string(),
                            "remove `representations`, or make the flow `kind = \"tcp\"`",
                        ))
                    }
                }
            }
            Some(spec)
        }
        // audio and cmudp flows are CM applications by definition.
        None if matches!(kind, FlowKind::Audio { .. } | FlowKind::CmUdp { .. }) => {
            Some(CmFlowSpec::default())
        }
        None => None,
    };
    if let (Some(_), Some(e)) = (&cm, table.get("eca")) {
        return Err(e.error(
            ErrorKind::Inconsistent,
            "a flow cannot be shaped by both ECA and the Congestion Manager".to_string(),
            "remove `eca` or `cm` (and use kind = \"tcp\" without `cm` for an ECA flow)",
        ));
    }
    Ok(Section {
        cm,
        table,
        count,
        name,
        from: (from_field, from),
        to: (to_field, to),
        start,
        jitter,
        stop,
        kind,
        drop_when,
        eca,
    })
}

/// The keys of a `drop_when` table: exactly one of them.
const DROP_WHEN_KEYS: [&str; 3] = ["rate", "segment", "at"];

/// A TCP flow's `drop_when = { rate = "2Mbps" }` (or `segment = N`, or `at = "1s"`).
fn read_drop_when(field: &Field<'_>, duration: Duration) -> Result<DropWhen, ScenarioError> {
    let table = Table::of(field, "`drop_when`")?.allow(&DROP_WHEN_KEYS)?;
    let given: Vec<Field<'_>> = DROP_WHEN_KEYS.iter().filter_map(|k| table.get(k)).collect();
    let [f] = given.as_slice() else {
        let message = if given.is_empty() {
            "`drop_when` gives no condition".to_string()
        } else {
            "`drop_when` gives more than one condition".to_string()
        };
        return Err(table.error(
            ErrorKind::BadValue,
            message,
            "give exactly one of `rate = \"2Mbps\"` (cwnd / RTT_min reaches it), `segment = 100` (the 100th new segment) or `at = \"1s\"`",
        ));
    };
    Ok(match f.key.as_str() {
        "rate" => DropWhen::Rate(f.rate()?),
        "segment" => DropWhen::Segment(u64::try_from(f.integer(1, i64::MAX)?).unwrap_or(1)),
        _ => {
            let at = f.duration()?;
            if at >= duration {
                return Err(f.error(
                    ErrorKind::Inconsistent,
                    format!("drop_when.at ({at}) is not before the end of the run (duration = {duration})"),
                    "give a time before `duration`",
                ));
            }
            DropWhen::At(at)
        }
    })
}

/// `start`, `start_jitter` and `stop`, checked against each other and the run's duration.
fn read_times(
    table: &Table<'_>,
    duration: Duration,
) -> Result<(Duration, Option<Duration>, Option<Duration>), ScenarioError> {
    let start_field = table.get("start");
    let start = start_field
        .as_ref()
        .map(Field::duration)
        .transpose()?
        .unwrap_or(Duration::ZERO);
    if start >= duration {
        let message =
            format!("start ({start}) is not before the end of the run (duration = {duration})");
        let fix = "start earlier, or make `duration` longer";
        return Err(match &start_field {
            Some(f) => f.error(ErrorKind::Inconsistent, message, fix),
            None => table.error(ErrorKind::Inconsistent, message, fix),
        });
    }
    let jitter_field = table.get("start_jitter");
    let jitter = jitter_field.as_ref().map(Field::duration).transpose()?;
    let stop = match table.get("stop") {
        Some(f) => {
            let stop = f.duration()?;
            if stop <= start {
                let relation = if stop == start {
                    "is the same as"
                } else {
                    "is before"
                };
                return Err(f.error(
                    ErrorKind::Inconsistent,
                    format!("stop ({stop}) {relation} start ({start})"),
                    "make `stop` later than `start`, or remove `stop` to send until the end",
                ));
            }
            Some(stop)
        }
        None => None,
    };
    if let (Some(j), Some(f)) = (jitter, &jitter_field) {
        let latest = start + j;
        if latest > duration {
            return Err(f.error(
                ErrorKind::Inconsistent,
                format!("start + start_jitter ({latest}) reaches past the end of the run (duration = {duration})"),
                format!("make start_jitter at most {}", duration - start),
            ));
        }
        if let Some(stop) = stop {
            if latest > stop {
                return Err(f.error(
                    ErrorKind::Inconsistent,
                    format!("start + start_jitter ({latest}) reaches past stop ({stop})"),
                    format!("make start_jitter at most {}", stop - start),
                ));
            }
        }
    }
    Ok((start, jitter, stop))
}

/// A TCP flow's `bytes` and `tcp` overrides.
fn read_tcp_flow(table: &Table<'_>, defaults: &TcpConfig) -> Result<FlowKind, ScenarioError> {
    let bytes = match table.get("bytes") {
        Some(f) => Some(f.size_in(1, u64::MAX)?),
        None => None,
    };
    let tcp = match table.get("tcp") {
        Some(f) => read_tcp(
            &Table::of(&f, format!("`tcp` of {}", table.what()))?,
            defaults,
        )?,
        None => defaults.clone(),
    };
    Ok(FlowKind::Tcp { tcp, bytes })
}

/// A CBR or on/off flow.
fn read_udp_flow(table: &Table<'_>, on_off: bool) -> Result<FlowKind, ScenarioError> {
    let rate = table.require("rate", "\"1Mbps\"")?.rate()?;
    let packet_size = read_packet_size(table, MIN_PACKET)?;
    if !on_off {
        return Ok(FlowKind::Cbr { rate, packet_size });
    }
    let on = table.require("on", "\"1s\"")?.positive_duration()?;
    let off = table.require("off", "\"1s\"")?.positive_duration()?;
    let exponential = match table.get("distribution") {
        Some(f) => match f.str()? {
            "exponential" => true,
            "fixed" => false,
            other => {
                return Err(f.error(
                    ErrorKind::BadValue,
                    format!("unknown distribution `{other}`"),
                    suggest::did_you_mean(
                        other,
                        ["exponential", "fixed"],
                        "write \"exponential\" or \"fixed\"",
                    ),
                ))
            }
        },
        None => true,
    };
    Ok(FlowKind::OnOff {
        rate,
        packet_size,
        on,
        off,
        exponential,
    })
}

/// A C-UDP flow: its application, which a `[[cp]]` section must name, and its packet size.
fn read_cudp_flow(table: &Table<'_>, apps: &[u32]) -> Result<FlowKind, ScenarioError> {
    let f = table.require("app", "1")?;
    let app = u32::try_from(f.integer(0, i64::from(u32::MAX))?).unwrap_or(0);
    if !apps.contains(&app) {
        return Err(f.error(
            ErrorKind::Inconsistent,
            format!("no [[cp]] section is for application {app}"),
            "add a [[cp]] section with this `app`, naming its aggregation points",
        ));
    }
    Ok(FlowKind::CUdp {
        app,
        packet_size: read_packet_size(table, MIN_PACKET)?,
    })
}

/// `packet_size` (default 1000 bytes), at least `min` bytes and at most an IP packet.
fn read_packet_size(table: &Table<'_>, min: Bytes) -> Result<Bytes, ScenarioError> {
    let Some(f) = table.get("packet_size") else {
        return Ok(DEFAULT_PACKET);
    };
    let b = f.size()?;
    if !(min..=MAX_PACKET).contains(&b) {
        return Err(f.error(
            ErrorKind::BadValue,
            format!("packet_size = {b} bytes is outside {min} to {MAX_PACKET} bytes"),
            format!(
                "a packet holds {min} bytes of headers and fits in an IP packet \
                 ({MAX_PACKET} bytes); 1000B is usual"
            ),
        ));
    }
    Ok(b)
}

/// Checks that flow `name` runs from a host to another host it can reach.
fn check_ends(
    name: &str,
    from: usize,
    to: usize,
    s: &Section<'_>,
    cx: &FlowContext<'_>,
) -> Result<(), ScenarioError> {
    let hosts = || {
        cx.net
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Host)
            .map(|n| n.name.as_str())
    };
    for (end, field, node) in [("from", &s.from.0, from), ("to", &s.to.0, to)] {
        if cx.net.kind(node) == NodeKind::Router {
            return Err(field.error(
                ErrorKind::Inconsistent,
                format!(
                    "flow `{name}` has `{end}` = `{}`, a router",
                    cx.net.name(node)
                ),
                format!(
                    "flows run between hosts; hosts are: {}",
                    suggest::list(hosts())
                ),
            ));
        }
    }
    if from == to {
        return Err(s.to.0.error(
            ErrorKind::Inconsistent,
            format!("flow `{name}` goes from `{}` to itself", cx.net.name(from)),
            "give `to` a different host",
        ));
    }
    if !cx.reach.connects(cx.net, from, to) {
        return Err(s.to.0.error(
            ErrorKind::Inconsistent,
            format!(
                "flow `{name}` has no path from `{}` to `{}`",
                cx.net.name(from),
                cx.net.name(to)
            ),
            "join them with [[link]]s through routers (hosts do not forward packets)",
        ));
    }
    Ok(())
}
