//! The (claim, abstract) training examples: gold evidence, cited abstracts that are not
//! evidence, and NEI abstracts sampled from what BM25 retrieves for the claim (negative
//! sampling, as in SciFact-Open's MultiVerS training).

use super::error::TrainedError;
use crate::Retriever;
use domain::formats::{Claim, Document};
use domain::ids::DocId;
use domain::label::Label;
use rand::seq::SliceRandom;
use rand::Rng;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Negatives are sampled from the claim's top this many BM25 abstracts.
pub const NEGATIVE_DEPTH: usize = 50;
/// Training abstracts get their rank in the claim's top this many; one not in it gets this
/// plus one.
pub const RANK_DEPTH: usize = 100;

/// Why an abstract is a training example for a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Source {
    /// A gold evidence abstract (SUPPORT or CONTRADICT).
    Evidence,
    /// Cited by the claim's source sentence but not evidence (NEI).
    Cited,
    /// Retrieved by BM25 for the claim, neither evidence nor cited (NEI).
    Sampled,
}

/// One (claim, abstract) training example.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AbstractExample {
    /// Position of the claim in the training claims.
    pub(crate) claim: usize,
    pub(crate) doc: DocId,
    pub(crate) label: Label,
    /// Gold rationale sentences (the union of the evidence sets; empty for NEI).
    pub(crate) rationale: BTreeSet<u32>,
    /// 1-based rank in the claim's BM25 ranking, [`RANK_DEPTH`] + 1 when not in its top.
    pub(crate) rank: u32,
    pub(crate) source: Source,
}

/// The examples, and what had to be left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Examples {
    pub(crate) abstracts: Vec<AbstractExample>,
    /// Evidence or cited abstracts absent from the corpus (skipped).
    pub(crate) missing_documents: usize,
}

/// Up to `count` of `retrieved`, none of them in `exclude`, drawn without replacement. The
/// draw depends on the set retrieved, not its order: BM25 scores can differ in the last bit
/// between two builds of the same index, which may swap near-ties.
pub(crate) fn sample_negatives<R: Rng>(
    retrieved: &[DocId],
    exclude: &HashSet<&DocId>,
    count: usize,
    rng: &mut R,
) -> Vec<DocId> {
    let mut candidates: Vec<&DocId> = retrieved.iter().filter(|d| !exclude.contains(d)).collect();
    candidates.sort();
    candidates
        .choose_multiple(rng, count)
        .map(|d| (*d).clone())
        .collect()
}

/// The training examples of every claim, with `negatives` sampled NEI abstracts per claim.
pub(crate) fn gather<R: Rng>(
    claims: &[Claim],
    corpus: &HashMap<DocId, Document>,
    retriever: &Retriever,
    negatives: usize,
    rng: &mut R,
) -> Result<Examples, TrainedError> {
    let mut examples = Examples::default();
    for (position, claim) in claims.iter().enumerate() {
        let hits = retriever
            .retrieve(&claim.text, RANK_DEPTH)
            .map_err(|source| TrainedError::Retrieval {
                claim: claim.id.clone(),
                source,
            })?;
        let ranks: HashMap<&DocId, u32> = hits.iter().map(|h| (&h.doc_id, h.rank)).collect();
        let rank_of = |doc: &DocId| ranks.get(doc).copied().unwrap_or(RANK_DEPTH as u32 + 1);
        let mut known: HashSet<&DocId> = HashSet::new();
        for evidence in &claim.evidence {
            known.insert(&evidence.doc_id);
            let Some(doc) = corpus.get(&evidence.doc_id) else {
                examples.missing_documents += 1;
                continue;
            };
            let rationale: BTreeSet<u32> =
                evidence.sentence_sets.iter().flatten().copied().collect();
            if let Some(&sentence) = rationale
                .iter()
                .find(|&&s| s as usize >= doc.sentences.len())
            {
                return Err(TrainedError::RationaleOutOfRange {
                    claim: claim.id.clone(),
                    doc: evidence.doc_id.clone(),
                    sentence,
                    sentences: doc.sentences.len(),
                });
            }
            examples.abstracts.push(AbstractExample {
                claim: position,
                doc: evidence.doc_id.clone(),
                label: evidence.label,
                rationale,
                rank: rank_of(&evidence.doc_id),
                source: Source::Evidence,
            });
        }
        for doc in claim.cited_doc_ids.iter().flatten() {
            if !known.insert(doc) {
                continue;
            }
            if !corpus.contains_key(doc) {
                examples.missing_documents += 1;
                continue;
            }
            examples
                .abstracts
                .push(nei(position, doc.clone(), rank_of(doc), Source::Cited));
        }
        if negatives > 0 {
            let retrieved: Vec<DocId> = hits
                .iter()
                .take(NEGATIVE_DEPTH)
                .filter(|h| corpus.contains_key(&h.doc_id))
                .map(|h| h.doc_id.clone())
                .collect();
            for doc in sample_negatives(&retrieved, &known, negatives, rng) {
                let rank = rank_of(&doc);
                examples
                    .abstracts
                    .push(nei(position, doc, rank, Source::Sampled));
            }
        }
    }
    Ok(examples)
}

fn nei(claim: usize, doc: DocId, rank: u32, source: Source) -> AbstractExample {
    AbstractExample {
        claim,
        doc,
        label: Label::Nei,
        rationale: BTreeSet::new(),
        rank,
        source,
    }
}
