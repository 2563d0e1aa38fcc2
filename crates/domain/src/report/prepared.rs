//! The snapshot checked and indexed: claims and documents as dense `u32` keys ordered as their
//! external ids (the order the pooling tie-break needs), labels by pair, predictions by system.

use super::error::ReportError;
use super::snapshot::{PairId, Provenance, Snapshot, SystemPrediction};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::pool::{Pair, PoolError, Role, Strategy};
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// A pair by dense keys: claim index, doc index.
pub(super) type Key = Pair<u32, u32>;

/// The checked snapshot.
pub(super) struct Prepared<'a> {
    /// Claims in [`ClaimId`] order; a claim's key is its position.
    pub claims: Vec<&'a ClaimId>,
    /// Every document named anywhere, in [`DocId`] order; a doc's key is its position.
    pub docs: Vec<&'a DocId>,
    pub citation: HashMap<Key, Label>,
    pub finals: HashMap<Key, (Label, Provenance)>,
    pub systems: Vec<PreparedSystem<'a>>,
    pub strategy: Strategy,
    /// The current pool depth; 0 before the first build.
    pub depth: u32,
}

/// One system's predictions with their keys, in snapshot order.
pub(super) struct PreparedSystem<'a> {
    pub name: &'a str,
    pub role: Role,
    pub predictions: Vec<(Key, &'a SystemPrediction)>,
}

impl<'a> Prepared<'a> {
    /// Checks and indexes `snapshot`.
    pub fn new(snapshot: &'a Snapshot) -> Result<Prepared<'a>, ReportError> {
        let claims = sorted_claims(&snapshot.claims)?;
        let claim_keys: HashMap<&ClaimId, u32> = claims
            .iter()
            .zip(0_u32..)
            .map(|(&claim, key)| (claim, key))
            .collect();
        let mut docs = DocInterner::default();
        let mut keyed =
            |list: &str, pair: &'a PairId| -> Result<Pair<u32, u32>, ReportError> {
                let claim = claim_keys.get(&pair.claim).copied().ok_or_else(|| {
                    ReportError::UnknownClaim {
                        list: list.to_owned(),
                        claim: pair.claim.clone(),
                        doc: pair.doc.clone(),
                    }
                })?;
                Ok(Pair::new(claim, docs.intern(&pair.doc)?))
            };

        let mut citation = HashMap::with_capacity(snapshot.citation_evidence.len());
        for item in &snapshot.citation_evidence {
            if !item.label.is_evidence() {
                return Err(ReportError::NeiCitation {
                    claim: item.pair.claim.clone(),
                    doc: item.pair.doc.clone(),
                });
            }
            let key = keyed("citation evidence", &item.pair)?;
            insert_once(
                &mut citation,
                key,
                item.label,
                "citation evidence",
                &item.pair,
            )?;
        }
        let mut finals = HashMap::with_capacity(snapshot.final_labels.len());
        for item in &snapshot.final_labels {
            let key = keyed("final labels", &item.pair)?;
            let value = (item.label, item.provenance);
            insert_once(&mut finals, key, value, "final labels", &item.pair)?;
        }
        for note in &snapshot.specificity {
            keyed("specificity relations", &note.pair)?;
        }
        for record in &snapshot.annotations {
            keyed("annotations", &record.pair)?;
        }
        check_names(snapshot)?;
        let mut systems = Vec::with_capacity(snapshot.systems.len());
        for system in &snapshot.systems {
            let list = format!("predictions of system {:?}", system.name);
            let predictions = system
                .predictions
                .iter()
                .map(|p| Ok((keyed(&list, &p.pair)?, p)))
                .collect::<Result<Vec<_>, ReportError>>()?;
            systems.push(PreparedSystem {
                name: &system.name,
                role: system.role,
                predictions,
            });
        }

        // Re-key documents by their order, so key order is id order.
        let (docs, order) = docs.into_sorted();
        let rekey = |key: Key| Pair::new(key.claim, order[key.doc as usize]);
        let citation = citation.into_iter().map(|(k, v)| (rekey(k), v)).collect();
        let finals = finals.into_iter().map(|(k, v)| (rekey(k), v)).collect();
        for system in &mut systems {
            for (key, _) in &mut system.predictions {
                *key = rekey(*key);
            }
            check_unique_pairs(system, &claims, &docs)?;
        }
        Ok(Prepared {
            claims,
            docs,
            citation,
            finals,
            systems,
            strategy: snapshot.pool.map_or(Strategy::Confidence, |p| p.strategy),
            depth: snapshot.pool.map_or(0, |p| p.depth.get()),
        })
    }

    /// The external ids of a key.
    pub fn pair_id(&self, key: Key) -> PairId {
        Pair::new(
            self.claims[key.claim as usize].clone(),
            self.docs[key.doc as usize].clone(),
        )
    }

    /// The key of an external pair, if both ids are known.
    pub fn key(&self, pair: &PairId) -> Option<Key> {
        let claim = self.claims.binary_search(&&pair.claim).ok()?;
        let doc = self.docs.binary_search(&&pair.doc).ok()?;
        Some(Pair::new(
            u32::try_from(claim).ok()?,
            u32::try_from(doc).ok()?,
        ))
    }
}

fn sorted_claims(claims: &[ClaimId]) -> Result<Vec<&ClaimId>, ReportError> {
    let mut sorted: Vec<&ClaimId> = claims.iter().collect();
    sorted.sort_unstable();
    if let Some(twice) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(ReportError::DuplicateClaim {
            claim: twice[0].clone(),
        });
    }
    Ok(sorted)
}

fn insert_once<V>(
    map: &mut HashMap<Key, V>,
    key: Key,
    value: V,
    list: &str,
    pair: &PairId,
) -> Result<(), ReportError> {
    match map.entry(key) {
        Entry::Occupied(_) => Err(ReportError::DuplicatePair {
            list: list.to_owned(),
            claim: pair.claim.clone(),
            doc: pair.doc.clone(),
        }),
        Entry::Vacant(slot) => {
            slot.insert(value);
            Ok(())
        }
    }
}

/// System names: non-empty and distinct, as the pool requires.
fn check_names(snapshot: &Snapshot) -> Result<(), ReportError> {
    let mut names: Vec<&str> = Vec::with_capacity(snapshot.systems.len());
    for system in &snapshot.systems {
        if system.name.trim().is_empty() {
            return Err(PoolError::EmptySystemName.into());
        }
        if names.contains(&system.name.as_str()) {
            return Err(PoolError::DuplicateSystem(system.name.clone()).into());
        }
        names.push(&system.name);
    }
    Ok(())
}

fn check_unique_pairs(
    system: &PreparedSystem<'_>,
    claims: &[&ClaimId],
    docs: &[&DocId],
) -> Result<(), ReportError> {
    let mut keys: Vec<Key> = system.predictions.iter().map(|(k, _)| *k).collect();
    keys.sort_unstable();
    match keys.windows(2).find(|w| w[0] == w[1]) {
        Some(twice) => Err(ReportError::DuplicatePair {
            list: format!("predictions of system {:?}", system.name),
            claim: claims[twice[0].claim as usize].clone(),
            doc: docs[twice[0].doc as usize].clone(),
        }),
        None => Ok(()),
    }
}

/// Gives each distinct document a provisional key in order of appearance.
#[derive(Default)]
struct DocInterner<'a> {
    keys: HashMap<&'a DocId, u32>,
    docs: Vec<&'a DocId>,
}

impl<'a> DocInterner<'a> {
    fn intern(&mut self, doc: &'a DocId) -> Result<u32, ReportError> {
        if let Some(&key) = self.keys.get(doc) {
            return Ok(key);
        }
        let key = u32::try_from(self.docs.len()).map_err(|_| ReportError::TooManyDocuments)?;
        self.keys.insert(doc, key);
        self.docs.push(doc);
        Ok(key)
    }

    /// The documents in id order, and per provisional key its final key.
    fn into_sorted(self) -> (Vec<&'a DocId>, Vec<u32>) {
        // `intern` keeps the count within u32.
        let mut by_id: Vec<u32> = (0_u32..).take(self.docs.len()).collect();
        by_id.sort_unstable_by(|&a, &b| self.docs[a as usize].cmp(self.docs[b as usize]));
        let mut order = vec![0_u32; self.docs.len()];
        for (final_key, &provisional) in (0_u32..).zip(&by_id) {
            order[provisional as usize] = final_key;
        }
        let docs = by_id.iter().map(|&k| self.docs[k as usize]).collect();
        (docs, order)
    }
}
