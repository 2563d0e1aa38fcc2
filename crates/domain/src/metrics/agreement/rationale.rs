//! Agreement of two rationales: the sentences two annotators chose as evidence for the same
//! label on the same pair.

use std::collections::BTreeSet;

/// The F1 (Dice coefficient) of two sentence sets, 2 |A ∩ B| / (|A| + |B|), duplicates
/// ignored; `None` when both are empty.
pub fn sentence_f1(a: &[u32], b: &[u32]) -> Option<f64> {
    let a: BTreeSet<u32> = a.iter().copied().collect();
    let b: BTreeSet<u32> = b.iter().copied().collect();
    let sizes = a.len() + b.len();
    (sizes > 0).then(|| 2.0 * a.intersection(&b).count() as f64 / sizes as f64)
}

/// One unit per sentence of an abstract of `sentences` sentences (more if a rationale names a
/// later one): whether each of the two rationales chose it.
pub fn sentence_decisions(a: &[u32], b: &[u32], sentences: u32) -> Vec<[bool; 2]> {
    let last = a
        .iter()
        .chain(b)
        .map(|&s| s.saturating_add(1))
        .max()
        .unwrap_or(0);
    let a: BTreeSet<u32> = a.iter().copied().collect();
    let b: BTreeSet<u32> = b.iter().copied().collect();
    (0..sentences.max(last))
        .map(|s| [a.contains(&s), b.contains(&s)])
        .collect()
}
