//! Scenario limits: the input file's size, and an estimate of the memory a scenario will take,
//! made from the scenario before anything is built, so that a run that cannot fit is refused
//! up front with a one-line error naming the key, never aborted by the allocator half-way.
//!
//! The estimate is a sum of terms, each a count read from the scenario times a per-item size in
//! [`cost`]; the sizes describe the simulator as it is (they are the one place to change when
//! a data structure changes). It is an estimate, meant to be within a small factor of the peak
//! resident size: it refuses what cannot fit, not what is merely large.

use super::error::{ErrorKind, ScenarioError};
use super::model::{FlowKind, NodeKind, Scenario};
use concord_cc::time::Duration;
use std::io::Read;
use std::path::Path;

/// The memory a scenario may need unless told otherwise (`concord run --max-memory`): 8 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;

/// The largest scenario file read: 16 MiB (the largest shipped scenario is a few kilobytes).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Bytes per item of what a run holds, from the simulator's data structures.
pub mod cost {
    /// The process before the scenario: code, the allocator, buffers.
    pub const BASE: u64 = 8 << 20;
    /// One entry of a next-hop table (`routing::Routes`: a `u32` per node for each node that
    /// has a table of its own, see [`super::routing_roots`]).
    pub const ROUTE_ENTRY: u64 = 4;
    /// A node (its name, state and the breadth-first search's per-node vectors).
    pub const NODE: u64 = 256;
    /// A channel (one direction of a link: its queue, statistics and names).
    pub const CHANNEL: u64 = 1_024;
    /// A flow's state: sender, receiver, statistics, the packets and events it keeps in flight
    /// (3.7 KB measured at 20,000 TCP flows on one dumbbell pair for 0.2 s, 79 MB peak; 13.4 kB
    /// per pair, nodes and channels included, at 100,000 pairs over 1 Gbps / 25 ms for 10 s,
    /// 1.34 GB peak).
    pub const FLOW: u64 = 8_192;
    /// A bin of a flow's goodput series (`metrics::Series`: `u64` bytes per bin).
    pub const GOODPUT_BIN: u64 = 8;
    /// A queue-occupancy sample (`simulator::QueueSample`: time, channel, packets, bytes,
    /// average).
    pub const QUEUE_SAMPLE: u64 = 40;
    /// A segment of a TCP flow's initial window, sent at once: its record on the sender's
    /// retransmission queue (24 bytes) and the packet and event carrying it.
    pub const INITIAL_WINDOW_SEGMENT: u64 = 128;
}

/// One term of an [`Estimate`]: what it counts and the key that sets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The key (or section) that sets the count, as written in a scenario file.
    pub key: &'static str,
    /// What is counted, for the error message (e.g. "routing between 200002 nodes").
    pub what: String,
    /// Bytes.
    pub bytes: u64,
    /// How to make it smaller.
    pub fix: &'static str,
}

/// The memory a scenario is expected to take, term by term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// The terms, in a fixed order.
    pub terms: Vec<Term>,
}

impl Estimate {
    /// The whole estimate, in bytes (saturating).
    pub fn bytes(&self) -> u64 {
        self.terms
            .iter()
            .fold(cost::BASE, |sum, t| sum.saturating_add(t.bytes))
    }

    /// The largest term.
    pub fn largest(&self) -> Option<&Term> {
        self.terms.iter().max_by_key(|t| t.bytes)
    }
}

/// How many times `step` fits in `total`, rounded up (at least 1).
fn steps(total: Duration, step: Duration) -> u64 {
    total.as_nanos().div_ceil(step.as_nanos().max(1)).max(1)
}

/// The nodes that get a next-hop table of their own (`routing::Routes`): every router, and every
/// host that is not reached through exactly one router (a host behind one router is reached
/// through that router's table).
fn routing_roots(sc: &Scenario) -> u64 {
    /// A host's neighbours so far: none, exactly one, or several.
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        None,
        One(usize),
        Several,
    }
    let mut seen = vec![Seen::None; sc.nodes.len()];
    for l in &sc.links {
        for (n, other) in [(l.a, l.b), (l.b, l.a)] {
            if let Some(s) = seen.get_mut(n) {
                *s = match *s {
                    Seen::None => Seen::One(other),
                    Seen::One(o) if o == other => Seen::One(o),
                    _ => Seen::Several,
                };
            }
        }
    }
    let is_router = |n: usize| sc.nodes.get(n).is_some_and(|n| n.kind == NodeKind::Router);
    (0..sc.nodes.len())
        .filter(|&n| match seen[n] {
            _ if is_router(n) => true,
            Seen::None => false,
            Seen::One(r) => !is_router(r),
            Seen::Several => true,
        })
        .count() as u64
}

/// The memory `sc` is expected to take.
pub fn estimate(sc: &Scenario) -> Estimate {
    let nodes = sc.nodes.len() as u64;
    let roots = routing_roots(sc);
    let channels = 2 * sc.links.len() as u64;
    let flows = sc.flows.len() as u64;
    let mut terms = vec![
        Term {
            key: "[topology] pairs/routers",
            what: format!("routing between {nodes} nodes"),
            fix: "use fewer nodes (`pairs`, `routers` or `[[node]]` entries)",
            bytes: roots
                .saturating_mul(nodes)
                .saturating_mul(cost::ROUTE_ENTRY)
                .saturating_add(nodes.saturating_mul(cost::NODE)),
        },
        Term {
            key: "[topology] or [[link]]",
            what: format!("{channels} channels"),
            fix: "use fewer links",
            bytes: channels.saturating_mul(cost::CHANNEL),
        },
        Term {
            key: "[[flow]] count",
            what: format!("{flows} flows"),
            fix: "use fewer flows (a smaller `count`)",
            bytes: flows.saturating_mul(cost::FLOW),
        },
    ];
    let bins = steps(sc.duration, sc.record.bin);
    terms.push(Term {
        key: "[record] bin",
        what: format!("{bins} goodput bins for each of {flows} flows"),
        fix: "make `[record] bin` longer or `duration` shorter",
        bytes: flows.saturating_mul(bins).saturating_mul(cost::GOODPUT_BIN),
    });
    let sampled = if sc.record.queues.is_empty() {
        // Every router output queue.
        sc.links
            .iter()
            .flat_map(|l| [l.a, l.b])
            .filter(|&n| sc.nodes.get(n).is_some_and(|n| n.kind == NodeKind::Router))
            .count() as u64
    } else {
        sc.record.queues.len() as u64
    };
    let samples = steps(sc.duration, sc.record.queue_interval);
    // `queue_interval` is `bin` unless written.
    let (key, fix) = if sc.record.queue_interval == sc.record.bin {
        (
            "[record] bin",
            "make `[record] bin` (or `queue_interval`) longer, `duration` shorter, or list fewer `queues`",
        )
    } else {
        (
            "[record] queue_interval",
            "make `[record] queue_interval` longer, `duration` shorter, or list fewer `queues`",
        )
    };
    terms.push(Term {
        key,
        fix,
        what: format!("{samples} queue samples for each of {sampled} queues"),
        bytes: sampled
            .saturating_mul(samples)
            .saturating_mul(cost::QUEUE_SAMPLE),
    });
    let window: u64 = sc
        .flows
        .iter()
        .map(|f| match &f.kind {
            FlowKind::Tcp { tcp, .. } => u64::from(tcp.initial_cwnd),
            _ => 0,
        })
        .fold(0, u64::saturating_add);
    terms.push(Term {
        key: "initial_cwnd",
        what: format!("{window} segments of initial windows"),
        fix: "make `initial_cwnd` smaller",
        bytes: window.saturating_mul(cost::INITIAL_WINDOW_SEGMENT),
    });
    Estimate { terms }
}

/// Refuses `sc` if its [`estimate`] is over `max_memory` bytes, naming the largest term's key.
pub fn check(sc: &Scenario, max_memory: u64) -> Result<(), ScenarioError> {
    let e = estimate(sc);
    let need = e.bytes();
    if need <= max_memory {
        return Ok(());
    }
    let path = sc
        .source
        .as_ref()
        .map_or_else(|| "<input>".to_string(), |p| p.display().to_string());
    let (key, what, fix) = e.largest().map_or(("duration", String::new(), ""), |t| {
        (t.key, t.what.clone(), t.fix)
    });
    Err(ScenarioError::new(
        path,
        0,
        0,
        ErrorKind::Inconsistent,
        format!(
            "the scenario would need about {} of memory, over the limit of {}; most of it is \
             for {what} (set by `{key}`)",
            human(need),
            human(max_memory)
        ),
        format!("{fix}, or raise the limit with --max-memory"),
    ))
}

/// `bytes` as a short figure with a binary unit ("8.0 GiB").
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A byte count written with a unit: `B`, decimal `KB`/`MB`/`GB`/`TB` or binary
/// `KiB`/`MiB`/`GiB`/`TiB` (e.g. "8GiB", "500 MB"), as `--max-memory` takes it.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => {
            return Err(format!(
                "`{text}` has no unit of bytes; write for example 8GiB, 500MB or 1048576B"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a number of bytes; write for example 8GiB"))?;
    let bytes = value * scale as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!(
            "`{text}` is out of range; give at least 1B and less than 16EiB"
        ));
    }
    Ok(bytes as u64)
}

/// Reads the scenario file at `path` as UTF-8 text, refusing one over [`MAX_FILE_BYTES`]
/// (reading no more than that, so a device or a pipe that never ends is refused too).
pub fn read_scenario_file(path: &Path) -> Result<String, ScenarioError> {
    let io_error = |message: String, fix: &str| {
        ScenarioError::new(
            path.display().to_string(),
            0,
            0,
            ErrorKind::Io,
            message,
            fix,
        )
    };
    let file = std::fs::File::open(path).map_err(|e| {
        io_error(
            format!("cannot read the scenario: {e}"),
            "check that the file exists and is readable UTF-8 text",
        )
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            io_error(
                format!("cannot read the scenario: {e}"),
                "check that the file exists and is readable UTF-8 text",
            )
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io_error(
            format!(
                "the scenario file is larger than {}, the most concord reads",
                human(MAX_FILE_BYTES)
            ),
            "give a scenario file; describe many flows with `count` rather than one table each",
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        io_error(
            format!("cannot read the scenario: it is not UTF-8 text ({e})"),
            "check that the file exists and is readable UTF-8 text",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;

    const DUMBBELL: &str = r#"
duration = "60s"
[topology]
kind = "dumbbell"
pairs = PAIRS
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
"#;

    fn dumbbell(pairs: u32) -> Scenario {
        parse_str(&DUMBBELL.replace("PAIRS", &pairs.to_string()), None).expect("valid")
    }

    #[test]
    fn routing_keeps_a_table_per_router_only_on_a_dumbbell() {
        // 4 pairs: 2 * 4 + 2 = 10 nodes; the hosts sit behind r1 or r2, so the two routers
        // hold the only tables.
        let e = estimate(&dumbbell(4));
        let routing = &e.terms[0];
        assert_eq!(routing.bytes, 2 * 10 * cost::ROUTE_ENTRY + 10 * cost::NODE);
        assert_eq!(routing.what, "routing between 10 nodes");
        // 100,000 pairs: still two tables, of 200,002 entries each.
        let e = estimate(&dumbbell(100_000));
        assert_eq!(
            e.terms[0].bytes,
            2 * 200_002 * cost::ROUTE_ENTRY + 200_002 * cost::NODE
        );
    }

    #[test]
    fn goodput_bins_and_queue_samples_follow_the_record_intervals() {
        let sc = dumbbell(1);
        let e = estimate(&sc);
        // 60 s in 100 ms bins, one flow.
        let bins = e
            .terms
            .iter()
            .find(|t| t.what.contains("goodput bins"))
            .expect("term");
        assert_eq!(bins.bytes, 600 * cost::GOODPUT_BIN);
        // The router output queues of a dumbbell: r1 and r2 each feed the other and one host.
        let q = e
            .terms
            .iter()
            .find(|t| t.what.contains("queue samples"))
            .expect("term");
        assert_eq!(q.bytes, 4 * 600 * cost::QUEUE_SAMPLE);
    }

    #[test]
    fn a_small_scenario_is_far_below_the_limit() {
        let e = estimate(&dumbbell(4));
        assert!(e.bytes() < 16 << 20, "{}", e.bytes());
        assert!(check(&dumbbell(4), DEFAULT_MAX_MEMORY).is_ok());
    }

    #[test]
    fn over_the_limit_is_refused_in_one_line_naming_the_key() {
        let sc = dumbbell(4);
        let e = check(&sc, 1 << 20).expect_err("refused");
        let text = e.to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains("--max-memory"), "{text}");
        assert!(text.contains("over the limit of 1.0 MiB"), "{text}");
    }

    #[test]
    fn sizes_parse_with_their_units() {
        assert_eq!(parse_bytes("8GiB"), Ok(8 << 30));
        assert_eq!(parse_bytes("500 MB"), Ok(500_000_000));
        assert_eq!(parse_bytes("1.5KiB"), Ok(1536));
        assert_eq!(parse_bytes("7B"), Ok(7));
        assert!(parse_bytes("8").is_err());
        assert!(parse_bytes("GiB").is_err());
        assert!(parse_bytes("0B").is_err());
        assert!(parse_bytes("-1GB").is_err());
        assert!(parse_bytes("1e30TiB").is_err());
    }

    #[test]
    fn human_sizes_use_binary_units() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(8 << 30), "8.0 GiB");
        assert_eq!(human(1536), "1.5 KiB");
    }
}
