//! Every system at the current depth, with the release's evaluation (`metrics`): scores with
//! bootstrap standard deviations, label confusion on judged pairs, and how much the systems'
//! predicted evidence overlaps.

use super::by_name::ByName;
use super::csv::{num, CsvTable};
use super::engine::{Discovered, Engine};
use super::error::ReportError;
use super::prepared::{Key, Prepared};
use super::significance::{significance, Significance};
use super::snapshot::{ReportOptions, Snapshot};
use crate::label::Label;
use crate::metrics::{
    bootstrap, jaccard, label_confusion, ConfusionMatrix, Gold, JudgedRun, MetricsWithSd,
};
use crate::pool::Role;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The systems at the current depth.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct SystemsReport {
    /// The depth of the pool the gold comes from.
    pub depth: u32,
    /// Per system: scores with bootstrap standard deviations, and the confusion matrix.
    pub by_system: ByName<SystemSummary>,
    /// Per pair of systems (in snapshot order), the overlap of their predicted evidence.
    pub overlap: Vec<Overlap>,
    /// Per pair of systems (in snapshot order), the F1 and AP differences and whether each is
    /// significant after Holm's correction (see [`super::significance`]).
    pub significance: Significance,
}

/// One system at the current depth.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct SystemSummary {
    /// Pooled or evaluation-only.
    pub role: Role,
    /// Precision, recall, F1 and AP against citation evidence plus the evidence discovered at
    /// the current depth, with bootstrap standard deviations over claims.
    #[serde(flatten)]
    pub scores: MetricsWithSd,
    /// Gold label (rows) against the system's stated label (columns), SUPPORT, CONTRADICT,
    /// NEI, over the judged pairs (citation evidence or a final label) the system predicted
    /// with a label. The gold is the current depth's: a judged evidence pair that is neither
    /// citation evidence nor in the current pool counts as NEI. `None` for a run without labels.
    pub confusion: Option<ConfusionMatrix>,
}

/// Jaccard overlap of two systems' predicted evidence pairs (a SUPPORT/CONTRADICT label, or
/// any pair of a label-less run, as the metrics count predicted evidence).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Overlap {
    /// The first system (earlier in snapshot order).
    pub system_a: String,
    /// The second system.
    pub system_b: String,
    /// Over pairs that are citation evidence.
    pub citation: f64,
    /// Over all other pairs.
    pub non_citation: f64,
}

pub(super) fn systems_report(
    snapshot: &Snapshot,
    prepared: &Prepared<'_>,
    engine: &Engine,
    discovered: &Discovered,
    options: &ReportOptions,
) -> Result<SystemsReport, ReportError> {
    let gold = Gold::new(
        snapshot.claims.iter().cloned(),
        engine.gold_evidence(discovered).map(|(key, label)| {
            let pair = prepared.pair_id(key);
            (pair.claim, pair.doc, label)
        }),
    )?;
    let runs = snapshot.runs()?;
    let judged = runs
        .iter()
        .map(|run| JudgedRun::new(&gold, run))
        .collect::<Result<Vec<JudgedRun>, _>>()?;
    let judged_refs: Vec<&JudgedRun> = judged.iter().collect();
    let scores = bootstrap(&judged_refs, options.bootstrap_samples, options.seed)?;
    let named: Vec<(&str, &JudgedRun)> = snapshot
        .systems
        .iter()
        .map(|s| s.name.as_str())
        .zip(judged_refs.iter().copied())
        .collect();
    let significance = significance(&named, options.permutations, options.seed)?;
    let judged_pairs: Vec<_> = engine
        .tracked
        .iter()
        .map(|t| prepared.pair_id(t.key))
        .collect();
    let mut by_system = Vec::with_capacity(runs.len());
    for ((system, run), scores) in snapshot.systems.iter().zip(&runs).zip(scores) {
        let confusion = if run.pairs().iter().all(|p| p.prediction.label().is_none()) {
            None
        } else {
            let predicted = judged_pairs.iter().filter(|pair| {
                run.get(&pair.claim, &pair.doc)
                    .is_some_and(|p| p.prediction.label().is_some())
            });
            Some(label_confusion(
                &gold,
                run,
                predicted.map(|pair| (&pair.claim, &pair.doc)),
            )?)
        };
        by_system.push((
            system.name.clone(),
            SystemSummary {
                role: system.role,
                scores,
                confusion,
            },
        ));
    }
    Ok(SystemsReport {
        depth: prepared.depth,
        by_system: ByName(by_system),
        overlap: overlaps(prepared),
        significance,
    })
}

/// Per system, its predicted evidence pairs split into citation evidence and the rest.
fn overlaps(prepared: &Prepared<'_>) -> Vec<Overlap> {
    let sets: Vec<(HashSet<Key>, HashSet<Key>)> = prepared
        .systems
        .iter()
        .map(|system| {
            system
                .predictions
                .iter()
                .filter(|(_, p)| p.prediction.claims_evidence())
                .map(|(key, _)| *key)
                .partition(|key| prepared.citation.contains_key(key))
        })
        .collect();
    let mut overlap = Vec::new();
    for (a, (system_a, sets_a)) in prepared.systems.iter().zip(&sets).enumerate() {
        for (system_b, sets_b) in prepared.systems.iter().zip(&sets).skip(a + 1) {
            overlap.push(Overlap {
                system_a: system_a.name.to_owned(),
                system_b: system_b.name.to_owned(),
                citation: jaccard(&sets_a.0, &sets_b.0),
                non_citation: jaccard(&sets_a.1, &sets_b.1),
            });
        }
    }
    overlap
}

impl SystemsReport {
    /// The scores (one row per system), the confusion matrices (one row per system and cell)
    /// and the overlaps (one row per pair of systems).
    pub fn csv_tables(&self) -> Vec<CsvTable> {
        let mut scores = CsvTable::new(
            "system_scores",
            &[
                "system",
                "role",
                "depth",
                "precision",
                "precision_sd",
                "recall",
                "recall_sd",
                "f1",
                "f1_sd",
                "average_precision",
                "average_precision_sd",
                "bootstrap_samples",
                "seed",
            ],
        );
        let mut confusion = CsvTable::new(
            "system_confusion",
            &["system", "gold", "predicted", "pairs"],
        );
        for (system, summary) in self.by_system.iter() {
            let s = &summary.scores;
            scores.push(vec![
                system.to_owned(),
                role_name(summary.role).to_owned(),
                self.depth.to_string(),
                num(s.precision),
                num(s.precision_sd),
                num(s.recall),
                num(s.recall_sd),
                num(s.f1),
                num(s.f1_sd),
                num(s.average_precision),
                num(s.average_precision_sd),
                s.samples.to_string(),
                s.seed.to_string(),
            ]);
            if let Some(matrix) = &summary.confusion {
                for gold in Label::ALL {
                    for predicted in Label::ALL {
                        confusion.push(vec![
                            system.to_owned(),
                            gold.as_str().to_owned(),
                            predicted.as_str().to_owned(),
                            matrix.count(gold, predicted).to_string(),
                        ]);
                    }
                }
            }
        }
        let mut overlap = CsvTable::new(
            "system_overlap",
            &["system_a", "system_b", "citation", "non_citation"],
        );
        for o in &self.overlap {
            overlap.push(vec![
                o.system_a.clone(),
                o.system_b.clone(),
                num(o.citation),
                num(o.non_citation),
            ]);
        }
        let mut significance = CsvTable::new(
            "system_significance",
            &[
                "system_a",
                "system_b",
                "f1_difference",
                "f1_p",
                "f1_p_holm",
                "f1_significant",
                "average_precision_difference",
                "average_precision_p",
                "average_precision_p_holm",
                "average_precision_significant",
                "permutations",
                "seed",
                "alpha",
            ],
        );
        let s = &self.significance;
        for p in &s.pairs {
            significance.push(vec![
                p.a.clone(),
                p.b.clone(),
                num(p.f1_difference),
                num(p.f1_p),
                num(p.f1_p_holm),
                p.f1_significant.to_string(),
                num(p.average_precision_difference),
                num(p.average_precision_p),
                num(p.average_precision_p_holm),
                p.average_precision_significant.to_string(),
                s.permutations.to_string(),
                s.seed.to_string(),
                num(s.alpha),
            ]);
        }
        vec![scores, confusion, overlap, significance]
    }
}

/// The role as the report's JSON spells it.
pub(super) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pooled => "pooled",
        Role::EvaluationOnly => "evaluation_only",
    }
}
