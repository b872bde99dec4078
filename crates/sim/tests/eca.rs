//! ECA in the simulator (Barham, section IV.A.3): routers stamp LOAD, receivers reflect it on
//! ACKs or in out-of-band reports, sources shape managed flows at w_i / RLOAD, priority flows
//! bypass the shaper, and the scenario keys are read and checked.

mod common;

use common::{load, reject, run};
use concord_cc::eca::LoadEncoding;
use concord_sim::eca::HostEca;
use concord_sim::scenario::ErrorKind;
use concord_sim::Simulator;

/// A 10 Mbit/s dumbbell whose bottleneck runs ECA with `eca`, and `flows`.
fn dumbbell(eca: &str, flows: &str) -> String {
    format!(
        r#"
duration = "30s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ rate = "10Mbps", delay = "5ms", queue = "200pkt", eca = {eca} }}
access = {{ rate = "100Mbps", delay = "1ms" }}
{flows}
[record]
warmup = "15s"
"#
    )
}

fn goodput_mbps(sim: &Simulator, f: usize) -> f64 {
    let fl = &sim.flows()[f];
    let secs = (sim.end() - sim.warmup()).as_secs_f64();
    (fl.delivered - fl.delivered_at_warmup) as f64 * 8.0 / secs / 1e6
}

fn shaper_load(sim: &Simulator, f: usize) -> Option<f64> {
    match &sim.eca().hosts[f] {
        Some(HostEca::Managed { shaper, .. }) => shaper.load(),
        _ => None,
    }
}

const TWO_TCP: &str = r#"
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
tcp = { rwnd = "200KB" }
eca = { weight = 1 }
[[flow]]
kind = "tcp"
from = "s2"
to = "d2"
tcp = { rwnd = "200KB" }
eca = { weight = 3 }
"#;

#[test]
fn managed_tcp_flows_share_in_proportion_to_their_weights_near_the_target() {
    let sim = run(&load(&dumbbell("{ target = 0.8 }", TWO_TCP)));
    let (a, b) = (goodput_mbps(&sim, 0), goodput_mbps(&sim, 1));
    // w / L each: 1 : 3 of about 80% of 10 Mbit/s (payload is 1460 of 1500 bytes).
    assert!((b / a - 3.0).abs() < 0.3, "{a} {b}");
    assert!((a + b - 7.8).abs() < 0.6, "{a} {b}");
    // The router's L is what the sources were told: ACKs carried it back.
    let router_load = sim.channels()[0]
        .disc()
        .eca()
        .expect("bottleneck runs ECA")
        .estimator
        .load();
    let told = shaper_load(&sim, 0).expect("an RLOAD arrived");
    assert!(
        (told / router_load - 1.0).abs() < 0.11,
        "{told} {router_load}"
    );
    assert!(sim.eca().rloads_applied > 1000);
    // Packets wait in the host, not in the network.
    assert!(sim.channels()[0].stats().max_queue_packets < 50);
}

#[test]
fn tos8_encoding_carries_only_representable_loads() {
    let sim = run(&load(&dumbbell(r#"{ encoding = "tos8" }"#, TWO_TCP)));
    let told = shaper_load(&sim, 0).expect("an RLOAD arrived");
    assert_eq!(LoadEncoding::Tos8.quantise(told), told);
    assert_ne!(LoadEncoding::Float.quantise(told), 0.0);
}

#[test]
fn a_udp_flow_is_shaped_through_out_of_band_reports() {
    let flows = r#"
[[flow]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "20Mbps"
packet_size = "1000B"
eca = { weight = 1, queue = 100 }
"#;
    let sim = run(&load(&dumbbell("{ target = 0.5 }", flows)));
    assert!(sim.eca().reports_sent > 100, "{}", sim.eca().reports_sent);
    // Shaped to about half the bottleneck; the rest is dropped at the host, not in the router.
    let g = goodput_mbps(&sim, 0);
    assert!(g > 4.0 && g < 5.5, "{g}");
    assert_eq!(sim.channels()[0].stats().queue_drops(), 0);
    assert!(sim.eca().host_drops(0) > 1000);
}

#[test]
fn priority_flows_bypass_wtp_and_admission_refuses_peaks_beyond_the_link() {
    let flows = r#"
[[flow]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "3Mbps"
packet_size = "1000B"
eca = { priority = "3Mbps" }
[[flow]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "1Mbps"
packet_size = "1000B"
eca = { priority = "98Mbps" }
[[flow]]
kind = "tcp"
from = "s2"
to = "d2"
tcp = { rwnd = "200KB" }
eca = { weight = 1 }
"#;
    let sim = run(&load(&dumbbell("{}", flows)));
    assert!(matches!(sim.eca().hosts[0], Some(HostEca::Priority)));
    assert!(matches!(sim.eca().hosts[1], Some(HostEca::Refused { .. })));
    // The priority flow gets its whole rate; the managed flow fills up to the target.
    let p = goodput_mbps(&sim, 0);
    assert!(p > 2.9, "{p}");
    assert_eq!(goodput_mbps(&sim, 1), 0.0);
    assert!(sim.eca().host_drops(1) > 0);
    let m = goodput_mbps(&sim, 2);
    assert!(m > 4.5 && m < 6.5, "{m}");
}

/// Fig. 14b (section V.D): a 10 Mbit/s shared segment, whose load one point measures, carries a
/// CBR flow of half its rate at high priority and two best-effort flows of weights 1 and 2. The
/// segment is modelled as the bottleneck of a dumbbell with the estimator on it.
#[test]
fn a_half_rate_priority_cbr_keeps_its_rate_and_best_effort_flows_share_the_rest_by_weight() {
    let flows = r#"
[[flow]]
kind = "cbr"
from = "s1"
to = "d1"
rate = "5Mbps"
packet_size = "1000B"
eca = { priority = "5Mbps" }
[[flow]]
kind = "tcp"
from = "s2"
to = "d2"
tcp = { rwnd = "200KB" }
eca = { weight = 1 }
[[flow]]
kind = "tcp"
from = "s3"
to = "d3"
tcp = { rwnd = "200KB" }
eca = { weight = 2 }
"#;
    let sim = run(&load(
        &dumbbell("{}", flows).replace("pairs = 2", "pairs = 3"),
    ));
    assert!(matches!(sim.eca().hosts[0], Some(HostEca::Priority)));
    // The CBR flow keeps its 5 Mbit/s (4.8 of payload in 1000-byte packets with headers).
    let cbr = goodput_mbps(&sim, 0);
    assert!(cbr > 0.97 * 5.0 * 972.0 / 1000.0, "CBR {cbr}");
    assert_eq!(sim.eca().host_drops(0), 0);
    // The best-effort flows share what is left up to the target, 1 : 2 within 15%.
    let (a, b) = (goodput_mbps(&sim, 1), goodput_mbps(&sim, 2));
    assert!(((b / a) / 2.0 - 1.0).abs() <= 0.15, "{a} {b}");
    assert!(a + b > 2.5 && a + b < 5.0, "{a} {b}");
}

#[test]
fn flows_without_eca_are_untouched_by_an_eca_queue() {
    let flows = r#"
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
"#;
    let sim = run(&load(&dumbbell("{}", flows)));
    assert!(sim.eca().hosts[0].is_none());
    assert!(goodput_mbps(&sim, 0) > 9.0);
}

#[test]
fn bad_eca_keys_are_refused_at_their_line() {
    let cases = [
        ("{ target = 1.5 }", TWO_TCP, "target"),
        (r#"{ combine = "mean" }"#, TWO_TCP, "combine"),
        (r#"{ encoding = "tos" }"#, TWO_TCP, "encoding"),
        ("{ up = 0.5 }", TWO_TCP, "up"),
        ("{ colour = 1 }", TWO_TCP, "colour"),
    ];
    for (eca, flows, word) in cases {
        let e = reject(&dumbbell(eca, flows));
        assert!(e.to_string().contains(word), "{e}");
        assert!(e.line > 0, "{e}");
    }
    let bad_flow = r#"
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
eca = { weight = 1, priority = "1Mbps" }
"#;
    let e = reject(&dumbbell("{}", bad_flow));
    assert_eq!(e.kind, ErrorKind::BadValue, "{e}");
    let no_weight = bad_flow.replace("weight = 1, priority = \"1Mbps\"", "queue = 10");
    let e = reject(&dumbbell("{}", &no_weight));
    assert_eq!(e.kind, ErrorKind::MissingKey, "{e}");
}
