//! What one run of one case measured, in the same terms for every simulator (or the kernel), and
//! the statistics of a congestion-window trace.

use crate::runs::Windows;
use concord_sim::metrics::series::jain_index;
use serde::{Deserialize, Serialize};

/// The figures of one run. Rates in bits per second over the whole run; windows in segments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Who ran it: `concord`, `ns-3`, `ns-3 prr`, `linux reno`, ...
    pub source: String,
    /// The seed.
    pub seed: u64,
    /// Payload delivered to each receiving application x 8 / the run's length, one per flow in
    /// the case's order (dumbbell pairs; parking lot: end-to-end flows, then each hop's cross
    /// flows).
    pub goodput_bps: Vec<f64>,
    /// Mean over the router-to-router links of the fraction of the link's time spent sending.
    pub utilisation: f64,
    /// Packets dropped at the router-to-router queues (full or early), all links.
    pub drops: u64,
    /// Packets marked CE at those queues.
    pub marks: u64,
    /// Packets lost at random on those links.
    pub wire_losses: u64,
    /// Retransmission timeouts, all flows.
    pub timeouts: u64,
    /// Fast retransmits (entries into loss recovery), all flows.
    pub fast_retransmits: u64,
    /// Of those, the spurious ones: fast recovery entered while the receiver already held the
    /// segment at snd.una (duplicate ACKs caused by resent data it had, RFC 6582 section 4.1).
    /// `None` where not measured (concord, the kernel); ns-3's `validate.cc` counts them.
    #[serde(default)]
    pub spurious_fast_retransmits: Option<u64>,
    /// Time-weighted mean congestion window over each flow's trace, mean over flows, segments.
    pub cwnd_mean: f64,
    /// Time-weighted coefficient of variation of the window, mean over flows.
    pub cwnd_cv: f64,
    /// Largest window of any flow, segments.
    pub cwnd_max: f64,
    /// Each flow's sequence of window values, for telling which seeds gave the same run
    /// ([`crate::runs`]); concord's runs only, kept in memory and not written out.
    #[serde(skip)]
    pub windows: Windows,
}

impl Measurement {
    /// The sum of the flows' goodputs.
    pub fn total_goodput_bps(&self) -> f64 {
        self.goodput_bps.iter().sum()
    }

    /// Jain's fairness index over the flows' goodputs (NaN when nothing was delivered).
    pub fn jain(&self) -> f64 {
        jain_index(&self.goodput_bps)
    }
}

/// Time-weighted statistics of one flow's window trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CwndStats {
    /// Mean, weighted by how long each value held, in the trace's unit.
    pub mean: f64,
    /// Standard deviation / mean, time-weighted (zero for a zero mean).
    pub cv: f64,
    /// Largest value.
    pub max: f64,
}

/// Statistics of a step function given as (time s, value) changes, each value holding until the
/// next change and the last until `end_s`. Samples before the first are not part of the trace.
/// `None` for an empty trace or one of zero length.
pub fn cwnd_stats(samples: &[(f64, f64)], end_s: f64) -> Option<CwndStats> {
    let first = samples.first()?.0;
    let span = end_s - first;
    if span <= 0.0 {
        return None;
    }
    let (mut sum, mut sum_sq, mut max) = (0.0, 0.0, f64::NEG_INFINITY);
    for (k, &(t, v)) in samples.iter().enumerate() {
        let next = samples.get(k + 1).map_or(end_s, |s| s.0).min(end_s);
        let held = (next - t).max(0.0);
        sum += v * held;
        sum_sq += v * v * held;
        max = max.max(v);
    }
    let mean = sum / span;
    let var = (sum_sq / span - mean * mean).max(0.0);
    let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    Some(CwndStats { mean, cv, max })
}

/// The statistics of several flows' traces folded into a measurement's three figures: the mean
/// over flows of the means and of the CVs, and the largest value. Zeros for no traces.
pub fn fold_cwnd(stats: &[CwndStats]) -> (f64, f64, f64) {
    if stats.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let n = stats.len() as f64;
    (
        stats.iter().map(|s| s.mean).sum::<f64>() / n,
        stats.iter().map(|s| s.cv).sum::<f64>() / n,
        stats.iter().map(|s| s.max).fold(0.0, f64::max),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_10_for_1_s_then_20_for_3_s_has_mean_17_5() {
        let s = cwnd_stats(&[(1.0, 10.0), (2.0, 20.0)], 5.0).expect("a trace");
        assert_eq!(s.mean, 17.5);
        assert_eq!(s.max, 20.0);
        // variance: (100 x 1 + 400 x 3) / 4 - 17.5^2 = 325 - 306.25 = 18.75
        assert!((s.cv - 18.75f64.sqrt() / 17.5).abs() < 1e-12);
    }

    #[test]
    fn an_empty_or_zero_length_trace_has_no_statistics() {
        assert_eq!(cwnd_stats(&[], 5.0), None);
        assert_eq!(cwnd_stats(&[(5.0, 3.0)], 5.0), None);
    }

    #[test]
    fn the_windows_stay_in_memory_and_are_not_written_out() {
        let m = Measurement {
            source: "concord".into(),
            seed: 2,
            goodput_bps: vec![1e6],
            utilisation: 0.5,
            drops: 0,
            marks: 0,
            wire_losses: 0,
            timeouts: 0,
            fast_retransmits: 0,
            spurious_fast_retransmits: None,
            cwnd_mean: 1.0,
            cwnd_cv: 0.0,
            cwnd_max: 1.0,
            windows: Windows::new(vec![vec![14480, 15928]]),
        };
        let json = serde_json::to_string(&m).expect("serialises");
        assert!(
            !json.contains("windows") && !json.contains("14480"),
            "{json}"
        );
        let back: Measurement = serde_json::from_str(&json).expect("reads back");
        assert!(back.windows.is_empty());
        assert_eq!(back.seed, 2);
    }

    #[test]
    fn folding_takes_the_mean_of_means_and_cvs_and_the_overall_max() {
        let a = CwndStats {
            mean: 10.0,
            cv: 0.5,
            max: 30.0,
        };
        let b = CwndStats {
            mean: 20.0,
            cv: 0.1,
            max: 25.0,
        };
        assert_eq!(fold_cwnd(&[a, b]), (15.0, 0.3, 30.0));
        assert_eq!(fold_cwnd(&[]), (0.0, 0.0, 0.0));
    }
}
