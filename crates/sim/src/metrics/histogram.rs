//! A log-linear histogram of durations: 64 sub-buckets per power of two, so every bucket is
//! at most 1/64 (1.6%) wide relative to its lower bound; memory grows only with the span from
//! the smallest to the largest value seen (8 bytes a bucket: a flow's delays between 50 and
//! 150 ms take about 100 buckets, where counting from zero would take 1,400), plus at most a
//! quarter of it as room to widen into.

use concord_cc::time::Duration;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets of room a histogram's storage grows by at least: 8 counts, one 64-byte line.
const ROOM_STEP: usize = 8;
/// Buckets there are: one past the bucket of the largest value, `u64::MAX` ns.
const BUCKETS: usize = (SUB * (64 - SUB_BITS as u64) + SUB) as usize;

/// A histogram of durations with 1.6% relative resolution.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Counts of the buckets from `base` on: the buckets seen and the room around them to
    /// widen into, whose counts are zero.
    counts: Vec<u64>,
    /// The bucket of `counts[0]`.
    base: usize,
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

    /// Adds `n` to bucket `b`, widening the storage to reach it.
    fn add(&mut self, b: usize, n: u64) {
        // Below `base` the difference wraps past every index, so one comparison tests both ends.
        let i = b.wrapping_sub(self.base);
        if i >= self.counts.len() {
            self.reach(b, b);
        }
        self.counts[b - self.base] += n;
    }

    /// Widens the storage to hold buckets `lo..=hi` besides those it holds, with room beyond
    /// the new span on the side or sides it widened to: a quarter of the span, at least one
    /// 64-byte line ([`ROOM_STEP`] buckets). A span that widens a bucket at a time is so copied
    /// a number of times logarithmic in its width, not once per line; the room is at most a
    /// quarter of the span (or a line), not the half of doubling.
    #[cold]
    #[inline(never)]
    fn reach(&mut self, lo: usize, hi: usize) {
        let held = self.counts.len();
        let (old_lo, old_end) = if held == 0 {
            (lo, hi + 1)
        } else {
            (self.base, self.base + held)
        };
        let (new_lo, new_end) = (lo.min(old_lo), (hi + 1).max(old_end));
        let room = ((new_end - new_lo) / 4).max(ROOM_STEP);
        let (down, up) = (held == 0 || new_lo < old_lo, held == 0 || new_end > old_end);
        let (below, above) = match (down, up) {
            (true, true) => (room / 2, room - room / 2),
            (true, false) => (room, 0),
            _ => (0, room),
        };
        let base = new_lo.saturating_sub(below);
        let end = (new_end + above).min(BUCKETS);
        if held > 0 && base == self.base {
            // Widening upwards only: grow in place if the allocator can.
            self.counts.reserve_exact(end - base - held);
            self.counts.resize(end - base, 0);
        } else {
            let mut counts = Vec::with_capacity(end - base);
            counts.resize(old_lo - base, 0);
            counts.extend_from_slice(&self.counts);
            counts.resize(end - base, 0);
            self.counts = counts;
            self.base = base;
        }
    }

    /// The counts from the first bucket seen to the last, and the bucket of the first; empty
    /// when nothing was counted.
    fn span(&self) -> (usize, &[u64]) {
        let first = self.counts.iter().position(|&c| c > 0);
        let last = self.counts.iter().rposition(|&c| c > 0);
        match (first, last) {
            (Some(a), Some(z)) => (self.base + a, &self.counts[a..=z]),
            _ => (0, &[]),
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
        // The room's counts are zero: they never reach the rank first.
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket_range(self.base + i);
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
                let (lo, w) = bucket_range(self.base + i);
                (Duration::from_nanos(lo), Duration::from_nanos(lo + w), c)
            })
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        let (first, counts) = other.span();
        if !counts.is_empty() {
            // Widen to both ends of `other` at once, then add bucket by bucket.
            let last = first + counts.len() - 1;
            if first < self.base || last >= self.base + self.counts.len() {
                self.reach(first, last);
            }
            for (i, &c) in counts.iter().enumerate() {
                self.counts[first + i - self.base] += c;
            }
        }
        self.total += other.total;
        self.sum_nanos += other.sum_nanos;
        self.max = self.max.max(other.max);
    }
}

/// Equal when the same values were counted in the same buckets, whatever room each holds.
impl PartialEq for Histogram {
    fn eq(&self, other: &Histogram) -> bool {
        self.total == other.total
            && self.sum_nanos == other.sum_nanos
            && self.max == other.max
            && self.span() == other.span()
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

    /// Bucket counts of every value, over every bucket: what any histogram's layout must report.
    fn dense(values: &[u64]) -> Vec<u64> {
        let mut counts = vec![0; BUCKETS];
        for &v in values {
            counts[bucket_of(v)] += 1;
        }
        counts
    }

    #[test]
    fn the_largest_value_has_the_last_bucket() {
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        let (lo, w) = bucket_range(BUCKETS - 1);
        assert_eq!(lo.checked_add(w - 1), Some(u64::MAX));
    }

    #[test]
    fn the_span_of_the_values_is_stored_with_a_quarter_of_room() {
        let mut h = Histogram::new();
        h.record(Duration::from_millis(100));
        // One line of room, half below and half above the first value.
        assert_eq!(h.base, bucket_of(100_000_000) - ROOM_STEP / 2);
        assert_eq!(h.counts.len(), ROOM_STEP + 1);
        h.record(Duration::from_millis(50));
        let (mid, lo, hi) = (
            bucket_of(100_000_000),
            bucket_of(50_000_000),
            bucket_of(150_000_000),
        );
        // Widened down: the span from 50 ms to the room above 100 ms, a quarter of it below.
        let down = mid + 1 + ROOM_STEP / 2 - lo;
        assert_eq!(h.base, lo - down / 4);
        h.record(Duration::from_millis(150));
        // Widened up: the span from there to 150 ms, a quarter of it above.
        let up = hi + 1 - h.base;
        assert_eq!(h.counts.len(), up + up / 4);
        let (first, span) = h.span();
        assert_eq!((first, span.len()), (lo, hi - lo + 1));
        let b: Vec<u64> = h.buckets().map(|(_, _, c)| c).collect();
        assert_eq!(b, vec![1, 1, 1]);
        assert_eq!(
            h.quantile(0.0),
            Duration::from_nanos({
                let (lo, w) = bucket_range(lo);
                lo + w / 2
            })
        );
    }

    #[test]
    fn a_span_widening_one_bucket_at_a_time_is_copied_a_logarithmic_number_of_times() {
        // Below 128 ns a bucket is 1 ns wide: 64 buckets up from 64 ns, then 64 down from 63 ns,
        // one new bucket a step.
        let mut h = Histogram::new();
        let mut widened = 0;
        let mut room = (h.base, h.counts.len());
        for v in (64..128u64).chain((0..64u64).rev()) {
            h.record(Duration::from_nanos(v));
            if (h.base, h.counts.len()) != room {
                widened += 1;
                room = (h.base, h.counts.len());
            }
        }
        // Up: buckets 60..=68 held at the first value, then at 69, 78, 87, 96, 106 and 118 a
        // span of 10, 19, 28, 37, 47 and 59 buckets from 60 with a line or a quarter of room
        // above (to 77, 86, 95, 105, 117 and 132); down: at 59, 40 and 16 a span of 74, 93 and
        // 117 buckets up to 132 with a quarter below (from 41, 17 and 0). One line at a time
        // would have copied the span 16 times.
        assert_eq!(widened, 10);
        assert_eq!((h.base, h.counts.len()), (0, 133));
        assert!(h.buckets().all(|(_, _, c)| c == 1));
        assert_eq!(h.span().1.len(), 128);
    }

    #[test]
    fn quantiles_and_buckets_equal_those_of_every_bucket_counted() {
        // Values spread over nine decades in an order that widens the span both ways, merged
        // from two halves as well as recorded in one.
        let mut rng = concord_cc::rng::Rng::new(7);
        let values: Vec<u64> = (0..5_000)
            .map(|_| {
                let decade = rng.below(10) as u32;
                rng.below(10u64.pow(decade)) + 1
            })
            .collect();
        let (mut one, mut a, mut b) = (Histogram::new(), Histogram::new(), Histogram::new());
        for (i, &v) in values.iter().enumerate() {
            one.record(Duration::from_nanos(v));
            if i % 2 == 0 { &mut a } else { &mut b }.record(Duration::from_nanos(v));
        }
        a.merge(&b);
        assert_eq!(a, one);
        let counts = dense(&values);
        let expect: Vec<(Duration, Duration, u64)> = counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, w) = bucket_range(i);
                (Duration::from_nanos(lo), Duration::from_nanos(lo + w), c)
            })
            .collect();
        assert_eq!(one.buckets().collect::<Vec<_>>(), expect);
        assert_eq!(a.buckets().collect::<Vec<_>>(), expect);
        let max = values.iter().copied().max().unwrap_or(0);
        for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let rank = ((q * values.len() as f64).ceil() as u64).max(1);
            let mut seen = 0;
            let i = counts
                .iter()
                .position(|&c| {
                    seen += c;
                    seen >= rank
                })
                .expect("the rank lies within the count");
            let (lo, w) = bucket_range(i);
            let want = Duration::from_nanos((lo + w / 2).min(max));
            assert_eq!(one.quantile(q), want, "q {q}");
            assert_eq!(a.quantile(q), want, "q {q}");
        }
        let sum: u128 = values.iter().map(|&v| v as u128).sum();
        assert_eq!(one.mean(), Duration::from_nanos((sum / 5_000) as u64));
        // At most a quarter of the span (or a line) of room on each side.
        let (_, span) = one.span();
        assert!(one.counts.len() <= span.len() + 2 * (span.len() / 4).max(ROOM_STEP));
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
