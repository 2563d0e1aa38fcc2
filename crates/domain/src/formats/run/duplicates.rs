//! Finding a claim/doc pair given twice by the same system, naming both lines.
//!
//! Each doc id becomes a 64-bit key: a decimal id (the common case) is its own value, any other
//! id is interned to a number tagged with the top bit, so most records touch no corpus-sized
//! table. Systems and claims are interned. Runs nearly always come grouped by system and claim,
//! so the index starts in *grouped* mode: the open group's docs sit in a small hash map (hot in
//! cache) and each closed group is kept as sorted arrays of doc keys and lines, 12 bytes per
//! pair. When a closed group comes back (an ungrouped file), the index switches once and for all
//! to *global* mode: one hash map per system from (claim, doc key) to the line.

use crate::ids::decimal_value;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Interns strings to dense numbers (with std's keyed hash: the strings come from uploads).
#[derive(Debug, Default)]
struct Interner {
    numbers: HashMap<Box<str>, u32>,
}

impl Interner {
    /// The number of `text`, or `None` once 2^32 distinct strings have been seen.
    fn number(&mut self, text: &str) -> Option<u32> {
        if let Some(n) = self.numbers.get(text) {
            return Some(*n);
        }
        let n = u32::try_from(self.numbers.len()).ok()?;
        self.numbers.insert(text.into(), n);
        Some(n)
    }
}

/// Marks doc keys that are interned numbers rather than decimal values.
const INTERNED: u64 = 1 << 63;

/// Hashes numbers handed out by the interners (dense, not chosen by a user), so a
/// multiplicative hash spreads them well.
#[derive(Debug, Default, Clone, Copy)]
struct DenseHasher(u64);

impl Hasher for DenseHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type DenseMap<K, V> = HashMap<K, V, BuildHasherDefault<DenseHasher>>;

/// (system, claim) numbers.
type GroupKey = (u32, u32);

/// A closed group: doc keys in ascending order and the line of each.
#[derive(Debug)]
struct ClosedGroup {
    docs: Box<[u64]>,
    lines: Box<[u32]>,
}

/// Per system number: (claim number, doc key) -> line. Keyed hash: doc keys come from uploads.
type GlobalMaps = Vec<HashMap<(u32, u64), u32>>;

/// The line that first gave each (system, claim, doc) triple.
#[derive(Debug, Default)]
pub(crate) struct PairIndex {
    systems: Interner,
    claims: Interner,
    docs: Interner,
    /// The last (system, claim) texts and their numbers: consecutive records share them.
    last: Option<(Box<str>, Box<str>, GroupKey)>,
    /// Grouped mode: the open group and its doc key -> line map.
    open: Option<(GroupKey, HashMap<u64, u32>)>,
    /// Grouped mode: the closed groups.
    closed: DenseMap<GroupKey, ClosedGroup>,
    /// Global mode, once a closed group came back.
    global: Option<GlobalMaps>,
}

/// What [`PairIndex::record`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// The pair is new; it is now recorded at the given line.
    New,
    /// The pair was already given on this line.
    Before(usize),
    /// More than 2^32 distinct ids or lines: the pair cannot be tracked.
    TooMany,
}

/// Records `line` in a free slot, or reports the line already there.
fn first_line<K>(slot: Entry<'_, K, u32>, line: u32) -> Seen {
    match slot {
        Entry::Occupied(first) => Seen::Before(*first.get() as usize),
        Entry::Vacant(slot) => {
            slot.insert(line);
            Seen::New
        }
    }
}

impl PairIndex {
    /// Records the pair at `line` unless it was seen before.
    pub(crate) fn record(&mut self, system: &str, claim: &str, doc: &str, line: usize) -> Seen {
        let (Some(group), Some(doc), Ok(line)) = (
            self.group_key(system, claim),
            self.doc_key(doc),
            u32::try_from(line),
        ) else {
            return Seen::TooMany;
        };
        if self.global.is_none() {
            let same = self.open.as_ref().is_some_and(|(key, _)| *key == group);
            if same || !self.closed.contains_key(&group) {
                if !same {
                    self.close_open_group();
                }
                let (_, docs) = self.open.get_or_insert_with(|| (group, HashMap::new()));
                return first_line(docs.entry(doc), line);
            }
        }
        let global = match self.global.take() {
            Some(global) => global,
            None => self.build_global(),
        };
        let global = self.global.insert(global);
        let (s, c) = (group.0 as usize, group.1);
        if global.len() <= s {
            global.resize_with(s + 1, HashMap::new);
        }
        first_line(global[s].entry((c, doc)), line)
    }

    /// The (system, claim) numbers, from the last record's when they are the same texts.
    fn group_key(&mut self, system: &str, claim: &str) -> Option<GroupKey> {
        if let Some((s, c, key)) = &self.last {
            if **s == *system && **c == *claim {
                return Some(*key);
            }
        }
        let key = (self.systems.number(system)?, self.claims.number(claim)?);
        self.last = Some((system.into(), claim.into(), key));
        Some(key)
    }

    /// A doc id's key: its decimal value below 2^63, else its interned number with the top bit.
    fn doc_key(&mut self, doc: &str) -> Option<u64> {
        match decimal_value(doc) {
            Some(value) if value < INTERNED => Some(value),
            _ => self.docs.number(doc).map(|n| INTERNED | u64::from(n)),
        }
    }

    /// Stores the open group as sorted arrays.
    fn close_open_group(&mut self) {
        if let Some((key, docs)) = self.open.take() {
            let mut sorted: Vec<(u64, u32)> = docs.into_iter().collect();
            sorted.sort_unstable();
            let (docs, lines): (Vec<u64>, Vec<u32>) = sorted.into_iter().unzip();
            let group = ClosedGroup {
                docs: docs.into_boxed_slice(),
                lines: lines.into_boxed_slice(),
            };
            self.closed.insert(key, group);
        }
    }

    /// Moves every group, open and closed, into per-system maps.
    fn build_global(&mut self) -> GlobalMaps {
        self.close_open_group();
        let mut global: GlobalMaps = Vec::new();
        global.resize_with(self.systems.numbers.len(), HashMap::new);
        for ((s, c), group) in std::mem::take(&mut self.closed) {
            let map = &mut global[s as usize];
            map.reserve(group.docs.len());
            for (&doc, &line) in group.docs.iter().zip(group.lines.iter()) {
                map.insert((c, doc), line);
            }
        }
        global
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_ids_are_keyed_by_value_only_when_written_canonically() {
        assert_eq!(decimal_value("31715818"), Some(31715818));
        assert_eq!(decimal_value("0"), Some(0));
        for text in [
            "010",
            "00",
            "",
            "1e3",
            "-1",
            "12345678901234567890",
            "MED-1",
        ] {
            assert_eq!(decimal_value(text), None, "{text}");
        }
        let mut interner = Interner::default();
        let numbers: Vec<Option<u32>> = ["10", "010", "10", "a", "010", "0"]
            .iter()
            .map(|t| interner.number(t))
            .collect();
        assert_eq!(
            numbers,
            vec![Some(0), Some(1), Some(0), Some(2), Some(1), Some(3)]
        );
    }

    #[test]
    fn finds_repeats_per_system_in_grouped_files() {
        let mut index = PairIndex::default();
        assert_eq!(index.record("a", "1", "10", 1), Seen::New);
        assert_eq!(index.record("a", "1", "11", 2), Seen::New);
        assert_eq!(index.record("a", "1", "10", 3), Seen::Before(1));
        assert_eq!(index.record("b", "1", "10", 4), Seen::New);
        assert_eq!(index.record("b", "2", "10", 5), Seen::New);
        assert!(index.global.is_none());
    }

    #[test]
    fn ungrouped_files_switch_to_global_mode_and_keep_every_pair() {
        let mut index = PairIndex::default();
        assert_eq!(index.record("a", "1", "10", 1), Seen::New);
        assert_eq!(index.record("a", "2", "10", 2), Seen::New);
        assert_eq!(index.record("b", "1", "10", 3), Seen::New);
        // Claim 1 of system a comes back: global mode.
        assert_eq!(index.record("a", "1", "11", 4), Seen::New);
        assert!(index.global.is_some());
        assert_eq!(index.record("a", "1", "10", 5), Seen::Before(1));
        assert_eq!(index.record("a", "2", "10", 6), Seen::Before(2));
        assert_eq!(index.record("b", "1", "10", 7), Seen::Before(3));
        assert_eq!(index.record("a", "1", "11", 8), Seen::Before(4));
        assert_eq!(index.record("c", "1", "10", 9), Seen::New);
        assert_eq!(index.record("c", "1", "10", 10), Seen::Before(9));
        assert_eq!(index.record("a", "10", "1", 11), Seen::New);
    }

    /// Decimal, zero-padded and text doc ids, all distinct.
    fn doc_text(n: u64) -> String {
        match n % 3 {
            0 => n.to_string(),
            1 => format!("0{n}"),
            _ => format!("MED-{n}"),
        }
    }

    #[test]
    fn agrees_with_a_plain_set_on_a_shuffled_run() {
        // Pairs drawn with repeats, in an order that reopens groups; compare with a HashMap.
        let mut index = PairIndex::default();
        let mut plain: HashMap<(String, String, String), usize> = HashMap::new();
        let mut x: u64 = 7;
        for line in 1..=5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let grouped = line < 2000;
            let (s, c, d) = if grouped {
                (
                    (line / 500 % 2).to_string(),
                    (line / 50).to_string(),
                    doc_text((x >> 33) % 60),
                )
            } else {
                (
                    ((x >> 20) % 2).to_string(),
                    ((x >> 40) % 40).to_string(),
                    doc_text((x >> 50) % 60),
                )
            };
            let want = match plain.entry((s.clone(), c.clone(), d.clone())) {
                Entry::Occupied(first) => Seen::Before(*first.get()),
                Entry::Vacant(slot) => {
                    slot.insert(line);
                    Seen::New
                }
            };
            assert_eq!(index.record(&s, &c, &d, line), want, "line {line}");
        }
        assert!(index.global.is_some());
    }
}
