//! Metrics for incomplete judgments: a released pool is incomplete by design, and a new system
//! retrieves pairs nobody judged. Besides the headline figures (which count an unjudged pair as
//! NEI, as SciFact-Open does), these say how much of a run was judged and score it in ways that
//! do not punish unjudged pairs:
//!
//! - **Judged@k**: the share of the run's top k pairs of a claim that are judged, divided by k
//!   even when the run gives the claim fewer pairs (trec_eval's `P_k` with every judged pair
//!   counted relevant; ir_measures' `Judged@k`);
//! - **unjudged predicted evidence**: pairs the run predicts as evidence that nobody judged;
//! - **bpref** (Buckley & Voorhees 2004), as trec_eval 9 computes it: over the claim's ranking
//!   with unjudged pairs skipped, each relevant pair scores
//!   `1 - min(n, R) / min(N, R)` (1 when `n` = 0), where `n` counts the judged non-relevant pairs
//!   above it, `R` the claim's relevant pairs and `N` its judged non-relevant pairs; the sum is
//!   divided by `R` (0 when `R` = 0);
//! - **condensed lists** (Sakai 2007): the unjudged pairs are removed from the run, and then
//!   precision, recall, F1 and average precision are computed as usual. Overall, they are the
//!   headline figures of the condensed run (as [`super::JudgedRun`] computes them); per claim, the
//!   average precision is trec_eval's `map` on the claim's condensed ranking.
//!
//! Relevance is label-only: a run's pair is relevant when its gold label is SUPPORT or
//! CONTRADICT and the run predicts that label (the label the precision/recall curve uses,
//! [`Prediction::best_label`](super::Prediction::best_label)). `R` is the claim's number of gold
//! evidence pairs, as for recall: a gold pair the run retrieves with the wrong label is a judged
//! non-relevant pair of the ranking (it counts in `N` and `n`) and a relevant pair the run
//! missed. In trec_eval terms: the run's pair is judged 0, and the qrels hold an extra
//! relevant document the run never retrieves.
//!
//! The ranking of a claim is trec_eval's: confidence, highest first, ties broken by doc id in
//! decreasing byte order.
//!
//! Averages: Judged@k is the mean over every gold claim (a claim the run ignores is 0% judged);
//! bpref and condensed MAP are means over the claims with gold evidence (both are 0 by
//! definition when `R` = 0, which says nothing about the run).

use super::error::MetricsError;
use super::gold::Gold;
use super::indexed::{claim_ranges, threads_for, IndexedRun, KnownDocs};
use super::judged::matches_gold;
use super::run::Run;
use super::scores::{ratio, AveragePrecision, Metrics, PrecisionRecall};
use crate::ids::{ClaimId, DocId};
use serde::{Deserialize, Serialize};

/// The cut-offs of Judged@k besides the run's depth.
pub const JUDGED_CUTOFFS: [usize; 3] = [5, 10, 50];

/// Which pairs of each gold claim were judged. Gold evidence pairs are always judged.
#[derive(Clone, Debug)]
pub struct Judgments {
    /// Per gold claim index c: its judged docs, sorted by text, are `docs[starts[c]..starts[c + 1]]`.
    starts: Vec<usize>,
    docs: Vec<DocId>,
}

impl Judgments {
    /// The judged pairs: every gold evidence pair, and `judged` (pairs of claims outside the
    /// gold are ignored: they cannot be evaluated).
    pub fn new(gold: &Gold, judged: impl IntoIterator<Item = (ClaimId, DocId)>) -> Judgments {
        let claim_count = gold.claims().len();
        let mut pairs: Vec<(u32, DocId)> = Vec::new();
        for (claim, doc, _) in gold.evidence() {
            if let Some(index) = gold.claim_index(claim) {
                pairs.push((index, doc.clone()));
            }
        }
        // Claims files and qrels come grouped by claim: the last claim's index saves lookups.
        let mut last: Option<(ClaimId, u32)> = None;
        for (claim, doc) in judged {
            let index = match &last {
                Some((c, index)) if *c == claim => Some(*index),
                _ => gold
                    .claim_index(&claim)
                    .inspect(|&index| last = Some((claim, index))),
            };
            if let Some(index) = index {
                pairs.push((index, doc));
            }
        }
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_str().cmp(b.1.as_str())));
        pairs.dedup();
        let mut starts = vec![0usize; claim_count + 1];
        for (index, _) in &pairs {
            starts[*index as usize + 1] += 1;
        }
        for c in 0..claim_count {
            starts[c + 1] += starts[c];
        }
        Judgments {
            starts,
            docs: pairs.into_iter().map(|(_, doc)| doc).collect(),
        }
    }

    /// Whether the pair (claim at `index` of [`Gold::claims`], `doc`) is judged.
    pub fn is_judged(&self, index: u32, doc: &DocId) -> bool {
        self.claim_docs(index as usize)
            .binary_search_by(|d| d.as_str().cmp(doc.as_str()))
            .is_ok()
    }

    /// How many pairs are judged.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn claim_judged(&self, index: usize) -> u64 {
        self.claim_docs(index).len() as u64
    }

    /// The judged docs of the claim at `index` of [`Gold::claims`], sorted by text.
    pub(crate) fn claim_docs(&self, index: usize) -> &[DocId] {
        match (self.starts.get(index), self.starts.get(index + 1)) {
            (Some(&start), Some(&end)) => &self.docs[start..end],
            _ => &[],
        }
    }
}

/// Judged@k: the share of the top `k` pairs that are judged.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct JudgedAt {
    pub k: usize,
    pub value: f64,
}

/// One claim's figures for incomplete judgments.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct ClaimIncomplete {
    pub claim: ClaimId,
    /// Gold evidence pairs (R).
    pub gold_evidence: u64,
    /// Judged pairs of the claim (evidence included).
    pub judged: u64,
    /// The run's pairs for the claim.
    pub retrieved: u64,
    /// Of those, pairs that are not judged.
    pub unjudged: u64,
    /// Pairs the run predicts as evidence that are not judged.
    pub unjudged_predicted_evidence: u64,
    /// Judged@k at the cut-offs of [`IncompleteMetrics::judged_at`].
    pub judged_at: Vec<JudgedAt>,
    pub bpref: f64,
    /// Precision, recall, F1 of the condensed run, and trec_eval's AP of the condensed ranking.
    pub condensed: Metrics,
}

/// A run's figures for incomplete judgments (see the module notes for the averages).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct IncompleteMetrics {
    /// The most pairs the run gives one claim.
    pub depth: usize,
    /// Mean Judged@k over every gold claim, at [`JUDGED_CUTOFFS`] and at `depth` (listed once
    /// when it is one of them).
    pub judged_at: Vec<JudgedAt>,
    /// Run pairs that are not judged.
    pub unjudged_pairs: u64,
    /// Of those, pairs the run predicts as evidence.
    pub unjudged_predicted_evidence: u64,
    /// Mean bpref over the claims with gold evidence.
    pub bpref: f64,
    /// The headline figures of the condensed run (unjudged pairs removed).
    pub condensed: Metrics,
    /// Mean per-claim condensed AP (trec_eval `map` of the condensed run) over the claims with
    /// gold evidence.
    pub condensed_map: f64,
    /// Claims with gold evidence (the denominator of `bpref` and `condensed_map`).
    pub claims_with_evidence: u64,
}

/// The run's figures for incomplete judgments, overall and per gold claim (in [`Gold::claims`]
/// order). Fails when a pair's claim is not a gold claim.
pub fn incomplete(
    gold: &Gold,
    judgments: &Judgments,
    run: &Run,
) -> Result<(IncompleteMetrics, Vec<ClaimIncomplete>), MetricsError> {
    incomplete_indexed(gold, judgments, &IndexedRun::of_run(gold, run)?)
}

/// [`incomplete`] of an [`IndexedRun`] (indexed by `gold`'s claims).
pub fn incomplete_indexed(
    gold: &Gold,
    judgments: &Judgments,
    run: &IndexedRun<'_>,
) -> Result<(IncompleteMetrics, Vec<ClaimIncomplete>), MetricsError> {
    run.check_gold(gold)?;
    let claim_count = gold.claims().len();
    let known = KnownDocs::new(gold, Some(judgments));
    // (confidence, pair, flags) of every pair, grouped by claim.
    let buckets = run.buckets();
    let mut points: Vec<Point> = Vec::with_capacity(run.len());
    for c in 0..claim_count {
        for i in buckets.members(c) {
            let pair = &run.pairs()[i];
            let pair_known = known.get(pair.claim, pair.doc);
            let gold_label = pair_known.label;
            let mut flags = 0u8;
            if pair_known.judged {
                flags |= JUDGED;
            }
            if gold_label.is_evidence() {
                flags |= EVIDENCE;
            }
            if matches_gold(pair.best_label(), gold_label) {
                flags |= RELEVANT;
            }
            if pair.claims_evidence() {
                flags |= PREDICTS_EVIDENCE;
                if matches_gold(pair.label(), gold_label) {
                    flags |= CORRECT;
                }
            }
            points.push(Point {
                confidence: pair.confidence.get(),
                pair: i as u32,
                flags,
            });
        }
    }
    let starts = buckets.starts();
    let depth = (0..claim_count)
        .map(|c| starts[c + 1] - starts[c])
        .max()
        .unwrap_or(0);
    let mut cutoffs: Vec<usize> = JUDGED_CUTOFFS.to_vec();
    if !cutoffs.contains(&depth) {
        cutoffs.push(depth);
    }

    let evidence_counts = gold.shared_evidence_counts();
    // Each claim's ranking and figures, the claims shared out over the cores.
    let ranges = claim_ranges(claim_count, threads_for(points.len()), |c| {
        starts[c + 1] - starts[c]
    });
    let claims: Vec<ClaimIncomplete> = std::thread::scope(|scope| {
        let mut rest: &mut [Point] = &mut points;
        let mut handles = Vec::with_capacity(ranges.len());
        for range in ranges {
            let (mine, others) = rest.split_at_mut(starts[range.end] - starts[range.start]);
            rest = others;
            let (evidence_counts, cutoffs) = (&evidence_counts, &cutoffs);
            let pairs = run.pairs();
            handles.push(scope.spawn(move || {
                let offset = starts[range.start];
                range
                    .map(|c| {
                        let ranked = &mut mine[starts[c] - offset..starts[c + 1] - offset];
                        // trec_eval's order within a claim: confidence descending, then doc id
                        // descending ((claim, doc) pairs are distinct: a total order).
                        ranked.sort_unstable_by(|a, b| {
                            b.confidence.total_cmp(&a.confidence).then_with(|| {
                                let doc = |p: &Point| pairs[p.pair as usize].doc.as_bytes();
                                doc(b).cmp(doc(a))
                            })
                        });
                        claim_figures(
                            gold.claims()[c].clone(),
                            evidence_counts[c],
                            judgments.claim_judged(c),
                            ranked,
                            cutoffs,
                        )
                    })
                    .collect::<Vec<_>>()
            }));
        }
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });

    let condensed = condensed_metrics(&points, evidence_counts.iter().sum());
    let with_evidence: Vec<&ClaimIncomplete> =
        claims.iter().filter(|c| c.gold_evidence > 0).collect();
    let mean = |values: &mut dyn Iterator<Item = f64>, count: usize| {
        if count == 0 {
            0.0
        } else {
            values.sum::<f64>() / count as f64
        }
    };
    let judged_at = cutoffs
        .iter()
        .enumerate()
        .map(|(i, &k)| JudgedAt {
            k,
            value: mean(
                &mut claims.iter().map(|c| c.judged_at[i].value),
                claims.len(),
            ),
        })
        .collect();
    let overall = IncompleteMetrics {
        depth,
        judged_at,
        unjudged_pairs: claims.iter().map(|c| c.unjudged).sum(),
        unjudged_predicted_evidence: claims.iter().map(|c| c.unjudged_predicted_evidence).sum(),
        bpref: mean(
            &mut with_evidence.iter().map(|c| c.bpref),
            with_evidence.len(),
        ),
        condensed,
        condensed_map: mean(
            &mut with_evidence.iter().map(|c| c.condensed.average_precision),
            with_evidence.len(),
        ),
        claims_with_evidence: with_evidence.len() as u64,
    };
    Ok((overall, claims))
}

/// The headline figures of the condensed run: what [`super::JudgedRun::metrics`] gives for the
/// run without its unjudged pairs (the same counts, the same confidence thresholds, the same
/// [`AveragePrecision`] sum), from the judged points.
fn condensed_metrics(points: &[Point], gold: u64) -> Metrics {
    let (mut predicted, mut correct) = (0u64, 0u64);
    let mut ranked: Vec<(f64, bool)> = Vec::with_capacity(points.len());
    for p in points.iter().filter(|p| p.flags & JUDGED != 0) {
        if p.flags & PREDICTS_EVIDENCE != 0 {
            predicted += 1;
            correct += u64::from(p.flags & CORRECT != 0);
        }
        ranked.push((p.confidence, p.flags & RELEVANT != 0));
    }
    ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
    let mut ap = AveragePrecision::new(gold);
    let mut hits = 0u64;
    for (i, &(confidence, hit)) in ranked.iter().enumerate() {
        hits += u64::from(hit);
        // A threshold takes in every pair of one confidence.
        if ranked.get(i + 1).is_none_or(|next| next.0 != confidence) {
            ap.close_threshold(hits, i as u64 + 1);
        }
    }
    let pr = PrecisionRecall::from_counts(correct, predicted, gold);
    Metrics {
        precision: pr.precision,
        recall: pr.recall,
        f1: pr.f1,
        average_precision: ap.value(),
    }
}

/// One pair of a claim's ranking.
struct Point {
    confidence: f64,
    /// The pair's position in the run.
    pair: u32,
    flags: u8,
}

/// The pair is judged.
const JUDGED: u8 = 1;
/// The pair is relevant for the ranking measures (gold evidence, best label matches).
const RELEVANT: u8 = 2;
/// The run predicts the pair as evidence.
const PREDICTS_EVIDENCE: u8 = 4;
/// The run's stated label matches the gold evidence label.
const CORRECT: u8 = 8;
/// The pair is gold evidence (SUPPORT or CONTRADICT); such a pair is always judged.
const EVIDENCE: u8 = 16;

/// One claim's figures from its ranked pairs.
fn claim_figures(
    claim: ClaimId,
    relevant: u64,
    judged: u64,
    ranked: &[Point],
    cutoffs: &[usize],
) -> ClaimIncomplete {
    let is = |p: &Point, flag: u8| p.flags & flag != 0;
    let judged_at = cutoffs
        .iter()
        .map(|&k| JudgedAt {
            k,
            value: ratio(
                ranked.iter().take(k).filter(|p| is(p, JUDGED)).count() as u64,
                k as u64,
            ),
        })
        .collect();
    // Judged non-relevant pairs: judged NEI pairs, and gold pairs retrieved with a wrong label.
    let judged_nei = judged.saturating_sub(relevant);
    let mislabelled = ranked
        .iter()
        .filter(|p| is(p, EVIDENCE) && !is(p, RELEVANT))
        .count() as u64;
    let nonrelevant = judged_nei + mislabelled;
    let (mut bpref, mut nonrel_so_far) = (0.0f64, 0u64);
    let (mut ap, mut hits, mut rank) = (0.0f64, 0u64, 0u64);
    let (mut predicted, mut correct) = (0u64, 0u64);
    let (mut unjudged, mut unjudged_evidence) = (0u64, 0u64);
    for p in ranked {
        if !is(p, JUDGED) {
            unjudged += 1;
            if is(p, PREDICTS_EVIDENCE) {
                unjudged_evidence += 1;
            }
            continue;
        }
        rank += 1;
        if is(p, PREDICTS_EVIDENCE) {
            predicted += 1;
            if is(p, CORRECT) {
                correct += 1;
            }
        }
        if is(p, RELEVANT) {
            hits += 1;
            ap += hits as f64 / rank as f64;
            bpref += if nonrel_so_far > 0 {
                // In double precision, as pytrec_eval's trec_eval does (trec_eval 9.0.7's
                // float ratio differs in the 8th digit).
                1.0 - nonrel_so_far.min(relevant) as f64 / nonrelevant.min(relevant) as f64
            } else {
                1.0
            };
        } else {
            nonrel_so_far += 1;
        }
    }
    let pr = PrecisionRecall::from_counts(correct, predicted, relevant);
    let divide = |sum: f64| {
        if relevant == 0 {
            0.0
        } else {
            sum / relevant as f64
        }
    };
    ClaimIncomplete {
        claim,
        gold_evidence: relevant,
        judged,
        retrieved: ranked.len() as u64,
        unjudged,
        unjudged_predicted_evidence: unjudged_evidence,
        judged_at,
        bpref: divide(bpref),
        condensed: Metrics {
            precision: pr.precision,
            recall: pr.recall,
            f1: pr.f1,
            average_precision: divide(ap),
        },
    }
}
