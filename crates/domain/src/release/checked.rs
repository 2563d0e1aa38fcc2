//! A [`ReleaseInput`] checked for consistency and indexed in the order the files are written.

use super::error::ReleaseError;
use super::input::{FinalLabel, ReleaseInput, SpecificityNote, SystemInfo};
use super::names::file_stem;
use crate::formats::{Document, RunRecord};
use crate::ids::{ClaimId, DocId};
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

/// A (claim, doc) pair, ordered by claim then doc.
pub(crate) type PairKey<'a> = (&'a ClaimId, &'a DocId);

/// Corpus fields a document's extra fields must not repeat.
const CORPUS_FIELDS: [&str; 3] = ["doc_id", "title", "abstract"];

/// The release's content, every list sorted and every cross-reference checked.
pub(crate) struct Checked<'a> {
    pub input: &'a ReleaseInput,
    /// Claim texts, in claim order.
    pub claims: BTreeMap<&'a ClaimId, &'a str>,
    /// Final labels, in (claim, doc) order.
    pub labels: BTreeMap<PairKey<'a>, &'a FinalLabel>,
    /// Pooled pairs without a final label.
    pub unjudged: BTreeSet<PairKey<'a>>,
    pub specificity: BTreeMap<PairKey<'a>, &'a SpecificityNote>,
    /// Documents, in doc order.
    pub documents: BTreeMap<&'a DocId, &'a Document>,
    /// Systems, by name.
    pub systems: BTreeMap<&'a str, &'a SystemInfo>,
    /// Runs by system name, each sorted by (claim, doc), with the file each is written to.
    pub runs: BTreeMap<&'a str, CheckedRun<'a>>,
}

/// One system's run, ready to write.
pub(crate) struct CheckedRun<'a> {
    /// `runs/<file stem>.jsonl`.
    pub path: String,
    pub records: Vec<&'a RunRecord>,
}

impl<'a> Checked<'a> {
    pub fn new(input: &'a ReleaseInput) -> Result<Checked<'a>, ReleaseError> {
        let claims = claims(input)?;
        let known = |what: &'static str, claim: &ClaimId, doc: &DocId| {
            if claims.contains_key(claim) {
                Ok(())
            } else {
                Err(ReleaseError::UnknownClaim {
                    what,
                    claim: claim.clone(),
                    doc: doc.clone(),
                })
            }
        };
        let documents = documents(input)?;
        let mut labels = BTreeMap::new();
        for label in &input.final_labels {
            known("final label", &label.claim, &label.doc)?;
            check_sentences(label, &documents)?;
            if labels.insert((&label.claim, &label.doc), label).is_some() {
                return Err(ReleaseError::DuplicateLabel {
                    claim: label.claim.clone(),
                    doc: label.doc.clone(),
                });
            }
        }
        let mut unjudged = BTreeSet::new();
        for (claim, doc) in &input.unjudged_pooled {
            known("unjudged pair", claim, doc)?;
            if labels.contains_key(&(claim, doc)) {
                return Err(ReleaseError::UnjudgedPairIsJudged {
                    claim: claim.clone(),
                    doc: doc.clone(),
                });
            }
            unjudged.insert((claim, doc));
        }
        let specificity = specificity(input, &labels)?;
        let systems = systems(input)?;
        let runs = runs(input, &claims, &systems)?;
        Ok(Checked {
            input,
            claims,
            labels,
            unjudged,
            specificity,
            documents,
            systems,
            runs,
        })
    }
}

fn claims(input: &ReleaseInput) -> Result<BTreeMap<&ClaimId, &str>, ReleaseError> {
    let mut claims = BTreeMap::new();
    for claim in &input.claims {
        if claims.insert(&claim.id, claim.text.as_str()).is_some() {
            return Err(ReleaseError::DuplicateClaim {
                claim: claim.id.clone(),
            });
        }
    }
    Ok(claims)
}

fn documents(input: &ReleaseInput) -> Result<BTreeMap<&DocId, &Document>, ReleaseError> {
    let mut documents = BTreeMap::new();
    for doc in &input.documents {
        if let Some(field) = CORPUS_FIELDS.iter().find(|f| doc.extra.contains_key(**f)) {
            return Err(ReleaseError::DocumentFieldClash {
                doc: doc.doc_id.clone(),
                field: (*field).to_owned(),
            });
        }
        if documents.insert(&doc.doc_id, doc).is_some() {
            return Err(ReleaseError::DuplicateDocument {
                doc: doc.doc_id.clone(),
            });
        }
    }
    Ok(documents)
}

/// The pair's document is known and every rationale sentence is one of its sentences.
fn check_sentences(
    label: &FinalLabel,
    documents: &BTreeMap<&DocId, &Document>,
) -> Result<(), ReleaseError> {
    let Some(doc) = documents.get(&label.doc) else {
        return Err(ReleaseError::MissingDocument {
            claim: label.claim.clone(),
            doc: label.doc.clone(),
        });
    };
    let count = doc.sentences.len();
    match label
        .sentences
        .iter()
        .flatten()
        .find(|&&s| s as usize >= count)
    {
        Some(&sentence) => Err(ReleaseError::SentenceOutOfRange {
            claim: label.claim.clone(),
            doc: label.doc.clone(),
            sentence,
            sentences: count,
        }),
        None => Ok(()),
    }
}

fn specificity<'a>(
    input: &'a ReleaseInput,
    labels: &BTreeMap<PairKey<'a>, &'a FinalLabel>,
) -> Result<BTreeMap<PairKey<'a>, &'a SpecificityNote>, ReleaseError> {
    let mut notes = BTreeMap::new();
    for note in &input.specificity {
        let pair = (&note.claim, &note.doc);
        let error = |make: fn(ClaimId, DocId) -> ReleaseError| {
            Err(make(note.claim.clone(), note.doc.clone()))
        };
        if !labels.contains_key(&pair) {
            return error(|claim, doc| ReleaseError::SpecificityOfUnjudgedPair { claim, doc });
        }
        if note.relation.is_none() && note.revised_claim.is_none() {
            return error(|claim, doc| ReleaseError::EmptySpecificity { claim, doc });
        }
        if notes.insert(pair, note).is_some() {
            return error(|claim, doc| ReleaseError::DuplicateSpecificity { claim, doc });
        }
    }
    Ok(notes)
}

fn systems(input: &ReleaseInput) -> Result<BTreeMap<&str, &SystemInfo>, ReleaseError> {
    let mut systems = BTreeMap::new();
    for system in &input.systems {
        if let Some(value) = system.negative_sampling_ratio {
            if !(value.is_finite() && value >= 0.0) {
                return Err(ReleaseError::NegativeSamplingRatio {
                    name: system.name.clone(),
                    value,
                });
            }
        }
        if systems.insert(system.name.as_str(), system).is_some() {
            return Err(ReleaseError::DuplicateSystem {
                name: system.name.clone(),
            });
        }
    }
    Ok(systems)
}

fn runs<'a>(
    input: &'a ReleaseInput,
    claims: &BTreeMap<&'a ClaimId, &'a str>,
    systems: &BTreeMap<&'a str, &'a SystemInfo>,
) -> Result<BTreeMap<&'a str, CheckedRun<'a>>, ReleaseError> {
    let mut runs: BTreeMap<&str, CheckedRun> = BTreeMap::new();
    // File path -> system, to refuse two names that sanitize to the same file.
    let mut paths: BTreeMap<String, &str> = BTreeMap::new();
    for (name, records) in &input.runs {
        let name = name.as_str();
        if !systems.contains_key(name) {
            return Err(ReleaseError::RunOfUnknownSystem {
                name: name.to_owned(),
            });
        }
        let path = format!("runs/{}.jsonl", file_stem(name));
        match paths.entry(path.clone()) {
            Entry::Occupied(first) => {
                return Err(if *first.get() == name {
                    ReleaseError::DuplicateRun {
                        name: name.to_owned(),
                    }
                } else {
                    ReleaseError::RunFileClash {
                        first: (*first.get()).to_owned(),
                        second: name.to_owned(),
                        path,
                    }
                });
            }
            Entry::Vacant(slot) => {
                slot.insert(name);
            }
        }
        let mut sorted: Vec<&RunRecord> = records.iter().collect();
        sorted.sort_by(|a, b| (&a.claim_id, &a.doc_id).cmp(&(&b.claim_id, &b.doc_id)));
        if let Some(r) = sorted.iter().find(|r| !claims.contains_key(&r.claim_id)) {
            return Err(ReleaseError::RunClaimUnknown {
                name: name.to_owned(),
                claim: r.claim_id.clone(),
                doc: r.doc_id.clone(),
            });
        }
        if let Some(w) = sorted
            .windows(2)
            .find(|w| (&w[0].claim_id, &w[0].doc_id) == (&w[1].claim_id, &w[1].doc_id))
        {
            return Err(ReleaseError::DuplicateRunPair {
                name: name.to_owned(),
                claim: w[0].claim_id.clone(),
                doc: w[0].doc_id.clone(),
            });
        }
        runs.insert(
            name,
            CheckedRun {
                path,
                records: sorted,
            },
        );
    }
    Ok(runs)
}
