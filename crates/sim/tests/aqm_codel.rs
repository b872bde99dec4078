//! CoDel (RFC 8289) and FQ-CoDel (RFC 8290) on the simulator: what the RFCs say the
//! disciplines are for, measured on the scenarios in `scenarios/aqm/`.
//!
//! Delays are one-way delays of data packets minus the path's fixed part (propagation plus
//! serialisation on the three links), so what is left is queueing.

use concord_sim::results::RunResults;
use concord_sim::scenario::{self, LoadOptions};
use concord_sim::Simulator;
use std::path::PathBuf;

fn run(rel: &str) -> RunResults {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(rel);
    let sc = scenario::load_with(&path, LoadOptions { seed: None }).expect("scenario loads");
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run().expect("runs");
    RunResults::from_simulator(&sim)
}

/// The fixed one-way delay of a `size`-byte packet on the dumbbell: 1 + 23 + 1 ms of
/// propagation, serialisation at 1 Gbit/s twice and at 10 Mbit/s once, in milliseconds.
fn fixed_delay_ms(size: f64) -> f64 {
    25.0 + 2.0 * size * 8.0 / 1e9 * 1e3 + size * 8.0 / 10e6 * 1e3
}

const BOTTLENECK_BPS: f64 = 10e6;

#[test]
fn codel_holds_the_standing_queue_of_four_newreno_flows_near_its_5ms_target() {
    let r = run("aqm/dumbbell-4-codel.toml");
    let queueing: Vec<f64> = r
        .flows
        .iter()
        .map(|f| f.delay_mean_ms - fixed_delay_ms(1500.0))
        .collect();
    let mean = queueing.iter().sum::<f64>() / queueing.len() as f64;
    // Near the target: between half and three times 5 ms (a 100-packet DropTail queue stands
    // at about 100 ms on this dumbbell).
    assert!(
        (2.5..=15.0).contains(&mean),
        "mean queueing delay {mean:.2} ms (per flow {queueing:?})"
    );
    // CoDel keeps the link busy while it does so.
    assert!(
        r.total_goodput_bps >= 0.85 * BOTTLENECK_BPS,
        "goodput {}",
        r.total_goodput_bps
    );
    let b = r
        .channels
        .iter()
        .find(|c| c.name == r.bottleneck)
        .expect("bottleneck");
    assert!(b.drops_early > 0, "CoDel dropped at dequeue");
}

#[test]
fn fq_codel_gives_a_sparse_flow_low_delay_beside_bulk_flows() {
    let r = run("aqm/dumbbell-fq-codel-sparse.toml");
    let voice = r.flows.iter().find(|f| f.name == "voice").expect("voice");
    let sparse = voice.delay_mean_ms - fixed_delay_ms(200.0);
    // At most about one 1500-byte packet time (1.2 ms) behind the packet in service.
    assert!(sparse < 2.0, "sparse flow's queueing delay {sparse:.2} ms");
    assert!(voice.datagrams_received > 0);
    let bulk: f64 = r
        .flows
        .iter()
        .filter(|f| f.kind == "tcp")
        .map(|f| f.goodput_bps)
        .sum();
    assert!(bulk >= 0.85 * BOTTLENECK_BPS, "bulk goodput {bulk}");
}
