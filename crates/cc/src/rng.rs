//! The seeded random number generator every stochastic component receives.
//!
//! concord never reads OS entropy. A scenario has one seed; each component (a link's loss model,
//! a RED queue, a traffic generator) gets its own stream derived from that seed and a stable
//! stream id, so adding a component never shifts the numbers another one draws. The generator is
//! xoshiro256** seeded through SplitMix64, written out here so that results stay identical
//! whatever version of any crate is in use.

/// A xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// One step of SplitMix64: advances `state` and returns a well-mixed 64-bit value.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut st = seed;
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        Rng { s }
    }

    /// The independent stream number `stream` of the run seeded with `seed`.
    pub fn stream(seed: u64, stream: u64) -> Rng {
        let mut st = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mixed = splitmix64(&mut st);
        Rng::new(mixed ^ stream)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform float in [0, 1), with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (p <= 0 never, p >= 1 always).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.uniform() < p)
    }

    /// A uniform integer in [0, n); 0 when n is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Lemire's multiply-shift; the bias is below 2^-64 * n, negligible for simulation.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// An exponential variate with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// A Pareto variate with shape `alpha` and the given mean (alpha > 1).
    pub fn pareto(&mut self, alpha: f64, mean: f64) -> f64 {
        let scale = mean * (alpha - 1.0) / alpha;
        scale / (1.0 - self.uniform()).powf(1.0 / alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_numbers() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_of_one_seed_differ() {
        let mut a = Rng::stream(1, 0);
        let mut b = Rng::stream(1, 1);
        assert_ne!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn uniform_has_the_right_mean_within_one_percent() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
        let hits = (0..n).filter(|_| r.bernoulli(0.01)).count() as f64 / n as f64;
        assert!((hits - 0.01).abs() < 0.001, "bernoulli {hits}");
        let e: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((e - 2.0).abs() < 0.04, "exponential {e}");
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(3);
        assert!((0..10_000).all(|_| r.below(7) < 7));
        assert_eq!(r.below(0), 0);
    }
}
