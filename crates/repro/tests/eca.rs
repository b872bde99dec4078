//! The ECA experiments in quick mode: both run and draw their figures, and every claim passes
//! except those listed in `KNOWN_FAILING`, which fail today for the reason stated beside them.
//! A listed claim that starts to pass makes this test fail too, so that the list stays honest.

use concord_repro::{eca, Ctx, Paper};

/// (figure prefix, metric prefix) of the claims concord does not meet yet.
///
/// - Fig. 5c utilisation: the paper's estimator (section IV.A.2: x1.05 after an interval above
///   the target, x0.99 otherwise) settles where about 17% of the 100 ms intervals are above the
///   target (0.17 ln 1.05 = 0.83 ln(1 / 0.99)), so the mean arrival rate sits below the target
///   by as much as the per-interval count varies. At 1 Mbit/s an interval holds 7.5 packets at
///   the target and one packet more or less is 13%: the hops run at 76-77% instead of 90%; from
///   2 Mbit/s up they run at 85-89%. The three 1 Mbit/s points of the quick grid miss (the
///   seven of the full grid too: 42 of 49). concord's rule is the paper's: section IV.A.2
///   "computes the arrival rate into the queue in 100ms time intervals, and compares this to
///   the target utilization", and the prototype (section V.A.1) does it "in exactly the same
///   manner"; nothing carries over between intervals. Section III.A.2's alternative, L up or
///   down on whether a virtual queue served at the target is "full or empty"
///   (`LoadRule::VirtualQueue`), does carry the backlog over, but the paper gives no threshold
///   and the result hangs on it: at 1 Mbit/s the quick grid's hops run at 54% with a one-packet
///   threshold and at 80-84% with four packets (which also pulls 10 Mbit/s, 100 ms down to 84%
///   and the 1 Mbit/s horizontal / vertical totals to 0.78-0.83). The paper itself says its
///   1 Mbit/s prototype results "suffer, to some extent, from the fact that the MTU is
///   relatively large compared with the link capacity" (section V.C).
///
/// Fig. 6 is not on the list: quick mode runs its 1 Mbit/s points for the full run's 100 s
/// (20 s warm-up), where ten flows on 1 Mbit/s deliver under one packet per 100 ms bin and the
/// CoV mostly counts packets; over 25 s of bins TCP and ECN/RED at 1 Mbit/s, 1 ms came out in
/// the wrong order (1.37 against 1.74), over 80 s they do not (2.10 against 1.96).
const KNOWN_FAILING: [(&str, &str); 1] =
    [("Fig. 5c", "points where hop utilisation is within 5 points")];

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
