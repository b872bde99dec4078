//! The CM experiments in quick mode: every experiment runs without error, draws its figures,
//! and every claim passes (Figs. 4, 6, 7, 9, 10 and the probe protocol under probe loss).

use concord_repro::{registry, run_experiments, Ctx, Paper};

#[test]
fn every_cm_experiment_runs_and_every_claim_passes() {
    let exps: Vec<_> = registry()
        .into_iter()
        .filter(|e| e.paper == Paper::Cm)
        .collect();
    assert_eq!(exps.len(), 6, "the six CM experiments are registered");
    let outcomes = run_experiments(&exps, &Ctx { quick: true }, 2, &|_, _| {});
    let mut claims = 0;
    for (e, o) in exps.iter().zip(&outcomes) {
        let o = o.as_ref().unwrap_or_else(|err| panic!("{}: {err}", e.id));
        assert!(!o.claims.is_empty(), "{} checks no claim", e.id);
        for c in &o.claims {
            claims += 1;
            assert!(
                c.pass,
                "{}: {} / {}: ours {} vs {:?}",
                e.id, c.figure, c.metric, c.ours, c.check
            );
        }
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
    assert_eq!(claims, 13, "every CM claim was checked");
}
