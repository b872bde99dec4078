//! Comparing concord with a reference on one case: the targets, fixed before any result was seen,
//! each check's verdict, and the mechanism a measured ns-3 variant shows to cause a difference.

use crate::grid::Case;
use crate::measurement::Measurement;
use crate::ns3::Variant;
use serde::Serialize;

/// Utilisation within 2 points (0.02 of the link).
pub const UTILISATION_POINTS: f64 = 0.02;
/// Jain's index within 0.05.
pub const JAIN_DIFFERENCE: f64 = 0.05;
/// Total goodput under random loss within 15% of the reference's.
pub const GOODPUT_UNDER_LOSS: f64 = 0.15;

/// Floating-point slack in a comparison, so that a difference of exactly the limit passes.
const ROUNDING: f64 = 1e-9;

/// A case's figures over its seeds: the mean of each run's figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Who ran it.
    pub source: String,
    /// Runs averaged.
    pub runs: usize,
    /// Bottleneck utilisation, 0 to 1 (mean over router links).
    pub utilisation: f64,
    /// Jain's index over the flows' goodputs.
    pub jain: f64,
    /// Total goodput, bits per second.
    pub goodput_bps: f64,
    /// The smallest flow's goodput, bits per second.
    pub min_flow_bps: f64,
    /// The largest flow's goodput, bits per second.
    pub max_flow_bps: f64,
    /// Queue drops per run.
    pub drops: f64,
    /// CE marks per run.
    pub marks: f64,
    /// Retransmission timeouts per run.
    pub timeouts: f64,
    /// Fast retransmits per run.
    pub fast_retransmits: f64,
    /// Of those, the spurious ones per run (the receiver held snd.una), when every run measured
    /// them.
    pub spurious_fast_retransmits: Option<f64>,
    /// Time-weighted mean window, segments.
    pub cwnd_mean: f64,
    /// Time-weighted coefficient of variation of the window.
    pub cwnd_cv: f64,
    /// Largest window, segments (mean over runs).
    pub cwnd_max: f64,
}

/// The means over runs; `None` for no runs.
pub fn summarise(runs: &[Measurement]) -> Option<Summary> {
    let first = runs.first()?;
    let n = runs.len() as f64;
    let mean = |f: &dyn Fn(&Measurement) -> f64| runs.iter().map(f).sum::<f64>() / n;
    Some(Summary {
        source: first.source.clone(),
        runs: runs.len(),
        utilisation: mean(&|m| m.utilisation),
        jain: mean(&|m| m.jain()),
        goodput_bps: mean(&|m| m.total_goodput_bps()),
        min_flow_bps: mean(&|m| m.goodput_bps.iter().copied().fold(f64::INFINITY, f64::min)),
        max_flow_bps: mean(&|m| m.goodput_bps.iter().copied().fold(0.0, f64::max)),
        drops: mean(&|m| m.drops as f64),
        marks: mean(&|m| m.marks as f64),
        timeouts: mean(&|m| m.timeouts as f64),
        fast_retransmits: mean(&|m| m.fast_retransmits as f64),
        spurious_fast_retransmits: runs
            .iter()
            .map(|m| m.spurious_fast_retransmits)
            .sum::<Option<u64>>()
            .map(|total| total as f64 / n),
        cwnd_mean: mean(&|m| m.cwnd_mean),
        cwnd_cv: mean(&|m| m.cwnd_cv),
        cwnd_max: mean(&|m| m.cwnd_max),
    })
}

/// What a target compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Metric {
    /// Utilisation, absolute difference in points.
    Utilisation,
    /// Jain's index, absolute difference.
    Jain,
    /// Total goodput relative to the reference's, cases with random loss only.
    GoodputUnderLoss,
}

impl Metric {
    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Utilisation => "utilisation",
            Metric::Jain => "jain",
            Metric::GoodputUnderLoss => "goodput",
        }
    }
}

/// One target checked.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// What.
    pub metric: Metric,
    /// concord's figure.
    pub concord: f64,
    /// The reference's figure.
    pub reference: f64,
    /// The difference as the target measures it (absolute, or relative for goodput).
    pub difference: f64,
    /// The largest difference allowed.
    pub limit: f64,
    /// Within the target.
    pub pass: bool,
}

/// The targets that apply to `case`, checked.
pub fn checks(case: &Case, concord: &Summary, reference: &Summary) -> Vec<Check> {
    let mut out = Vec::new();
    let abs = |metric, c: f64, r: f64, limit: f64| {
        let difference = c - r;
        Check {
            metric,
            concord: c,
            reference: r,
            difference,
            limit,
            // NaN (nothing delivered) fails; a hair of rounding does not.
            pass: difference.abs() <= limit + ROUNDING,
        }
    };
    out.push(abs(
        Metric::Utilisation,
        concord.utilisation,
        reference.utilisation,
        UTILISATION_POINTS,
    ));
    out.push(abs(
        Metric::Jain,
        concord.jain,
        reference.jain,
        JAIN_DIFFERENCE,
    ));
    if case.loss > 0.0 {
        let difference = concord.goodput_bps / reference.goodput_bps - 1.0;
        out.push(Check {
            metric: Metric::GoodputUnderLoss,
            concord: concord.goodput_bps,
            reference: reference.goodput_bps,
            difference,
            limit: GOODPUT_UNDER_LOSS,
            pass: difference.abs() <= GOODPUT_UNDER_LOSS + ROUNDING,
        });
    }
    out
}

/// The largest of the failing checks' differences, each as a multiple of its limit (0 when all
/// pass): how far outside the targets a pair of summaries is.
pub fn excess(checks: &[Check]) -> f64 {
    checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| {
            let x = c.difference.abs() / c.limit;
            if x.is_nan() {
                f64::INFINITY
            } else {
                x
            }
        })
        .fold(0.0, f64::max)
}

/// What the ns-3 variants measured show about a difference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// concord and ns-3 agree: nothing to explain.
    Agree,
    /// These variants each bring ns-3 within every target of concord.
    Explained(Vec<Variant>),
    /// None does; this one narrows the largest gap by a third or more, the most of any.
    Partly(Variant),
    /// No variant was run.
    NotRun,
    /// Variants were run and none narrows the gap by a third.
    NotExplained,
}

/// Which mechanism a difference comes from, measured: the ns-3 variants (one mechanism switched
/// each) that bring ns-3 within every target of concord. When none does, the variant that
/// narrows the gap most, if any narrows it by a third or more, is the partial cause.
pub fn finding(
    case: &Case,
    concord: &Summary,
    reference: &Summary,
    variants: &[Summary],
) -> Finding {
    let base = checks(case, concord, reference);
    if base.iter().all(|c| c.pass) {
        return Finding::Agree;
    }
    let base_excess = excess(&base);
    let mut explained = Vec::new();
    let mut best: Option<(f64, Variant)> = None;
    for v in variants {
        let Some(&variant) = Variant::ALL.iter().find(|x| x.name() == v.source) else {
            continue;
        };
        let c = checks(case, concord, v);
        if c.iter().all(|c| c.pass) {
            explained.push(variant);
        } else {
            let e = excess(&c);
            if e <= base_excess * (2.0 / 3.0) && best.is_none_or(|(b, _)| e < b) {
                best = Some((e, variant));
            }
        }
    }
    if !explained.is_empty() {
        return Finding::Explained(explained);
    }
    match best {
        Some((_, v)) => Finding::Partly(v),
        None if variants.is_empty() => Finding::NotRun,
        None => Finding::NotExplained,
    }
}

impl Finding {
    /// The variants to check on other cases with the same symptom: those that explain the
    /// difference, or the partial cause.
    pub fn suspects(&self) -> Vec<Variant> {
        match self {
            Finding::Explained(v) => v.clone(),
            Finding::Partly(v) => vec![*v],
            _ => Vec::new(),
        }
    }

    /// The cause as the table states it.
    pub fn words(&self) -> String {
        match self {
            Finding::Agree => String::new(),
            Finding::Explained(v) => format!(
                "explained by {}",
                v.iter()
                    .map(|x| x.mechanism())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Finding::Partly(v) => format!("partly {}", v.mechanism()),
            Finding::NotRun => "not diagnosed (run without --diagnose)".into(),
            Finding::NotExplained => "not explained by the ns-3 switches tried".into(),
        }
    }
}

/// [`finding`] in the table's words.
pub fn cause(case: &Case, concord: &Summary, reference: &Summary, variants: &[Summary]) -> String {
    finding(case, concord, reference, variants).words()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::parse;

    fn case(loss: f64) -> Case {
        let mut c = parse(
            "[[case]]\ntopology = \"dumbbell\"\nflows = 2\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\n",
            "g",
        )
        .expect("valid")
        .remove(0);
        c.loss = loss;
        c
    }

    fn m(source: &str, goodput: Vec<f64>, util: f64, timeouts: u64) -> Measurement {
        Measurement {
            source: source.into(),
            seed: 1,
            goodput_bps: goodput,
            utilisation: util,
            drops: 10,
            marks: 0,
            wire_losses: 0,
            timeouts,
            fast_retransmits: 4,
            spurious_fast_retransmits: None,
            cwnd_mean: 20.0,
            cwnd_cv: 0.3,
            cwnd_max: 40.0,
            windows: Default::default(),
        }
    }

    #[test]
    fn the_spurious_fast_retransmits_are_averaged_only_when_every_run_measured_them() {
        let mut a = m("ns-3", vec![1e6], 0.9, 0);
        let mut b = m("ns-3", vec![1e6], 0.9, 0);
        a.spurious_fast_retransmits = Some(3);
        b.spurious_fast_retransmits = Some(6);
        let s = summarise(&[a.clone(), b.clone()]).expect("runs");
        assert_eq!(s.spurious_fast_retransmits, Some(4.5));
        b.spurious_fast_retransmits = None;
        let s = summarise(&[a, b]).expect("runs");
        assert_eq!(s.spurious_fast_retransmits, None);
    }

    #[test]
    fn summaries_are_means_over_seeds() {
        let s = summarise(&[
            m("concord", vec![4e6, 4e6], 0.9, 1),
            m("concord", vec![2e6, 6e6], 1.0, 4),
        ])
        .expect("runs");
        assert_eq!(s.runs, 2);
        assert!((s.utilisation - 0.95).abs() < 1e-12);
        assert_eq!(s.goodput_bps, 8e6);
        assert_eq!(s.timeouts, 2.5);
        // Jain 1 and 64 / (2 x 40) = 0.8: mean 0.9.
        assert!((s.jain - 0.9).abs() < 1e-12);
        assert_eq!(s.min_flow_bps, 3e6);
        assert_eq!(summarise(&[]), None);
    }

    #[test]
    fn utilisation_two_points_apart_passes_and_three_fails() {
        let c = case(0.0);
        let r = summarise(&[m("ns-3", vec![4e6, 4e6], 0.97, 0)]).expect("r");
        let ok = summarise(&[m("concord", vec![4e6, 4e6], 0.95, 0)]).expect("c");
        let bad = summarise(&[m("concord", vec![4e6, 4e6], 0.94, 0)]).expect("c");
        let k = checks(&c, &ok, &r);
        assert_eq!(k.len(), 2, "no goodput check without loss");
        assert!(k.iter().all(|x| x.pass), "{k:?}");
        let k = checks(&c, &bad, &r);
        assert!(!k[0].pass);
        assert!((k[0].difference + 0.03).abs() < 1e-12);
    }

    #[test]
    fn goodput_under_loss_is_relative_and_fails_beyond_15_percent() {
        let c = case(0.01);
        let r = summarise(&[m("ns-3", vec![2e6, 2e6], 0.5, 0)]).expect("r");
        let ok = summarise(&[m("concord", vec![2.3e6, 2.3e6], 0.5, 0)]).expect("c");
        let bad = summarise(&[m("concord", vec![1.6e6, 1.6e6], 0.5, 0)]).expect("c");
        let k = checks(&c, &ok, &r);
        assert_eq!(k[2].metric, Metric::GoodputUnderLoss);
        assert!(k[2].pass);
        let k = checks(&c, &bad, &r);
        assert!(!k[2].pass);
        assert!((k[2].difference + 0.2).abs() < 1e-12);
        assert!((excess(&k) - 0.2 / 0.15).abs() < 1e-12);
    }

    #[test]
    fn nothing_delivered_fails_jain() {
        let c = case(0.0);
        let r = summarise(&[m("ns-3", vec![4e6, 4e6], 0.97, 0)]).expect("r");
        let dead = summarise(&[m("concord", vec![0.0, 0.0], 0.97, 0)]).expect("c");
        assert!(!checks(&c, &dead, &r)[1].pass);
    }

    #[test]
    fn the_variant_that_brings_ns3_within_the_targets_is_named_as_the_cause() {
        let c = case(0.02);
        let concord = summarise(&[m("concord", vec![1e6, 1e6], 0.3, 9)]).expect("c");
        let ns3 = summarise(&[m("ns-3", vec![1.5e6, 1.5e6], 0.45, 2)]).expect("r");
        let no_lt =
            summarise(&[m("ns-3 no-limited-transmit", vec![1.1e6, 1.1e6], 0.31, 8)]).expect("v");
        let prr = summarise(&[m("ns-3 prr", vec![1.6e6, 1.6e6], 0.47, 2)]).expect("v");
        assert_eq!(
            cause(&c, &concord, &ns3, &[prr.clone(), no_lt]),
            "explained by limited transmit (RFC 3042): ns-3 without it comes to concord"
        );
        assert_eq!(
            cause(&c, &concord, &ns3, &[prr]),
            "not explained by the ns-3 switches tried"
        );
        assert_eq!(cause(&c, &ns3, &ns3, &[]), "");
    }
}
