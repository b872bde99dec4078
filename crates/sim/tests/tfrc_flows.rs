//! TFRC flows in the simulator (RFC 5348): scenario keys, pacing, feedback and timers, and the
//! behaviour the CP experiments build on: one flow fills a bottleneck, and against NewReno it
//! takes a comparable share with a smoother rate.

mod common;

use common::{load, run};
use concord_sim::flow::Agent;
use concord_sim::metrics::coefficient_of_variation;
use concord_sim::results::RunResults;
use concord_sim::scenario::{parse_str, ErrorKind, FlowKind};
use concord_sim::Simulator;

const ALONE: &str = include_str!("../../../scenarios/cp/tfrc-alone.toml");
const VS_NEWRENO: &str = include_str!("../../../scenarios/cp/tfrc-newreno.toml");

/// A TFRC flow over a 10 Mbps, 100 ms path; `extra` is spliced into the flow's table, which
/// starts at line 8.
fn one_flow(extra: &str) -> String {
    format!(
        r#"duration = "20s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "48ms", queue = {{ kind = "red", limit = "100pkt" }} }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[flow]]
name = "f"
kind = "tfrc"
from = "s1"
to = "d1"
{extra}
"#
    )
}

/// Payload goodput per bin of flow `f` from `from_s` seconds on, in bit/s.
fn rates_from(sim: &Simulator, f: usize, from_s: f64) -> Vec<f64> {
    let g = &sim.flows()[f].goodput;
    let bin = g.bin().as_secs_f64();
    g.rates_bps(sim.end())
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i as f64 * bin >= from_s)
        .map(|(_, r)| r)
        .collect()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

#[test]
fn a_tfrc_flow_reads_its_packet_size_and_defaults_to_1000_bytes() {
    let sc = load(&one_flow("packet_size = \"500B\""));
    assert_eq!(sc.flows[0].kind, FlowKind::Tfrc { packet_size: 500 });
    let sc = load(&one_flow(""));
    assert_eq!(sc.flows[0].kind, FlowKind::Tfrc { packet_size: 1000 });
}

#[test]
fn a_tfrc_packet_too_small_for_its_headers_is_rejected_at_its_line() {
    let Err(e) = parse_str(&one_flow("packet_size = \"30B\""), None) else {
        panic!("accepted");
    };
    assert_eq!(e.kind, ErrorKind::BadValue);
    assert_eq!(e.line, 12);
    assert!(e.to_string().contains("40 to 65535"), "{e}");
}

#[test]
fn a_cbr_key_on_a_tfrc_flow_is_rejected_with_its_owner_named() {
    let Err(e) = parse_str(&one_flow("rate = \"1Mbps\""), None) else {
        panic!("accepted");
    };
    assert_eq!(e.line, 12);
    assert!(
        e.to_string().contains("does not apply to a tfrc flow"),
        "{e}"
    );
}

#[test]
fn data_packets_have_the_packet_size_and_feedback_reaches_the_sender() {
    let sim = run(&load(&one_flow("stop = \"10s\"")));
    let Agent::Tfrc(t) = &sim.flows()[0].agent else {
        panic!("a TFRC flow");
    };
    assert!(t.sent > 1000, "sent {}", t.sent);
    assert!(t.received > 0 && t.received <= t.sent);
    assert_eq!(t.refused_feedback, 0);
    // Feedback arrives about once per RTT while data flows (RFC 5348 section 6.2).
    assert!(t.rate_trace.len() > 40, "{} reports", t.rate_trace.len());
    assert!(t.sender.rtt().is_some_and(|r| r.as_secs_f64() > 0.1));
    // Nothing is sent after `stop`: the last 10 s deliver nothing.
    assert!(rates_from(&sim, 0, 11.0).iter().all(|&r| r == 0.0));
    let r = RunResults::from_simulator(&sim);
    assert_eq!(r.flows[0].kind, "tfrc");
    assert_eq!(r.flows[0].datagrams_sent, t.sent);
}

#[test]
fn without_feedback_the_nofeedback_timer_halves_the_rate() {
    // Stop the run before feedback can answer the timer's deadline (RFC 5348 section 4.4).
    let sc = load(&one_flow("stop = \"3s\""));
    let mut sim = Simulator::new(&sc).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until(concord_cc::time::Instant::from_secs(2))
        .unwrap_or_else(|e| panic!("{e}"));
    let Agent::Tfrc(t) = &sim.flows()[0].agent else {
        panic!("a TFRC flow");
    };
    // The run's state is read-only: fire the timer on a copy of the sender.
    let mut sender = t.sender.clone();
    let before = sender.rate().bps();
    let deadline = sender.poll_timeout().unwrap_or_else(|| panic!("a timer"));
    sender.handle_timeout(deadline);
    assert!(sender.rate().bps() < before);
}

#[test]
fn one_tfrc_flow_alone_fills_most_of_the_table_i_bottleneck() {
    let sim = run(&load(ALONE));
    // Payload is 960 of every 1000 bytes; over the second half of the run TFRC's rate has
    // grown to the link's (the loss interval after the slow-start loss is long, so the climb
    // is slow, RFC 5348 section 5.4).
    let late = mean(&rates_from(&sim, 0, 90.0)) / 15e6;
    assert!(late > 0.85, "goodput / bottleneck over 90-180 s: {late}");
}

#[test]
fn tfrc_against_newreno_takes_a_comparable_share() {
    let sc = load(VS_NEWRENO);
    let sim = run(&sc);
    // From the end of TFRC's climb to its share (the scenario's warm-up, 90 s).
    let tfrc = rates_from(&sim, 0, 90.0);
    let tcp = rates_from(&sim, 1, 90.0);
    let ratio = mean(&tfrc) / mean(&tcp);
    assert!(
        (1.0 / 1.5..=1.5).contains(&ratio),
        "TFRC / NewReno = {ratio}"
    );
}

/// RFC 5348 section 1: TFRC's rate varies less over time than TCP's. At this setting and seed
/// it did while NewReno took ssthresh from the inflated flight after a timeout; with ssthresh
/// taken from the data still in the network (RFC 5681 eq. 4, as ns-3 and Linux do), NewReno's
/// 1 s goodput varies less (C.O.V. 0.210) than TFRC's (0.250). The reproduction reports this
/// comparison over seeds with an interval (`cp/tfrc-alone`); this test stays as the one-seed
/// statement of the expectation until that finding is analysed.
#[test]
#[ignore = "finding: NewReno 0.210 vs TFRC 0.250 C.O.V. at seed 1 since the RTO ssthresh fix; reported over seeds by cp/tfrc-alone"]
fn tfrc_against_newreno_has_the_smoother_rate() {
    let sc = load(VS_NEWRENO);
    let sim = run(&sc);
    let tfrc = rates_from(&sim, 0, 90.0);
    let tcp = rates_from(&sim, 1, 90.0);
    let (cov_tfrc, cov_tcp) = (
        coefficient_of_variation(&tfrc),
        coefficient_of_variation(&tcp),
    );
    assert!(
        cov_tfrc < cov_tcp,
        "C.O.V. TFRC {cov_tfrc}, NewReno {cov_tcp}"
    );
}
