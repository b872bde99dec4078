//! A log-linear histogram of durations: 64 sub-buckets per power of two, so every bucket is
//! at most 1/64 (1.6%) wide relative to its lower bound; memory grows only with the span from
//! the smallest to the largest value seen (8 bytes a bucket: a flow's delays between 50 and
//! 150 ms take about 100 buckets, where counting from zero would take 1,400).

use concord_cc::time::Duration;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets of room a histogram's storage grows by at least: 8 counts, one 64-byte line.
const ROOM_STEP: usize = 8;

/// A histogram of durations with 1.6% relative resolution.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Counts of the buckets from `first` on; empty, or its first and last counts are above
    /// zero (so equal histograms compare equal).
    counts: Vec<u64>,
    /// The bucket of `counts[0]`.
    first: usize,
    total: u64,
    sum_nanos: u128,
    max: u64,
}

/// The bucket of a value in nanoseconds.
fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() - SUB_BITS; // v >> e lies in [SUB, 2 SUB)
    (SUB * (e as u64 + 1) + (v >> e) - SUB) as usize
}

/// The lower bound of a bucket, in nanoseconds, and its width.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let e = i / SUB - 1;
    let m = i % SUB + SUB;
    (m << e, 1 << e)
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram::default()
    }

    /// Counts one value.
    pub fn record(&mut self, d: Duration) {
        let v = d.as_nanos();
        self.add(bucket_of(v), 1);
        self.total += 1;
        self.sum_nanos += v as u128;
        self.max = self.max.max(v);
    }

    /// Adds `n` (above zero) to bucket `b`, widening the stored span to reach it.
    fn add(&mut self, b: usize, n: u64) {
        if self.counts.is_empty() {
            self.first = b;
        } else if b < self.first {
            let grow = self.first - b;
            self.reserve_span(self.counts.len() + grow);
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = b;
        }
        let i = b - self.first;
        if i >= self.counts.len() {
            self.reserve_span(i + 1);
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += n;
    }

    /// Makes room for a span of `len` buckets. The stored span is exact; the room is rounded up
    /// to [`ROOM_STEP`] buckets (one 64-byte line), not doubled: a span widens only at a new
    /// extreme, with thousands of flows the slack of doubling would be most of the memory, and
    /// a span that creeps one bucket at a time is copied once per line, not once per bucket.
    fn reserve_span(&mut self, len: usize) {
        if len > self.counts.capacity() {
            let room = len.next_multiple_of(ROOM_STEP);
            self.counts.reserve_exact(room - self.counts.len());
        }
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The exact mean, or zero when empty.
    pub fn mean(&self) -> Duration {
        match self.total {
            0 => Duration::ZERO,
            n => Duration::from_nanos((self.sum_nanos / n as u128) as u64),
        }
    }

    /// The exact maximum.
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max)
    }

    /// The `q` quantile (0..=1), to the bucket's midpoint; zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.total == 0 {
            return Duration::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket_range(self.first + i);
                return Duration::from_nanos((lo + w / 2).min(self.max));
            }
        }
        Duration::from_nanos(self.max)
    }

    /// Non-empty buckets as (lower bound, upper bound, count).
    pub fn buckets(&self) -> impl Iterator<Item = (Duration, Duration, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, w) = bucket_range(self.first + i);
                (Duration::from_nanos(lo), Duration::from_nanos(lo + w), c)
            })
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        if let (Some(_), Some(_)) = (other.counts.first(), other.counts.last()) {
            // Widen to both ends of `other` first, then add bucket by bucket.
            let last = other.first + other.counts.len() - 1;
            self.add(last, other.counts[other.counts.len() - 1]);
            for (i, &c) in other.counts.iter().enumerate().rev().skip(1) {
                if c > 0 {
                    self.add(other.first + i, c);
                }
            }
        }
        self.total += other.total;
        self.sum_nanos += other.sum_nanos;
        self.max = self.max.max(other.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_inside_its_bucket() {
        for v in [
            0u64,
            1,
            63,
            64,
            65,
            127,
            128,
            1_000,
            123_456_789,
            u64::MAX / 3,
        ] {
            let (lo, w) = bucket_range(bucket_of(v));
            assert!(lo <= v && v - lo < w, "v {v} lo {lo} w {w}");
            assert!(w == 1 || (w as f64) / (lo as f64) <= 1.0 / 64.0 + 1e-12);
        }
    }

    #[test]
    fn only_the_span_of_the_values_is_stored() {
        let mut h = Histogram::new();
        h.record(Duration::from_millis(100));
        h.record(Duration::from_millis(50));
        h.record(Duration::from_millis(150));
        // Only the buckets from 50 to 150 ms are stored.
        assert_eq!(h.first, bucket_of(50_000_000));
        assert_eq!(
            h.counts.len(),
            bucket_of(150_000_000) - bucket_of(50_000_000) + 1
        );
        // Room for less than one line of counts beyond the span.
        assert_eq!(h.counts.capacity() % ROOM_STEP, 0);
        assert!(h.counts.capacity() < h.counts.len() + ROOM_STEP);
        let b: Vec<u64> = h.buckets().map(|(_, _, c)| c).collect();
        assert_eq!(b, vec![1, 1, 1]);
        assert_eq!(
            h.quantile(0.0),
            Duration::from_nanos({
                let (lo, w) = bucket_range(bucket_of(50_000_000));
                lo + w / 2
            })
        );
    }

    #[test]
    fn a_span_widening_one_bucket_at_a_time_grows_its_storage_once_per_line() {
        // Below 128 ns a bucket is 1 ns wide: 64 buckets up from 64 ns, then 32 down from 63 ns,
        // one new bucket a step.
        let mut h = Histogram::new();
        let mut grown = 0;
        let mut capacity = h.counts.capacity();
        for v in (64..128u64).chain((32..64u64).rev()) {
            h.record(Duration::from_nanos(v));
            if h.counts.capacity() != capacity {
                grown += 1;
                capacity = h.counts.capacity();
            }
        }
        assert_eq!(h.counts.len(), 96);
        assert_eq!(h.first, 32);
        assert_eq!(grown, 96 / ROOM_STEP);
        assert!(h.buckets().all(|(_, _, c)| c == 1));
    }

    #[test]
    fn merging_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for us in [700u64, 90_000, 5, 123_456] {
            a.record(Duration::from_micros(us));
            all.record(Duration::from_micros(us));
        }
        for us in [1u64, 3_000_000, 90_000] {
            b.record(Duration::from_micros(us));
            all.record(Duration::from_micros(us));
        }
        a.merge(&b);
        assert_eq!(a, all);
        let mut empty = Histogram::new();
        empty.merge(&Histogram::new());
        assert_eq!(empty, Histogram::new());
        empty.merge(&all);
        assert_eq!(empty, all);
    }

    #[test]
    fn quantiles_are_within_the_bucket_resolution() {
        let mut h = Histogram::new();
        for ms in 1..=100 {
            h.record(Duration::from_millis(ms));
        }
        assert_eq!(h.count(), 100);
        assert_eq!(h.mean(), Duration::from_micros(50_500));
        let p90 = h.quantile(0.9).as_secs_f64();
        assert!((p90 - 0.090).abs() / 0.090 < 0.016, "p90 {p90}");
        assert_eq!(h.max(), Duration::from_millis(100));
    }
}
