//! The CM experiments in quick mode: every experiment runs without error and draws its figures,
//! and every claim is well formed (its verdict is compared with the expectations in CI).

use concord_repro::{registry, Paper};

mod common;

#[test]
fn every_cm_experiment_runs_and_every_claim_is_well_formed() {
    let exps: Vec<_> = registry()
        .into_iter()
        .filter(|e| e.paper == Paper::Cm)
        .collect();
    assert_eq!(exps.len(), 8, "the eight CM experiments are registered");
    let outcomes = common::run_quick(&exps);
    let mut claims = 0;
    for (e, o) in exps.iter().zip(&outcomes) {
        let o = o.as_ref().unwrap_or_else(|err| panic!("{}: {err}", e.id));
        if e.id == "cm/friendliness" {
            // The random-drop sweep draws from the seed: one fit per seed, both exponents and
            // the slopes' ratio.
            common::assert_over_quick_seeds(&o.claims, "concord's sweep", 3);
        }
        assert!(!o.claims.is_empty(), "{} checks no claim", e.id);
        claims += o.claims.len();
        common::assert_well_formed(&o.claims);
        if e.id != "cm/probes" {
            assert!(!o.figures.is_empty(), "{} draws no figure", e.id);
        }
        for f in &o.figures {
            assert!(
                f.svg.starts_with("<svg") && f.svg.len() > 500,
                "{} is empty",
                f.id
            );
        }
    }
    assert!(claims >= 30, "{claims} CM claims");
}
