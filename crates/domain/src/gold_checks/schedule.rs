//! When an annotator's next item is a gold check, and which gold item it is.
//!
//! The items an annotator works are cut into blocks of `every`; in each block exactly one
//! position, drawn from a hash of the project's seed, the annotator and the block, is a gold
//! check. The rate is exact over every block (one in `every`), and the position inside a block
//! cannot be predicted from the ones before, so that a check cannot be told apart by its place.

/// One gold check among every `every` items, placed by `seed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoldSchedule {
    every: u32,
    seed: u64,
}

/// SplitMix64's finaliser: a fast, well-mixed hash of one word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hash3(a: u64, b: u64, c: u64) -> u64 {
    mix(mix(mix(a) ^ b) ^ c)
}

impl GoldSchedule {
    /// None when `every` is below 2 (every item a check would be no check at all).
    pub fn new(every: u32, seed: u64) -> Option<GoldSchedule> {
        (every >= 2).then_some(GoldSchedule { every, seed })
    }

    pub fn every(&self) -> u32 {
        self.every
    }

    /// The position of block `block`'s gold check for `annotator`, in 0..every.
    pub fn position(&self, annotator: i64, block: u64) -> u64 {
        hash3(self.seed, annotator as u64, block) % u64::from(self.every)
    }

    /// Whether the item an annotator works after `worked` items (real items and checks they
    /// finished in the project) is a gold check.
    pub fn is_gold_slot(&self, annotator: i64, worked: u64) -> bool {
        let every = u64::from(self.every);
        worked % every == self.position(annotator, worked / every)
    }
}

/// A gold item for `annotator`'s item number `n` from `candidates` (ids), drawn by `seed`: the
/// same each time for the same candidates; None when there are none.
pub fn pick(seed: u64, annotator: i64, n: u64, candidates: &[i64]) -> Option<i64> {
    candidates
        .iter()
        .copied()
        .min_by_key(|id| hash3(seed ^ n, annotator as u64, *id as u64))
}

/// The place of `id` in a draw fixed by `seed`: sorting by it shuffles ids reproducibly.
pub fn draw_order(seed: u64, id: i64) -> u64 {
    hash3(seed, 0x601D, id as u64)
}
