//! Do concord's seeds change what they are said to change (docs/seed-audit.md)?
//!
//! A figure reported as a mean over N seeds with a 95% interval is a false interval when its N
//! runs are one run. Three checks:
//!
//! - a scenario's seed reaches its start jitter, and no two seeds share a random stream;
//! - every claim of `concord reproduce --quick` that is not marked deterministic takes more than
//!   one value over its seeds; a claim whose value is the same at every seed is listed with the
//!   reason, and its experiment must show by another claim on the same seeds that the runs
//!   themselves differ;
//! - every case of `concord validate`'s grid, run at each of its seeds, is compared run against
//!   run by its congestion windows: the same run is the same sequence of window values for each
//!   flow, whichever flow carries it and whenever it starts. A case whose only random draw is the
//!   start jitter of one flow (one flow, DropTail, no random loss) is one run shifted in time at
//!   every seed; a case with random loss or RED never gives the same run at two seeds; every
//!   other case (several flows whose only draw is their start jitter) gives at least two
//!   different runs over its seeds, except the cases listed in [`ONE_RUN_CASES`], measured to
//!   be one run relabelled and shifted at every seed.
//!
//! The comparison and the grouping of seeds into runs are `concord_validate::runs`, the
//! functions with which `concord validate` counts each case's distinct runs for its table.

use concord_cc::rng::Rng;
use concord_repro::claim::Claim;
use concord_repro::report::Report;
use concord_repro::{registry, run_experiments, Ctx};
use concord_sim::scenario::{self, JITTER_STREAM};
use concord_validate::concord_run::scenario_text;
use concord_validate::grid::{self, Case, Queue, Topology};
use concord_validate::runs::{self, Windows};

const GRID: &str = include_str!("../grid.toml");

/// Grid cases with several flows, DropTail and no random loss whose seeds all give the same run:
/// the start jitter changes which flow is which and when the run starts, and nothing else
/// (docs/seed-audit.md). A case that joins or leaves this list fails the test, so that the
/// list, and the intervals the grid reports for these cases, are reviewed.
const ONE_RUN_CASES: &[(&str, &str)] = &[
    (
        "dumbbell-16f-10Mbps-200ms-droptail",
        "seeds 1, 2 and 3: the same 16 window sequences, one flow's cut two samples earlier",
    ),
    (
        "sack-dumbbell-4f-10Mbps-100ms-droptail-q1000-prr-sack",
        "seeds 1 to 5: the same 4 window sequences and 545 drops at each seed",
    ),
];

/// Stochastic claims of the quick run whose value is the same at every seed of their block
/// although their runs differ (`experiment`, a part of the metric, why).
const CONSTANT_OVER_SEEDS: &[(&str, &str, &str)] = &[
    (
        "cm/audio",
        "most-used encoding is the one nearest its share",
        "an indicator, 1 at every seed: the server settles on the same encoding",
    ),
    (
        "gcca/testbed",
        "packets dropped in Router 1 and Router 2, all groups",
        "a count at its floor: GCCA drops nothing at any seed",
    ),
    (
        "eca/parking-lot",
        "CoV of 100 ms rates is ECA < ECN/RED",
        "a count of grid points, 9 of 9 at every seed",
    ),
    (
        "eca/parking-lot",
        "largest CoV of the nine points is at 1 Mbit/s",
        "a count of schemes, 0 of 3 at every seed",
    ),
];

/// The number of distinct values among `values`, bit for bit (a NaN equals a NaN).
fn distinct(values: &[f64]) -> usize {
    let mut bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
    bits.sort_unstable();
    bits.dedup();
    bits.len()
}

/// The claims of `concord reproduce --quick` at seed base 0, grouped by experiment: read from
/// the `results.json` named by `CONCORD_QUICK_RESULTS` (CI's reproduce step writes one), or
/// computed here by running every experiment.
fn quick_claims() -> Vec<(String, Vec<Claim>)> {
    let claims: Vec<Claim> = match std::env::var_os("CONCORD_QUICK_RESULTS") {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("CONCORD_QUICK_RESULTS={path:?}: {e}"));
            let report: Report = serde_json::from_str(&text).unwrap_or_else(|e| {
                panic!("CONCORD_QUICK_RESULTS={path:?} is not a results.json: {e}")
            });
            assert!(
                report.quick && report.seed_base == 0,
                "CONCORD_QUICK_RESULTS must be a run of `concord reproduce --quick` at seed base 0"
            );
            report.claims
        }
        None => {
            let experiments = registry();
            let ctx = Ctx {
                quick: true,
                ..Ctx::default()
            };
            let outcomes = run_experiments(&experiments, &ctx, 2, &|_, _| {});
            experiments
                .iter()
                .zip(outcomes)
                .flat_map(|(e, o)| o.unwrap_or_else(|err| panic!("{}: {err}", e.id)).claims)
                .collect()
        }
    };
    let mut by_experiment: Vec<(String, Vec<Claim>)> = Vec::new();
    for c in claims {
        match by_experiment.last_mut() {
            Some((id, cs)) if *id == c.experiment => cs.push(c),
            _ => by_experiment.push((c.experiment.clone(), vec![c])),
        }
    }
    by_experiment
}

/// Runs the whole quick reproduction unless given its results: CI runs it on the reproduce
/// step's `results.json` (.ci/checks.d/30-reproduce.sh); by hand, `cargo test -p
/// concord-validate --test seed_audit -- --ignored` (about 2 minutes of CPU).
#[test]
#[ignore = "the whole quick reproduction; CI runs it on its reproduce step's results.json"]
fn every_claim_that_draws_from_the_seed_takes_more_than_one_value_over_its_seeds() {
    let mut constant = Vec::new();
    for (experiment, claims) in quick_claims() {
        for c in &claims {
            let name = format!("{experiment}: {} / {}", c.figure, c.metric);
            if c.deterministic {
                assert_eq!(
                    c.values.len(),
                    1,
                    "{name}: one deterministic run, one value"
                );
                continue;
            }
            assert!(c.values.len() >= 2, "{name}: {} values", c.values.len());
            eprintln!(
                "{name}: {} distinct of {} values",
                distinct(&c.values),
                c.values.len()
            );
            if distinct(&c.values) > 1 {
                continue;
            }
            let listed = CONSTANT_OVER_SEEDS
                .iter()
                .any(|(x, metric, _)| *x == experiment && c.metric.contains(metric));
            // The runs behind a listed claim must differ: another claim of the experiment on
            // the same seeds moves with them.
            let runs_differ = claims
                .iter()
                .any(|other| other.seeds == c.seeds && distinct(&other.values) > 1);
            constant.push((name, listed, runs_differ));
        }
    }
    let wrong: Vec<&(String, bool, bool)> = constant
        .iter()
        .filter(|(_, listed, differ)| !listed || !differ)
        .collect();
    assert!(
        wrong.is_empty(),
        "claims marked as drawing from the seed with one value at every seed (name, listed, runs differ): {wrong:#?}; \
         if nothing in the scenario draws from the seed, mark the claim `.deterministic()` (one run, no interval)"
    );
    assert_eq!(
        constant.len(),
        CONSTANT_OVER_SEEDS.len(),
        "listed claims no longer constant over their seeds: {constant:#?}"
    );
}

/// One run of `case` at `seed`: each flow's sequence of congestion-window values (bytes), in
/// flow order, as the validation runner keeps them.
fn windows(case: &Case, seed: u64) -> Windows {
    concord_validate::concord_run::run(case, seed)
        .unwrap_or_else(|e| panic!("{}: {e}", case.id))
        .windows
}

/// Whether the case's only random draw is the start jitter of a single flow.
fn one_jittered_flow(case: &Case) -> bool {
    case.topology == Topology::Dumbbell
        && case.flows == 1
        && case.queue == Queue::DropTail
        && case.loss == 0.0
}

/// Whether anything in the case draws from the seed besides the flows' start jitter.
fn random_beyond_start(case: &Case) -> bool {
    case.loss > 0.0 || matches!(case.queue, Queue::Red { .. })
}

#[test]
fn the_grid_gives_one_run_per_seed_where_it_draws_more_than_one_flow_start() {
    let cases = grid::parse(GRID, "crates/validate/grid.toml").expect("the grid parses");
    let mut failures = Vec::new();
    for case in &cases {
        let runs: Vec<(u64, Windows)> = case.seeds.iter().map(|&s| (s, windows(case, s))).collect();
        let seeds_and_windows: Vec<(u64, &[Vec<u64>])> =
            runs.iter().map(|(s, w)| (*s, w.flows())).collect();
        // Classes of seeds that give the same run, in seed order.
        let classes = runs::classes(&seeds_and_windows);
        let shown = runs::show(&classes);
        eprintln!("{}: {} runs over seeds: {}", case.id, classes.len(), shown);
        let listed = ONE_RUN_CASES.iter().any(|(id, _)| *id == case.id);
        let ok = if one_jittered_flow(case) || listed {
            classes.len() == 1
        } else if random_beyond_start(case) {
            classes.len() == case.seeds.len()
        } else {
            classes.len() >= 2
        };
        if !ok {
            failures.push(format!("{}: {shown}", case.id));
        }
    }
    assert!(
        failures.is_empty(),
        "cases whose seeds do not give the runs their random draws promise (or that leave ONE_RUN_CASES): {failures:#?}"
    );
    for (id, _) in ONE_RUN_CASES {
        assert!(cases.iter().any(|c| c.id == *id), "no grid case {id}");
    }
}

#[test]
fn distinct_counts_values_bit_for_bit() {
    assert_eq!(distinct(&[1.0, 1.0, f64::NAN, f64::NAN]), 2);
    assert_eq!(distinct(&[0.0, -0.0]), 2);
}

#[test]
fn each_seed_reaches_the_start_jitter_and_no_two_seeds_share_a_stream() {
    let cases = grid::parse(GRID, "crates/validate/grid.toml").expect("the grid parses");
    let case = cases
        .iter()
        .find(|c| c.id == "dumbbell-4f-10Mbps-50ms-droptail")
        .expect("the 4-flow DropTail case");
    let starts = |seed: u64| -> Vec<u64> {
        let sc = scenario::parse_str(&scenario_text(case, seed), None).expect("valid");
        sc.flows.iter().map(|f| f.start.as_nanos()).collect()
    };
    for seed in [1, 2, 3, 1001, 1002] {
        // Each flow's start: uniform in [0, 100 ms), the flows in order from one stream.
        let mut rng = Rng::stream(seed, JITTER_STREAM);
        let drawn: Vec<u64> = (0..4).map(|_| rng.below(100_000_000)).collect();
        assert_eq!(starts(seed), drawn, "seed {seed}");
    }
    // Seed 2's starts as `concord run --seed 2` traced them (the first window sample of each flow).
    assert_eq!(starts(2), [18_382_572, 51_939_165, 45_007_595, 63_666_359]);
    // The seeds of ten seed bases' full blocks and their replicates: no two share a stream.
    let mut first: Vec<u64> = (0..20_000)
        .map(|seed| Rng::stream(seed, JITTER_STREAM).next_u64())
        .collect();
    first.sort_unstable();
    first.dedup();
    assert_eq!(first.len(), 20_000);
}
