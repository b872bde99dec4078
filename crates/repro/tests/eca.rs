//! The ECA experiments in quick mode: both run and draw their figures, and every claim passes
//! except those listed in `KNOWN_FAILING`, which fail today for the reason stated beside them.
//! A listed claim that starts to pass makes this test fail too, so that the list stays honest.

use concord_repro::{eca, Ctx, Paper};

/// (figure prefix, metric prefix) of the claims concord does not meet yet: none today.
///
/// Fig. 6 is not on the list: quick mode runs its 1 Mbit/s points for the full run's 100 s
/// (20 s warm-up), where ten flows on 1 Mbit/s deliver under one packet per 100 ms bin and the
/// CoV mostly counts packets; over 25 s of bins TCP and ECN/RED at 1 Mbit/s, 1 ms came out in
/// the wrong order (1.37 against 1.74), over 80 s they do not (2.10 against 1.96).
const KNOWN_FAILING: [(&str, &str); 0] = [];

#[test]
fn the_eca_claims_hold_in_quick_mode() {
    let ctx = Ctx { quick: true };
    let mut claims = Vec::new();
    for e in eca::experiments() {
        let outcome = (e.run)(&ctx).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        assert!(!outcome.figures.is_empty(), "{} draws figures", e.id);
        assert!(!outcome.raw.is_empty(), "{} writes its table", e.id);
        claims.extend(outcome.claims);
    }
    assert_eq!(claims.len(), 11);
    for c in &claims {
        assert_eq!(c.paper, Paper::Eca);
        assert!(c.quick);
        assert!(c.ours.is_finite(), "{}: {}", c.metric, c.ours);
        let known = KNOWN_FAILING
            .iter()
            .any(|(fig, metric)| c.figure.starts_with(fig) && c.metric.starts_with(metric));
        if known {
            eprintln!("known failure: {} = {} ({})", c.metric, c.ours, c.tolerance);
            assert!(!c.pass, "{} now passes: take it off the list", c.metric);
            continue;
        }
        assert!(
            c.pass,
            "{} / {}: ours {} vs {}",
            c.figure, c.metric, c.ours, c.tolerance
        );
    }
}
