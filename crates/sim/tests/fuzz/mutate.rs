//! A small mutation fuzzer run as an ordinary test on stable Rust: inputs are valid seeds
//! mutated by byte flips, interesting values, truncation, growth, chunk deletion, duplication
//! and splicing; each is handed to the target, and a panic fails the test after printing the
//! input in hex so that it can be added to a corpus.
//!
//! The time spent per target is `CONCORD_FUZZ_SECS` (default 1 s) and the generator's seed is
//! `CONCORD_FUZZ_SEED` (default 1, printed), so a run is reproducible.

#![allow(dead_code)]

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::Duration;

/// The time spent per target: `CONCORD_FUZZ_SECS`, default 1 s.
pub fn budget() -> Duration {
    let secs = std::env::var("CONCORD_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(1.0);
    Duration::from_secs_f64(secs)
}

/// The generator's seed: `CONCORD_FUZZ_SEED`, default 1.
pub fn seed() -> u64 {
    std::env::var("CONCORD_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Text inserted into text formats: long digit runs, signs, exponents, quotes, brackets.
const INSERTS: [&[u8]; 8] = [
    b"9999999999999999999999",
    b"-",
    b"0",
    b".",
    b"e308",
    b"\"",
    b"[",
    b"\n",
];

/// A splitmix64 generator (Steele, Lea and Flood 2014).
pub struct Mutator {
    state: u64,
}

/// Byte values at the edges of ranges.
const BYTES: [u8; 8] = [0x00, 0x01, 0x02, 0x0f, 0x7f, 0x80, 0xfe, 0xff];
/// 64-bit values at the edges of ranges, written big-endian over 2, 4 or 8 bytes.
const WORDS: [u64; 8] = [
    0,
    1,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    0xffff_ffff,
    0x7fff_ffff_ffff_ffff,
    u64::MAX,
];

impl Mutator {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Mutator {
        Mutator { state: seed }
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (0 if n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A mutant of one of `seeds`: one to four mutations.
    pub fn mutate(&mut self, seeds: &[Vec<u8>]) -> Vec<u8> {
        let mut b = self.pick(seeds).clone();
        for _ in 0..1 + self.below(4) {
            self.mutate_once(&mut b, seeds);
        }
        b
    }

    fn mutate_once(&mut self, b: &mut Vec<u8>, seeds: &[Vec<u8>]) {
        let len = b.len();
        match self.below(10) {
            0 if len > 0 => {
                let i = self.below(len);
                b[i] ^= 1 << self.below(8);
            }
            1 if len > 0 => {
                let i = self.below(len);
                b[i] = *self.pick(&BYTES);
            }
            2 if len > 0 => {
                let width = *self.pick(&[2usize, 4, 8]);
                let i = self.below(len);
                let word = self.pick(&WORDS).to_be_bytes();
                for (k, byte) in word[8 - width..].iter().enumerate() {
                    if let Some(slot) = b.get_mut(i + k) {
                        *slot = *byte;
                    }
                }
            }
            3 => b.truncate(self.below(len + 1)),
            4 => {
                for _ in 0..1 + self.below(16) {
                    b.push(self.next() as u8);
                }
            }
            5 if len > 0 => {
                let i = self.below(len);
                let n = 1 + self.below((len - i).min(64));
                b.drain(i..i + n);
            }
            6 if len > 0 => {
                let i = self.below(len);
                let n = 1 + self.below((len - i).min(64));
                let chunk: Vec<u8> = b[i..i + n].to_vec();
                let at = self.below(len + 1);
                b.splice(at..at, chunk);
            }
            7 => {
                let other = self.pick(seeds);
                let cut = self.below(len + 1);
                let from = self.below(other.len() + 1);
                b.truncate(cut);
                b.extend_from_slice(&other[from..]);
            }
            8 if len > 0 => {
                // An ASCII digit run made longer or a sign flipped: numbers at the edges of
                // text formats.
                let i = self.below(len);
                let insert: &[u8] = INSERTS[self.below(INSERTS.len())];
                b.splice(i..i, insert.iter().copied());
            }
            _ => {
                let n = self.below(64);
                *b = (0..n).map(|_| self.next() as u8).collect();
            }
        }
    }
}

/// Feeds mutants of `seeds` to `target` for [`budget`]; fails, printing the input, on a
/// panic. Returns the number of inputs tried.
#[allow(clippy::disallowed_methods)] // a wall-clock budget for the fuzzer, not simulated time
pub fn fuzz(name: &str, seeds: &[Vec<u8>], mut target: impl FnMut(&[u8])) -> u64 {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let start = std::time::Instant::now();
    let budget = budget();
    let seed = seed();
    let mut m = Mutator::new(
        seed ^ name
            .bytes()
            .fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b)),
    );
    for s in seeds {
        run_one(name, seed, s, &mut target);
    }
    let mut tried = seeds.len() as u64;
    while start.elapsed() < budget {
        for _ in 0..64 {
            let input = m.mutate(seeds);
            run_one(name, seed, &input, &mut target);
            tried += 1;
        }
    }
    eprintln!(
        "fuzz {name}: {tried} inputs in {:.1} s (CONCORD_FUZZ_SEED={seed})",
        start.elapsed().as_secs_f64()
    );
    tried
}

fn run_one(name: &str, seed: u64, input: &[u8], target: &mut impl FnMut(&[u8])) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| target(input))) {
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        eprintln!("fuzz {name}: panic on input (CONCORD_FUZZ_SEED={seed}), hex: {hex}");
        resume_unwind(panic);
    }
}
