//! A port's queueing delay: the time each packet spent in the queue, from its enqueue to the
//! start of its transmission (the two timestamps the port takes), kept as a histogram.
//!
//! Bins are 100 us wide up to 10 ms, 1 ms wide up to 200 ms and 10 ms wide up to 2 s, and one
//! bin holds everything longer. A bin is named by its upper edge in microseconds, and a
//! percentile is read as the upper edge of the bin where the cumulative count reaches it: it is
//! never under-stated, and over-stated by at most one bin width.

use concord_cc::time::Duration;

/// The upper edges of the bins, in microseconds; the last bin (`u64::MAX`) is open.
fn edges() -> impl Iterator<Item = u64> {
    let fine = (1..=100).map(|i| i * 100);
    let middle = (11..=200).map(|i| i * 1_000);
    let coarse = (21..=200).map(|i| i * 10_000);
    fine.chain(middle)
        .chain(coarse)
        .chain(std::iter::once(u64::MAX))
}

/// The number of bins.
fn bin_count() -> usize {
    edges().count()
}

/// The bin of a delay of `us` microseconds: the first whose upper edge is at least `us`.
fn bin_of(us: u64) -> usize {
    if us <= 10_000 {
        (us.saturating_sub(1) / 100) as usize
    } else if us <= 200_000 {
        100 + ((us - 1) / 1_000 - 10) as usize
    } else if us <= 2_000_000 {
        290 + ((us - 1) / 10_000 - 20) as usize
    } else {
        470
    }
}

/// The histogram of queueing delays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayHistogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        DelayHistogram {
            counts: vec![0; bin_count()],
            total: 0,
        }
    }
}

impl DelayHistogram {
    /// Records one packet's delay.
    pub fn record(&mut self, delay: Duration) {
        let us = delay.as_nanos().div_ceil(1_000);
        let b = bin_of(us).min(self.counts.len() - 1);
        self.counts[b] += 1;
        self.total += 1;
    }

    /// The packets recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The non-empty bins as (upper edge in us, count), shortest first; the open bin's edge is
    /// `u64::MAX`.
    pub fn bins(&self) -> Vec<(u64, u64)> {
        edges()
            .zip(self.counts.iter().copied())
            .filter(|&(_, c)| c > 0)
            .collect()
    }
}

/// The `q`-quantile (0 < q <= 1) of a histogram given as (upper edge in us, count) bins in
/// increasing order: the upper edge of the bin where the cumulative count first reaches
/// `q` of the total; `None` without samples.
pub fn quantile_us(bins: &[(u64, u64)], q: f64) -> Option<u64> {
    let total: u64 = bins.iter().map(|&(_, c)| c).sum();
    if total == 0 {
        return None;
    }
    let need = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for &(edge, c) in bins {
        seen += c;
        if seen >= need {
            return Some(edge);
        }
    }
    bins.last().map(|&(e, _)| e)
}

/// The lower edge, in microseconds, of the bin whose upper edge is `upper_us`: a delay in that
/// bin is more than this. For a bar a delay must exceed, read a quantile at its lower edge.
pub fn lower_edge_us(upper_us: u64) -> u64 {
    match upper_us {
        0..=10_000 => upper_us.saturating_sub(100),
        10_001..=200_000 => upper_us - 1_000,
        200_001..=2_000_000 => upper_us - 10_000,
        _ => 2_000_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_delay_falls_in_the_bin_whose_upper_edge_first_covers_it() {
        let e: Vec<u64> = edges().collect();
        assert_eq!(e.len(), 471);
        for us in [
            0, 1, 99, 100, 101, 9_999, 10_000, 10_001, 11_000, 11_001, 199_999, 200_000,
        ]
        .into_iter()
        .chain([
            200_001,
            210_000,
            210_001,
            1_999_999,
            2_000_000,
            2_000_001,
            u64::MAX / 2,
        ]) {
            let b = bin_of(us);
            assert!(e[b] >= us, "{us} us in bin {b} of edge {}", e[b]);
            assert!(b == 0 || e[b - 1] < us, "{us} us: bin {b} is not the first");
            assert_eq!(lower_edge_us(e[b]), if b == 0 { 0 } else { e[b - 1] });
        }
    }

    #[test]
    fn the_90th_percentile_is_the_edge_of_the_bin_holding_the_90th_sample() {
        let mut h = DelayHistogram::default();
        // 89 packets at 250 us, 11 at 60 ms: the 90th of 100 is one of the slow ones.
        for _ in 0..89 {
            h.record(Duration::from_micros(250));
        }
        for _ in 0..11 {
            h.record(Duration::from_millis(60));
        }
        assert_eq!(h.total(), 100);
        assert_eq!(h.bins(), vec![(300, 89), (60_000, 11)]);
        assert_eq!(quantile_us(&h.bins(), 0.89), Some(300));
        assert_eq!(quantile_us(&h.bins(), 0.9), Some(60_000));
        assert_eq!(quantile_us(&[], 0.9), None);
    }
}
