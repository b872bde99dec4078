//! A log-linear histogram of durations: 64 sub-buckets per power of two, so every bucket is
//! at most 1/64 (1.6%) wide relative to its lower bound. The counts are stored by octave: the
//! 64 buckets of one power of two (the values from 2^(o+5) to 2^(o+6) ns for octave o >= 1,
//! 0 to 63 ns for octave 0) take one chunk of 512 bytes, held only once a value fell in it, and a
//! 64-bit mask of the octaves held finds a bucket's chunk by counting the octaves held below it.
//! Recording into an octave already held never moves the counts; a new octave inserts one chunk,
//! at most 59 times in a histogram's life, into storage whose capacity doubles when full.

use concord_cc::time::Duration;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets of one octave, one chunk of the storage (64 counts, 512 bytes).
const CHUNK: usize = SUB as usize;
/// Buckets there are: one past the bucket of the largest value, `u64::MAX` ns.
const BUCKETS: usize = (SUB * (64 - SUB_BITS as u64) + SUB) as usize;
/// Octaves there are (59): each has one bit of [`Histogram::held`].
const OCTAVES: usize = BUCKETS / CHUNK;
const _: () = assert!(OCTAVES * CHUNK == BUCKETS && OCTAVES <= 64);

/// A histogram of durations with 1.6% relative resolution.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// The octaves whose chunk is held: bit `o` for the buckets `64 o .. 64 o + 63`.
    held: u64,
    /// The chunks of the octaves held, in increasing order of octave, [`CHUNK`] counts each.
    counts: Vec<u64>,
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

/// The octaves of a mask of octaves held, in increasing order.
fn octaves(mut held: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (held != 0).then(|| {
            let o = held.trailing_zeros() as usize;
            held &= held - 1;
            o
        })
    })
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

    /// Asks the processor to fetch the count that recording `d` adds to, if its octave is held
    /// (reading this histogram's own fields): a hint, nothing changes.
    #[inline]
    pub fn prefetch(&self, d: Duration) {
        if let Some(count) = self
            .count_at(bucket_of(d.as_nanos()))
            .and_then(|i| self.counts.get(i))
        {
            mem_prefetch::prefetch_read_data::<_, 3>(count);
        }
    }

    /// Where bucket `b`'s count lies in the storage, if its octave is held: the place
    /// [`Histogram::add`] adds to.
    #[inline]
    fn count_at(&self, b: usize) -> Option<usize> {
        let bit = 1u64 << (b / CHUNK);
        (self.held & bit != 0)
            .then(|| (self.held & (bit - 1)).count_ones() as usize * CHUNK + b % CHUNK)
    }

    /// Adds `n` to bucket `b`, taking a chunk for its octave if none is held.
    fn add(&mut self, b: usize, n: u64) {
        let bit = 1u64 << (b / CHUNK);
        if self.held & bit == 0 {
            self.hold(b / CHUNK);
        }
        // The chunk's place: the octaves held below this one.
        let chunk = (self.held & (bit - 1)).count_ones() as usize;
        self.counts[chunk * CHUNK + b % CHUNK] += n;
    }

    /// Inserts a chunk of zero counts for octave `o` at its place among the chunks held.
    #[cold]
    #[inline(never)]
    fn hold(&mut self, o: usize) {
        let at = (self.held & ((1u64 << o) - 1)).count_ones() as usize * CHUNK;
        let held = self.counts.len();
        // Capacity doubles: a histogram taking k chunks one at a time is copied about log2(k) times.
        self.counts.reserve(CHUNK);
        self.counts.resize(held + CHUNK, 0);
        self.counts.copy_within(at..held, at + CHUNK);
        self.counts[at..at + CHUNK].fill(0);
        self.held |= 1u64 << o;
    }

    /// Every bucket of the octaves held, in increasing order, with its count (zero for a
    /// bucket of a held octave that nothing fell in).
    fn held_buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        octaves(self.held)
            .zip(self.counts.chunks_exact(CHUNK))
            .flat_map(|(o, counts)| {
                counts
                    .iter()
                    .enumerate()
                    .map(move |(i, &c)| (o * CHUNK + i, c))
            })
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
        // The buckets of the octaves not held are zero: they never reach the rank first.
        for (b, c) in self.held_buckets() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket_range(b);
                return Duration::from_nanos((lo + w / 2).min(self.max));
            }
        }
        Duration::from_nanos(self.max)
    }

    /// Non-empty buckets as (lower bound, upper bound, count).
    pub fn buckets(&self) -> impl Iterator<Item = (Duration, Duration, u64)> + '_ {
        self.held_buckets().filter(|&(_, c)| c > 0).map(|(b, c)| {
            let (lo, w) = bucket_range(b);
            (Duration::from_nanos(lo), Duration::from_nanos(lo + w), c)
        })
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (b, c) in other.held_buckets() {
            if c > 0 {
                self.add(b, c);
            }
        }
        self.total += other.total;
        self.sum_nanos += other.sum_nanos;
        self.max = self.max.max(other.max);
    }
}

/// Equal when the same values were counted in the same buckets, whatever octaves each holds.
impl PartialEq for Histogram {
    fn eq(&self, other: &Histogram) -> bool {
        self.total == other.total
            && self.sum_nanos == other.sum_nanos
            && self.max == other.max
            && self
                .held_buckets()
                .filter(|&(_, c)| c > 0)
                .eq(other.held_buckets().filter(|&(_, c)| c > 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_a_prefetch_names_is_the_one_a_record_adds_to() {
        let mut h = Histogram::new();
        let values = [
            0u64,
            63,
            64,
            1_000,
            1_015,
            12_345_678,
            60_000_000,
            u64::MAX / 3,
        ];
        // Nothing held yet: no count to name.
        assert_eq!(h.count_at(bucket_of(1_000)), None);
        for (k, &v) in values.iter().enumerate() {
            for _ in 0..=k {
                h.record(Duration::from_nanos(v));
            }
        }
        for (k, &v) in values.iter().enumerate() {
            let b = bucket_of(v);
            let at = h.count_at(b).expect("octave held");
            // What every value of this bucket added.
            let same: u64 = values
                .iter()
                .enumerate()
                .filter(|&(_, &w)| bucket_of(w) == b)
                .map(|(j, _)| j as u64 + 1)
                .sum();
            assert_eq!(h.counts[at], same, "value {v} (k = {k})");
        }
        // A held octave's bucket nothing fell in is named, with its zero count.
        let empty = bucket_of(600);
        assert_eq!(h.counts[h.count_at(empty).expect("octave held")], 0);
        // An octave not held: none.
        assert_eq!(h.count_at(bucket_of(1 << 40)), None);
    }

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
    fn a_value_takes_the_chunk_of_its_octave_at_its_place_among_those_held() {
        // The mask takes the place of the former base index: 64 bytes on a 64-bit target.
        assert_eq!(std::mem::size_of::<Histogram>(), 64);
        let mut h = Histogram::new();
        // 100 ms: bucket 1375, octave 21 (2^26 to 2^27 ns), 31st bucket of its chunk.
        h.record(Duration::from_millis(100));
        assert_eq!(bucket_of(100_000_000), 1375);
        assert_eq!((h.held, h.counts.len()), (1 << 21, 64));
        assert_eq!(h.counts[31], 1);
        // 150 ms: bucket 1415, octave 22, after the chunk of octave 21.
        h.record(Duration::from_millis(150));
        assert_eq!(bucket_of(150_000_000), 1415);
        assert_eq!((h.held, h.counts.len()), (0b11 << 21, 128));
        assert_eq!((h.counts[31], h.counts[64 + 7]), (1, 1));
        // 50 ms: bucket 1311, octave 20, inserted before the two held.
        h.record(Duration::from_millis(50));
        assert_eq!(bucket_of(50_000_000), 1311);
        assert_eq!((h.held, h.counts.len()), (0b111 << 20, 192));
        assert_eq!(
            (h.counts[31], h.counts[64 + 31], h.counts[128 + 7]),
            (1, 1, 1)
        );
        assert_eq!(h.counts.iter().sum::<u64>(), 3);
        // 101 ms lies in a held octave: nothing is taken, nothing moves.
        let at = h.counts.as_ptr();
        h.record(Duration::from_millis(101));
        assert_eq!(
            (h.held, h.counts.len(), h.counts.as_ptr()),
            (0b111 << 20, 192, at)
        );
        assert_eq!(h.counts[64 + 32], 1);
        let b: Vec<u64> = h.buckets().map(|(_, _, c)| c).collect();
        assert_eq!(b, vec![1, 1, 1, 1]);
        assert_eq!(
            h.quantile(0.0),
            Duration::from_nanos({
                let (lo, w) = bucket_range(1311);
                lo + w / 2
            })
        );
    }

    #[test]
    fn a_span_widening_one_bucket_at_a_time_takes_one_chunk_per_octave() {
        // Below 128 ns a bucket is 1 ns wide: 64 buckets up from 64 ns (octave 1), then 64 down
        // from 63 ns (octave 0), one new bucket a step.
        let mut h = Histogram::new();
        let mut taken = 0;
        let mut held = h.held;
        for v in (64..128u64).chain((0..64u64).rev()) {
            h.record(Duration::from_nanos(v));
            if h.held != held {
                taken += 1;
                held = h.held;
            }
        }
        // A chunk for octave 1 at 64 ns, one for octave 0 at 63 ns; the contiguous span with a
        // quarter of room was copied 10 times, a line at a time 16.
        assert_eq!(taken, 2);
        assert_eq!((h.held, h.counts.len()), (0b11, 128));
        assert!(h.counts.iter().all(|&c| c == 1));
        assert_eq!(h.buckets().count(), 128);
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
        // One chunk for each octave a value fell in, and no other.
        let seen: std::collections::BTreeSet<usize> =
            values.iter().map(|&v| bucket_of(v) / CHUNK).collect();
        let mask = seen.iter().fold(0u64, |m, &o| m | 1 << o);
        assert_eq!((one.held, a.held), (mask, mask));
        assert_eq!(one.counts.len(), CHUNK * seen.len());
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
