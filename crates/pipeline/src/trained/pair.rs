//! The features of a (claim, sentence) pair, for the rationale and stance models.
//!
//! A vector has [`DENSE`] dense features (overlap, position, numbers, cues) followed by
//! `2^hash_bits` hashed buckets of sparse features: the sentence's terms, the claim's words
//! (stop words kept), the matched terms, and every claim-term × sentence-term pair. Each hashed
//! group is scaled to unit length, so a long sentence does not outweigh a short one.

use super::features::{flag, hash, Features};
use super::idf::DocFreq;
use super::text::{Analysed, Cues, TextAnalysers};
use domain::formats::Document;
use std::collections::{HashMap, HashSet};

// The dense features, by index.
pub(crate) const BIAS: usize = 0;
/// Share of the claim's idf weight whose terms the sentence has.
pub(crate) const IDF_SHARE: usize = 1;
/// Share of the claim's distinct terms the sentence has.
pub(crate) const TERM_SHARE: usize = 2;
/// Share of the sentence's distinct terms the claim has.
pub(crate) const PRECISION: usize = 3;
/// Share of the claim's bigrams (adjacent terms) the sentence has.
pub(crate) const BIGRAM_SHARE: usize = 4;
/// IDF share over the best IDF share of the abstract's sentences.
pub(crate) const RELATIVE_SHARE: usize = 5;
/// 1 for the sentence(s) with the abstract's best IDF share.
pub(crate) const IS_BEST: usize = 6;
/// The best IDF share of the two neighbouring sentences.
pub(crate) const NEIGHBOUR_SHARE: usize = 7;
/// Position in the abstract, 0 (first) to 1 (last).
pub(crate) const POSITION: usize = 8;
pub(crate) const IS_FIRST: usize = 9;
pub(crate) const IS_LAST: usize = 10;
/// ln(1 + terms) / 4.
pub(crate) const LENGTH: usize = 11;
/// The sentence has one of the claim's numbers.
pub(crate) const NUMBER_MATCH: usize = 12;
/// Both have numbers and none is shared.
pub(crate) const NUMBER_MISMATCH: usize = 13;
/// IDF share of the claim in the title.
pub(crate) const TITLE_SHARE: usize = 14;
/// IDF share of the claim in the whole abstract (title included).
pub(crate) const ABSTRACT_SHARE: usize = 15;
/// IDF share squared.
pub(crate) const IDF_SHARE_SQUARED: usize = 16;
/// The claim is negated (an odd number of negations).
pub(crate) const CLAIM_NEGATED: usize = 17;
pub(crate) const SENTENCE_NEGATED: usize = 18;
/// Exactly one of the two is negated.
pub(crate) const NEGATION_DIFFERS: usize = 19;
/// Direction (+1 increase, -1 decrease, 0 none) of the claim and of the sentence.
pub(crate) const CLAIM_DIRECTION: usize = 20;
pub(crate) const SENTENCE_DIRECTION: usize = 21;
pub(crate) const DIRECTION_PRODUCT: usize = 22;
/// Product of the polarities (direction flipped by negation).
pub(crate) const POLARITY_PRODUCT: usize = 23;
/// Number of dense features.
pub(crate) const DENSE: usize = 24;

/// Namespaces of the hashed features.
const SENTENCE_TERM: u8 = b's';
const CLAIM_WORD: u8 = b'c';
const MATCHED_TERM: u8 = b'm';
const CROSS: u8 = b'x';

/// Where the hashed features go: `2^hash_bits` buckets after the dense features.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FeatureSpace {
    hash_bits: u8,
}

/// Fewest and most hash bits allowed.
pub(crate) const HASH_BITS: std::ops::RangeInclusive<u8> = 8..=24;

impl FeatureSpace {
    /// `None` unless `hash_bits` is in [`HASH_BITS`].
    pub(crate) fn new(hash_bits: u8) -> Option<FeatureSpace> {
        HASH_BITS
            .contains(&hash_bits)
            .then_some(FeatureSpace { hash_bits })
    }

    pub(crate) fn hash_bits(self) -> u8 {
        self.hash_bits
    }

    /// Length of a pair feature vector.
    pub(crate) fn dims(self) -> usize {
        DENSE + (1usize << self.hash_bits)
    }

    fn bucket(self, namespace: u8, parts: &[&str]) -> u32 {
        let mask = (1u64 << self.hash_bits) - 1;
        // Fits: at most 2^24 buckets after 24 dense features.
        (DENSE as u64 + (hash(namespace, parts) & mask)) as u32
    }

    /// Adds one hashed group (see [`Features::push_group`]). An item is one or two parts (a
    /// term, or a claim term and a sentence term); an empty second part means a one-part item
    /// (terms and words are never empty).
    fn push_group<'a, I>(self, features: &mut Features, namespace: u8, items: I)
    where
        I: IntoIterator<Item = [&'a str; 2]>,
    {
        features.push_group(items.into_iter().map(|[a, b]| {
            let parts: &[&str] = if b.is_empty() { &[a] } else { &[a, b] };
            self.bucket(namespace, parts)
        }));
    }
}

/// A claim, analysed once and scored against many sentences.
#[derive(Clone, Debug)]
pub(crate) struct ClaimContext {
    cues: Cues,
    /// Distinct terms in first-seen order, with their idf.
    terms: Vec<(String, f64)>,
    index: HashMap<String, usize>,
    total_idf: f64,
    bigrams: HashSet<(String, String)>,
    numbers: HashSet<String>,
    /// Distinct words (stop words kept), in first-seen order.
    words: Vec<String>,
}

impl ClaimContext {
    pub(crate) fn new(analysed: Analysed, df: &DocFreq) -> ClaimContext {
        let mut terms: Vec<(String, f64)> = Vec::new();
        let mut index = HashMap::new();
        for term in &analysed.terms {
            if !index.contains_key(term) {
                index.insert(term.clone(), terms.len());
                terms.push((term.clone(), df.idf(term)));
            }
        }
        let total_idf = terms.iter().map(|(_, idf)| idf).sum();
        let mut seen = HashSet::new();
        let words = analysed
            .words
            .iter()
            .filter(|word| seen.insert(word.as_str()))
            .cloned()
            .collect();
        ClaimContext {
            bigrams: bigrams(&analysed.terms),
            numbers: analysed.numbers.iter().cloned().collect(),
            terms,
            index,
            total_idf,
            words,
            cues: analysed.cues,
        }
    }

    pub(crate) fn cues(&self) -> Cues {
        self.cues
    }

    /// Share of the claim's idf weight whose terms occur in `terms`.
    fn idf_share(&self, terms: &HashSet<&str>) -> f64 {
        if self.total_idf <= 0.0 {
            return 0.0;
        }
        let matched: f64 = self
            .terms
            .iter()
            .filter(|(term, _)| terms.contains(term.as_str()))
            .map(|(_, idf)| idf)
            .sum();
        matched / self.total_idf
    }
}

fn bigrams(terms: &[String]) -> HashSet<(String, String)> {
    terms
        .windows(2)
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect()
}

/// An abstract, analysed once.
#[derive(Clone, Debug)]
pub(crate) struct AnalysedDoc {
    title: Analysed,
    sentences: Vec<Analysed>,
}

impl AnalysedDoc {
    pub(crate) fn new(analysers: &mut TextAnalysers, doc: &Document) -> AnalysedDoc {
        AnalysedDoc {
            title: analysers.analyse(&doc.title),
            sentences: doc.sentences.iter().map(|s| analysers.analyse(s)).collect(),
        }
    }
}

/// The pair features of every sentence of an abstract, and the claim's overlap with the title
/// and the whole abstract.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DocFeatures {
    pub(crate) sentences: Vec<Features>,
    pub(crate) title_share: f64,
    pub(crate) abstract_share: f64,
}

/// How a claim and one sentence overlap.
struct Overlap {
    idf_share: f64,
    term_share: f64,
    precision: f64,
    bigram_share: f64,
}

fn overlap(claim: &ClaimContext, sentence: &Analysed) -> Overlap {
    let distinct: HashSet<&str> = sentence.terms.iter().map(String::as_str).collect();
    let ratio = |num: usize, den: usize| {
        if den == 0 {
            0.0
        } else {
            num as f64 / den as f64
        }
    };
    let matched = claim
        .terms
        .iter()
        .filter(|(t, _)| distinct.contains(t.as_str()))
        .count();
    let in_claim = distinct
        .iter()
        .filter(|t| claim.index.contains_key(**t))
        .count();
    let sentence_bigrams = bigrams(&sentence.terms);
    let shared_bigrams = claim
        .bigrams
        .iter()
        .filter(|b| sentence_bigrams.contains(*b))
        .count();
    Overlap {
        idf_share: claim.idf_share(&distinct),
        term_share: ratio(matched, claim.terms.len()),
        precision: ratio(in_claim, distinct.len()),
        bigram_share: ratio(shared_bigrams, claim.bigrams.len()),
    }
}

/// The pair features of each sentence of `doc` for `claim`.
pub(crate) fn doc_features(
    space: FeatureSpace,
    claim: &ClaimContext,
    doc: &AnalysedDoc,
) -> DocFeatures {
    let overlaps: Vec<Overlap> = doc.sentences.iter().map(|s| overlap(claim, s)).collect();
    let best = overlaps.iter().map(|o| o.idf_share).fold(0.0, f64::max);
    let title_terms: HashSet<&str> = doc.title.terms.iter().map(String::as_str).collect();
    let title_share = claim.idf_share(&title_terms);
    let all_terms: HashSet<&str> = doc
        .sentences
        .iter()
        .flat_map(|s| s.terms.iter())
        .chain(&doc.title.terms)
        .map(String::as_str)
        .collect();
    let abstract_share = claim.idf_share(&all_terms);
    let n = doc.sentences.len();
    let claim_cues = claim.cues();
    let sentences = doc
        .sentences
        .iter()
        .zip(&overlaps)
        .enumerate()
        .map(|(i, (sentence, o))| {
            let neighbour = [i.checked_sub(1), Some(i + 1)]
                .into_iter()
                .flatten()
                .filter_map(|j| overlaps.get(j))
                .map(|o| o.idf_share)
                .fold(0.0, f64::max);
            let numbers: HashSet<&str> = sentence.numbers.iter().map(String::as_str).collect();
            let number_match = claim.numbers.iter().any(|x| numbers.contains(x.as_str()));
            let cues = sentence.cues;
            let mut dense = [0.0f32; DENSE];
            dense[BIAS] = 1.0;
            dense[IDF_SHARE] = o.idf_share as f32;
            dense[TERM_SHARE] = o.term_share as f32;
            dense[PRECISION] = o.precision as f32;
            dense[BIGRAM_SHARE] = o.bigram_share as f32;
            dense[RELATIVE_SHARE] = if best > 0.0 {
                (o.idf_share / best) as f32
            } else {
                0.0
            };
            dense[IS_BEST] = flag(best > 0.0 && o.idf_share >= best);
            dense[NEIGHBOUR_SHARE] = neighbour as f32;
            dense[POSITION] = if n > 1 {
                i as f32 / (n - 1) as f32
            } else {
                0.0
            };
            dense[IS_FIRST] = flag(i == 0);
            dense[IS_LAST] = flag(i + 1 == n);
            dense[LENGTH] = ((1.0 + sentence.terms.len() as f64).ln() / 4.0) as f32;
            dense[NUMBER_MATCH] = flag(number_match);
            dense[NUMBER_MISMATCH] =
                flag(!claim.numbers.is_empty() && !numbers.is_empty() && !number_match);
            dense[TITLE_SHARE] = title_share as f32;
            dense[ABSTRACT_SHARE] = abstract_share as f32;
            dense[IDF_SHARE_SQUARED] = (o.idf_share * o.idf_share) as f32;
            dense[CLAIM_NEGATED] = flag(claim_cues.negated());
            dense[SENTENCE_NEGATED] = flag(cues.negated());
            dense[NEGATION_DIFFERS] = flag(claim_cues.negated() != cues.negated());
            dense[CLAIM_DIRECTION] = claim_cues.direction();
            dense[SENTENCE_DIRECTION] = cues.direction();
            dense[DIRECTION_PRODUCT] = claim_cues.direction() * cues.direction();
            dense[POLARITY_PRODUCT] = claim_cues.polarity() * cues.polarity();
            let mut features = Features::default();
            features.push_dense(&dense);
            let mut seen = HashSet::new();
            let distinct: Vec<&str> = sentence
                .terms
                .iter()
                .map(String::as_str)
                .filter(|t| seen.insert(*t))
                .collect();
            space.push_group(
                &mut features,
                SENTENCE_TERM,
                distinct.iter().map(|t| [*t, ""]),
            );
            space.push_group(
                &mut features,
                CLAIM_WORD,
                claim.words.iter().map(|w| [w.as_str(), ""]),
            );
            space.push_group(
                &mut features,
                MATCHED_TERM,
                distinct
                    .iter()
                    .filter(|t| claim.index.contains_key(**t))
                    .map(|t| [*t, ""]),
            );
            space.push_group(
                &mut features,
                CROSS,
                claim
                    .terms
                    .iter()
                    .flat_map(|(c, _)| distinct.iter().map(move |s| [c.as_str(), *s])),
            );
            features
        })
        .collect();
    DocFeatures {
        sentences,
        title_share,
        abstract_share,
    }
}
