//! One NewReno flow with ECN over a RED/ECN bottleneck (scenarios/validation/red-ecn-1flow.toml)
//! across 100 seeds. The sender used to cycle: a start-up overshoot ended in a timeout whose
//! ssthresh came from all the data sent during the inflated recovery (about 9x the BDP), the
//! next slow start overshot again, and the ECN reduction's no-growth window then held the
//! window at one segment after the timeout; every 2.7 s, 15 timeouts and 25-55% utilisation
//! a run. What a correct sender gives instead: the start-up's timeouts only, the link kept busy.

use concord_sim::results::RunResults;
use concord_sim::scenario::{self, LoadOptions};
use concord_sim::Simulator;
use std::path::PathBuf;

fn run(seed: u64) -> RunResults {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/validation/red-ecn-1flow.toml");
    let sc = scenario::load_with(&path, LoadOptions { seed: Some(seed) }).expect("loads");
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run().expect("runs");
    RunResults::from_simulator(&sim)
}

#[test]
fn one_newreno_flow_over_red_ecn_keeps_the_link_busy_at_every_one_of_100_seeds() {
    let mut total = 0.0;
    for seed in 1..=100 {
        let r = run(seed);
        let util = r.bottleneck_utilisation;
        let flow = &r.flows[0];
        // The cycle's signature was a timeout every 2.7 s; only the start-up may time out.
        assert!(
            flow.timeouts <= 2,
            "seed {seed}: {} timeouts, utilisation {util}",
            flow.timeouts
        );
        assert!(flow.ecn_reductions > 0, "seed {seed}: ECN never acted");
        assert!(util >= 0.90, "seed {seed}: utilisation {util}");
        total += util;
    }
    let mean = total / 100.0;
    assert!(mean >= 0.95, "mean utilisation {mean}");
}
