//! Where annotators agree, and where they do not (issue 16): Cohen's κ of each pair of
//! annotators, Krippendorff's α over all of them, both by pool-depth band and by pooled system,
//! each pair of stages compared, and the agreement of rationale sentences.
//!
//! Which label counts. A stage's label on a pair is its latest record (by time, then input
//! order), as in the first-vs-second agreement. For the annotator figures (pairwise κ, α, the
//! α of bands and systems) an annotator's label on a pair is their latest first- or
//! second-pass record; adjudication is left out, since the adjudicator decides having seen both
//! labels (it is compared stage against stage in `by_stage`). α does not depend on who gave
//! which value, so it equals the first-vs-second α unless one annotator gave both passes.
//!
//! A pair's *entry depth* is the best rank any pooled system gives it (as the depth curve
//! pools); the bands are the depth curve's steps, `(d_{i−1}, d_i]`, and one more band for
//! annotated pairs outside the current pool. A pooled system *contributed* the pairs of its own
//! top `depth` under the pool's strategy.

use super::csv::{opt, CsvTable};
use super::depth::curve_depths;
use super::engine::Engine;
use super::prepared::{Key, Prepared};
use super::snapshot::{AnnotationRecord, Snapshot, Stage};
use crate::label::Label;
use crate::metrics::{kappa, nominal_alpha, sentence_decisions, sentence_f1};
use crate::model::agreement::{
    AnnotatorPair, DepthBand, GroupAgreement, RationaleAgreement, Reliability, StagePair,
    SystemAgreement,
};
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::num::NonZeroU32;

/// The stage pairs compared, in report order.
const STAGE_PAIRS: [(Stage, Stage); 3] = [
    (Stage::First, Stage::Second),
    (Stage::First, Stage::Adjudication),
    (Stage::Second, Stage::Adjudication),
];

/// Per key, the latest record: by time, then input position.
fn latest<'a, K: Hash + Eq>(
    records: impl Iterator<Item = (K, usize, &'a AnnotationRecord)>,
) -> HashMap<K, (usize, &'a AnnotationRecord)> {
    let mut out: HashMap<K, (usize, &AnnotationRecord)> = HashMap::new();
    for (key, position, record) in records {
        out.entry(key)
            .and_modify(|current| {
                if (record.at_ms, position) > (current.1.at_ms, current.0) {
                    *current = (position, record);
                }
            })
            .or_insert((position, record));
    }
    out
}

/// The annotated pairs' labels, indexed once.
struct Labels<'a> {
    /// Per pair, each annotator's latest first- or second-pass label, by annotator name.
    units: BTreeMap<Key, Vec<(&'a str, Label)>>,
    /// Per pair and stage, the stage's latest record.
    stages: BTreeMap<(Key, Stage), &'a AnnotationRecord>,
    /// Per pair with both passes: (first, second).
    passes: BTreeMap<Key, (Label, Label)>,
}

impl<'a> Labels<'a> {
    fn new(snapshot: &'a Snapshot, prepared: &Prepared<'_>) -> Labels<'a> {
        let records: Vec<(Key, usize, &AnnotationRecord)> = snapshot
            .annotations
            .iter()
            .enumerate()
            .filter_map(|(i, r)| prepared.key(&r.pair).map(|key| (key, i, r)))
            .collect();
        let stages: BTreeMap<(Key, Stage), &AnnotationRecord> =
            latest(records.iter().map(|&(key, i, r)| ((key, r.stage), i, r)))
                .into_iter()
                .map(|(k, (_, r))| (k, r))
                .collect();
        let by_annotator = latest(
            records
                .iter()
                .filter(|(_, _, r)| r.stage != Stage::Adjudication)
                .map(|&(key, i, r)| ((key, r.annotator.as_str()), i, r)),
        );
        let mut units: BTreeMap<Key, Vec<(&str, Label)>> = BTreeMap::new();
        for ((key, annotator), (_, record)) in by_annotator {
            units
                .entry(key)
                .or_default()
                .push((annotator, record.label));
        }
        for labels in units.values_mut() {
            labels.sort_unstable();
        }
        let passes = stages
            .iter()
            .filter(|((_, stage), _)| *stage == Stage::First)
            .filter_map(|(&(key, _), first)| {
                stages
                    .get(&(key, Stage::Second))
                    .map(|second| (key, (first.label, second.label)))
            })
            .collect();
        Labels {
            units,
            stages,
            passes,
        }
    }

    /// κ of the passes and α of the annotators over the pairs `keep` accepts.
    fn group(&self, keep: impl Fn(Key) -> bool) -> GroupAgreement {
        GroupAgreement {
            first_vs_second: kappa(
                self.passes
                    .iter()
                    .filter(|(&key, _)| keep(key))
                    .map(|(_, &labels)| labels),
            ),
            alpha: nominal_alpha(
                self.units
                    .iter()
                    .filter(|(&key, _)| keep(key))
                    .map(|(_, labels)| labels.iter().map(|&(_, label)| label)),
            ),
        }
    }

    /// Every annotated pair, in key order.
    fn keys(&self) -> Vec<Key> {
        let mut keys: Vec<Key> = self.stages.keys().map(|&(key, _)| key).collect();
        keys.dedup();
        keys
    }
}

/// The pooled systems' ranks of the annotated pairs.
struct Ranks {
    index: HashMap<Key, usize>,
    /// `keys × systems`: system `m`'s rank of pair `i` at `i * width + m`.
    ranks: Vec<Option<u32>>,
    width: usize,
}

impl Ranks {
    fn new(engine: &Engine, keys: &[Key]) -> Ranks {
        let index: HashMap<Key, usize> = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let runs = engine.ranking.runs();
        let width = runs.len();
        let mut ranks = vec![None; keys.len() * width];
        for (member, run) in runs.iter().enumerate() {
            for (rank, scored) in run.ranked() {
                if let Some(&i) = index.get(&scored.pair) {
                    ranks[i * width + member] = Some(rank);
                }
            }
        }
        Ranks {
            index,
            ranks,
            width,
        }
    }

    fn of(&self, key: Key) -> &[Option<u32>] {
        match self.index.get(&key) {
            Some(&i) => &self.ranks[i * self.width..(i + 1) * self.width],
            None => &[],
        }
    }

    /// The best rank any pooled system gives `key`.
    fn entry(&self, key: Key) -> Option<u32> {
        self.of(key).iter().flatten().min().copied()
    }
}

pub(super) fn reliability(
    snapshot: &Snapshot,
    prepared: &Prepared<'_>,
    engine: &Engine,
    step: NonZeroU32,
) -> Reliability {
    let labels = Labels::new(snapshot, prepared);
    let keys = labels.keys();
    let ranks = Ranks::new(engine, &keys);
    let depth = prepared.depth;

    let mut pairs: BTreeMap<(&str, &str), Vec<(Label, Label)>> = BTreeMap::new();
    for unit in labels.units.values() {
        for (i, &(a, label_a)) in unit.iter().enumerate() {
            for &(b, label_b) in unit.iter().skip(i + 1) {
                pairs.entry((a, b)).or_default().push((label_a, label_b));
            }
        }
    }
    let annotator_pairs = pairs
        .into_iter()
        .map(|((a, b), labels)| AnnotatorPair {
            a: a.to_owned(),
            b: b.to_owned(),
            kappa: kappa(labels),
        })
        .collect();

    let mut by_depth = Vec::new();
    let mut from = 1;
    for to in curve_depths(step, depth) {
        by_depth.push(DepthBand {
            from,
            to: Some(to),
            agreement: labels.group(|key| ranks.entry(key).is_some_and(|e| from <= e && e <= to)),
        });
        from = to + 1;
    }
    let outside = |key: Key| ranks.entry(key).is_none_or(|e| e > depth);
    if keys.iter().any(|&key| outside(key)) {
        by_depth.push(DepthBand {
            from: depth.saturating_add(1),
            to: None,
            agreement: labels.group(outside),
        });
    }

    let by_system = engine
        .ranking
        .runs()
        .iter()
        .enumerate()
        .map(|(member, run)| SystemAgreement {
            system: run.name().to_owned(),
            agreement: labels.group(|key| {
                ranks
                    .of(key)
                    .get(member)
                    .copied()
                    .flatten()
                    .is_some_and(|rank| rank <= depth)
            }),
        })
        .collect();

    Reliability {
        annotator_pairs,
        alpha: labels.group(|_| true).alpha,
        by_depth,
        by_system,
        by_stage: STAGE_PAIRS
            .iter()
            .map(|&(a, b)| stage_pair(&labels, a, b))
            .collect(),
    }
}

fn stage_pair(labels: &Labels<'_>, a: Stage, b: Stage) -> StagePair {
    let both: Vec<(&AnnotationRecord, &AnnotationRecord)> = labels
        .stages
        .iter()
        .filter(|((_, stage), _)| *stage == a)
        .filter_map(|(&(key, _), &x)| labels.stages.get(&(key, b)).map(|&y| (x, y)))
        .collect();
    let same: Vec<(&AnnotationRecord, &AnnotationRecord)> = both
        .iter()
        .copied()
        .filter(|(x, y)| x.label == y.label && x.label.is_evidence())
        .collect();
    let f1: Vec<f64> = same
        .iter()
        .filter_map(|(x, y)| sentence_f1(&x.rationale.sentences, &y.rationale.sentences))
        .collect();
    StagePair {
        a: a.as_str().to_owned(),
        b: b.as_str().to_owned(),
        kappa: kappa(both.iter().map(|(x, y)| (x.label, y.label))),
        alpha: nominal_alpha(both.iter().map(|(x, y)| [x.label, y.label])),
        rationale: RationaleAgreement {
            pairs: same.len() as u64,
            f1_pairs: f1.len() as u64,
            mean_f1: (!f1.is_empty()).then(|| f1.iter().sum::<f64>() / f1.len() as f64),
            sentence_alpha: nominal_alpha(same.iter().flat_map(|(x, y)| {
                sentence_decisions(
                    &x.rationale.sentences,
                    &y.rationale.sentences,
                    x.rationale
                        .abstract_sentences
                        .max(y.rationale.abstract_sentences),
                )
            })),
        },
    }
}

fn count(n: u64) -> String {
    n.to_string()
}

fn band_name(band: &DepthBand) -> (String, String) {
    (
        band.from.to_string(),
        band.to.map_or_else(String::new, |to| to.to_string()),
    )
}

/// The agreement section's tables: pairwise κ, the overall α, by depth band, by system, by
/// stage pair.
pub(super) fn csv_tables(r: &Reliability) -> Vec<CsvTable> {
    let mut annotators = CsvTable::new(
        "agreement_annotators",
        &[
            "annotator_a",
            "annotator_b",
            "pairs",
            "observed_agreement",
            "expected_agreement",
            "kappa",
        ],
    );
    for p in &r.annotator_pairs {
        annotators.push(vec![
            p.a.clone(),
            p.b.clone(),
            count(p.kappa.n),
            opt(p.kappa.observed_agreement),
            opt(p.kappa.expected_agreement),
            opt(p.kappa.kappa),
        ]);
    }
    let mut alpha = CsvTable::new(
        "agreement_alpha",
        &[
            "units",
            "values",
            "observed_disagreement",
            "expected_disagreement",
            "alpha",
        ],
    );
    alpha.push(vec![
        count(r.alpha.units),
        count(r.alpha.values),
        opt(r.alpha.observed_disagreement),
        opt(r.alpha.expected_disagreement),
        opt(r.alpha.alpha),
    ]);
    const GROUP: [&str; 5] = [
        "pass_pairs",
        "kappa",
        "alpha_units",
        "alpha_values",
        "alpha",
    ];
    let group = |g: &GroupAgreement| {
        vec![
            count(g.first_vs_second.n),
            opt(g.first_vs_second.kappa),
            count(g.alpha.units),
            count(g.alpha.values),
            opt(g.alpha.alpha),
        ]
    };
    let header = |first: &[&'static str]| -> Vec<&'static str> {
        first.iter().chain(GROUP.iter()).copied().collect()
    };
    let mut by_depth = CsvTable::new("agreement_by_depth", &header(&["from", "to"]));
    for band in &r.by_depth {
        let (from, to) = band_name(band);
        let mut row = vec![from, to];
        row.extend(group(&band.agreement));
        by_depth.push(row);
    }
    let mut by_system = CsvTable::new("agreement_by_system", &header(&["system"]));
    for s in &r.by_system {
        let mut row = vec![s.system.clone()];
        row.extend(group(&s.agreement));
        by_system.push(row);
    }
    let mut by_stage = CsvTable::new(
        "agreement_by_stage",
        &[
            "a",
            "b",
            "pairs",
            "observed_agreement",
            "kappa",
            "alpha",
            "rationale_pairs",
            "rationale_f1_pairs",
            "mean_rationale_f1",
            "sentence_units",
            "sentence_alpha",
        ],
    );
    for s in &r.by_stage {
        by_stage.push(vec![
            s.a.clone(),
            s.b.clone(),
            count(s.kappa.n),
            opt(s.kappa.observed_agreement),
            opt(s.kappa.kappa),
            opt(s.alpha.alpha),
            count(s.rationale.pairs),
            count(s.rationale.f1_pairs),
            opt(s.rationale.mean_f1),
            count(s.rationale.sentence_alpha.units),
            opt(s.rationale.sentence_alpha.alpha),
        ]);
    }
    vec![annotators, alpha, by_depth, by_system, by_stage]
}
