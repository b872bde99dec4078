//! `macroflows.csv`: the CM paper's probe-feedback path (scenarios/cm/probes.toml: 1 Mbit/s,
//! 120 ms RTT, 2% of data packets lost at random, 30% of probes and responses lost), traced
//! at every queue sample. The trace must show the macroflow as the CM sees it: an RTT no
//! shorter than the path's propagation RTT, and a loss estimate near the 2% injected.

mod common;

use common::load;
use concord_sim::results::RunResults;
use concord_sim::Simulator;
use std::path::Path;

fn probes_scenario(duration: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/cm/probes.toml");
    let text = std::fs::read_to_string(&p).expect("scenario");
    text.lines()
        .map(|l| {
            if l.starts_with("duration = ") {
                format!("duration = \"{duration}\"")
            } else if l.starts_with("warmup = ") {
                "warmup = \"1s\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_cm_run_traces_its_macroflow_at_every_sample() {
    let sc = load(&probes_scenario("30s"));
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run().expect("runs");
    let trace = &sim.macroflows().samples;
    // One macroflow (s1 to d1) at every 100 ms sample once its flow opened.
    assert!(trace.len() > 250, "{} samples", trace.len());
    assert!(trace
        .iter()
        .all(|m| m.macroflow == trace[0].macroflow && m.flows == 1));
    for w in trace.windows(2) {
        assert_eq!(
            (w[1].at - w[0].at).as_millis(),
            100,
            "one row per queue sample"
        );
    }
    let last = trace.last().expect("samples");
    // Propagation RTT: 2 x (1 + 58 + 1) ms = 120 ms; srtt adds queueing on top.
    let srtt = last.srtt.expect("measured").as_secs_f64();
    assert!((0.120..0.5).contains(&srtt), "srtt {srtt}");
    assert!(last.rate_bps > 0 && last.cwnd_bytes > 0);
    // 2% of data lost at random: over 30 s the CM sends more than 1,000 packets, over which
    // the estimate's standard deviation is at most sqrt(0.02 x 0.98 / 1000) = 0.44%; it lies
    // within 1% of the 2% (2.3 standard deviations).
    assert!(last.sent_packets > 1_000, "{}", last.sent_packets);
    let p = last.loss_estimate().expect("responses arrived");
    assert!((0.01..0.03).contains(&p), "loss estimate {p}");
    // The table of the run's outputs.
    let tables = RunResults::from_simulator(&sim).tables(&sim);
    let (_, csv) = tables
        .iter()
        .find(|(n, _)| *n == "macroflows")
        .expect("a macroflows table");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("time_s,host,macroflow,dst,flows,rate_bps,cwnd_bytes,srtt_s,rttvar_s,aged,sent_packets,lost_packets,loss_estimate")
    );
    assert_eq!(lines.count(), trace.len());
    assert!(csv.lines().nth(1).is_some_and(|l| l.contains(",s1,")));
}

#[test]
fn a_run_without_cm_has_no_macroflows_table_and_the_same_results() {
    let text = probes_scenario("5s");
    let sc = load(&text);
    let mut with = Simulator::new(&sc).expect("builds");
    with.run().expect("runs");
    // The trace only reads the CMs: a run whose queue sampling is every 10 ms (ten times the
    // reads) ends with the same figures.
    let mut often = sc.clone();
    often.record.queue_interval = concord_cc::time::Duration::from_millis(10);
    let mut sim = Simulator::new(&often).expect("builds");
    sim.run().expect("runs");
    let a = RunResults::from_simulator(&with);
    let b = RunResults::from_simulator(&sim);
    assert_eq!(a.flows, b.flows);
    let tcp = load(
        "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\npairs = 1\n\
         bottleneck = { rate = \"10Mbps\", delay = \"10ms\" }\naccess = { rate = \"1Gbps\", delay = \"1ms\" }\n\
         [[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n",
    );
    let mut sim = Simulator::new(&tcp).expect("builds");
    sim.run().expect("runs");
    assert!(sim.macroflows().is_empty());
    let tables = RunResults::from_simulator(&sim).tables(&sim);
    assert!(tables.iter().all(|(n, _)| *n != "macroflows"));
}
