//! The MCCP experiments in quick mode: every experiment runs and draws its figures, and every
//! claim passes except those listed in `KNOWN_FAILING`, which fail today for a reason stated
//! beside them. A listed claim that starts to pass makes this test fail too, so that the list
//! is kept honest.

use concord_repro::{registry, run_experiments, Ctx, Paper};

/// (figure, metric prefix) of the claims concord does not meet yet.
///
/// All of them trace back to the available-bandwidth estimate (ABE, `concord_cc::tcp::abe`),
/// seen in `estimator.csv`: while the window is below the pipe, ACKs arrive in one burst per
/// RTT, and eq. (1) weights each sample by the gap before it, so the long idle gap is charged
/// the near-zero sample of the burst's first ACK: in slow start at 2 Mbit/s ABE reads about
/// 0.16 Mbit/s, and at 40 Mbit/s / 100 ms about a sixth of the achieved rate. Hence fast
/// probing never lifts ssthresh above cwnd during start-up (MCCP = NewReno at RTT >= 100 ms),
/// the first loss sets ssthresh far below the pipe (Fig. 2b: 10 segments; Fig. 3: 2 segments),
/// and NCD's boundary is never crossed after it. Fig. 3's NewReno value (30.3 Mbit/s) cannot
/// come from a loss at a 25-segment window with these settings (ours: about 4 Mbit/s).
const KNOWN_FAILING: &[(&str, &str)] = &[
    ("Table 1: 40 Mbps, RTT 100 ms", "MCCP minus NewReno"),
    ("Table 1: 40 Mbps, RTT 150 ms", "MCCP minus NewReno"),
    ("Table 1: 40 Mbps, RTT 200 ms", "MCCP minus NewReno"),
    ("Table 2: 40 Mbps, RTT 100 ms", "MCCP minus NewReno"),
    ("Table 2: 80 Mbps, RTT 100 ms", "MCCP minus NewReno"),
    ("Table 2: 150 Mbps, RTT 100 ms", "MCCP minus NewReno"),
    ("Fig. 2b", "ssthresh after the first loss"),
    ("Fig. 3a", "goodput"),
    ("Fig. 3b", "goodput"),
    ("Fig. 4b", "time from 50 s"),
];

#[test]
fn every_mccp_experiment_runs_and_every_claim_not_known_to_fail_passes() {
    let exps: Vec<_> = registry()
        .into_iter()
        .filter(|e| e.paper == Paper::Mccp)
        .collect();
    assert_eq!(exps.len(), 6);
    let outcomes = run_experiments(&exps, &Ctx { quick: true }, 2, &|_, _| {});
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
        for c in &o.claims {
            claims += 1;
            let known = KNOWN_FAILING
                .iter()
                .any(|(fig, metric)| c.figure.starts_with(fig) && c.metric.starts_with(metric));
            assert!(
                c.ours.is_finite(),
                "{} / {}: {}",
                c.figure,
                c.metric,
                c.ours
            );
            if known {
                assert!(
                    !c.pass,
                    "now passes, remove it from KNOWN_FAILING: {} / {}",
                    c.figure, c.metric
                );
            } else {
                assert!(
                    c.pass,
                    "claim failed: {} / {}: ours {} vs {}",
                    c.figure, c.metric, c.ours, c.tolerance
                );
            }
        }
    }
    assert_eq!(claims, 28);
}
