//! Splitting an application's available bandwidth among its flows. CP leaves the split to the
//! application (slides, "COORDINATION PROTOCOL (CP)": "complete application control over the
//! manner in which an aggregate congestion response is realized"); these are the two common
//! choices.

use crate::units::Rate;

/// `total` in `n` equal parts, in bit/s; the parts add up to `total` exactly (the first
/// `total % n` parts get one bit/s more). Empty for `n = 0`.
pub fn split_equally(total: Rate, n: usize) -> Vec<Rate> {
    let Ok(n64) = u64::try_from(n) else {
        return Vec::new();
    };
    if n64 == 0 {
        return Vec::new();
    }
    let share = total.bps() / n64;
    let extra = total.bps() % n64;
    (0..n64)
        .map(|i| Rate::from_bps(share + u64::from(i < extra)))
        .collect()
}

/// `total` in parts proportional to `weights`, in bit/s, rounded down (the parts add up to at
/// most `total`, less by under one bit/s per part). A weight that is negative, zero or not a
/// finite number gets nothing; when no weight is positive every part is zero.
pub fn split_by_weights(total: Rate, weights: &[f64]) -> Vec<Rate> {
    let usable = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let sum: f64 = weights.iter().map(|&w| usable(w)).sum();
    weights
        .iter()
        .map(|&w| {
            if sum > 0.0 && sum.is_finite() {
                Rate::from_bps_f64((total.bps_f64() * usable(w) / sum).floor())
            } else {
                Rate::ZERO
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_equal_split_adds_up_to_the_total() {
        let parts = split_equally(Rate::from_bps(10), 3);
        assert_eq!(
            parts,
            vec![Rate::from_bps(4), Rate::from_bps(3), Rate::from_bps(3)]
        );
        assert!(split_equally(Rate::from_mbps(1), 0).is_empty());
    }

    #[test]
    fn a_weighted_split_follows_the_weights_and_ignores_bad_ones() {
        let parts = split_by_weights(Rate::from_mbps(6), &[1.0, 2.0, 0.0, -1.0, f64::NAN, 3.0]);
        assert_eq!(
            parts,
            vec![
                Rate::from_mbps(1),
                Rate::from_mbps(2),
                Rate::ZERO,
                Rate::ZERO,
                Rate::ZERO,
                Rate::from_mbps(3)
            ]
        );
        assert_eq!(
            split_by_weights(Rate::from_mbps(6), &[0.0, 0.0]),
            vec![Rate::ZERO; 2]
        );
        let total: u64 = split_by_weights(Rate::from_bps(1000), &[1.0, 1.0, 1.0])
            .iter()
            .map(|r| r.bps())
            .sum();
        assert_eq!(total, 999);
    }
}
