//! Models as a separate assessor (issue 16): a system's predictions on the pooled pairs, or the
//! answers of an external command the server's administrator ran over them
//! ([`AssessorSource`]), registered as an assessor of the pool, and how far it agrees with the
//! people.
//!
//! Invariants:
//! - A model's label is never a final label and never a human judgment: it is stored apart
//!   (`model_label_rows`), a release writes it only to `qrels-model.txt`, never to `qrels.txt` or
//!   `claims.jsonl`.
//! - A pair's model label is [`model_label`] of the system's prediction: the run's stated label,
//!   else the most probable of SUPPORT, CONTRADICT and NEI. A pooled pair the run does not hold
//!   is NEI (as evaluation counts an unretrieved pair). A run that gives neither a label nor
//!   both probabilities for a pair it holds cannot assess. A command answers every pooled pair
//!   with a label (the external scorer's protocol), or nothing is registered.
//! - [`report`] compares each assessor with the human final labels over the pairs both
//!   labelled (Cohen's κ with its n) and ranks every system by F1 under the human qrels (every
//!   final label, as `qrels.txt`) and under the model's labels as qrels (its labels only, every
//!   other pair NEI): Kendall's τ-b between the two rankings, and where the human top three
//!   move.

use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::metrics::{kappa, Gold, JudgedRun, MetricsError};
use crate::model::agreement::Kappa;
use crate::report::Snapshot;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;

/// Longest assessor name.
pub const MAX_NAME: usize = 64;

/// Checks an assessor's name: 1 to 64 characters of letters, digits, `.`, `_` and `-` (it is a
/// column of `qrels-model.txt`, so it has no spaces).
pub fn check_name(name: &str) -> Result<&str, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("is empty".into());
    }
    if name.chars().count() > MAX_NAME {
        return Err(format!("{name:?} is longer than {MAX_NAME} characters"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "{name:?} holds {bad:?}: use letters, digits, '.', '_' and '-' only"
        ));
    }
    Ok(name)
}

/// What a stored prediction gives for a pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoredPrediction {
    pub label: Option<Label>,
    pub p_support: Option<f64>,
    pub p_contradict: Option<f64>,
    pub p_nei: Option<f64>,
}

/// The label a model assessor gives a pair from its prediction: the stated label when the run
/// has labels; else, with `p_support` and `p_contradict`, the most probable of SUPPORT,
/// CONTRADICT and NEI (`p_nei`, or 1 − p_support − p_contradict when absent), NEI on any tie
/// with NEI and on a tie of SUPPORT with CONTRADICT; `None` when the prediction gives neither.
pub fn model_label(prediction: &StoredPrediction) -> Option<Label> {
    if let Some(label) = prediction.label {
        return Some(label);
    }
    let (support, contradict) = (prediction.p_support?, prediction.p_contradict?);
    let nei = prediction
        .p_nei
        .unwrap_or_else(|| (1.0 - support - contradict).max(0.0));
    Some(if support > contradict && support > nei {
        Label::Support
    } else if contradict > support && contradict > nei {
        Label::Contradict
    } else {
        Label::Nei
    })
}

/// Where a model assessor's labels came from. In JSON, flattened into the assessor:
/// `"source": "system", "system": NAME` or `"source": "command", "command": LINE, "ran_at": MS`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum AssessorSource {
    /// A system's predictions (a run imported into the project).
    System { system: String },
    /// An external command run by the server's administrator over the pooled pairs: its command
    /// line as given, and when it was started (ms since the epoch).
    Command { command: String, ran_at: i64 },
}

impl AssessorSource {
    /// The system's name, for an assessor made from a system's predictions.
    pub fn system(&self) -> Option<&str> {
        match self {
            AssessorSource::System { system } => Some(system),
            AssessorSource::Command { .. } => None,
        }
    }

    /// The command line, for an assessor made by a command.
    pub fn command(&self) -> Option<&str> {
        match self {
            AssessorSource::System { .. } => None,
            AssessorSource::Command { command, .. } => Some(command),
        }
    }

    /// `system` or `command`.
    pub fn kind(&self) -> &'static str {
        match self {
            AssessorSource::System { .. } => "system",
            AssessorSource::Command { .. } => "command",
        }
    }
}

impl fmt::Display for AssessorSource {
    /// `system NAME`, or `command `LINE`` (the line in backquotes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssessorSource::System { system } => write!(f, "system {system}"),
            AssessorSource::Command { command, .. } => write!(f, "command `{command}`"),
        }
    }
}

/// A registered assessor, as lists show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssessorSummary {
    pub name: String,
    /// Where its labels came from.
    #[serde(flatten)]
    pub source: AssessorSource,
    /// Pairs labelled (the pool when it was registered).
    pub labels: u64,
    /// Of those, labelled SUPPORT or CONTRADICT.
    pub evidence: u64,
    /// Of those, pairs the run does not hold (NEI); 0 for a command, which answers every pair.
    pub not_in_run: u64,
    /// Who registered it (None: the operator at the shell).
    pub created_by: Option<String>,
    /// When (ms since the epoch).
    pub created_at: i64,
}

/// One assessor's labels, by external ids.
#[derive(Clone, Debug, PartialEq)]
pub struct AssessorLabels {
    pub name: String,
    pub source: AssessorSource,
    pub labels: Vec<(ClaimId, DocId, Label)>,
}

/// A system's F1 under both qrels and its rank (1 = best) under each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankedSystem {
    pub system: String,
    pub human_f1: f64,
    pub model_f1: f64,
    pub human_rank: u32,
    pub model_rank: u32,
}

/// One assessor against the people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssessorReport {
    pub name: String,
    /// Where its labels came from.
    #[serde(flatten)]
    pub source: AssessorSource,
    /// Pairs the assessor labelled.
    pub labels: u64,
    /// Cohen's κ against the final labels over the pairs both labelled (`n`).
    pub agreement: Kappa,
    /// Every system, by F1 under the human qrels (ties by name), with its rank under each.
    pub systems: Vec<RankedSystem>,
    /// Kendall's τ-b between the two F1 rankings; `None` with fewer than two systems or when
    /// either ranking ties every system.
    pub kendall_tau_b: Option<f64>,
    /// The human top three (by F1, ties by name), each with its rank under the model's qrels;
    /// `changed` when that rank differs.
    pub top_three: Vec<TopSystem>,
}

/// A system of the human top three and where the model's qrels put it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopSystem {
    pub system: String,
    pub human_rank: u32,
    pub model_rank: u32,
    pub changed: bool,
}

/// Kendall's τ-b of paired observations (ties in either variable handled):
/// (concordant − discordant) / √((n₀ − n₁)(n₀ − n₂)), n₀ = n(n−1)/2, n₁ and n₂ the pairs tied in
/// `x` and in `y`. `None` when the lengths differ, n < 2, or either variable is all ties.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let (mut concordant, mut discordant, mut tied_x, mut tied_y) = (0_i64, 0_i64, 0_i64, 0_i64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let dx = x[i].partial_cmp(&x[j])?;
            let dy = y[i].partial_cmp(&y[j])?;
            match (dx, dy) {
                (Ordering::Equal, Ordering::Equal) => {
                    tied_x += 1;
                    tied_y += 1;
                }
                (Ordering::Equal, _) => tied_x += 1,
                (_, Ordering::Equal) => tied_y += 1,
                (a, b) if a == b => concordant += 1,
                _ => discordant += 1,
            }
        }
    }
    let n = x.len() as i64;
    let n0 = n * (n - 1) / 2;
    let denominator = ((n0 - tied_x) as f64 * (n0 - tied_y) as f64).sqrt();
    (denominator > 0.0).then(|| (concordant - discordant) as f64 / denominator)
}

/// Ranks 1.. by `f1` descending, ties by name (the order `names` are in when equal).
fn ranks(names: &[&str], f1: &[f64]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| f1[b].total_cmp(&f1[a]).then(names[a].cmp(names[b])));
    let mut rank = vec![0_u32; names.len()];
    for (position, &i) in order.iter().enumerate() {
        rank[i] = position as u32 + 1;
    }
    rank
}

/// Every assessor of `assessors` against the people of `snapshot`.
pub fn report(
    snapshot: &Snapshot,
    assessors: &[AssessorLabels],
) -> Result<Vec<AssessorReport>, MetricsError> {
    let finals: HashMap<(&ClaimId, &DocId), Label> = snapshot
        .final_labels
        .iter()
        .map(|f| ((&f.pair.claim, &f.pair.doc), f.label))
        .collect();
    let mut human_labels: Vec<(ClaimId, DocId, Label)> = snapshot
        .final_labels
        .iter()
        .map(|f| (f.pair.claim.clone(), f.pair.doc.clone(), f.label))
        .collect();
    human_labels.extend(
        snapshot
            .citation_evidence
            .iter()
            .filter(|c| !finals.contains_key(&(&c.pair.claim, &c.pair.doc)))
            .map(|c| (c.pair.claim.clone(), c.pair.doc.clone(), c.label)),
    );
    let human = Gold::new(snapshot.claims.iter().cloned(), human_labels)?;
    let runs = snapshot.runs()?;
    let names: Vec<&str> = snapshot.systems.iter().map(|s| s.name.as_str()).collect();
    let human_f1 = runs
        .iter()
        .map(|run| Ok(JudgedRun::new(&human, run)?.metrics().f1))
        .collect::<Result<Vec<f64>, MetricsError>>()?;
    let human_rank = ranks(&names, &human_f1);

    let mut reports = Vec::with_capacity(assessors.len());
    for assessor in assessors {
        let agreement = kappa(assessor.labels.iter().filter_map(|(claim, doc, model)| {
            finals.get(&(claim, doc)).map(|&human| (human, *model))
        }));
        let model = Gold::new(snapshot.claims.iter().cloned(), assessor.labels.clone())?;
        let model_f1 = runs
            .iter()
            .map(|run| Ok(JudgedRun::new(&model, run)?.metrics().f1))
            .collect::<Result<Vec<f64>, MetricsError>>()?;
        let model_rank = ranks(&names, &model_f1);
        let mut systems: Vec<RankedSystem> = (0..names.len())
            .map(|i| RankedSystem {
                system: names[i].to_owned(),
                human_f1: human_f1[i],
                model_f1: model_f1[i],
                human_rank: human_rank[i],
                model_rank: model_rank[i],
            })
            .collect();
        systems.sort_by_key(|s| s.human_rank);
        let top_three = systems
            .iter()
            .take(3)
            .map(|s| TopSystem {
                system: s.system.clone(),
                human_rank: s.human_rank,
                model_rank: s.model_rank,
                changed: s.human_rank != s.model_rank,
            })
            .collect();
        reports.push(AssessorReport {
            name: assessor.name.clone(),
            source: assessor.source.clone(),
            labels: assessor.labels.len() as u64,
            agreement,
            kendall_tau_b: kendall_tau_b(&human_f1, &model_f1),
            systems,
            top_three,
        });
    }
    Ok(reports)
}

#[cfg(test)]
mod tests;
