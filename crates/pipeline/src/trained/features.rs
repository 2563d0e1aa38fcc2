//! Sparse feature vectors, and the stable hash that puts sparse features into buckets.

/// A sparse feature vector: (index, value) pairs. An index may repeat; its values add up.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Features(Vec<(u32, f32)>);

impl Features {
    /// From (index, value) pairs.
    #[cfg(test)]
    pub(crate) fn new(entries: Vec<(u32, f32)>) -> Features {
        Features(entries)
    }

    /// The (index, value) pairs.
    pub(crate) fn entries(&self) -> &[(u32, f32)] {
        &self.0
    }

    /// Appends one group of hashed features (bucket indices), each weighted 1/√(group size) so
    /// the group has unit length.
    pub(crate) fn push_group(&mut self, buckets: impl IntoIterator<Item = u32>) {
        let start = self.0.len();
        self.0
            .extend(buckets.into_iter().map(|bucket| (bucket, 1.0)));
        let added = self.0.len() - start;
        if added > 1 {
            let scale = 1.0 / (added as f32).sqrt();
            for entry in &mut self.0[start..] {
                entry.1 = scale;
            }
        }
    }

    /// Appends dense features at indices 0, 1, ... (zeros left out).
    pub(crate) fn push_dense(&mut self, values: &[f32]) {
        for (index, value) in (0u32..).zip(values) {
            if *value != 0.0 {
                self.0.push((index, *value));
            }
        }
    }
}

/// FNV-1a (64 bits) over the namespace and the parts (each followed by 0xff, which UTF-8 never
/// uses), then SplitMix64's finaliser so the low bits mix well. Stable across platforms and
/// Rust versions, as a saved model needs.
pub(crate) fn hash(namespace: u8, parts: &[&str]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |byte: u8| {
        h ^= u64::from(byte);
        h = h.wrapping_mul(PRIME);
    };
    eat(namespace);
    for part in parts {
        part.bytes().for_each(&mut eat);
        eat(0xff);
    }
    let mut z = h;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 1 for true, 0 for false.
pub(crate) fn flag(value: bool) -> f32 {
    if value {
        1.0
    } else {
        0.0
    }
}
