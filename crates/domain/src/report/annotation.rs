//! Annotation progress, annotator throughput, and agreement between the two passes.

use super::csv::{opt, CsvTable};
use super::engine::Engine;
use super::prepared::{Key, Prepared};
use super::snapshot::{AnnotationRecord, PairId, SecondPassMode, Snapshot, Stage};
use crate::label::Label;
use crate::metrics::Agreement;
use crate::model::agreement::Reliability;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::num::NonZeroU32;

/// Progress and throughput.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct AnnotationReport {
    /// How far annotation of the current pool is.
    pub progress: Progress,
    /// One row per annotator, by name.
    pub annotators: Vec<AnnotatorRow>,
}

/// How far annotation of the current pool is.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Progress {
    /// The current pool depth.
    pub depth: u32,
    /// Pairs in the current pool.
    pub pool_pairs: usize,
    /// Pool pairs judged before annotation: citation evidence, or a citation or imported
    /// final label.
    pub prior_judged: usize,
    /// Pool pairs to annotate: the others.
    pub to_annotate: usize,
    /// Pairs to annotate that have a final label.
    pub finalized: usize,
    /// Per stage, in workflow order.
    pub stages: Vec<StageProgress>,
}

/// The labels given in one stage.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct StageProgress {
    /// The stage counted.
    pub stage: Stage,
    /// Distinct pairs labelled in this stage.
    pub pairs: usize,
    /// Label records (edits included).
    pub records: usize,
}

/// One annotator's throughput. An item is a pair labelled in a stage; its time is the sum of
/// the annotator's recorded seconds on it (edits add up). Items without any recorded time are
/// left out of the time figures.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct AnnotatorRow {
    /// The annotator's user name.
    pub annotator: String,
    /// Items labelled.
    pub items: usize,
    /// Items with a recorded time.
    pub timed_items: usize,
    /// Median seconds per timed item (the mean of the two middle ones for an even count).
    pub median_seconds: Option<f64>,
    /// Timed items per hour of recorded time: 3600 × timed items / total seconds.
    pub items_per_hour: Option<f64>,
}

/// Agreement between the first and the second pass, and what waits for adjudication.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct AgreementReport {
    /// The project's second-pass mode.
    pub second_pass_mode: SecondPassMode,
    /// The second annotator saw the first label, so agreement is inflated: read it as a
    /// confirmation rate, not as independent agreement.
    pub confirm_mode: bool,
    /// Over pairs with a first and a second label (each pass's latest); `None` when there are
    /// none.
    pub first_vs_second: Option<PassAgreement>,
    /// Disagreements not yet resolved.
    pub awaiting_adjudication: AwaitingAdjudication,
    /// Pairwise κ, α, and both by depth band, by system and by stage pair (issue 16).
    #[serde(flatten)]
    pub reliability: Reliability,
}

/// Cohen's kappa, agreement and the confusion (first pass in rows) of the two passes.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct PassAgreement {
    /// Pairs, observed and chance agreement, kappa and confusion.
    #[serde(flatten)]
    pub agreement: Agreement,
    /// Observed agreement in percent.
    pub percent_agreement: f64,
}

/// Pairs whose two passes disagree, with no adjudication label and no final label yet.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct AwaitingAdjudication {
    /// Number of pairs waiting.
    pub count: usize,
    /// By claim, then doc.
    pub pairs: Vec<Disagreement>,
}

/// A pair the two passes label differently.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Disagreement {
    /// The claim and the document.
    #[serde(flatten)]
    pub pair: PairId,
    /// The first pass's latest label.
    pub first: Label,
    /// The second pass's latest label.
    pub second: Label,
}

/// Per (pair, stage): the latest label (by time, then input order).
fn latest_labels(
    prepared: &Prepared<'_>,
    records: &[AnnotationRecord],
) -> HashMap<(Key, Stage), Label> {
    let mut latest: HashMap<(Key, Stage), (i64, usize, Label)> = HashMap::new();
    for (position, record) in records.iter().enumerate() {
        let Some(key) = prepared.key(&record.pair) else {
            continue;
        };
        let candidate = (record.at_ms, position, record.label);
        latest
            .entry((key, record.stage))
            .and_modify(|current| {
                if (candidate.0, candidate.1) > (current.0, current.1) {
                    *current = candidate;
                }
            })
            .or_insert(candidate);
    }
    latest.into_iter().map(|(k, (_, _, l))| (k, l)).collect()
}

pub(super) fn annotation_report(
    snapshot: &Snapshot,
    prepared: &Prepared<'_>,
    engine: &Engine,
) -> AnnotationReport {
    let depth = prepared.depth;
    let prior: HashSet<Key> = engine
        .tracked
        .iter()
        .filter(|t| t.is_prior())
        .map(|t| t.key)
        .collect();
    let (pool_pairs, to_annotate) = engine
        .ranking
        .preview(&[depth], &prior)
        .first()
        .map_or((0, 0), |step| (step.pool_size, step.to_annotate));
    let finalized = engine.pooled_tracked(&engine.full_entry(), depth, |t| !t.is_prior());
    let stages = Stage::ALL
        .iter()
        .map(|&stage| {
            let records: Vec<&AnnotationRecord> = snapshot
                .annotations
                .iter()
                .filter(|r| r.stage == stage)
                .collect();
            let pairs: HashSet<&PairId> = records.iter().map(|r| &r.pair).collect();
            StageProgress {
                stage,
                pairs: pairs.len(),
                records: records.len(),
            }
        })
        .collect();
    AnnotationReport {
        progress: Progress {
            depth,
            pool_pairs,
            prior_judged: pool_pairs - to_annotate,
            to_annotate,
            finalized,
            stages,
        },
        annotators: annotators(&snapshot.annotations),
    }
}

fn annotators(records: &[AnnotationRecord]) -> Vec<AnnotatorRow> {
    // annotator -> (pair, stage) -> recorded seconds, if any.
    let mut items: BTreeMap<&str, HashMap<(&PairId, Stage), Option<f64>>> = BTreeMap::new();
    for record in records {
        let seconds = items
            .entry(record.annotator.as_str())
            .or_default()
            .entry((&record.pair, record.stage))
            .or_insert(None);
        if let Some(s) = record.seconds {
            *seconds = Some(seconds.unwrap_or(0.0) + s.get());
        }
    }
    items
        .into_iter()
        .map(|(annotator, items)| {
            let mut times: Vec<f64> = items.values().filter_map(|&s| s).collect();
            times.sort_by(f64::total_cmp);
            let total: f64 = times.iter().sum();
            AnnotatorRow {
                annotator: annotator.to_owned(),
                items: items.len(),
                timed_items: times.len(),
                median_seconds: median(&times),
                items_per_hour: (total > 0.0).then(|| 3600.0 * times.len() as f64 / total),
            }
        })
        .collect()
}

/// The median of sorted values.
fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => sorted.get(n / 2).copied(),
        _ => Some((sorted.get(n / 2 - 1)? + sorted.get(n / 2)?) / 2.0),
    }
}

pub(super) fn agreement_report(
    snapshot: &Snapshot,
    prepared: &Prepared<'_>,
    engine: &Engine,
    step: NonZeroU32,
) -> AgreementReport {
    let latest = latest_labels(prepared, &snapshot.annotations);
    let mut both: Vec<(Key, Label, Label)> = latest
        .iter()
        .filter(|((_, stage), _)| *stage == Stage::First)
        .filter_map(|(&(key, _), &first)| {
            latest
                .get(&(key, Stage::Second))
                .map(|&second| (key, first, second))
        })
        .collect();
    both.sort_unstable_by_key(|&(key, _, _)| key);
    let first_vs_second = Agreement::from_labels(
        both.iter().map(|&(_, first, second)| (first, second)),
    )
    .map(|agreement| PassAgreement {
        percent_agreement: agreement.percent_agreement(),
        agreement,
    });
    let pairs: Vec<Disagreement> = both
        .iter()
        .filter(|&&(key, first, second)| {
            first != second
                && !latest.contains_key(&(key, Stage::Adjudication))
                && !prepared.finals.contains_key(&key)
        })
        .map(|&(key, first, second)| Disagreement {
            pair: prepared.pair_id(key),
            first,
            second,
        })
        .collect();
    AgreementReport {
        second_pass_mode: snapshot.second_pass_mode,
        confirm_mode: snapshot.second_pass_mode == SecondPassMode::Confirm,
        first_vs_second,
        awaiting_adjudication: AwaitingAdjudication {
            count: pairs.len(),
            pairs,
        },
        reliability: super::agreement::reliability(snapshot, prepared, engine, step),
    }
}

impl AnnotationReport {
    /// Progress per stage and the annotators' throughput.
    pub fn csv_tables(&self) -> Vec<CsvTable> {
        let p = &self.progress;
        let mut progress = CsvTable::new(
            "annotation_progress",
            &[
                "stage",
                "pairs",
                "records",
                "pool_pairs",
                "to_annotate",
                "finalized",
            ],
        );
        for stage in &p.stages {
            progress.push(vec![
                stage.stage.as_str().to_owned(),
                stage.pairs.to_string(),
                stage.records.to_string(),
                p.pool_pairs.to_string(),
                p.to_annotate.to_string(),
                p.finalized.to_string(),
            ]);
        }
        let mut annotators = CsvTable::new(
            "annotators",
            &[
                "annotator",
                "items",
                "timed_items",
                "median_seconds",
                "items_per_hour",
            ],
        );
        for row in &self.annotators {
            annotators.push(vec![
                row.annotator.clone(),
                row.items.to_string(),
                row.timed_items.to_string(),
                opt(row.median_seconds),
                opt(row.items_per_hour),
            ]);
        }
        vec![progress, annotators]
    }
}

impl AgreementReport {
    /// The summary (one row), the two passes' confusion (one row per cell), and the pairs
    /// awaiting adjudication.
    pub fn csv_tables(&self) -> Vec<CsvTable> {
        let mut summary = CsvTable::new(
            "agreement",
            &[
                "second_pass_mode",
                "confirm_mode",
                "pairs",
                "kappa",
                "percent_agreement",
                "expected_agreement",
                "awaiting_adjudication",
            ],
        );
        let mode = match self.second_pass_mode {
            SecondPassMode::Confirm => "confirm",
            SecondPassMode::Blind => "blind",
        };
        let a = self.first_vs_second.as_ref();
        summary.push(vec![
            mode.to_owned(),
            self.confirm_mode.to_string(),
            a.map_or(0, |a| a.agreement.pairs).to_string(),
            opt(a.and_then(|a| a.agreement.kappa)),
            opt(a.map(|a| a.percent_agreement)),
            opt(a.map(|a| a.agreement.expected_agreement)),
            self.awaiting_adjudication.count.to_string(),
        ]);
        let mut confusion = CsvTable::new("agreement_confusion", &["first", "second", "pairs"]);
        if let Some(a) = a {
            for first in Label::ALL {
                for second in Label::ALL {
                    confusion.push(vec![
                        first.as_str().to_owned(),
                        second.as_str().to_owned(),
                        a.agreement.confusion.count(first, second).to_string(),
                    ]);
                }
            }
        }
        let mut awaiting = CsvTable::new(
            "awaiting_adjudication",
            &["claim", "doc", "first", "second"],
        );
        for d in &self.awaiting_adjudication.pairs {
            awaiting.push(vec![
                d.pair.claim.as_str().to_owned(),
                d.pair.doc.as_str().to_owned(),
                d.first.as_str().to_owned(),
                d.second.as_str().to_owned(),
            ]);
        }
        let mut tables = vec![summary, confusion, awaiting];
        tables.extend(super::agreement::csv_tables(&self.reliability));
        tables
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[1.0, 2.0, 10.0]), Some(2.0));
        assert_eq!(median(&[1.0, 2.0, 4.0, 10.0]), Some(3.0));
    }
}
