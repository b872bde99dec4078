//! The GCCA experiments in quick mode: every claim is checked, and all pass except the one
//! concord documents as not reproduced (the per-packet one-way delay of the test bed, see
//! `crates/repro/src/gcca.rs`), which must still be measured and reported.

use concord_repro::{gcca, Ctx, Paper};

#[test]
fn the_gcca_claims_hold_in_quick_mode() {
    let ctx = Ctx { quick: true };
    let mut claims = Vec::new();
    for e in gcca::experiments() {
        let outcome = (e.run)(&ctx).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        assert!(!outcome.figures.is_empty(), "{} draws figures", e.id);
        if e.id == "gcca/testbed" {
            // The parameter groups are reported beside the paper's Tables 1 and 2.
            let groups = outcome
                .raw
                .iter()
                .find(|(name, _)| name == "gcca-testbed-groups.csv")
                .map(|(_, csv)| csv.clone())
                .unwrap_or_default();
            let rows: Vec<&str> = groups.lines().skip(1).collect();
            assert_eq!(rows.len(), 3, "{groups}");
            for row in rows {
                assert_eq!(row.matches("min_th=").count(), 2, "{row}");
                assert!(!row.contains("NaN"), "{row}");
            }
        }
        claims.extend(outcome.claims);
    }
    assert!(claims.len() >= 15, "{} claims", claims.len());
    for c in &claims {
        assert_eq!(c.paper, Paper::Gcca);
        assert!(c.quick);
        assert!(c.ours.is_finite(), "{}: {}", c.metric, c.ours);
        if c.metric.starts_with("mean one-way delay") {
            // Not reproduced: GCCA keeps the window's excess queued in the network instead of
            // dropping it (section 2: "upstream nodes buffer more packets"), so each packet
            // waits longer than under E2E in all three groups (about 1.5 times), even with a
            // much larger leaky-bucket step; the paper's "shorter delay" is Table 1's transfer
            // time, checked above. See the module docs of `concord_repro::gcca`.
            assert!(!c.pass, "{} now passes: check it like the others", c.metric);
            eprintln!(
                "not reproduced: {} = {} ({})",
                c.metric, c.ours, c.tolerance
            );
            continue;
        }
        assert!(
            c.pass,
            "{} / {}: ours {} vs {}",
            c.figure, c.metric, c.ours, c.tolerance
        );
    }
}
