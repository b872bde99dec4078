//! The ECA experiments in quick mode: every experiment runs and draws its figures, and every
//! claim is well formed (its verdict is compared with the expectations in CI).

use concord_repro::{eca, Paper};

mod common;

#[test]
fn the_eca_claims_are_well_formed_in_quick_mode() {
    let exps = eca::experiments();
    let outcomes = common::run_quick(&exps);
    let mut claims = Vec::new();
    for (e, outcome) in exps.iter().zip(outcomes) {
        let outcome = outcome.unwrap_or_else(|err| panic!("{}: {err}", e.id));
        assert!(!outcome.figures.is_empty(), "{} draws figures", e.id);
        assert!(!outcome.raw.is_empty(), "{} writes its table", e.id);
        claims.extend(outcome.claims);
    }
    assert!(claims.len() >= 15, "{} claims", claims.len());
    assert!(claims.iter().all(|c| c.paper == Paper::Eca));
    common::assert_well_formed(&claims);
    // ECN/RED draws from the seed: Fig. 5b's slope is one fit per seed.
    common::assert_over_quick_seeds(&claims, "Fig. 5b", 1);
}
