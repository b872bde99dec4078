//! A hasher for the handles the hub hands out itself (flow and client numbers): one multiply
//! instead of SipHash, whose keyed rounds guard against keys an adversary picks. No client
//! picks these keys (the manager numbers flows, the hub numbers clients, both counting up), so
//! the hub's tables need no such guard, and the lookups on every request and event cost less.
//!
//! The multiply is Fibonacci hashing (Knuth, TAOCP vol. 3, section 6.4): the key times
//! 2^64 / phi, an odd constant, so distinct keys give distinct hashes, with their high bits
//! (the ones hashbrown's control bytes use) mixed.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// 2^64 divided by the golden ratio, rounded to odd.
const PHI_64: u64 = 0x9e37_79b9_7f4a_7c15;

/// Hashes integer handles by one multiply ([`PHI_64`]); other input is folded in 8 bytes at a
/// time the same way.
#[derive(Clone, Copy, Debug, Default)]
pub struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(PHI_64);
    }
}

/// A map keyed by handles the hub assigns.
pub type HandleMap<K, V> = HashMap<K, V, BuildHasherDefault<HandleHasher>>;

/// A set of handles the hub assigns.
pub type HandleSet<K> = HashSet<K, BuildHasherDefault<HandleHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(x: T) -> u64 {
        BuildHasherDefault::<HandleHasher>::default().hash_one(x)
    }

    #[test]
    fn a_handle_hashes_to_itself_times_the_golden_constant() {
        assert_eq!(hash(0u32), 0);
        assert_eq!(hash(1u32), PHI_64);
        assert_eq!(hash(3u64), PHI_64.wrapping_mul(3));
    }

    #[test]
    fn consecutive_handles_spread_over_the_high_bits() {
        // hashbrown takes its 7-bit tag from the top bits: 128 consecutive handles use more
        // than half of the 128 tags.
        let tags: HashSet<u64> = (0u32..128).map(|k| hash(k) >> 57).collect();
        assert!(tags.len() > 64, "{} tags", tags.len());
    }

    #[test]
    fn a_map_of_handles_finds_what_it_holds() {
        let mut m: HandleMap<u32, u32> = HandleMap::default();
        for k in 0..10_000 {
            m.insert(k, k * 2);
        }
        assert!((0..10_000).all(|k| m.get(&k) == Some(&(k * 2))));
        assert_eq!(m.get(&10_000), None);
    }
}
