//! Byte counts binned over time (goodput time series).

use concord_cc::time::{Duration, Instant};

/// Bytes counted per bin of fixed width from time zero.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    bin: Duration,
    bins: Vec<u64>,
}

impl Series {
    /// An empty series with bins of width `bin` (at least 1 ns).
    pub fn new(bin: Duration) -> Series {
        Series {
            bin: bin.max(Duration::from_nanos(1)),
            bins: Vec::new(),
        }
    }

    /// Adds `bytes` at time `at`.
    pub fn add(&mut self, at: Instant, bytes: u64) {
        let i = self.bin_of(at);
        if i >= self.bins.len() {
            self.bins.resize(i + 1, 0);
        }
        self.bins[i] += bytes;
    }

    /// Asks the processor to fetch the bin that [`Series::add`] at `at` adds to, if it exists:
    /// a hint, nothing changes.
    #[inline]
    pub fn prefetch(&self, at: Instant) {
        if let Some(bin) = self.bins.get(self.bin_of(at)) {
            mem_prefetch::prefetch_read_data::<_, 3>(bin);
        }
    }

    /// The bin of time `at`.
    #[inline]
    fn bin_of(&self, at: Instant) -> usize {
        (at.as_nanos() / self.bin.as_nanos()) as usize
    }

    /// The bin width.
    pub fn bin(&self) -> Duration {
        self.bin
    }

    /// Bytes per bin, from time zero, up to the last non-empty bin.
    pub fn bins(&self) -> &[u64] {
        &self.bins
    }

    /// Bits per second in every bin up to `end` (empty bins included).
    pub fn rates_bps(&self, end: Instant) -> Vec<f64> {
        let n = end.as_nanos().div_ceil(self.bin.as_nanos()) as usize;
        let secs = self.bin.as_secs_f64();
        (0..n)
            .map(|i| self.bins.get(i).copied().unwrap_or(0) as f64 * 8.0 / secs)
            .collect()
    }
}

/// Jain's fairness index of `x`: (sum x)^2 / (n * sum x^2). An empty or all-zero set has no
/// shares to compare and gives NaN, so that a claim like "Jain >= 0.9" fails on starvation
/// instead of passing.
pub fn jain_index(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if n == 0.0 || sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (n * sq)
    }
}

/// Coefficient of variation (standard deviation / mean) of `x`; zero for a zero mean.
pub fn coefficient_of_variation(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if mean == 0.0 {
        return 0.0;
    }
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    var.sqrt() / mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_land_in_the_bin_of_their_time() {
        let mut s = Series::new(Duration::from_millis(100));
        s.add(Instant::from_millis(50), 1000);
        s.add(Instant::from_millis(250), 500);
        assert_eq!(s.bins(), &[1000, 0, 500]);
        // The bin a prefetch names is the one an add at that time adds to.
        assert_eq!(s.bin_of(Instant::from_millis(250)), 2);
        assert_eq!(s.bin_of(Instant::from_millis(300)), 3);
        assert_eq!(
            s.rates_bps(Instant::from_millis(400)),
            vec![80_000.0, 0.0, 40_000.0, 0.0]
        );
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), 1.0);
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]), 0.25);
        assert!(jain_index(&[]).is_nan());
        assert!(
            jain_index(&[0.0, 0.0]).is_nan(),
            "starvation is not fairness"
        );
    }

    #[test]
    fn coefficient_of_variation_of_a_known_set() {
        // mean 5, population std 2 -> 0.4
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!((coefficient_of_variation(&x) - 0.4).abs() < 1e-12);
    }
}
