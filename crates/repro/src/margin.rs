//! How far a claim's mean lies from the nearest edge of its tolerance, in the metric's unit
//! and in half-widths of its 95% interval: how borderline a verdict is, read beside it.
//!
//! The verdict rule (docs/analysis.md, "the pooling rule") puts the interval `mean ± h` against
//! the tolerance `[lo, hi]`. With `d` the signed distance from the mean to the nearest edge
//! (positive inside), the interval lies inside exactly when `d >= h` and wholly outside exactly
//! when `d < -h`; so `d / h` at least 1 is reproduced, below -1 not reproduced, and between
//! them seed-dependent. A reproduced claim at 1.1 half-widths is one low seed from straddling;
//! one at 5 is not.

use crate::claim::{fmt_num, Check};
use serde::{Deserialize, Serialize};

/// A mean's distance to the nearest edge of its tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Margin {
    /// The edge of the tolerance nearest the mean (the finite one of a one-sided check), in
    /// the metric's unit.
    pub edge: f64,
    /// The mean minus that edge, signed so that it is positive inside the tolerance and
    /// negative outside, in the metric's unit.
    pub distance: f64,
    /// `distance` over the half-width of the 95% interval: at least 1 when the interval lies
    /// inside the tolerance, below -1 when it lies wholly outside. None (`null`) when the
    /// interval has no width (a deterministic claim, or equal values).
    pub half_widths: Option<f64>,
}

impl Margin {
    /// The margin of `mean`, with 95% interval `ci95`, against `check`; None when the mean or
    /// the interval is not a number.
    pub fn of(check: Check, mean: f64, ci95: [f64; 2]) -> Option<Margin> {
        if !mean.is_finite() || ci95.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let (lo, hi) = check.bounds();
        // Signed distances to each edge, positive on the inside; an open side is infinitely far.
        let (edge, distance) = if mean - lo <= hi - mean {
            (lo, mean - lo)
        } else {
            (hi, hi - mean)
        };
        let half = (ci95[1] - ci95[0]) / 2.0;
        Some(Margin {
            edge,
            distance,
            half_widths: (half > 0.0).then(|| distance / half),
        })
    }
}

/// `+0.13 (6.5)`: the margin's distance in the metric's unit and in half-widths; `-` without
/// a margin.
pub fn margin_text(m: Option<Margin>) -> String {
    match m {
        None => "-".into(),
        Some(m) => {
            let sign = if m.distance >= 0.0 { "+" } else { "" };
            match m.half_widths {
                Some(k) => format!("{sign}{} ({k:.2})", fmt_num(m.distance)),
                None => format!("{sign}{} (no width)", fmt_num(m.distance)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mean_inside_a_band_is_measured_to_its_nearer_edge() {
        // Band 0.8..1.2; mean 1.07 with interval [1.05, 1.09]: 0.13 below 1.2, half-width
        // 0.02, so 6.5 half-widths.
        let m =
            Margin::of(Check::Between { lo: 0.8, hi: 1.2 }, 1.07, [1.05, 1.09]).expect("finite");
        assert_eq!(m.edge, 1.2);
        assert!((m.distance - 0.13).abs() < 1e-12, "{m:?}");
        assert!(
            (m.half_widths.expect("has width") - 6.5).abs() < 1e-9,
            "{m:?}"
        );
    }

    #[test]
    fn a_mean_outside_has_a_negative_margin() {
        // At least 1.2; mean 1.1 [1.0, 1.2]: 0.1 short, half-width 0.1, -1 half-widths.
        let m = Margin::of(Check::AtLeast { min: 1.2 }, 1.1, [1.0, 1.2]).expect("finite");
        assert_eq!(m.edge, 1.2);
        assert!((m.distance + 0.1).abs() < 1e-12, "{m:?}");
        assert!(
            (m.half_widths.expect("has width") + 1.0).abs() < 1e-9,
            "{m:?}"
        );
        // At most 99; mean 89.5 [57.73, 121.27]: 9.5 inside, half-width 31.77.
        let q = Margin::of(Check::AtMost { max: 99.0 }, 89.5, [57.73, 121.27]).expect("finite");
        assert_eq!((q.edge, q.distance), (99.0, 9.5));
        assert!((q.half_widths.expect("has width") - 9.5 / 31.77).abs() < 1e-9);
    }

    #[test]
    fn a_relative_tolerance_is_measured_to_its_edges() {
        // ±25% of 1: 0.75..1.25; mean 0.8991 [0.8237, 0.9745]: 0.1491 above 0.75.
        let m = Margin::of(
            Check::Relative {
                target: 1.0,
                rel: 0.25,
            },
            0.8991,
            [0.8237, 0.9745],
        )
        .expect("finite");
        assert_eq!(m.edge, 0.75);
        assert!((m.distance - 0.1491).abs() < 1e-12, "{m:?}");
        assert!((m.half_widths.expect("has width") - 0.1491 / 0.0754).abs() < 1e-9);
    }

    #[test]
    fn an_interval_without_width_has_no_margin_in_half_widths() {
        let m = Margin::of(Check::AtMost { max: 0.0 }, 0.0, [0.0, 0.0]).expect("finite");
        assert_eq!(
            m,
            Margin {
                edge: 0.0,
                distance: 0.0,
                half_widths: None
            }
        );
        assert_eq!(
            Margin::of(Check::AtLeast { min: 1.0 }, f64::NAN, [f64::NAN, f64::NAN]),
            None
        );
    }

    #[test]
    fn the_margin_in_half_widths_agrees_with_the_verdict_rule() {
        use crate::claim::{place, Placement};
        let band = Check::Between { lo: 0.8, hi: 1.2 };
        for (mean, half) in [
            (1.0, 0.1),
            (1.15, 0.1),
            (1.25, 0.1),
            (1.35, 0.1),
            (0.7, 0.05),
        ] {
            let ci = [mean - half, mean + half];
            let k = Margin::of(band, mean, ci)
                .and_then(|m| m.half_widths)
                .expect("has width");
            let expected = match place(band, ci) {
                Placement::Inside => k >= 1.0,
                Placement::Outside => k < -1.0,
                Placement::Straddling => (-1.0..1.0).contains(&k),
            };
            assert!(expected, "mean {mean} half {half}: {k} half-widths");
        }
    }

    #[test]
    fn margins_read_with_their_sign_and_width() {
        let m = Margin::of(Check::Between { lo: 0.8, hi: 1.2 }, 1.07, [1.05, 1.09]);
        assert_eq!(margin_text(m), "+0.13 (6.50)");
        let out = Margin::of(Check::AtLeast { min: 1.2 }, 1.1, [1.0, 1.2]);
        assert_eq!(margin_text(out), "-0.1 (-1.00)");
        let flat = Margin::of(Check::AtMost { max: 99.0 }, 43.0, [43.0, 43.0]);
        assert_eq!(margin_text(flat), "+56 (no width)");
        assert_eq!(margin_text(None), "-");
    }
}
