//! The MCCP experiments in quick mode: every experiment runs and draws its figures, and every
//! claim passes except those listed in `KNOWN_FAILING`, which fail today for a reason stated
//! beside them. A listed claim that starts to pass makes this test fail too, so that the list
//! is kept honest.

use concord_repro::{registry, run_experiments, Ctx, Paper};

/// (figure, metric prefix) of the claims concord does not meet yet.
///
/// The available-bandwidth estimate (ABE, `concord_cc::tcp::abe`) now counts every delivered
/// byte once over the time it covers, so it reads the true delivery rate (Tables 1 and 2 pass:
/// fast probing lifts ssthresh once the window stops growing). The claims below fail for
/// reasons seen in `estimator.csv`:
///
/// - Fig. 2b, 3b: in slow start the rate samples double every RTT, so U_k of eq. (5) is always
///   the largest of the last ten and eq. (6) gives tau_k = (1 + N) RTT = 11 RTT: the estimate
///   lags the doubling rate by several RTTs (Fig. 2: 0.65 Mbit/s at the first loss on a
///   2.88 Mbit/s path, ssthresh 6 segments; Fig. 3: the loss at 25 segments leaves ssthresh at
///   the 2-segment floor). Fast probing and NCD then never see ABE * RTT_min above cwnd: a
///   delivery-rate estimate cannot exceed cwnd / RTT_min on an ACK-clocked path.
/// - Fig. 4b, 4a: after the UDP flows leave, the ACK clock keeps the spacing of the old
///   29 Mbit/s share; ABE reads that (correctly) and stays below cwnd / RTT_min, so fast probing
///   stays linear and cwnd reaches the BDP after 65 s (4a is a ratio to that time).
/// - Fig. 3b, 4b (what restarting fast probing would need): the pseudocode only raises ssthresh
///   to ABE * RTT_min, which stays below cwnd, so a restart by NCD changes nothing. Reading
///   "starts a new fast probing" as reopening ssthresh was tried and rejected: an unbounded
///   ssthresh (growth ends at the next duplicate ACKs) gives Fig. 3b 30 Mbit/s and Fig. 4b 16 s
///   but overshoots into loss bursts and timeouts (Fig. 2 utilisation -42 points, three Table
///   entries fail); ssthresh = 2 cwnd per restart gives 19.7 Mbit/s and 12 s and also fails
///   Fig. 2 utilisation. Neither bound is in the paper. Two details were found on the way: with
///   fast probing left on, NCD never runs again after the first restart, and while fast probing
///   raises ssthresh every ACK the boundary's "initial expected rate" (ssthresh / RTT_min)
///   follows it up to the expected rate, so NCD only counts if it keeps the ssthresh of the
///   phase's start.
/// - Fig. 3a: the paper's 30.3 Mbit/s is out of reach of its own setting. A loss at 2 Mbit/s
///   (25 segments of 1000 B at 100 ms) halves the window to 12.5 segments; congestion avoidance
///   then adds at most one segment per RTT (half that with delayed ACKs), so over 150 RTTs the
///   average window is at most ~90 segments without delayed ACKs (7 Mbit/s) and ~50 with them
///   (4 Mbit/s; ours 3.95). 30.3 Mbit/s needs an average window of ~380 segments, i.e. a window
///   of ~300 segments right after the loss; neither packet size, delayed ACKs nor the initial
///   ssthresh (the loss is in slow start) gets there. Checked against the paper's text: its
///   Fig. 3a is "TCP (without NCD)", growing "one packet every RTT, requiring more than 60 sec
///   for cwnd to reach BDP" (1202 segments); from 25 segments that takes ~118 s, from ~300
///   segments ~90 s, so the text is consistent with a window of a few hundred segments after
///   the loss, i.e. with the loss at 2 MByte/s (200 segments: ~22 Mbit/s over 15 s if the
///   window is not halved, as for MCCP without NCD) rather than 2 Mbit/s. The scenario keeps
///   the paper's stated 2 Mbit/s.
const KNOWN_FAILING: &[(&str, &str)] = &[
    ("Fig. 2b", "ssthresh after the first loss"),
    ("Fig. 3a", "goodput"),
    ("Fig. 3b", "goodput"),
    ("Fig. 4b", "time from 50 s"),
    ("Fig. 4a", "NewReno's time to BDP"),
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
