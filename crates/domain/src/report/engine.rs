//! The fast path: each system ranked once for pooling and judged once for scoring, so that the
//! pool of any depth and any subset of pooled systems, and every system's scores against the
//! gold it yields, cost a pass over the judged pairs only.
//!
//! A pair enters the pool of a set of pooled systems at the smallest rank any of them gives
//! it, so the depth-`d` pool of the set is the pairs whose smallest rank is at most `d`. Only
//! judged pairs can change the gold: citation evidence is always gold, and a non-citation pair
//! with a SUPPORT or CONTRADICT final label (a *candidate*) is gold exactly when it is in the
//! pool. Every other pair is NEI whatever the pool.
//!
//! Scores use the arithmetic of `metrics` ([`PrecisionRecall`], [`AveragePrecision`]) on the
//! same counts and the same thresholds of the precision/recall curve in the same order as
//! `metrics::JudgedRun`, so they are bit-identical.

use super::error::ReportError;
use super::prepared::{Key, Prepared};
use super::snapshot::{Provenance, SystemPrediction};
use crate::label::Label;
use crate::metrics::{AveragePrecision, Metrics, PrecisionRecall};
use crate::pool::{Ranking, Role, Score, ScoredPair, Strategy, SystemRun};
use std::cmp::Reverse;
use std::collections::HashMap;

/// Rank of a pair a pooled system did not score: it never enters that system's pool.
const UNRANKED: u64 = u64::MAX;

/// A judged pair: citation evidence or a pair with a final label.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tracked {
    pub key: Key,
    pub citation: Option<Label>,
    pub final_label: Option<(Label, Provenance)>,
}

impl Tracked {
    /// The label the pair has in the gold once pooled, when pooling can make it gold evidence:
    /// an evidence final label on a pair that is not citation evidence.
    fn candidate(&self) -> Option<Label> {
        match (self.citation, self.final_label) {
            (None, Some((label, _))) if label.is_evidence() => Some(label),
            _ => None,
        }
    }

    /// Whether the pair was judged before annotation (citation evidence, or a citation or
    /// imported final label).
    pub fn is_prior(&self) -> bool {
        self.citation.is_some() || self.final_label.is_some_and(|(_, p)| p.is_prior())
    }
}

/// Every system judged once, and the pooled systems' ranks of every judged pair.
pub(super) struct Engine {
    /// The pooled systems (snapshot indexes), in snapshot order; a pooled system's *member*
    /// index is its position here.
    pub pooled: Vec<usize>,
    /// The pooled systems, each sorted once under the project's strategy.
    pub ranking: Ranking<u32, u32>,
    /// Judged pairs, by key.
    pub tracked: Vec<Tracked>,
    /// `tracked.len() × pooled.len()`: member `m`'s rank of tracked pair `t` at
    /// `t * pooled.len() + m`.
    ranks: Vec<u64>,
    /// Per tracked pair: its candidate label.
    candidate: Vec<Option<Label>>,
    /// One per system, in snapshot order.
    scorers: Vec<Scorer>,
    citation_count: u64,
}

/// One system judged once.
#[derive(Clone, Debug, Default)]
struct Scorer {
    /// Pairs predicted as evidence (a SUPPORT/CONTRADICT label, or no label).
    predicted: u64,
    /// Predicted citation evidence with the right label: correct whatever the pool.
    base_correct: u64,
    /// Tracked candidates predicted with the right label: correct when pooled.
    conditional_correct: Vec<u32>,
    /// The pairs that can be hits of the precision/recall curve, in confidence order.
    events: Vec<HitEvent>,
}

/// A possible hit of the precision/recall curve.
#[derive(Clone, Copy, Debug)]
struct HitEvent {
    /// Pairs ranked down to the end of this pair's confidence tie: the threshold's size.
    retrieved: u64,
    /// `None`: citation evidence, always a hit; `Some(t)`: tracked candidate `t`, a hit when
    /// pooled.
    candidate: Option<u32>,
}

/// Per tracked pair, the smallest rank a set of pooled systems gives it.
#[derive(Clone, Debug)]
pub(super) struct Entry(Vec<u64>);

/// The candidates in a pool: the evidence it discovers.
#[derive(Clone, Debug)]
pub(super) struct Discovered {
    flags: Vec<bool>,
    /// Discovered evidence pairs.
    pub count: u64,
    /// Gold evidence pairs: citation evidence plus discovered.
    pub gold: u64,
}

impl Engine {
    /// Ranks the pooled systems and judges every system.
    pub fn new(prepared: &Prepared<'_>) -> Result<Engine, ReportError> {
        let mut tracked: Vec<Tracked> = prepared
            .citation
            .iter()
            .map(|(&key, &label)| Tracked {
                key,
                citation: Some(label),
                final_label: prepared.finals.get(&key).copied(),
            })
            .chain(
                prepared
                    .finals
                    .iter()
                    .filter(|(key, _)| !prepared.citation.contains_key(key))
                    .map(|(&key, &final_label)| Tracked {
                        key,
                        citation: None,
                        final_label: Some(final_label),
                    }),
            )
            .collect();
        tracked.sort_unstable_by_key(|t| t.key);
        let index: HashMap<Key, u32> = tracked.iter().map(|t| t.key).zip(0_u32..).collect();
        let candidate: Vec<Option<Label>> = tracked.iter().map(Tracked::candidate).collect();

        let (pooled, ranking) = rank_pooled(prepared)?;
        let width = pooled.len();
        let mut ranks = vec![UNRANKED; tracked.len() * width];
        for (member, run) in ranking.runs().iter().enumerate() {
            for (rank, scored) in run.ranked() {
                if let Some(&t) = index.get(&scored.pair) {
                    ranks[t as usize * width + member] = u64::from(rank);
                }
            }
        }
        let scorers = prepared
            .systems
            .iter()
            .map(|system| Scorer::new(&system.predictions, &tracked, &candidate, &index))
            .collect();
        Ok(Engine {
            pooled,
            ranking,
            citation_count: tracked.iter().filter(|t| t.citation.is_some()).count() as u64,
            tracked,
            ranks,
            candidate,
            scorers,
        })
    }

    /// Number of pooled systems.
    pub fn pooled_count(&self) -> usize {
        self.pooled.len()
    }

    /// The entry depths of the empty set of systems: nothing is pooled.
    pub fn empty_entry(&self) -> Entry {
        Entry(vec![UNRANKED; self.tracked.len()])
    }

    /// Adds pooled system `member` (a position in [`Engine::pooled`]) to a set's entry depths.
    pub fn add_member(&self, entry: &mut Entry, member: usize) {
        let width = self.pooled.len();
        for (t, depth) in entry.0.iter_mut().enumerate() {
            if let Some(&rank) = self.ranks.get(t * width + member) {
                *depth = (*depth).min(rank);
            }
        }
    }

    /// The entry depths of the pooled systems `members`.
    pub fn entry(&self, members: impl IntoIterator<Item = usize>) -> Entry {
        let mut entry = self.empty_entry();
        for member in members {
            self.add_member(&mut entry, member);
        }
        entry
    }

    /// The entry depths of all pooled systems.
    pub fn full_entry(&self) -> Entry {
        self.entry(0..self.pooled.len())
    }

    /// The evidence the depth-`depth` pool of a set discovers.
    pub fn discovered(&self, entry: &Entry, depth: u32) -> Discovered {
        let depth = u64::from(depth);
        let flags: Vec<bool> = entry
            .0
            .iter()
            .zip(&self.candidate)
            .map(|(&e, c)| c.is_some() && e <= depth)
            .collect();
        let count = flags.iter().filter(|&&f| f).count() as u64;
        Discovered {
            flags,
            count,
            gold: self.citation_count + count,
        }
    }

    /// Tracked pairs in the depth-`depth` pool of a set that satisfy `keep`.
    pub fn pooled_tracked(
        &self,
        entry: &Entry,
        depth: u32,
        keep: impl Fn(&Tracked) -> bool,
    ) -> usize {
        let depth = u64::from(depth);
        entry
            .0
            .iter()
            .zip(&self.tracked)
            .filter(|&(&e, t)| e <= depth && keep(t))
            .count()
    }

    /// The gold evidence under `discovered`: citation evidence and discovered candidates, by
    /// key, with their labels.
    pub fn gold_evidence<'s>(
        &'s self,
        discovered: &'s Discovered,
    ) -> impl Iterator<Item = (Key, Label)> + 's {
        self.tracked
            .iter()
            .zip(&self.candidate)
            .zip(&discovered.flags)
            .filter_map(|((t, candidate), &pooled)| match (t.citation, candidate) {
                (Some(label), _) => Some((t.key, label)),
                (None, Some(label)) if pooled => Some((t.key, *label)),
                _ => None,
            })
    }

    /// Precision, recall, F1 and AP of system `system` (snapshot index) against the gold of
    /// `discovered`.
    pub fn metrics(&self, system: usize, discovered: &Discovered) -> Metrics {
        let Some(scorer) = self.scorers.get(system) else {
            return Metrics::default();
        };
        let pr = scorer.precision_recall(discovered);
        Metrics {
            precision: pr.precision,
            recall: pr.recall,
            f1: pr.f1,
            average_precision: scorer.average_precision(discovered),
        }
    }

    /// F1 of system `system` against the gold of `discovered`.
    pub fn f1(&self, system: usize, discovered: &Discovered) -> f64 {
        self.scorers
            .get(system)
            .map_or(0.0, |s| s.precision_recall(discovered).f1)
    }

    /// Number of systems (pooled or not).
    pub fn system_count(&self) -> usize {
        self.scorers.len()
    }
}

/// Ranks the pooled systems, in snapshot order.
fn rank_pooled(prepared: &Prepared<'_>) -> Result<(Vec<usize>, Ranking<u32, u32>), ReportError> {
    let strategy: Strategy = prepared.strategy;
    let mut pooled = Vec::new();
    let mut ranking = Ranking::new(strategy);
    for (index, system) in prepared.systems.iter().enumerate() {
        if system.role != Role::Pooled {
            continue;
        }
        let pairs = system
            .predictions
            .iter()
            .map(|(key, p)| {
                Ok(ScoredPair::new(
                    key.claim,
                    key.doc,
                    Score::new(p.confidence.get())?,
                    p.retrieval_rank,
                ))
            })
            .collect::<Result<Vec<_>, ReportError>>()?;
        ranking.add(SystemRun::new(system.name, Role::Pooled, pairs)?)?;
        pooled.push(index);
    }
    Ok((pooled, ranking))
}

/// As `metrics`: a predicted label matches a gold label when the gold is evidence and the
/// prediction has that label or none.
fn matches_gold(predicted: Option<Label>, gold: Label) -> bool {
    gold.is_evidence() && predicted.is_none_or(|label| label == gold)
}

impl Scorer {
    fn new(
        predictions: &[(Key, &SystemPrediction)],
        tracked: &[Tracked],
        candidate: &[Option<Label>],
        index: &HashMap<Key, u32>,
    ) -> Scorer {
        let mut scorer = Scorer::default();
        // Per prediction: `None` if it can never be a hit, else its event's candidate.
        let mut hit: Vec<Option<Option<u32>>> = vec![None; predictions.len()];
        for ((key, p), hit) in predictions.iter().zip(&mut hit) {
            let claims_evidence = p.prediction.claims_evidence();
            scorer.predicted += u64::from(claims_evidence);
            let Some(&t) = index.get(key) else { continue };
            let stated = p.prediction.label();
            let best = p.prediction.best_label();
            if let Some(gold) = tracked.get(t as usize).and_then(|t| t.citation) {
                scorer.base_correct += u64::from(claims_evidence && matches_gold(stated, gold));
                *hit = matches_gold(best, gold).then_some(None);
            } else if let Some(gold) = candidate.get(t as usize).copied().flatten() {
                if claims_evidence && matches_gold(stated, gold) {
                    scorer.conditional_correct.push(t);
                }
                *hit = matches_gold(best, gold).then_some(Some(t));
            }
        }
        // The metrics' order: confidence descending, ties kept together.
        let mut order: Vec<usize> = (0..predictions.len()).collect();
        order.sort_by_key(|&i| Reverse(predictions[i].1.confidence));
        let mut end = 0;
        for (position, &i) in order.iter().enumerate() {
            if position == end {
                let confidence = predictions[i].1.confidence;
                end = position
                    + order[position..]
                        .iter()
                        .take_while(|&&j| predictions[j].1.confidence == confidence)
                        .count();
            }
            if let Some(candidate) = hit[i] {
                scorer.events.push(HitEvent {
                    retrieved: end as u64,
                    candidate,
                });
            }
        }
        scorer
    }

    /// Precision, recall and F1 against the gold of `discovered`.
    fn precision_recall(&self, discovered: &Discovered) -> PrecisionRecall {
        let conditional = self
            .conditional_correct
            .iter()
            .filter(|&&t| discovered.flags.get(t as usize).copied().unwrap_or(false))
            .count() as u64;
        PrecisionRecall::from_counts(
            self.base_correct + conditional,
            self.predicted,
            discovered.gold,
        )
    }

    /// The average precision against the gold of `discovered`: only the thresholds that hold
    /// a hit can contribute, and they are the events' thresholds.
    fn average_precision(&self, discovered: &Discovered) -> f64 {
        let mut ap = AveragePrecision::new(discovered.gold);
        if discovered.gold == 0 {
            return ap.value();
        }
        let mut hits = 0;
        let mut threshold: Option<u64> = None;
        for event in &self.events {
            if threshold != Some(event.retrieved) {
                if let Some(retrieved) = threshold {
                    ap.close_threshold(hits, retrieved);
                }
                threshold = Some(event.retrieved);
            }
            let hit = event
                .candidate
                .is_none_or(|t| discovered.flags.get(t as usize).copied().unwrap_or(false));
            hits += u64::from(hit);
        }
        if let Some(retrieved) = threshold {
            ap.close_threshold(hits, retrieved);
        }
        ap.value()
    }
}
