//! What [`super::JudgedRun`] and [`super::incomplete`] read of a run: each pair with its claim as
//! a gold claim index (its position in [`Gold::claims`]) and its doc id borrowed, in an
//! [`IndexedRun`]. A [`Run`] becomes one in a pass over its pairs ([`IndexedRun::of_run`]); a
//! reader that knows the gold builds one straight from a file's bytes, without an owned id per
//! pair (`claimpool eval` of a TREC run does), and gets the same figures.
//!
//! Also here: the gold label and judged status of a pair by borrowed doc id ([`KnownDocs`]),
//! and the splitting of large sorts and per-claim passes over the machine's cores.

use super::error::MetricsError;
use super::gold::Gold;
use super::incomplete::Judgments;
use super::run::{Confidence, Prediction, Run};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::Range;
use std::sync::OnceLock;

/// One pair of an [`IndexedRun`]: in 32 bytes, what the metrics read of a
/// [`RunPair`](super::RunPair).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IndexedPair<'a> {
    /// The doc id's text.
    pub doc: &'a str,
    pub confidence: Confidence,
    /// The claim's position in [`Gold::claims`].
    pub claim: u32,
    /// [`Prediction::label`].
    label: Option<Label>,
    /// [`Prediction::best_label`].
    best_label: Option<Label>,
}

impl<'a> IndexedPair<'a> {
    pub fn new(
        claim: u32,
        doc: &'a str,
        prediction: Prediction,
        confidence: Confidence,
    ) -> IndexedPair<'a> {
        IndexedPair {
            doc,
            confidence,
            claim,
            label: prediction.label(),
            best_label: prediction.best_label(),
        }
    }

    /// The stated verdict ([`Prediction::label`]).
    pub fn label(&self) -> Option<Label> {
        self.label
    }

    /// The label the precision/recall curve judges ([`Prediction::best_label`]).
    pub fn best_label(&self) -> Option<Label> {
        self.best_label
    }

    /// Whether the pair counts as predicted evidence ([`Prediction::claims_evidence`]).
    pub fn claims_evidence(&self) -> bool {
        self.label.is_none_or(Label::is_evidence)
    }
}

/// A run's pairs with gold claim indices, each (claim, doc) at most once, in the order given.
#[derive(Clone, Debug, Default)]
pub struct IndexedRun<'a> {
    pairs: Vec<IndexedPair<'a>>,
    /// How many claims the gold that indexed the pairs has.
    claim_count: usize,
    /// The pairs grouped by claim, once asked for.
    buckets: OnceLock<ClaimBuckets>,
}

impl<'a> IndexedRun<'a> {
    /// Takes pairs indexed by `gold`'s claims. Fails on a claim index outside the gold, and on a
    /// (claim, doc) pair given twice, naming the first repeat in the order given as [`Run::new`]
    /// does (and on more than 2^32 pairs).
    pub fn new(gold: &Gold, pairs: Vec<IndexedPair<'a>>) -> Result<IndexedRun<'a>, MetricsError> {
        let claim_count = gold.claims().len();
        check_size(pairs.len())?;
        if let Some(index) = pairs.iter().position(|p| p.claim as usize >= claim_count) {
            return Err(MetricsError::BadIndexedPair {
                index,
                reason: format!(
                    "claim index {}, but the gold has {claim_count} claims",
                    pairs[index].claim
                ),
            });
        }
        let run = IndexedRun {
            pairs,
            claim_count,
            buckets: OnceLock::new(),
        };
        if let Some((index, first_index)) = first_repeat(&run.pairs, run.buckets()) {
            let pair = &run.pairs[index];
            let claim = gold.claims()[pair.claim as usize].clone();
            return Err(match DocId::parse(pair.doc) {
                Ok(doc) => MetricsError::DuplicateRunPair {
                    index,
                    first_index,
                    claim,
                    doc,
                },
                Err(err) => MetricsError::BadIndexedPair {
                    index,
                    reason: format!("doc id {:?} {err}", pair.doc),
                },
            });
        }
        Ok(run)
    }

    /// The pairs of `run`, by `gold`'s claim indices; fails on the first pair whose claim is not
    /// a gold claim (and on more than 2^32 pairs).
    pub fn of_run(gold: &Gold, run: &'a Run) -> Result<IndexedRun<'a>, MetricsError> {
        check_size(run.len())?;
        let mut pairs = Vec::with_capacity(run.len());
        // Runs come grouped by claim: the last claim's index saves most lookups.
        let mut last: Option<(&ClaimId, u32)> = None;
        for (index, pair) in run.pairs().iter().enumerate() {
            let claim = match last {
                Some((claim, at)) if *claim == pair.claim => at,
                _ => {
                    let at = gold.claim_index_of(index, pair)?;
                    last = Some((&pair.claim, at));
                    at
                }
            };
            pairs.push(IndexedPair::new(
                claim,
                pair.doc.as_str(),
                pair.prediction,
                pair.confidence,
            ));
        }
        Ok(IndexedRun {
            pairs,
            claim_count: gold.claims().len(),
            buckets: OnceLock::new(),
        })
    }

    /// The pairs, in the order given.
    pub fn pairs(&self) -> &[IndexedPair<'a>] {
        &self.pairs
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The pairs' positions grouped by claim.
    pub(crate) fn buckets(&self) -> &ClaimBuckets {
        self.buckets
            .get_or_init(|| ClaimBuckets::new(&self.pairs, self.claim_count))
    }

    /// Fails when `gold` is not the size of the gold the pairs were indexed by.
    pub(crate) fn check_gold(&self, gold: &Gold) -> Result<(), MetricsError> {
        let claims = gold.claims().len();
        if claims == self.claim_count {
            Ok(())
        } else {
            Err(MetricsError::BadIndexedPair {
                index: 0,
                reason: format!(
                    "the pairs were indexed by a gold of {} claims, not this one of {claims}",
                    self.claim_count
                ),
            })
        }
    }
}

/// Positions are kept as `u32`.
fn check_size(pairs: usize) -> Result<(), MetricsError> {
    match u32::try_from(pairs) {
        Ok(_) => Ok(()),
        Err(_) => Err(MetricsError::BadIndexedPair {
            index: u32::MAX as usize,
            reason: format!("{pairs} pairs, more than the 2^32 - 1 an indexed run holds"),
        }),
    }
}

/// The first pair (in the order given) that repeats an earlier one: (its position, the earlier
/// one's). Each claim's doc ids are sorted by [`text_key`] and length (then text, past 8
/// bytes), the claims shared out over the cores.
fn first_repeat(pairs: &[IndexedPair<'_>], buckets: &ClaimBuckets) -> Option<(usize, usize)> {
    let claim_count = buckets.claim_count();
    let ranges = claim_ranges(claim_count, threads_for(pairs.len()), |c| {
        buckets.members(c).len()
    });
    let found: Vec<Option<(usize, usize)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|range| scope.spawn(move || first_repeat_in(pairs, buckets, range)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    found.into_iter().flatten().min()
}

/// [`first_repeat`] among the claims of `range`.
fn first_repeat_in(
    pairs: &[IndexedPair<'_>],
    buckets: &ClaimBuckets,
    range: Range<usize>,
) -> Option<(usize, usize)> {
    let mut found: Option<(usize, usize)> = None;
    // Equal texts, at `positions` ascending: each after the first repeats the first.
    let mut keep = |positions: &[usize]| {
        if let [first, second, ..] = *positions {
            if found.is_none_or(|(i, _)| second < i) {
                found = Some((second, first));
            }
        }
    };
    let mut keyed: Vec<(u64, usize, usize)> = Vec::new();
    let mut long: Vec<(&str, usize)> = Vec::new();
    let mut equal: Vec<usize> = Vec::new();
    for c in range {
        keyed.clear();
        keyed.extend(buckets.members(c).map(|i| {
            let doc = pairs[i].doc;
            (text_key(doc), doc.len(), i)
        }));
        keyed.sort_unstable();
        for same_key in keyed.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
            if same_key.len() < 2 {
                continue;
            }
            if same_key[0].1 <= 8 {
                // Key and length tell texts of at most 8 bytes apart exactly.
                equal.clear();
                equal.extend(same_key.iter().map(|k| k.2));
                keep(&equal);
            } else {
                long.clear();
                long.extend(same_key.iter().map(|k| (pairs[k.2].doc, k.2)));
                long.sort_unstable();
                for same_text in long.chunk_by(|a, b| a.0 == b.0) {
                    equal.clear();
                    equal.extend(same_text.iter().map(|t| t.1));
                    keep(&equal);
                }
            }
        }
    }
    found
}

/// The positions of a run's pairs grouped by claim index (in the order given within a claim).
/// A run that gives each claim's pairs together (as runs nearly always do) keeps one span per
/// claim; any other is counting-sorted.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClaimBuckets {
    /// Per claim index c: `starts[c]..starts[c + 1]` are its members' places once grouped in
    /// claim order (in `order`, when the run is not grouped).
    starts: Vec<usize>,
    /// Grouped runs: per claim, where its pairs start in the run.
    grouped_at: Option<Vec<usize>>,
    /// Other runs: the positions, grouped.
    order: Vec<u32>,
}

/// The positions of one claim's pairs, in the order given.
#[derive(Clone)]
pub(crate) enum Members<'b> {
    Span(Range<usize>),
    Listed(std::slice::Iter<'b, u32>),
}

impl Iterator for Members<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            Members::Span(span) => span.next(),
            Members::Listed(listed) => listed.next().map(|&i| i as usize),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Members::Span(span) => span.size_hint(),
            Members::Listed(listed) => listed.size_hint(),
        }
    }
}

impl ExactSizeIterator for Members<'_> {}

impl ClaimBuckets {
    /// Groups `pairs` (claim indices below `claim_count`) by claim.
    fn new(pairs: &[IndexedPair<'_>], claim_count: usize) -> Self {
        let mut starts = vec![0usize; claim_count + 1];
        for pair in pairs {
            starts[pair.claim as usize + 1] += 1;
        }
        for c in 0..claim_count {
            starts[c + 1] += starts[c];
        }
        // Grouped: each claim's pairs in one stretch of the run.
        let mut grouped_at = vec![usize::MAX; claim_count];
        let mut grouped = true;
        let mut previous = None;
        for (position, pair) in pairs.iter().enumerate() {
            if previous != Some(pair.claim) {
                let at = &mut grouped_at[pair.claim as usize];
                if *at != usize::MAX {
                    grouped = false;
                    break;
                }
                *at = position;
                previous = Some(pair.claim);
            }
        }
        if grouped {
            return ClaimBuckets {
                starts,
                grouped_at: Some(grouped_at),
                order: Vec::new(),
            };
        }
        let mut next = starts.clone();
        let mut order = vec![0u32; pairs.len()];
        for (position, pair) in pairs.iter().enumerate() {
            let slot = &mut next[pair.claim as usize];
            order[*slot] = position as u32;
            *slot += 1;
        }
        ClaimBuckets {
            starts,
            grouped_at: None,
            order,
        }
    }

    pub(crate) fn claim_count(&self) -> usize {
        self.starts.len() - 1
    }

    /// The positions of the pairs of the claim at `claim`, in the order given.
    pub(crate) fn members(&self, claim: usize) -> Members<'_> {
        let (start, end) = (self.starts[claim], self.starts[claim + 1]);
        match &self.grouped_at {
            Some(at) if end > start => Members::Span(at[claim]..at[claim] + end - start),
            Some(_) => Members::Span(0..0),
            None => Members::Listed(self.order[start..end].iter()),
        }
    }

    /// Where each claim's pairs start once grouped in claim order (and, last, their count).
    pub(crate) fn starts(&self) -> &[usize] {
        &self.starts
    }
}

/// What the metrics need to know of a pair besides the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Known {
    /// The gold label (NEI unless the pair is gold evidence).
    pub label: Label,
    /// Whether the pair was judged (gold evidence always is).
    pub judged: bool,
}

/// An unlisted pair: NEI, not judged.
const UNKNOWN: Known = Known {
    label: Label::Nei,
    judged: false,
};

/// Up to this many docs a claim's entries are scanned; above, binary-searched.
const FEW_DOCS: usize = 16;

/// Per gold claim, the docs that are gold evidence or judged, looked up by borrowed doc id (a
/// short scan for most claims, a binary search for claims with many). Equal [`DocId`]s are
/// equal texts, so a text lookup finds what [`Gold::label`] and [`Judgments::is_judged`] find.
pub(crate) struct KnownDocs<'g> {
    /// Per claim index c: its entries, sorted by text, are `entries[starts[c]..starts[c + 1]]`.
    starts: Vec<usize>,
    entries: Vec<KnownDoc<'g>>,
}

/// One entry of [`KnownDocs`].
struct KnownDoc<'g> {
    /// [`text_key`] of the doc: docs that differ mostly differ here or in length, without a
    /// `memcmp`.
    key: u64,
    doc: &'g str,
    known: Known,
}

/// The first 8 bytes of a text (zero-padded) as one number: equal texts have equal keys, and
/// texts of the same length, at most 8 bytes, are equal exactly when their keys are.
fn text_key(text: &str) -> u64 {
    // A loop rather than a copy into an array: no `memcpy` call for a handful of bytes.
    text.bytes()
        .take(8)
        .enumerate()
        .fold(0, |key, (i, b)| key | u64::from(b) << (8 * i))
}

impl<'g> KnownDocs<'g> {
    /// The gold evidence of `gold`, and the judged pairs of `judgments` when given.
    pub(crate) fn new(gold: &'g Gold, judgments: Option<&'g Judgments>) -> KnownDocs<'g> {
        let count = gold.claims().len();
        let mut listed: Vec<(u32, &'g str, Known)> = Vec::new();
        let mut last: Option<(&ClaimId, u32)> = None;
        for (claim, doc, label) in gold.evidence() {
            let index = match last {
                Some((c, at)) if c == claim => Some(at),
                _ => gold.claim_index(claim),
            };
            let Some(index) = index else { continue };
            last = Some((claim, index));
            let known = Known {
                label,
                judged: true,
            };
            listed.push((index, doc.as_str(), known));
        }
        if let Some(judgments) = judgments {
            for c in 0..count {
                for doc in judgments.claim_docs(c) {
                    let known = Known {
                        label: Label::Nei,
                        judged: true,
                    };
                    listed.push((c as u32, doc.as_str(), known));
                }
            }
        }
        // By claim and text, gold evidence first among equal texts (its label stays).
        listed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        listed.dedup_by(|later, first| later.0 == first.0 && later.1 == first.1);
        let mut starts = vec![0usize; count + 1];
        for entry in &listed {
            starts[entry.0 as usize + 1] += 1;
        }
        for c in 0..count {
            starts[c + 1] += starts[c];
        }
        let entries = listed
            .into_iter()
            .map(|(_, doc, known)| KnownDoc {
                key: text_key(doc),
                doc,
                known,
            })
            .collect();
        KnownDocs { starts, entries }
    }

    /// The pair (claim at `claim` of [`Gold::claims`], `doc`).
    pub(crate) fn get(&self, claim: u32, doc: &str) -> Known {
        let c = claim as usize;
        let (Some(&start), Some(&end)) = (self.starts.get(c), self.starts.get(c + 1)) else {
            return UNKNOWN;
        };
        let docs = &self.entries[start..end];
        if docs.len() <= FEW_DOCS {
            let key = text_key(doc);
            docs.iter()
                .find(|e| {
                    e.key == key && e.doc.len() == doc.len() && (doc.len() <= 8 || e.doc == doc)
                })
                .map_or(UNKNOWN, |e| e.known)
        } else {
            docs.binary_search_by(|e| e.doc.cmp(doc))
                .map_or(UNKNOWN, |i| docs[i].known)
        }
    }
}

/// Below this many items a sort or a pass stays on one core.
const PARALLEL_FROM: usize = 1 << 16;

/// How many threads to split `items` items of work over (1 for small inputs).
pub(crate) fn threads_for(items: usize) -> usize {
    if items < PARALLEL_FROM {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 8)
}

/// Sorts `items` stably by `compare` (in parts on several cores, then merged) and hands them to
/// `push` in that order: exactly the order of the one-core stable sort.
pub(crate) fn sort_stable_each<T, F>(mut items: Vec<T>, compare: F, mut push: impl FnMut(T))
where
    T: Send + Copy,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let parts = threads_for(items.len());
    if parts <= 1 {
        items.sort_by(&compare);
        items.into_iter().for_each(push);
        return;
    }
    let size = items.len().div_ceil(parts);
    std::thread::scope(|scope| {
        for chunk in items.chunks_mut(size) {
            let compare = &compare;
            scope.spawn(move || chunk.sort_by(compare));
        }
    });
    // Merge: the smallest head goes first; on ties, the earliest part's.
    let parts: Vec<&[T]> = items.chunks(size).collect();
    let mut heads = vec![0usize; parts.len()];
    loop {
        let mut best: Option<(usize, &T)> = None;
        for (p, part) in parts.iter().enumerate() {
            if let Some(head) = part.get(heads[p]) {
                if best.is_none_or(|(_, b)| compare(head, b) == Ordering::Less) {
                    best = Some((p, head));
                }
            }
        }
        let Some((p, &head)) = best else { break };
        push(head);
        heads[p] += 1;
    }
}

/// Splits `0..claim_count` into at most `parts` consecutive ranges of about equal weight
/// (`weight(c)` per claim): the per-claim passes' share of each core.
pub(crate) fn claim_ranges(
    claim_count: usize,
    parts: usize,
    weight: impl Fn(usize) -> usize,
) -> Vec<Range<usize>> {
    let total: usize = (0..claim_count).map(&weight).sum();
    let parts = parts.max(1);
    let mut ranges = Vec::with_capacity(parts);
    let (mut start, mut sum) = (0, 0);
    for c in 0..claim_count {
        sum += weight(c);
        let cut = total * (ranges.len() + 1) / parts;
        if sum >= cut && ranges.len() + 1 < parts {
            ranges.push(start..c + 1);
            start = c + 1;
        }
    }
    ranges.push(start..claim_count);
    ranges
}

/// Whether the pairs of claims outside a gold (`claim` at least `claim_count`) hold a (claim,
/// doc) pair twice: those claims' pairs are left out of an evaluation, but a run that repeats
/// one is refused all the same.
pub fn repeats_outside_gold(pairs: &[IndexedPair<'_>], claim_count: usize) -> bool {
    let mut seen: HashSet<(u32, &str)> = HashSet::new();
    pairs
        .iter()
        .filter(|p| p.claim as usize >= claim_count)
        .any(|p| !seen.insert((p.claim, p.doc)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(claims: &[&str]) -> Gold {
        Gold::new(claims.iter().map(|c| ClaimId::parse(*c).unwrap()), []).unwrap()
    }

    fn pair(claim: u32, doc: &str) -> IndexedPair<'_> {
        IndexedPair::new(
            claim,
            doc,
            Prediction::Unlabelled,
            Confidence::new(1.0).unwrap(),
        )
    }

    #[test]
    fn repeats_are_found_first_in_the_order_given_short_or_long_ids() {
        let g = gold(&["1", "2"]);
        let long = ["doc-number-10", "doc-number-11", "doc-number-1"];
        for docs in [
            ["10", "11", "12"],
            ["a", "b", "c"],
            ["10", "b", "012"],
            long,
        ] {
            let pairs = vec![
                pair(0, docs[0]),
                pair(1, docs[0]),
                pair(0, docs[1]),
                pair(1, docs[2]),
                pair(1, docs[0]),
                pair(0, docs[1]),
            ];
            let err = IndexedRun::new(&g, pairs).unwrap_err();
            assert!(
                matches!(
                    err,
                    MetricsError::DuplicateRunPair {
                        index: 4,
                        first_index: 1,
                        ..
                    }
                ),
                "{err:?}"
            );
        }
        let distinct = vec![pair(0, "10"), pair(0, "010"), pair(1, "10")];
        let distinct = [distinct, long.iter().map(|d| pair(0, d)).collect()].concat();
        assert_eq!(IndexedRun::new(&g, distinct).unwrap().len(), 6);
        let err = IndexedRun::new(&g, vec![pair(2, "1")]).unwrap_err();
        assert!(matches!(err, MetricsError::BadIndexedPair { index: 0, .. }));
    }

    #[test]
    fn parallel_stable_sort_equals_the_plain_one() {
        let mut x: u64 = 3;
        let items: Vec<(u8, u32)> = (0..200_000u32)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((x >> 60) as u8, i)
            })
            .collect();
        let mut plain = items.clone();
        plain.sort_by_key(|p| std::cmp::Reverse(p.0));
        let mut parallel = Vec::new();
        sort_stable_each(items, |a, b| b.0.cmp(&a.0), |p| parallel.push(p));
        assert_eq!(parallel, plain);
    }

    #[test]
    fn text_keys_and_lengths_tell_short_texts_apart_exactly() {
        let texts = [
            "",
            "a",
            "ab",
            "a\0",
            "\0",
            "1234567",
            "1234568",
            "12345678",
            "12345679",
            "123456789",
            "123456780",
            "\u{7f}",
            "\u{e9}",
        ];
        for a in texts {
            for b in texts {
                let same = text_key(a) == text_key(b) && a.len() == b.len();
                if a.len() <= 8 {
                    assert_eq!(same, a == b, "{a:?} {b:?}");
                } else if a == b {
                    assert!(same);
                }
            }
        }
    }

    #[test]
    fn known_docs_find_evidence_and_judged_docs() {
        let cid = |c: &str| ClaimId::parse(c).unwrap();
        let did = |d: &str| DocId::parse(d).unwrap();
        let many: Vec<String> = (0..40).map(|i| format!("doc-number-{i}")).collect();
        let gold = Gold::new(
            [cid("1"), cid("2")],
            [
                (cid("1"), did("10"), Label::Support),
                (cid("2"), did("doc-number-3"), Label::Contradict),
            ],
        )
        .unwrap();
        let judged = [(cid("1"), did("11")), (cid("1"), did("10"))]
            .into_iter()
            .chain(many.iter().map(|d| (cid("2"), did(d))));
        let judgments = Judgments::new(&gold, judged);
        let known = KnownDocs::new(&gold, Some(&judgments));
        let at = |claim, doc| {
            let k = known.get(claim, doc);
            (k.label, k.judged)
        };
        assert_eq!(at(0, "10"), (Label::Support, true));
        assert_eq!(at(0, "11"), (Label::Nei, true));
        assert_eq!(at(0, "12"), (Label::Nei, false));
        assert_eq!(at(1, "doc-number-3"), (Label::Contradict, true));
        assert_eq!(at(1, "doc-number-39"), (Label::Nei, true));
        assert_eq!(at(1, "doc-number-40"), (Label::Nei, false));
        assert_eq!(at(2, "10"), (Label::Nei, false));
        let evidence_only = KnownDocs::new(&gold, None);
        assert!(!evidence_only.get(0, "11").judged);
        assert_eq!(evidence_only.get(0, "10").label, Label::Support);
    }

    #[test]
    fn grouped_and_interleaved_runs_give_the_same_figures() {
        use crate::metrics::{incomplete, JudgedRun, RunPair};
        let cid = |c: u32| ClaimId::parse(c.to_string()).unwrap();
        let did = |d: u32| DocId::parse(d.to_string()).unwrap();
        let gold = Gold::new(
            (1..=4).map(cid),
            [(1, 3), (1, 5), (2, 4), (4, 1)].map(|(c, d)| (cid(c), did(d), Label::Support)),
        )
        .unwrap();
        let judgments = Judgments::new(&gold, [(cid(1), did(7)), (cid(3), did(2))]);
        // Claim c, doc d, with ties in confidence.
        let pair = |c: u32, d: u32| RunPair {
            claim: cid(c),
            doc: did(d),
            prediction: Prediction::Unlabelled,
            confidence: Confidence::new(f64::from((c * 7 + d * 3) % 5)).unwrap(),
        };
        let mut interleaved = Vec::new();
        for d in 1..=8 {
            for c in [3, 1, 4, 2] {
                interleaved.push(pair(c, d));
            }
        }
        let mut grouped = interleaved.clone();
        grouped.sort_by(|a, b| a.claim.cmp(&b.claim));
        let figures = |pairs: Vec<RunPair>| {
            let run = Run::new(pairs).unwrap();
            let indexed = IndexedRun::of_run(&gold, &run).unwrap();
            assert_eq!(
                indexed.buckets().grouped_at.is_some(),
                run.pairs().windows(2).all(|w| w[0].claim <= w[1].claim)
            );
            (
                JudgedRun::new(&gold, &run).unwrap().metrics(),
                incomplete(&gold, &judgments, &run).unwrap(),
            )
        };
        assert_eq!(figures(interleaved), figures(grouped));
    }

    #[test]
    fn claim_ranges_cover_every_claim_once() {
        for parts in 1..5 {
            let ranges = claim_ranges(10, parts, |c| c * c);
            assert!(ranges.len() <= parts);
            let covered: Vec<usize> = ranges.into_iter().flatten().collect();
            assert_eq!(covered, (0..10).collect::<Vec<_>>());
        }
        assert_eq!(claim_ranges(0, 2, |_| 1), vec![0..0]);
    }
}
