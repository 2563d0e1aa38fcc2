//! Evaluating a system against a collection: the gold from a claims file (a release's
//! `claims.jsonl`, or SciFact's `claims_*.jsonl`), the run from a run file in any format, and the
//! SciFact-Open metrics as a JSON-ready report.
//!
//! Pairs of the run whose claim is not in the gold file are left out of the evaluation and
//! counted (`skipped_pairs`, `skipped_claims`), not refused: runs are often made over a larger
//! claim set (all splits, or the claims before some were dropped from a release).

use super::error::EvalError;
use super::judgments::JudgedFrom;
use crate::formats::{
    Claim, ClaimsReader, Located, ParseError, RunFormat, RunReadOptions, RunReader, RunRecord,
};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::metrics::{
    incomplete, BootstrapSamples, ClaimIncomplete, ClaimMetrics, Confidence, Gold,
    IncompleteMetrics, JudgedRun, Judgments, Prediction, Run, RunPair,
};
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

/// Reads a claims file (plain or gzip) as the gold: every claim of the file is a gold claim;
/// each evidence document gives a SUPPORT or CONTRADICT pair; every other pair is NEI.
pub fn read_gold(path: &Path) -> Result<Gold, EvalError> {
    gold_from_claims(ClaimsReader::open(path)?)
}

/// The gold from claim records; the first bad line is the error (it names file, line, field).
pub fn gold_from_claims(
    claims: impl IntoIterator<Item = Result<Located<Claim>, ParseError>>,
) -> Result<Gold, EvalError> {
    let mut ids = Vec::new();
    let mut labels: Vec<(ClaimId, DocId, Label)> = Vec::new();
    for claim in claims {
        let claim = claim?.record;
        for evidence in claim.evidence {
            labels.push((claim.id.clone(), evidence.doc_id, evidence.label));
        }
        ids.push(claim.id);
    }
    Ok(Gold::new(ids, labels)?)
}

/// Reads a run file (plain or gzip, parquet included) in `format`. When the file holds several
/// systems (parquet `model`, TREC tag, canonical `system`), `system` chooses one; without it,
/// such a file is refused.
pub fn read_run(
    path: &Path,
    format: RunFormat,
    options: &RunReadOptions,
    system: Option<&str>,
) -> Result<Run, EvalError> {
    let reader = RunReader::open(path, format, options)?;
    run_from_records(reader, &path.display().to_string(), system)
}

/// A run from run records (`file` names the source in errors); see [`read_run`] for `system`.
pub fn run_from_records(
    records: impl IntoIterator<Item = Result<Located<RunRecord>, ParseError>>,
    file: &str,
    system: Option<&str>,
) -> Result<Run, EvalError> {
    let mut pairs = Vec::new();
    let mut systems: BTreeSet<String> = BTreeSet::new();
    for record in records {
        let Located { line, record } = record?;
        if let Some(name) = &record.system {
            if !systems.contains(name) {
                systems.insert(name.clone());
            }
        }
        if system.is_some_and(|wanted| record.system.as_deref() != Some(wanted)) {
            continue;
        }
        pairs.push(run_pair(record).map_err(|message| EvalError::Confidence {
            file: file.to_owned(),
            line,
            message,
        })?);
    }
    match system {
        None if systems.len() > 1 => Err(EvalError::SeveralSystems {
            file: file.to_owned(),
            systems: systems.into_iter().collect(),
        }),
        Some(wanted) if !systems.contains(wanted) => Err(EvalError::NoSuchSystem {
            file: file.to_owned(),
            system: wanted.to_owned(),
            systems: systems.into_iter().collect(),
        }),
        _ => Ok(Run::new(pairs)?),
    }
}

/// What a record predicts: scored when it gives a label and both `p_support` and
/// `p_contradict`; labelled when it gives a label only; unlabelled (a retrieval-style pair,
/// judged label-agnostically) when it gives no label, even if it gives probabilities.
pub fn prediction_of(record: &RunRecord) -> Prediction {
    match (record.label, record.p_support, record.p_contradict) {
        (Some(label), Some(p_support), Some(p_contradict)) => Prediction::Scored {
            label,
            p_support,
            p_contradict,
        },
        (Some(label), _, _) => Prediction::Labelled { label },
        (None, _, _) => Prediction::Unlabelled,
    }
}

/// A run pair from a record: its prediction and [`RunRecord::confidence`].
fn run_pair(record: RunRecord) -> Result<RunPair, String> {
    let confidence = Confidence::new(record.confidence()).map_err(|e| e.to_string())?;
    Ok(RunPair {
        prediction: prediction_of(&record),
        confidence,
        claim: record.claim_id,
        doc: record.doc_id,
    })
}

/// The bootstrap to run: how many resamples, from which seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BootstrapRequest {
    pub samples: BootstrapSamples,
    pub seed: u64,
}

/// An evaluation, as JSON: `precision`, `recall`, `f1`, `average_precision`; with a bootstrap
/// also `precision_sd`, `recall_sd`, `f1_sd`, `average_precision_sd` and `bootstrap`
/// (`samples`, `seed`); `by_claim` when asked; and `counts`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub average_precision: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision_sd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall_sd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f1_sd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average_precision_sd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<BootstrapRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_claim: Option<Vec<ClaimMetrics>>,
    /// The figures for incomplete judgments, when the judged pairs are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<IncompleteReport>,
    /// The same per claim, with `by_claim`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete_by_claim: Option<Vec<ClaimIncomplete>>,
    pub counts: EvalCounts,
}

/// Judged@k, bpref and condensed figures (see [`crate::metrics::incomplete`]), and
/// where the judged pairs came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncompleteReport {
    pub judged_from: JudgedFrom,
    /// Judged pairs of the gold claims (gold evidence included).
    pub judged_pairs: u64,
    #[serde(flatten)]
    pub metrics: IncompleteMetrics,
}

/// The judged pairs of a collection, and where they came from.
#[derive(Debug, Clone, Copy)]
pub struct JudgedPairs<'a> {
    pub judgments: &'a Judgments,
    pub from: &'a JudgedFrom,
}

/// The sizes behind an [`EvalReport`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EvalCounts {
    /// Gold claims.
    pub claims: u64,
    /// Gold SUPPORT and CONTRADICT pairs.
    pub gold_evidence: u64,
    /// Run pairs evaluated (their claim is a gold claim).
    pub predicted_pairs: u64,
    /// Of those, pairs the run predicts as evidence (SUPPORT, CONTRADICT, or no label).
    pub predicted_evidence: u64,
    /// Run pairs left out because their claim is not a gold claim.
    pub skipped_pairs: u64,
    /// Distinct claims of those pairs.
    pub skipped_claims: u64,
}

/// Evaluates `run` against `gold` (see the module notes for skipped pairs).
pub fn evaluate(
    gold: &Gold,
    run: &Run,
    bootstrap: Option<BootstrapRequest>,
    by_claim: bool,
) -> Result<EvalReport, EvalError> {
    evaluate_judged(gold, None, run, bootstrap, by_claim)
}

/// [`evaluate`], with the figures for incomplete judgments when `judged` gives the judged pairs.
pub fn evaluate_judged(
    gold: &Gold,
    judged: Option<JudgedPairs<'_>>,
    run: &Run,
    bootstrap: Option<BootstrapRequest>,
    by_claim: bool,
) -> Result<EvalReport, EvalError> {
    let gold_claims: HashSet<&ClaimId> = gold.claims().iter().collect();
    let (kept, skipped): (Vec<&RunPair>, Vec<&RunPair>) = run
        .pairs()
        .iter()
        .partition(|p| gold_claims.contains(&p.claim));
    let skipped_claims: HashSet<&ClaimId> = skipped.iter().map(|p| &p.claim).collect();
    let counts = EvalCounts {
        claims: gold.claims().len() as u64,
        gold_evidence: gold.evidence_count() as u64,
        predicted_pairs: kept.len() as u64,
        predicted_evidence: kept
            .iter()
            .filter(|p| p.prediction.claims_evidence())
            .count() as u64,
        skipped_pairs: skipped.len() as u64,
        skipped_claims: skipped_claims.len() as u64,
    };
    let kept_run;
    let run = if skipped.is_empty() {
        run
    } else {
        kept_run = Run::new(kept.into_iter().cloned())?;
        &kept_run
    };
    evaluate_kept(gold, judged, run, bootstrap, by_claim, counts)
}

/// The pairs of `run` whose claim is a gold claim (`None`: all of them).
pub fn restrict_to_gold(gold: &Gold, run: &Run) -> Result<Option<Run>, EvalError> {
    if run
        .pairs()
        .iter()
        .all(|p| gold.label(&p.claim, &p.doc).is_some())
    {
        return Ok(None);
    }
    let kept = run
        .pairs()
        .iter()
        .filter(|p| gold.label(&p.claim, &p.doc).is_some())
        .cloned();
    Ok(Some(Run::new(kept)?))
}

fn evaluate_kept(
    gold: &Gold,
    judged: Option<JudgedPairs<'_>>,
    run: &Run,
    bootstrap: Option<BootstrapRequest>,
    by_claim: bool,
    counts: EvalCounts,
) -> Result<EvalReport, EvalError> {
    let judged_run = JudgedRun::new(gold, run)?;
    let incomplete = match judged {
        Some(pairs) => {
            let (metrics, claims) = incomplete(gold, pairs.judgments, run)?;
            let report = IncompleteReport {
                judged_from: pairs.from.clone(),
                judged_pairs: pairs.judgments.len() as u64,
                metrics,
            };
            Some((report, claims))
        }
        None => None,
    };
    Ok(judged_report(
        &judged_run,
        incomplete,
        bootstrap,
        by_claim,
        counts,
    ))
}

/// The report of a judged run: its figures (per claim when `by_claim`), the incomplete-judgment
/// figures when given with their per-claim rows, and the bootstrap's deviations when asked. The
/// one assembly of an [`EvalReport`], whichever way the run was read.
pub fn judged_report(
    judged: &JudgedRun,
    incomplete: Option<(IncompleteReport, Vec<ClaimIncomplete>)>,
    bootstrap: Option<BootstrapRequest>,
    by_claim: bool,
    counts: EvalCounts,
) -> EvalReport {
    let m = judged.metrics();
    let (incomplete, incomplete_by_claim) = match incomplete {
        Some((report, claims)) => (Some(report), by_claim.then_some(claims)),
        None => (None, None),
    };
    let mut report = EvalReport {
        precision: m.precision,
        recall: m.recall,
        f1: m.f1,
        average_precision: m.average_precision,
        precision_sd: None,
        recall_sd: None,
        f1_sd: None,
        average_precision_sd: None,
        bootstrap,
        by_claim: by_claim.then(|| judged.by_claim()),
        incomplete,
        incomplete_by_claim,
        counts,
    };
    if let Some(request) = bootstrap {
        let b = judged.bootstrap(request.samples, request.seed);
        report.precision_sd = Some(b.precision_sd);
        report.recall_sd = Some(b.recall_sd);
        report.f1_sd = Some(b.f1_sd);
        report.average_precision_sd = Some(b.average_precision_sd);
    }
    report
}
