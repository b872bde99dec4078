//! NewReno on the simulator against what a correct TCP must do: fill a BDP buffer, share a
//! dumbbell fairly (more so under RED), and follow the Padhye et al. throughput model under
//! random loss.

use concord_sim::results::RunResults;
use concord_sim::scenario::{self, LoadOptions, Scenario};
use concord_sim::Simulator;
use std::path::PathBuf;

fn scenario_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(rel)
}

fn load(rel: &str, seed: Option<u64>) -> Scenario {
    scenario::load_with(&scenario_path(rel), LoadOptions { seed }).expect("scenario loads")
}

fn run(sc: &Scenario) -> RunResults {
    let mut sim = Simulator::new(sc).expect("builds");
    sim.run().expect("runs");
    RunResults::from_simulator(&sim)
}

const BOTTLENECK_BPS: f64 = 10e6;

#[test]
fn one_flow_keeps_a_bdp_buffer_busy_from_60_to_300_seconds() {
    let r = run(&load("basic/single-flow-bdp.toml", None));
    assert_eq!(r.warmup_s, 60.0);
    let g = r.flows[0].goodput_bps;
    // 95% of the bottleneck; 1448 payload bytes per 1500-byte packet cap goodput at 96.5%.
    assert!(g >= 0.95 * BOTTLENECK_BPS, "goodput {g} bit/s");
}

/// Fairness on a DropTail dumbbell is judged on the mean over 20 seeds, utilisation at every
/// seed. Four NewReno flows with equal RTTs behind a tail-drop queue fall into phase patterns
/// (Floyd and Jacobson, "On traffic phase effects in packet-switched gateways", 1992) in which
/// one flow's packets keep meeting the room a departure left: at a few seeds one flow takes the
/// larger share for the whole run. Jain's index at single seeds, seeds 1-40: 1 of 40 below 0.9
/// (0.864 at seed 20) with the RTO timed from the newest segment an ACK covers, 3 of 40 (0.701 at
/// seeds 4 and 27, 0.895 at 13) with it timed from the oldest (RFC 7323 section 4.3). The bar,
/// 0.9, is unchanged; it applies to the mean, since no single seed is a property of the model.
#[test]
fn four_flows_fill_a_droptail_dumbbell_at_every_seed_and_share_it_fairly_on_average() {
    let mut jain = Vec::new();
    for seed in 1..=20 {
        let r = run(&load("basic/dumbbell-4-droptail.toml", Some(seed)));
        assert_eq!(r.flows.len(), 4);
        assert!(
            r.total_goodput_bps >= 0.95 * BOTTLENECK_BPS,
            "seed {seed}: total {}",
            r.total_goodput_bps
        );
        jain.push(r.jain_index);
    }
    let mean = jain.iter().sum::<f64>() / jain.len() as f64;
    assert!(mean >= 0.9, "mean Jain {mean} over seeds 1-20: {jain:?}");
}

#[test]
fn red_spreads_the_drops_and_shares_more_fairly_at_every_seed() {
    for seed in 1..=5 {
        let r = run(&load("basic/dumbbell-4-red.toml", Some(seed)));
        assert!(r.jain_index >= 0.95, "seed {seed}: Jain {}", r.jain_index);
        let b = r
            .channels
            .iter()
            .find(|c| c.name == r.bottleneck)
            .expect("bottleneck");
        assert!(b.drops_early > 0, "seed {seed}: RED dropped nothing early");
        assert!(
            b.drops_early > b.drops_full,
            "seed {seed}: most drops should be early, got {b:?}"
        );
    }
}

/// The Padhye et al. model (SIGCOMM 1998), in bit/s of payload. It is the equation TFRC uses
/// (RFC 5348 section 3.1); for p <= 5% the model's min(1, 3 sqrt(3bp/8)) term is below 1, so
/// the two agree exactly in the range tested here.
fn padhye_bps(mss: f64, rtt: f64, t0: f64, p: f64, b: f64) -> f64 {
    concord_cc::tfrc::equation::throughput(mss, rtt, p, b, t0) * 8.0
}

#[test]
fn padhye_formula_numbers_by_hand() {
    // p = 1%, b = 2, RTT 0.1 s, T0 0.3 s:
    // sqrt(2*2*0.01/3) = 0.115470; 3 sqrt(3*2*0.01/8) = 0.259808; 0.3 * 0.259808 * 0.01 * 1.0032
    // = 0.000781918; denominator 0.0115470 + 0.000781918 = 0.0123289; 1448*8/0.0123289 = 939,583.
    let x = padhye_bps(1448.0, 0.1, 0.3, 0.01, 2.0);
    assert!((x - 939_583.0).abs() < 5.0, "{x}");
}

#[test]
fn newreno_under_random_loss_follows_the_padhye_model() {
    let text = std::fs::read_to_string(scenario_path("basic/random-loss.toml")).expect("readable");
    assert!(
        text.contains("loss = \"1%\""),
        "the template's loss setting moved"
    );
    for (p, tolerance) in [(0.005, 0.25), (0.01, 0.25), (0.02, 0.50)] {
        let t = text.replace("loss = \"1%\"", &format!("loss = \"{}%\"", p * 100.0));
        let sc = scenario::parse_str(&t, None).expect("valid");
        let r = run(&sc);
        let f = &r.flows[0];
        assert!(f.mean_rtt_s > 0.0 && f.mean_rto_s > 0.0);
        let model = padhye_bps(1448.0, f.mean_rtt_s, f.mean_rto_s, p, 2.0);
        let ratio = f.goodput_bps / model;
        eprintln!(
            "p {p}: goodput {:.0} model {model:.0} ratio {ratio:.3} rtt {:.4} rto {:.4}",
            f.goodput_bps, f.mean_rtt_s, f.mean_rto_s
        );
        assert!(
            (ratio - 1.0).abs() <= tolerance,
            "p {p}: goodput {} vs model {model} (ratio {ratio})",
            f.goodput_bps
        );
    }
}
