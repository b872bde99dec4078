//! The grid of cases, read from one TOML file (`crates/validate/grid.toml`).
//!
//! Each `[[case]]` table names a topology and lists values for the quantities it sweeps; a list
//! value expands the table into the cartesian product, so one table can stand for a row of the
//! grid. Every case runs in concord and in ns-3 with the same settings (see `docs/validation.md`).
//!
//! ```toml
//! [defaults]
//! duration = "30s"
//! seeds = [1, 2]
//!
//! [[case]]
//! topology = "dumbbell"
//! flows = [1, 4]
//! rate = "10Mbps"
//! rtt = ["20ms", "100ms"]
//! queue = "droptail"
//!
//! [quick]                 # the subset `--quick` runs (CI): case ids, and the first n seeds
//! cases = ["dumbbell-4f-10Mbps-100ms-droptail"]
//! seeds = 1
//! ```

use concord_cc::time::Duration;
use concord_cc::units::{parse_duration, Rate};
use serde::Deserialize;
use std::collections::BTreeSet;

/// The access links' rate, bits per second (ns-3's `1Gbps`, as in `bench/ns3/dumbbell.cc`).
pub const ACCESS_RATE_BPS: u64 = 1_000_000_000;
/// The access links' one-way delay, nanoseconds (1 ms each side of the bottleneck).
pub const ACCESS_DELAY_NS: u64 = 1_000_000;
/// Start jitter: flows start uniformly in [0, 100 ms), in both simulators.
pub const START_JITTER_NS: u64 = 100_000_000;
/// TCP payload per segment, bytes (both simulators).
pub const MSS_BYTES: u64 = 1448;

/// The shape of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    /// N senders on router r1, N receivers on r2, the bottleneck r1 -> r2.
    Dumbbell,
    /// Routers r1..r(hops+1) in a line; `flows` end-to-end flows from r1 to the last router, and
    /// `flows` cross flows over each hop alone.
    ParkingLot {
        /// Router-to-router links, each a bottleneck of the same rate.
        hops: u32,
    },
}

/// The bottleneck queue discipline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Queue {
    /// Tail drop at the limit.
    DropTail,
    /// RED (Floyd & Jacobson 1993), gentle, w_q 0.002, max_p 0.1, thresholds in packets.
    Red {
        /// Lower threshold of the average queue, packets.
        min_th: f64,
        /// Upper threshold, packets.
        max_th: f64,
        /// Mark ECN-capable packets instead of dropping early (RFC 3168), senders negotiate ECN.
        ecn: bool,
    },
}

impl Queue {
    /// A short name for tables: `droptail`, `red-5-15`, `red-ecn-25-75`.
    pub fn label(&self) -> String {
        match *self {
            Queue::DropTail => "droptail".into(),
            Queue::Red {
                min_th,
                max_th,
                ecn,
            } => format!(
                "red{}-{}-{}",
                if ecn { "-ecn" } else { "" },
                trim(min_th),
                trim(max_th)
            ),
        }
    }
}

fn trim(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// The TCP senders' fast-recovery algorithm, in both simulators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaseRecovery {
    /// RFC 6582 NewReno recovery (concord `recovery = "classic"`, ns-3 `TcpClassicRecovery`).
    #[default]
    Classic,
    /// Proportional Rate Reduction, RFC 6937 with the slow-start bound (concord `recovery =
    /// "prr"`, ns-3 `TcpPrrRecovery`, ns-3's default).
    Prr,
}

impl CaseRecovery {
    /// The name in the grid file, the scenario key and ns-3's `--recovery`.
    pub fn name(self) -> &'static str {
        match self {
            CaseRecovery::Classic => "classic",
            CaseRecovery::Prr => "prr",
        }
    }
}

/// One case of the grid, with every quantity fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Unique name, built from the settings (`dumbbell-4f-10Mbps-50ms-droptail`).
    pub id: String,
    /// The group it was listed under (`grid`, `startup`, `issue`, ...).
    pub group: String,
    /// What the case is for, from the file.
    pub note: String,
    /// The shape.
    pub topology: Topology,
    /// Dumbbell: sender/receiver pairs. Parking lot: end-to-end flows (and cross flows per hop).
    pub flows: u32,
    /// Bottleneck rate (every router-to-router link).
    pub rate: Rate,
    /// The round-trip propagation time of a one-hop path: 2 x (1 ms + link delay + 1 ms).
    pub rtt: Duration,
    /// Bottleneck queue limit, packets.
    pub limit_packets: u32,
    /// The bottleneck queue discipline.
    pub queue: Queue,
    /// Random loss on each bottleneck link's data direction, after the queue, 0 to 1.
    pub loss: f64,
    /// The senders' fast-recovery algorithm.
    pub recovery: CaseRecovery,
    /// SACK (RFC 2018) with RFC 6675 loss recovery in both simulators (concord `sack = true`,
    /// ns-3 `TcpSocketBase::Sack`).
    pub sack: bool,
    /// Simulated time.
    pub duration: Duration,
    /// Seeds; each runs in both simulators, and the means are compared.
    pub seeds: Vec<u64>,
    /// Part of the `--quick` subset.
    pub quick: bool,
    /// With `--quick`, only this many of the seeds (the first ones); `None`: all.
    pub quick_seeds: Option<usize>,
}

impl Case {
    /// One-way delay of each router-to-router link.
    pub fn link_delay(&self) -> Duration {
        Duration::from_nanos((self.rtt.as_nanos() / 2).saturating_sub(2 * ACCESS_DELAY_NS))
    }

    /// Every flow in the case.
    pub fn flow_count(&self) -> u32 {
        match self.topology {
            Topology::Dumbbell => self.flows,
            Topology::ParkingLot { hops } => self.flows * (1 + hops),
        }
    }

    /// Socket buffers and receive window, bytes: 1 MiB, or four times the longest path's
    /// bandwidth-delay product plus the queues when that is more, so the window never limits.
    pub fn buffer_bytes(&self) -> u64 {
        let hops = match self.topology {
            Topology::Dumbbell => 1,
            Topology::ParkingLot { hops } => u64::from(hops),
        };
        let rtt_s = self.rtt.as_secs_f64() * hops as f64;
        let bdp = self.rate.bytes_per_sec() * rtt_s;
        let queues = (u64::from(self.limit_packets) * 1500 * hops) as f64;
        let need = (4.0 * (bdp + queues)).ceil() as u64;
        need.max(1 << 20).next_multiple_of(1 << 20)
    }
}

/// A mistake in the grid file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GridError {
    /// Not TOML, or a key of the wrong type or an unknown key.
    #[error(
        "{path}: {message}; fix: see the keys listed at the top of crates/validate/src/grid.rs"
    )]
    Syntax {
        /// The file.
        path: String,
        /// The TOML reader's message (with line and column).
        message: String,
    },
    /// A value out of range or inconsistent.
    #[error("{path}: case #{index}: {message}; fix: {fix}")]
    Value {
        /// The file.
        path: String,
        /// 1-based position of the `[[case]]` table.
        index: usize,
        /// What is wrong.
        message: String,
        /// How to put it right.
        fix: String,
    },
    /// `--cases` named nothing in the grid.
    #[error("no case matches `{pattern}`; fix: name a case id or a part of one, e.g. `dumbbell-4f`, or a group ({groups})")]
    NoMatch {
        /// The pattern given.
        pattern: String,
        /// The groups the grid has.
        groups: String,
    },
}

/// One value or a list of them.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    fn values(&self) -> Vec<T> {
        match self {
            OneOrMany::One(v) => vec![v.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A queue as written: `"droptail"`, or `{ kind = "red", min_th = 5, max_th = 15, ecn = true }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum RawQueue {
    Name(String),
    Table(RawQueueTable),
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
struct RawQueueTable {
    kind: String,
    min_th: Option<f64>,
    max_th: Option<f64>,
    ecn: Option<bool>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    duration: Option<String>,
    seeds: Option<Vec<u64>>,
    limit: Option<u32>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawCase {
    group: Option<String>,
    note: Option<String>,
    topology: String,
    hops: Option<u32>,
    flows: OneOrMany<u32>,
    rate: OneOrMany<String>,
    rtt: OneOrMany<String>,
    queue: OneOrMany<RawQueue>,
    limit: Option<u32>,
    loss: Option<OneOrMany<f64>>,
    recovery: Option<String>,
    sack: Option<bool>,
    duration: Option<String>,
    seeds: Option<Vec<u64>>,
}

/// The `--quick` subset: case ids, and how many of each case's seeds it runs.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawQuick {
    cases: Vec<String>,
    seeds: Option<usize>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawGrid {
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    quick: RawQuick,
    case: Vec<RawCase>,
}

/// The grid shipped with concord.
pub const DEFAULT_GRID: &str = include_str!("../grid.toml");

/// Reads a grid from TOML text; `path` names it in errors.
pub fn parse(text: &str, path: &str) -> Result<Vec<Case>, GridError> {
    let raw: RawGrid = toml::from_str(text).map_err(|e| GridError::Syntax {
        path: path.into(),
        message: e.to_string().trim().replace('\n', " "),
    })?;
    let mut cases = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, rc) in raw.case.iter().enumerate() {
        let index = i + 1;
        let bad = |message: String, fix: &str| GridError::Value {
            path: path.into(),
            index,
            message,
            fix: fix.into(),
        };
        let topology = match (rc.topology.as_str(), rc.hops) {
            ("dumbbell", None) => Topology::Dumbbell,
            ("dumbbell", Some(_)) => {
                return Err(bad("`hops` is for parking lots".into(), "remove `hops`"))
            }
            ("parking_lot", h) => {
                let hops = h.unwrap_or(2);
                if !(1..=8).contains(&hops) {
                    return Err(bad(format!("hops = {hops}"), "hops from 1 to 8"));
                }
                Topology::ParkingLot { hops }
            }
            (other, _) => {
                return Err(bad(
                    format!("unknown topology `{other}`"),
                    "topology = \"dumbbell\" or \"parking_lot\"",
                ))
            }
        };
        let duration_text = rc
            .duration
            .clone()
            .or(raw.defaults.duration.clone())
            .unwrap_or_else(|| "30s".into());
        let duration = parse_duration(&duration_text)
            .map_err(|e| bad(format!("duration: {e}"), "a duration such as \"30s\""))?;
        if duration.is_zero() {
            return Err(bad("duration is zero".into(), "a duration above zero"));
        }
        let seeds = rc
            .seeds
            .clone()
            .or(raw.defaults.seeds.clone())
            .unwrap_or_else(|| vec![1]);
        if seeds.is_empty() || seeds.contains(&0) {
            return Err(bad(
                "seeds must be a non-empty list of numbers from 1".into(),
                "seeds = [1, 2, 3] (ns-3 takes the seed as its run number, which starts at 1)",
            ));
        }
        let limit = rc.limit.or(raw.defaults.limit).unwrap_or(100);
        if limit == 0 {
            return Err(bad(
                "limit = 0".into(),
                "a queue limit of at least 1 packet",
            ));
        }
        let queues = rc
            .queue
            .values()
            .iter()
            .map(|q| read_queue(q, limit).map_err(|(m, f)| bad(m, &f)))
            .collect::<Result<Vec<_>, _>>()?;
        let rates = rc
            .rate
            .values()
            .iter()
            .map(|r| {
                r.parse::<Rate>()
                    .map_err(|e| bad(format!("rate: {e}"), "a rate such as \"10Mbps\""))
                    .and_then(|r| {
                        if r.bps() == 0 {
                            Err(bad("rate is zero".into(), "a rate above zero"))
                        } else {
                            Ok(r)
                        }
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rtts = rc
            .rtt
            .values()
            .iter()
            .map(|r| {
                let d = parse_duration(r)
                    .map_err(|e| bad(format!("rtt: {e}"), "a duration such as \"50ms\""))?;
                if d < Duration::from_millis(4) {
                    return Err(bad(
                        format!("rtt = {r} is shorter than the access links' 4 ms"),
                        "an rtt of at least \"4ms\"",
                    ));
                }
                Ok(d)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let losses = rc.loss.as_ref().map_or(vec![0.0], |l| l.values());
        if let Some(l) = losses.iter().find(|l| !(0.0..1.0).contains(*l)) {
            return Err(bad(
                format!("loss = {l} is not a fraction"),
                "a loss probability in [0, 1), e.g. 0.01 for 1%",
            ));
        }
        let flows = rc.flows.values();
        if flows.is_empty() || flows.contains(&0) {
            return Err(bad(
                "flows must list counts of at least 1".into(),
                "flows = 4 or flows = [1, 4]",
            ));
        }
        let recovery = match rc.recovery.as_deref() {
            None | Some("classic") => CaseRecovery::Classic,
            Some("prr") => CaseRecovery::Prr,
            Some(other) => {
                return Err(bad(
                    format!("unknown recovery `{other}`"),
                    "recovery = \"classic\" (RFC 6582) or \"prr\" (RFC 6937)",
                ))
            }
        };
        let group = rc.group.clone().unwrap_or_else(|| "grid".into());
        for &n in &flows {
            for &rate in &rates {
                for &rtt in &rtts {
                    for &queue in &queues {
                        for &loss in &losses {
                            let mut case = Case {
                                id: String::new(),
                                group: group.clone(),
                                note: rc.note.clone().unwrap_or_default(),
                                topology,
                                flows: n,
                                rate,
                                rtt,
                                limit_packets: limit,
                                queue,
                                loss,
                                recovery,
                                sack: rc.sack.unwrap_or(false),
                                duration,
                                seeds: seeds.clone(),
                                quick: false,
                                quick_seeds: raw.quick.seeds,
                            };
                            case.id = case_id(&case);
                            if !seen.insert(case.id.clone()) {
                                return Err(bad(
                                    format!("case `{}` is listed twice", case.id),
                                    "list each combination once (ids are built from the settings and the group)",
                                ));
                            }
                            cases.push(case);
                        }
                    }
                }
            }
        }
    }
    for id in &raw.quick.cases {
        match cases.iter_mut().find(|c| &c.id == id) {
            Some(c) => c.quick = true,
            None => {
                return Err(GridError::Value {
                    path: path.into(),
                    index: 0,
                    message: format!("[quick] names `{id}`, which the grid does not list"),
                    fix: "name case ids as `concord validate --list` prints them".into(),
                })
            }
        }
    }
    if raw.quick.seeds == Some(0) {
        return Err(GridError::Value {
            path: path.into(),
            index: 0,
            message: "[quick] seeds = 0".into(),
            fix: "run at least one seed of each quick case".into(),
        });
    }
    if cases.is_empty() {
        return Err(GridError::Value {
            path: path.into(),
            index: 0,
            message: "the grid lists no case".into(),
            fix: "add a [[case]] table".into(),
        });
    }
    Ok(cases)
}

fn read_queue(q: &RawQueue, limit: u32) -> Result<Queue, (String, String)> {
    let table = match q {
        RawQueue::Name(n) if n == "droptail" => return Ok(Queue::DropTail),
        RawQueue::Name(n) if n == "red" || n == "red-ecn" => RawQueueTable {
            kind: "red".into(),
            min_th: None,
            max_th: None,
            ecn: Some(n == "red-ecn"),
        },
        RawQueue::Name(n) => {
            return Err((
                format!("unknown queue `{n}`"),
                "queue = \"droptail\", \"red\", \"red-ecn\" or { kind = \"red\", min_th = 5, max_th = 15, ecn = false }".into(),
            ))
        }
        RawQueue::Table(t) => t.clone(),
    };
    if table.kind == "droptail" {
        if table.min_th.is_some() || table.max_th.is_some() || table.ecn.is_some() {
            return Err((
                "a droptail queue takes no thresholds or ecn".into(),
                "remove min_th, max_th and ecn, or write kind = \"red\"".into(),
            ));
        }
        return Ok(Queue::DropTail);
    }
    if table.kind != "red" {
        return Err((
            format!("unknown queue kind `{}`", table.kind),
            "kind = \"droptail\" or \"red\"".into(),
        ));
    }
    // concord's RED defaults (RedConfig::for_limit): thresholds at 25% and 75% of the limit.
    let min_th = table.min_th.unwrap_or(f64::from(limit) * 0.25);
    let max_th = table.max_th.unwrap_or(f64::from(limit) * 0.75);
    if !(min_th >= 0.0 && min_th < max_th && max_th <= f64::from(limit)) {
        return Err((
            format!("RED thresholds min_th {min_th}, max_th {max_th} with limit {limit}"),
            "0 <= min_th < max_th <= limit (packets)".into(),
        ));
    }
    Ok(Queue::Red {
        min_th,
        max_th,
        ecn: table.ecn.unwrap_or(false),
    })
}

/// The id of a case: topology, flows, rate, RTT, queue, loss; the group if not `grid`.
fn case_id(c: &Case) -> String {
    let topo = match c.topology {
        Topology::Dumbbell => "dumbbell".to_string(),
        Topology::ParkingLot { hops } => format!("parking{hops}"),
    };
    let mut id = format!(
        "{topo}-{}f-{}-{}ms-{}",
        c.flows,
        rate_label(c.rate),
        c.rtt.as_millis(),
        c.queue.label()
    );
    if c.limit_packets != 100 {
        id.push_str(&format!("-q{}", c.limit_packets));
    }
    if c.loss > 0.0 {
        id.push_str(&format!("-loss{}", trim(c.loss * 100.0)));
    }
    if c.recovery != CaseRecovery::Classic {
        id.push_str(&format!("-{}", c.recovery.name()));
    }
    if c.sack {
        id.push_str("-sack");
    }
    if c.group != "grid" {
        id = format!("{}-{id}", c.group);
    }
    id
}

/// `10Mbps`, `1.5Mbps`, `500kbps`.
pub fn rate_label(r: Rate) -> String {
    let bps = r.bps();
    if bps / 1_000_000 * 1_000_000 == bps {
        format!("{}Mbps", bps / 1_000_000)
    } else if bps >= 1_000_000 {
        format!("{}Mbps", bps as f64 / 1e6)
    } else {
        format!("{}kbps", bps as f64 / 1e3)
    }
}

/// The cases `patterns` select (each an id, a part of one, or a group; all when empty), in grid
/// order; `quick` keeps only the `--quick` subset, each with its quick seeds.
pub fn select(cases: &[Case], patterns: &[String], quick: bool) -> Result<Vec<Case>, GridError> {
    for p in patterns {
        if !cases.iter().any(|c| matches(c, p)) {
            let groups: BTreeSet<&str> = cases.iter().map(|c| c.group.as_str()).collect();
            return Err(GridError::NoMatch {
                pattern: p.clone(),
                groups: groups.into_iter().collect::<Vec<_>>().join(", "),
            });
        }
    }
    Ok(cases
        .iter()
        .filter(|c| !quick || c.quick)
        .filter(|c| patterns.is_empty() || patterns.iter().any(|p| matches(c, p)))
        .map(|c| {
            let mut c = c.clone();
            if let (true, Some(n)) = (quick, c.quick_seeds) {
                c.seeds.truncate(n);
            }
            c
        })
        .collect())
}

fn matches(c: &Case, pattern: &str) -> bool {
    c.id == pattern || c.group == pattern || c.id.contains(pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_with_lists_expands_into_the_cartesian_product_with_ids_from_the_settings() {
        let text = r#"
[defaults]
duration = "20s"
seeds = [1, 2]

[[case]]
topology = "dumbbell"
flows = [1, 4]
rate = "10Mbps"
rtt = ["20ms", "100ms"]
queue = ["droptail", { kind = "red", min_th = 5, max_th = 15, ecn = true }]

[quick]
cases = ["dumbbell-4f-10Mbps-20ms-droptail", "dumbbell-4f-10Mbps-100ms-droptail"]
seeds = 1
"#;
        let cases = parse(text, "g.toml").expect("valid");
        assert_eq!(cases.len(), 8);
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[0], "dumbbell-1f-10Mbps-20ms-droptail");
        assert_eq!(ids[1], "dumbbell-1f-10Mbps-20ms-red-ecn-5-15");
        assert_eq!(ids[7], "dumbbell-4f-10Mbps-100ms-red-ecn-5-15");
        assert_eq!(cases.iter().filter(|c| c.quick).count(), 2);
        assert_eq!(cases[0].seeds, vec![1, 2]);
        let quick = select(&cases, &[], true).expect("quick");
        assert_eq!(quick.len(), 2);
        assert_eq!(quick[0].seeds, vec![1]);
        assert_eq!(
            select(&cases, &[], false).expect("all")[0].seeds,
            vec![1, 2]
        );
        assert_eq!(cases[0].duration, Duration::from_secs(20));
        // 20 ms RTT: 2 x (1 + 8 + 1) ms.
        assert_eq!(cases[0].link_delay(), Duration::from_millis(8));
    }

    #[test]
    fn red_without_thresholds_takes_concords_defaults_of_a_quarter_and_three_quarters() {
        let text = r#"
[[case]]
topology = "parking_lot"
flows = 2
rate = "100Mbps"
rtt = "50ms"
queue = "red"
limit = 40
loss = 0.01
"#;
        let cases = parse(text, "g.toml").expect("valid");
        assert_eq!(
            cases[0].queue,
            Queue::Red {
                min_th: 10.0,
                max_th: 30.0,
                ecn: false
            }
        );
        assert_eq!(cases[0].id, "parking2-2f-100Mbps-50ms-red-10-30-q40-loss1");
        assert_eq!(cases[0].flow_count(), 6);
        assert!(!cases[0].quick);
    }

    #[test]
    fn bad_values_name_the_case_and_the_fix() {
        let text = "[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"10Mbps\"\nrtt = \"2ms\"\nqueue = \"droptail\"\n";
        let e = parse(text, "g.toml").expect_err("too short");
        assert_eq!(
            e.to_string(),
            "g.toml: case #1: rtt = 2ms is shorter than the access links' 4 ms; fix: an rtt of at least \"4ms\""
        );
        let text = "[[case]]\ntopology = \"ring\"\nflows = 1\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\n";
        let e = parse(text, "g.toml").expect_err("no ring");
        assert!(e.to_string().contains("unknown topology `ring`"), "{e}");
        let e = parse(
            "[quick]\ncases = [\"nope\"]\n[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\n",
            "g.toml",
        )
        .expect_err("unknown quick id");
        assert!(e.to_string().contains("[quick] names `nope`"), "{e}");
        let e = parse("[[case]]\ntopolgy = 1\n", "g.toml").expect_err("typo");
        assert!(e.to_string().starts_with("g.toml: "), "{e}");
    }

    #[test]
    fn buffers_cover_four_times_the_path_and_queue() {
        let text = "[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"100Mbps\"\nrtt = \"200ms\"\nqueue = \"droptail\"\n";
        let c = &parse(text, "g.toml").expect("valid")[0];
        // BDP 2.5 MB + 150 KB queue, x4 = 10.6 MB, rounded up to 11 MiB.
        assert_eq!(c.buffer_bytes(), 11 << 20);
    }

    #[test]
    fn selection_by_part_of_an_id_or_group_and_an_unknown_pattern_is_an_error() {
        let cases = parse(DEFAULT_GRID, "grid.toml").expect("the shipped grid is valid");
        let some = select(&cases, &["dumbbell-4f".into()], false).expect("matches");
        assert!(!some.is_empty());
        assert!(some.iter().all(|c| c.id.contains("dumbbell-4f")));
        let e = select(&cases, &["nothing-like-this".into()], false).expect_err("no match");
        assert!(e
            .to_string()
            .contains("no case matches `nothing-like-this`"));
        let quick = select(&cases, &[], true).expect("quick");
        assert!(!quick.is_empty() && quick.len() < cases.len());
    }
}
