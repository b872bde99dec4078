//! The ns-3 side: the arguments of `bench/ns3/validate.cc` for a case, running it, and reading
//! the JSON it prints.

use crate::grid::{Case, CaseRecovery, Queue, Topology};
use crate::measurement::{fold_cwnd, CwndStats, Measurement};
use crate::ns3_cache::Ns3Cache;
use serde::Deserialize;
use std::path::Path;
use std::process::Command;

/// ns-3's TCP as configured for a run: the reference setting, or one mechanism switched to see
/// whether it explains a difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// NewReno, classic recovery (RFC 5681/6582), IW 10, SACK off, limited transmit on (ns-3's
    /// default), RED with ns-3's defaults.
    Reference,
    /// Limited transmit (RFC 3042) off (on in both simulators' reference setting).
    NoLimitedTransmit,
    /// Proportional rate reduction (RFC 6937, ns-3's default recovery) instead of classic.
    Prr,
    /// SACK (RFC 2018) on, with ns-3's RFC 6675 loss recovery.
    Sack,
    /// RED without `Wait` (on in both simulators' reference setting).
    RedNoWait,
    /// A 40 ms delayed-ACK timer instead of 200 ms: with a 200 ms minimum RTO, ns-3's sender
    /// times out while the receiver still holds the ACK of a lone segment (a spurious timeout,
    /// RFC 5681 4.2 against RFC 6298 2.4); the shorter timer removes that race.
    ShortDelayedAck,
    /// A 1 s minimum RTO (RFC 6298 2.4) instead of 200 ms: the other way to part the
    /// retransmission timer from the delayed-ACK timer.
    LongMinRto,
    /// RFC 7323 timestamps off: RTT samples by Karn's rule only, as concord takes them (and
    /// 12 bytes less per packet).
    NoTimestamps,
    /// RFC 6582 section 3.2 step 1's `recover` test added to ns-3's sender (validate.cc's
    /// `--rfcRecover=1`): duplicate ACKs that do not cover more than `recover` do not start fast
    /// retransmit. ns-3 3.44's `TcpSocketBase::DupAck` lets through the duplicate ACKs of data
    /// resent after a timeout that the receiver already held; concord applies the test.
    RfcRecover,
    /// [`Variant::RfcRecover`] and [`Variant::ShortDelayedAck`] together: ns-3's two sources of
    /// spurious retransmissions (resent held data, the delayed-ACK timer racing the RTO) both
    /// removed.
    RfcRecoverShortDelayedAck,
    /// RFC 5681 section 3.1's window growth on the ACK that ends loss recovery after a timeout
    /// and RFC 6298 section 5.7's backed-off RTO kept until an RTT sample (validate.cc's
    /// `--rfcLossExit=1`). ns-3 3.44 counts no segment acknowledged on an ACK of exactly
    /// `recover` (cwnd stays at one segment) and recomputes the RTO without a sample on every new
    /// ACK: a lone segment then waits for the delayed-ACK timer and the 200 ms timer fires first.
    /// concord follows both rules. A deviation of ns-3, not its reference.
    RfcLossExit,
    /// RFC 3168 section 6.1.2's one reduction per window of data (validate.cc's
    /// `--rfcEcnOnce=1`): an ECN echo on an ACK of data sent before the last reduction (a
    /// timeout, a fast retransmit) is not answered. ns-3 3.44 enters CWR on it even in loss
    /// recovery, with ssthresh from the flight of then. Only for ECN cases. A deviation of ns-3.
    RfcEcnOnce,
    /// The three corrections of ns-3's departures from the RFCs together: [`Variant::RfcRecover`],
    /// [`Variant::RfcLossExit`] and, on ECN cases, [`Variant::RfcEcnOnce`].
    RfcAll,
}

impl Variant {
    /// Every variant, the reference first.
    pub const ALL: [Variant; 13] = [
        Variant::Reference,
        Variant::NoLimitedTransmit,
        Variant::Prr,
        Variant::Sack,
        Variant::RedNoWait,
        Variant::ShortDelayedAck,
        Variant::LongMinRto,
        Variant::NoTimestamps,
        Variant::RfcRecover,
        Variant::RfcRecoverShortDelayedAck,
        Variant::RfcLossExit,
        Variant::RfcEcnOnce,
        Variant::RfcAll,
    ];

    /// The name used in tables and file names.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Reference => "ns-3",
            Variant::NoLimitedTransmit => "ns-3 no-limited-transmit",
            Variant::Prr => "ns-3 prr",
            Variant::Sack => "ns-3 sack",
            Variant::RedNoWait => "ns-3 red-no-wait",
            Variant::ShortDelayedAck => "ns-3 delack-40ms",
            Variant::LongMinRto => "ns-3 min-rto-1s",
            Variant::NoTimestamps => "ns-3 no-timestamps",
            Variant::RfcRecover => "ns-3 rfc6582-recover",
            Variant::RfcRecoverShortDelayedAck => "ns-3 rfc6582-recover+delack-40ms",
            Variant::RfcLossExit => "ns-3 rfc5681-loss-exit",
            Variant::RfcEcnOnce => "ns-3 rfc3168-ecn-once",
            Variant::RfcAll => "ns-3 rfc-all",
        }
    }

    /// The mechanism the variant switches, as the table states a cause.
    pub fn mechanism(self) -> &'static str {
        match self {
            Variant::Reference => "none",
            Variant::NoLimitedTransmit => {
                "limited transmit (RFC 3042): ns-3 without it comes to concord"
            }
            Variant::Prr => "recovery: PRR (RFC 6937) moves ns-3",
            Variant::Sack => "SACK (RFC 2018/6675) moves ns-3",
            Variant::RedNoWait => {
                "RED's wait between early drops: ns-3 without it comes to concord"
            }
            Variant::ShortDelayedAck => {
                "ns-3's spurious timeouts: its 200 ms delayed-ACK timer races its 200 ms minimum RTO (a 40 ms timer brings ns-3 to concord)"
            }
            Variant::LongMinRto => {
                "ns-3's 200 ms minimum RTO: with 1 s (RFC 6298 2.4) ns-3 comes to concord"
            }
            Variant::NoTimestamps => {
                "RTT sampling: ns-3 without timestamps (Karn's rule only, as concord) comes to concord"
            }
            Variant::RfcRecover => {
                "ns-3's spurious fast retransmits: with RFC 6582 3.2 step 1's recover test (duplicate ACKs of resent held data do not start recovery) ns-3 comes to concord"
            }
            Variant::RfcRecoverShortDelayedAck => {
                "ns-3's spurious retransmissions: with RFC 6582's recover test and a 40 ms delayed-ACK timer together ns-3 comes to concord"
            }
            Variant::RfcLossExit => {
                "ns-3's loss exit: with cwnd grown on the ACK ending loss recovery (RFC 5681 3.1) and the backed-off RTO kept until an RTT sample (RFC 6298 5.7) ns-3 comes to concord"
            }
            Variant::RfcEcnOnce => {
                "ns-3's second ECN reduction: answering no ECN echo of data sent before its last reduction (RFC 3168 6.1.2) ns-3 comes to concord"
            }
            Variant::RfcAll => {
                "ns-3's departures from the RFCs: with RFC 6582's recover test, RFC 5681/6298's loss exit and RFC 3168's one ECN reduction per window together ns-3 comes to concord"
            }
        }
    }

    /// Whether the variant changes anything in `case`.
    pub fn applies_to(self, case: &Case) -> bool {
        match self {
            Variant::RedNoWait => matches!(case.queue, Queue::Red { .. }),
            Variant::Prr => case.recovery == CaseRecovery::Classic,
            Variant::Sack => !case.sack,
            Variant::RfcEcnOnce => matches!(case.queue, Queue::Red { ecn: true, .. }),
            _ => true,
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Variant::Reference => &[],
            Variant::NoLimitedTransmit => &["--limitedTransmit=0"],
            Variant::Prr => &["--recovery=prr"],
            Variant::Sack => &["--sack=1"],
            Variant::RedNoWait => &["--redWait=0"],
            Variant::ShortDelayedAck => &["--delAckTimeoutMs=40"],
            Variant::LongMinRto => &["--minRtoMs=1000"],
            Variant::NoTimestamps => &["--timestamps=0"],
            Variant::RfcRecover => &["--rfcRecover=1"],
            Variant::RfcRecoverShortDelayedAck => &["--rfcRecover=1", "--delAckTimeoutMs=40"],
            Variant::RfcLossExit => &["--rfcLossExit=1"],
            Variant::RfcEcnOnce => &["--rfcEcnOnce=1"],
            Variant::RfcAll => &["--rfcRecover=1", "--rfcLossExit=1"],
        }
    }
}

/// The command-line arguments of `validate.cc` for `case`, `seed` and `variant`.
pub fn args(case: &Case, seed: u64, variant: Variant) -> Vec<String> {
    let (topology, hops) = match case.topology {
        Topology::Dumbbell => ("dumbbell", 1),
        Topology::ParkingLot { hops } => ("parking", hops),
    };
    let mut a = vec![
        format!("--topology={topology}"),
        format!("--hops={hops}"),
        format!("--flows={}", case.flows),
        format!("--rateBps={}", case.rate.bps()),
        format!("--delayUs={}", case.link_delay().as_micros()),
        format!("--limit={}", case.limit_packets),
        format!("--loss={}", case.loss),
        format!("--duration={}", case.duration.as_secs_f64()),
        format!("--seed={seed}"),
        format!("--buf={}", case.buffer_bytes()),
    ];
    match case.queue {
        Queue::DropTail => a.push("--queue=droptail".into()),
        Queue::Red {
            min_th,
            max_th,
            ecn,
        } => {
            a.push("--queue=red".into());
            a.push(format!("--minTh={min_th}"));
            a.push(format!("--maxTh={max_th}"));
            a.push(format!("--ecn={}", u8::from(ecn)));
        }
    }
    if case.recovery != CaseRecovery::Classic {
        a.push(format!("--recovery={}", case.recovery.name()));
    }
    if case.sack {
        a.push("--sack=1".into());
    }
    a.extend(variant.args().iter().map(|s| (*s).to_string()));
    if variant == Variant::RfcAll && matches!(case.queue, Queue::Red { ecn: true, .. }) {
        a.push("--rfcEcnOnce=1".into());
    }
    a
}

/// Runs the ns-3 program at `exe` for one case, seed and variant.
pub fn run(exe: &Path, case: &Case, seed: u64, variant: Variant) -> Result<Measurement, String> {
    run_cached(exe, None, case, seed, variant)
}

/// [`run`], reading the output from `cache` when it holds this program's output for these
/// arguments, and storing it there otherwise.
pub fn run_cached(
    exe: &Path,
    cache: Option<&Ns3Cache>,
    case: &Case,
    seed: u64,
    variant: Variant,
) -> Result<Measurement, String> {
    let a = args(case, seed, variant);
    let parse = |text: &str| {
        parse_output(text, variant, seed, case.flow_count() as usize)
            .map_err(|e| format!("case {} seed {seed} ({}): {e}", case.id, variant.name()))
    };
    if let Some(text) = cache.and_then(|c| c.get(&case.id, &a)) {
        if let Ok(m) = parse(&text) {
            return Ok(m);
        }
    }
    let out = Command::new(exe).args(&a).output().map_err(|e| {
        format!(
            "cannot run {}: {e}; fix: build it with bench/ns3/build-validate.sh (or pass --ns3 PATH)",
            exe.display()
        )
    })?;
    if !out.status.success() {
        return Err(format!(
            "{} {} failed ({}): {}",
            exe.display(),
            a.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let m = parse(&text)?;
    if let Some(c) = cache {
        // Only the JSON line is kept; a failure to store costs a rerun later, nothing else.
        let line = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let _ = c.put(&case.id, &a, line);
    }
    Ok(m)
}

/// One flow's window accumulators as `validate.cc` prints them.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawCwnd {
    /// When the trace started (the socket's first window), seconds.
    first_s: f64,
    /// Integral of the window over time, segment-seconds.
    sum: f64,
    /// Integral of its square, segment^2-seconds.
    sum_sq: f64,
    /// Largest window, segments.
    max: f64,
}

#[derive(Deserialize, Debug)]
struct RawOutput {
    simulator: String,
    duration_s: f64,
    per_flow_goodput_bps: Vec<f64>,
    utilisation: f64,
    drops: u64,
    marks: u64,
    wire_losses: u64,
    timeouts: u64,
    fast_retransmits: u64,
    /// Absent in the output of an older `validate.cc`.
    #[serde(default)]
    fast_retransmit_causes: Option<RawFastRetransmitCauses>,
    cwnd: Vec<RawCwnd>,
}

/// The fast retransmits by cause as `validate.cc` prints them.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawFastRetransmitCauses {
    /// Entries into fast recovery while the receiver already held the segment at snd.una.
    receiver_held: u64,
}

/// Reads the JSON object `validate.cc` prints (the last non-empty line of `text`).
pub fn parse_output(
    text: &str,
    variant: Variant,
    seed: u64,
    flows: usize,
) -> Result<Measurement, String> {
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .ok_or("the ns-3 program printed nothing")?;
    let raw: RawOutput =
        serde_json::from_str(line).map_err(|e| format!("unreadable ns-3 output: {e}: {line}"))?;
    if raw.simulator != "ns-3" {
        return Err(format!("output of `{}`, not ns-3", raw.simulator));
    }
    if raw.per_flow_goodput_bps.len() != flows || raw.cwnd.len() != flows {
        return Err(format!(
            "{} goodputs and {} window traces for {flows} flows",
            raw.per_flow_goodput_bps.len(),
            raw.cwnd.len()
        ));
    }
    let stats: Vec<CwndStats> = raw
        .cwnd
        .iter()
        .filter_map(|c| stats_from_sums(c.first_s, c.sum, c.sum_sq, c.max, raw.duration_s))
        .collect();
    let (cwnd_mean, cwnd_cv, cwnd_max) = fold_cwnd(&stats);
    Ok(Measurement {
        source: variant.name().into(),
        seed,
        goodput_bps: raw.per_flow_goodput_bps,
        utilisation: raw.utilisation,
        drops: raw.drops,
        marks: raw.marks,
        wire_losses: raw.wire_losses,
        timeouts: raw.timeouts,
        fast_retransmits: raw.fast_retransmits,
        spurious_fast_retransmits: raw.fast_retransmit_causes.map(|c| c.receiver_held),
        cwnd_mean,
        cwnd_cv,
        cwnd_max,
        windows: Default::default(),
    })
}

/// Time-weighted statistics from a trace's integrals from `first_s` to `end_s`: mean = sum /
/// span, variance = sum_sq / span - mean^2. `None` for a trace of zero length.
pub fn stats_from_sums(
    first_s: f64,
    sum: f64,
    sum_sq: f64,
    max: f64,
    end_s: f64,
) -> Option<CwndStats> {
    let span = end_s - first_s;
    if span <= 0.0 || !sum.is_finite() {
        return None;
    }
    let mean = sum / span;
    let var = (sum_sq / span - mean * mean).max(0.0);
    let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    Some(CwndStats { mean, cv, max })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::parse;
    use crate::measurement::cwnd_stats;

    const OUTPUT: &str = r#"some ns-3 warning on stdout
{"simulator": "ns-3", "ns3_version": "3.44", "duration_s": 5, "seed": 3, "per_flow_goodput_bps": [4000000, 5000000], "utilisation": 0.97, "drops": 12, "marks": 3, "wire_losses": 1, "timeouts": 2, "fast_retransmits": 7, "cwnd": [{"first_s": 1, "sum": 70, "sum_sq": 1300, "max": 20}, {"first_s": 4, "sum": 10, "sum_sq": 100, "max": 10}], "run_cpu_s": 1.5}
"#;

    #[test]
    fn the_last_line_is_read_into_a_measurement_with_exact_values() {
        let m = parse_output(OUTPUT, Variant::Prr, 3, 2).expect("parses");
        assert_eq!(m.source, "ns-3 prr");
        assert_eq!(m.seed, 3);
        assert_eq!(m.goodput_bps, vec![4e6, 5e6]);
        assert_eq!(m.total_goodput_bps(), 9e6);
        assert_eq!((m.drops, m.marks, m.wire_losses), (12, 3, 1));
        assert_eq!((m.timeouts, m.fast_retransmits), (2, 7));
        // An output without `fast_retransmit_causes` (an older validate.cc): not measured.
        assert_eq!(m.spurious_fast_retransmits, None);
        assert_eq!(m.utilisation, 0.97);
        // Flow 1: mean 70 / 4 = 17.5; flow 2: 10 / 1 = 10; mean of means 13.75.
        assert_eq!(m.cwnd_mean, 13.75);
        assert_eq!(m.cwnd_max, 20.0);
        // Jain of (4, 5): 81 / (2 x 41)
        assert!((m.jain() - 81.0 / 82.0).abs() < 1e-12);
    }

    #[test]
    fn the_spurious_fast_retransmits_are_read_from_their_causes() {
        let with = OUTPUT.replace(
            r#""fast_retransmits": 7,"#,
            r#""fast_retransmits": 7, "fast_retransmit_causes": {"receiver_held": 5},"#,
        );
        let m = parse_output(&with, Variant::Reference, 3, 2).expect("parses");
        assert_eq!(
            (m.fast_retransmits, m.spurious_fast_retransmits),
            (7, Some(5))
        );
    }

    #[test]
    fn sums_give_the_same_statistics_as_the_trace_they_summarise() {
        // 10 for 1 s then 20 for 3 s, from t = 1 to 5: sum 70, sum_sq 1300.
        let direct = cwnd_stats(&[(1.0, 10.0), (2.0, 20.0)], 5.0).expect("trace");
        let sums = stats_from_sums(1.0, 70.0, 1300.0, 20.0, 5.0).expect("sums");
        assert_eq!(direct.mean, sums.mean);
        assert!((direct.cv - sums.cv).abs() < 1e-12);
    }

    #[test]
    fn wrong_flow_counts_and_other_output_are_refused_with_the_reason() {
        let e = parse_output(OUTPUT, Variant::Reference, 3, 3).expect_err("3 flows");
        assert_eq!(e, "2 goodputs and 2 window traces for 3 flows");
        let e = parse_output("", Variant::Reference, 1, 1).expect_err("empty");
        assert_eq!(e, "the ns-3 program printed nothing");
        let e = parse_output("{\"simulator\": 1}", Variant::Reference, 1, 1).expect_err("junk");
        assert!(e.starts_with("unreadable ns-3 output: "), "{e}");
    }

    #[test]
    fn arguments_carry_the_case_and_the_variant() {
        let c = parse(
            "[[case]]\ntopology = \"parking_lot\"\nhops = 3\nflows = 2\nrate = \"100Mbps\"\nrtt = \"20ms\"\nqueue = \"red-ecn\"\nloss = 0.01\nduration = \"10s\"\n",
            "g.toml",
        )
        .expect("valid")
        .remove(0);
        let a = args(&c, 4, Variant::Sack);
        assert_eq!(
            a,
            vec![
                "--topology=parking",
                "--hops=3",
                "--flows=2",
                "--rateBps=100000000",
                "--delayUs=8000",
                "--limit=100",
                "--loss=0.01",
                "--duration=10",
                "--seed=4",
                "--buf=5242880",
                "--queue=red",
                "--minTh=25",
                "--maxTh=75",
                "--ecn=1",
                "--sack=1",
            ]
        );
        assert_eq!(
            args(&c, 4, Variant::ShortDelayedAck)
                .last()
                .map(String::as_str),
            Some("--delAckTimeoutMs=40")
        );
        assert!(Variant::ShortDelayedAck.applies_to(&c));
        assert_eq!(
            args(&c, 4, Variant::RfcRecover).last().map(String::as_str),
            Some("--rfcRecover=1")
        );
        let both = args(&c, 4, Variant::RfcRecoverShortDelayedAck);
        assert_eq!(
            both[both.len() - 2..],
            ["--rfcRecover=1", "--delAckTimeoutMs=40"]
        );
        assert_eq!(
            args(&c, 4, Variant::RfcLossExit).last().map(String::as_str),
            Some("--rfcLossExit=1")
        );
        assert_eq!(
            args(&c, 4, Variant::RfcEcnOnce).last().map(String::as_str),
            Some("--rfcEcnOnce=1")
        );
        let all = args(&c, 4, Variant::RfcAll);
        assert_eq!(
            all[all.len() - 3..],
            ["--rfcRecover=1", "--rfcLossExit=1", "--rfcEcnOnce=1"]
        );
        // The variants' names are distinct (they key the cache and the reuse of earlier runs).
        let mut names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Variant::ALL.len());
        let droptail = &parse("[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\n", "g").expect("ok")[0];
        assert!(!Variant::RedNoWait.applies_to(droptail));
        // RFC 3168's rule acts only where ECN is negotiated; without ECN the combination is the
        // other two corrections alone.
        assert!(Variant::RfcEcnOnce.applies_to(&c));
        assert!(!Variant::RfcEcnOnce.applies_to(droptail));
        let all = args(droptail, 1, Variant::RfcAll);
        assert_eq!(all[all.len() - 2..], ["--rfcRecover=1", "--rfcLossExit=1"]);
    }
}
