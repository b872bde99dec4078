//! The CP experiments in quick mode: every experiment runs and draws its figures, and
//! every claim is well formed (its verdict is compared with the expectations in CI).

use concord_repro::{registry, Paper};

mod common;

#[test]
fn every_cp_experiment_runs_and_every_claim_is_well_formed() {
    let exps: Vec<_> = registry()
        .into_iter()
        .filter(|e| e.paper == Paper::Cp)
        .collect();
    assert_eq!(exps.len(), 4);
    let outcomes = common::run_quick(&exps);
    let mut claims = 0;
    for (e, o) in exps.iter().zip(&outcomes) {
        let o = match o {
            Ok(o) => o,
            Err(err) => panic!("{}: {err}", e.id),
        };
        assert!(!o.figures.is_empty(), "{} drew no figure", e.id);
        for f in &o.figures {
            assert!(f.svg.starts_with("<svg") && f.svg.len() > 500, "{}", f.id);
        }
        claims += o.claims.len();
        common::assert_well_formed(&o.claims);
    }
    assert!(claims >= 20, "{claims} claims");
}
