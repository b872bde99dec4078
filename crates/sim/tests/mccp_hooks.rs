//! The simulator hooks the MCCP experiments rely on: MCCP's parameters in scenario files, the
//! per-ACK estimator trace, and the one-shot loss injection of `drop_when`.

use concord_cc::tcp::config::CcAlgorithm;
use concord_sim::results::RunResults;
use concord_sim::scenario::{parse_str, DropWhen, ErrorKind, FlowKind, Scenario, ScenarioError};
use concord_sim::Simulator;
use std::path::Path;

/// One flow over a 10 Mbps, 100 ms path with a BDP buffer; `tcp` and `extra` are spliced into
/// the flow and `record` into `[record]`. The flow's table starts at line 10.
fn scenario(tcp: &str, extra: &str, record: &str) -> String {
    format!(
        r#"duration = "5s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "48ms", queue = "125KB" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[defaults.tcp]
mss = 1000
header_bytes = 40
[[flow]]
name = "f"
kind = "tcp"
from = "s1"
to = "d1"
tcp = {{ {tcp} }}
{extra}
[record]
{record}
"#
    )
}

fn load(text: &str) -> Scenario {
    match parse_str(text, Some(Path::new("x.toml"))) {
        Ok(s) => s,
        Err(e) => panic!("{e}\n{text}"),
    }
}

fn reject(text: &str) -> ScenarioError {
    match parse_str(text, Some(Path::new("x.toml"))) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn run(sc: &Scenario) -> (RunResults, Simulator) {
    let mut sim = Simulator::new(sc).expect("builds");
    sim.run().expect("runs");
    (RunResults::from_simulator(&sim), sim)
}

#[test]
fn every_mccp_parameter_can_be_set_in_a_scenario() {
    let sc = load(&scenario(
        r#"cc = "mccp", mccp = { instability_gain = 0.5, tau_factor = 4, instability_window = 5, adaptive_sampling = true, ncd_beta = 0.7, expected_rate_lag = 2.0, ncd_skip_rtts = 3, ncd = false }"#,
        "",
        "",
    ));
    let FlowKind::Tcp { tcp, .. } = &sc.flows[0].kind else {
        panic!("not tcp")
    };
    let CcAlgorithm::Mccp(m) = tcp.cc else {
        panic!("not mccp: {:?}", tcp.cc)
    };
    assert_eq!(m.abe.instability_gain, 0.5);
    assert_eq!(m.abe.tau_factor, 4.0);
    assert_eq!(m.abe.instability_window, 5);
    assert!(m.abe.adaptive_sampling);
    assert_eq!(m.ncd_beta, 0.7);
    assert_eq!(m.expected_rate_lag, 2.0);
    assert_eq!(m.ncd_skip_rtts, 3);
    assert!(!m.ncd);
}

#[test]
fn bad_mccp_parameters_are_refused_at_their_line() {
    let cases: [(&str, ErrorKind, &str); 7] = [
        (
            r#"cc = "mccp", mccp = { ncd_beta = 1.0 }"#,
            ErrorKind::BadValue,
            "ncd_beta",
        ),
        (
            r#"cc = "mccp", mccp = { instability_gain = -0.1 }"#,
            ErrorKind::BadValue,
            "instability_gain",
        ),
        (
            r#"cc = "mccp", mccp = { instability_window = 0 }"#,
            ErrorKind::BadValue,
            "instability_window",
        ),
        (
            r#"cc = "mccp", mccp = { ncd_betta = 0.5 }"#,
            ErrorKind::UnknownKey,
            "ncd_betta",
        ),
        (
            r#"cc = "mccp", mccp = { adaptive_sampling = "yes" }"#,
            ErrorKind::WrongType,
            "adaptive_sampling",
        ),
        (
            r#"cc = "mccp", mccp = { ncd = 0 }"#,
            ErrorKind::WrongType,
            "ncd",
        ),
        (
            r#"cc = "newreno", mccp = { ncd_beta = 0.5 }"#,
            ErrorKind::Inconsistent,
            "mccp",
        ),
    ];
    for (tcp, kind, word) in cases {
        let e = reject(&scenario(tcp, "", ""));
        assert_eq!(e.kind, kind, "{e}");
        assert_eq!(e.line, 15, "{e}");
        assert!(e.to_string().starts_with("x.toml:15:"), "{e}");
        assert!(e.message.contains(word), "{e}");
        assert!(!e.fix.is_empty(), "{e}");
    }
}

#[test]
fn a_flow_that_names_mccp_again_keeps_the_defaults_parameters() {
    let text = scenario(r#"cc = "mccp""#, "", "").replace(
        "header_bytes = 40\n",
        "header_bytes = 40\ncc = \"mccp\"\nmccp = { ncd_beta = 0.8 }\n",
    );
    let sc = load(&text);
    let FlowKind::Tcp { tcp, .. } = &sc.flows[0].kind else {
        panic!("not tcp")
    };
    assert!(matches!(tcp.cc, CcAlgorithm::Mccp(m) if m.ncd_beta == 0.8));
}

#[test]
fn the_estimator_is_traced_only_for_the_flows_listed() {
    let plain = load(&scenario(r#"cc = "mccp""#, "", ""));
    let (_, sim) = run(&plain);
    assert!(sim.estimator_samples().is_empty());
    let dir = std::env::temp_dir().join(format!("concord-est-{}", std::process::id()));
    let r = RunResults::from_simulator(&sim);
    r.write_dir(&sim, &dir).expect("written");
    assert!(!dir.join("estimator.csv").exists());

    let traced = load(&scenario(r#"cc = "mccp""#, "", r#"estimator = ["f"]"#));
    let (r, sim) = run(&traced);
    let n = sim.estimator_samples().len();
    assert!(n > 1000, "{n} rows");
    // One row per ACK: every ACK the sender saw, in time order.
    assert!(sim
        .estimator_samples()
        .windows(2)
        .all(|w| w[0].at <= w[1].at));
    let last = sim.estimator_samples()[n - 1];
    // After 5 s at 10 Mbit/s the estimate is a positive rate below the link's.
    assert!(
        last.abe_filtered > 0.0 && last.abe_filtered < 1.25e6 * 1.01,
        "{last:?}"
    );
    assert!(last.tau_k > concord_cc::time::Duration::ZERO);
    r.write_dir(&sim, &dir).expect("written");
    let csv = std::fs::read_to_string(dir.join("estimator.csv")).expect("estimator.csv");
    assert!(csv.starts_with("time_s,flow,cwnd_bytes,ssthresh_bytes,abe_sample_Bps,abe_filtered_Bps,t_k_s,tau_k_s,u_k_Bps,counter,fast_probing\n"));
    assert_eq!(csv.lines().count(), n + 1);

    // Westwood+ fills its BWE in the same columns.
    let ww = load(&scenario(r#"cc = "westwood+""#, "", r#"estimator = ["f"]"#));
    let (_, sim) = run(&ww);
    assert!(sim.estimator_samples().iter().any(|e| e.abe_filtered > 0.0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn drop_when_rate_loses_exactly_one_segment_once_cwnd_over_rtt_min_reaches_the_rate() {
    // 2 Mbit/s * 100 ms = 25 000 bytes of cwnd, from a 2-segment start in slow start.
    let sc = load(&scenario(
        r#"cc = "newreno", initial_cwnd = 2, delayed_ack = false"#,
        r#"drop_when = { rate = "2Mbps" }"#,
        r#"cwnd = ["f"]"#,
    ));
    assert_eq!(
        sc.flows[0].drop_when,
        Some(DropWhen::Rate("2Mbps".parse().expect("rate")))
    );
    let (r, sim) = run(&sc);
    let f = &r.flows[0];
    assert_eq!(f.injected_losses, 1);
    // Nothing else was lost: no queue drop, no wire loss, and one fast retransmit repaired it.
    assert_eq!(r.bottleneck_drops, 0);
    assert_eq!(f.fast_retransmits, 1);
    assert_eq!(f.retransmissions, 1);
    assert_eq!(f.timeouts, 0);
    let at = f.injected_at_s.expect("when");
    // The window at the previous change was below 2 Mbit/s * RTT_min, the window at the loss
    // reached it (RTT_min is a little above 100 ms: serialisation adds to the propagation).
    let rtt_min = match &sim.flows()[0].agent {
        concord_sim::flow::Agent::Tcp(t) => t.sender.rtt().min_rtt().as_secs_f64(),
        _ => panic!("not tcp"),
    };
    let threshold = 2e6 / 8.0 * rtt_min;
    assert!((0.1..0.11).contains(&rtt_min), "{rtt_min}");
    let before = sim
        .cwnd_samples()
        .iter()
        .rfind(|c| c.at.as_secs_f64() < at)
        .expect("a sample before");
    assert!((before.cwnd as f64) < threshold, "{before:?}");
    let at_loss = sim
        .cwnd_samples()
        .iter()
        .rfind(|c| c.at.as_secs_f64() <= at)
        .expect("a sample at");
    assert!(at_loss.cwnd as f64 >= threshold, "{at_loss:?}");
    assert!(at_loss.at.as_secs_f64() == at, "{at_loss:?}");
    // About five RTTs of slow start from 2 segments.
    assert!((0.3..0.8).contains(&at), "{at}");
}

#[test]
fn drop_when_segment_and_at_lose_the_segment_they_name() {
    let sc = load(&scenario(
        r#"cc = "newreno""#,
        "drop_when = { segment = 40 }",
        "",
    ));
    let (r, _) = run(&sc);
    assert_eq!(r.flows[0].injected_losses, 1);
    assert_eq!(r.flows[0].retransmissions, 1);

    let sc = load(&scenario(
        r#"cc = "newreno""#,
        r#"drop_when = { at = "2s" }"#,
        "",
    ));
    let (r, _) = run(&sc);
    assert_eq!(r.flows[0].injected_losses, 1);
    let at = r.flows[0].injected_at_s.expect("when");
    // The first segment the window lets out at or after 2 s.
    assert!((2.0..2.2).contains(&at), "{at}");
}

#[test]
fn bad_drop_when_tables_are_refused_at_their_line() {
    let cases: [(&str, ErrorKind); 5] = [
        ("drop_when = { }", ErrorKind::BadValue),
        (
            r#"drop_when = { rate = "2Mbps", segment = 3 }"#,
            ErrorKind::BadValue,
        ),
        ("drop_when = { segment = 0 }", ErrorKind::BadValue),
        (r#"drop_when = { rate = "2" }"#, ErrorKind::BadValue),
        (r#"drop_when = { at = "9s" }"#, ErrorKind::Inconsistent),
    ];
    for (extra, kind) in cases {
        let e = reject(&scenario(r#"cc = "newreno""#, extra, ""));
        assert_eq!(e.kind, kind, "{e}");
        assert_eq!(e.line, 16, "{e}");
        assert!(!e.fix.is_empty(), "{e}");
    }
    let e = reject(&scenario(
        r#"cc = "newreno""#,
        "drop_when = { sgment = 3 }",
        "",
    ));
    assert_eq!((e.kind, e.line), (ErrorKind::UnknownKey, 16), "{e}");
    assert!(e.fix.contains("segment"), "{e}");
}
