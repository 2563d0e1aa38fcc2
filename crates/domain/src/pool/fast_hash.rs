//! A fast, non-cryptographic hasher for the pooling maps (the Fx hash of rustc).
//!
//! Keys are the database's own claim and doc keys, not attacker-chosen, so the DoS resistance
//! of the standard SipHash buys nothing here, while it dominates the cost of reading ranks
//! (one lookup per scored pair).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The Fx hasher: rotate, xor, multiply per word.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0_u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0_u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        // usize is at most 64 bits on every supported target.
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The multiply leaves the low bits (the bucket index) weakest: bring high bits down.
        self.hash.rotate_left(26)
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with [`FxHasher`].
pub(crate) type FxHashSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of(value: impl Hash) -> u64 {
        BuildHasherDefault::<FxHasher>::default().hash_one(value)
    }

    #[test]
    fn equal_keys_hash_equal_and_nearby_keys_differ() {
        assert_eq!(hash_of((3_u32, 4_u32)), hash_of((3_u32, 4_u32)));
        assert_ne!(hash_of((3_u32, 4_u32)), hash_of((4_u32, 3_u32)));
        assert_eq!(hash_of("abc"), hash_of(String::from("abc")));
        assert_ne!(hash_of("abcdefghi"), hash_of("abcdefghj"));
        let distinct: FxHashSet<u64> = (0..10_000_u32).map(|i| hash_of((i, i + 1))).collect();
        assert_eq!(distinct.len(), 10_000);
    }
}
