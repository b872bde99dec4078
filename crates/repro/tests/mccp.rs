//! The MCCP experiments in quick mode: every experiment runs and draws its figures, and every
//! claim passes except those listed in `KNOWN_FAILING`, which fail today for a reason stated
//! beside them. A listed claim that starts to pass makes this test fail too, so that the list
//! is kept honest.

use concord_repro::{registry, run_experiments, Ctx, Paper};

/// (figure, metric prefix) of the claims concord does not meet yet.
///
/// The available-bandwidth estimate (ABE, `concord_cc::tcp::abe`) samples every ACK over its
/// inter-arrival time, as the paper's experiments did ("T_1 is fixed to the interval of the
/// last 2 ACKs"); fast probing then finds the pipe at start-up and after an NCD restart
/// (Tables 1-2, Figs. 3b and 4 pass). Two claims still fail, for reasons seen in
/// `estimator.csv`:
///
/// - Fig. 2b, first loss: the first loss is the slow-start overshoot (cwnd 57 at the third
///   duplicate ACK, not 46). The 3 Mbit/s link has delivered back to back for only ~80 ms,
///   less than one RTT, when the loss is detected; eq. (1) with tau_k >= RTT (eq. (6)) has
///   then moved about two thirds of the way from the slow-start estimate to the link rate, so
///   ABE * RTT_min = 23 segments (the pipe is 36). Every later loss of the run, the ones the
///   paper describes ("a buffer overflow occurs when the cwin exceeds 46 packets"), gives 36-37
///   segments, the separate "last loss" claim, which passes.
/// - Fig. 3a: the paper's 30.3 Mbit/s is out of reach of its own setting. Its "TCP (without
///   NCD)" is the same sender with NCD off: the loss at 2 Mbit/s (cwnd 25-38 segments of
///   1000 B at 100 ms) sets ssthresh = ABE * RTT_min (17 segments) and congestion avoidance
///   adds one segment per two RTTs (delayed ACKs), 3.8 Mbit/s over 15 s; one per RTT would
///   give ~7 Mbit/s. 30.3 Mbit/s needs an average window of ~380 segments. The text ("one
///   packet every RTT, requiring more than 60 sec for cwnd to reach BDP" of 1202 segments)
///   fits a window of a few hundred segments after the loss: with the loss at 2 MByte/s
///   (16 Mbit/s) the same runs give 26.1 Mbit/s without NCD and 84.0 Mbit/s with it, both
///   within the paper's claims. The scenario keeps the paper's stated 2 Mbit/s.
const KNOWN_FAILING: &[(&str, &str)] = &[
    ("Fig. 2b", "ssthresh after the first loss"),
    ("Fig. 3a", "goodput"),
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
    assert_eq!(claims, 30);
}
