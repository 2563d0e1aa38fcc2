//! How the pool depends on which systems built it (SciFact-Open §5, Zobel 1998): the evidence
//! and scores when only `k` of the pooled systems build the pool, averaged over the orders the
//! systems could have come in, and each pooled system's F1 with its own contributions left out.

use super::by_name::ByName;
use super::csv::{num, opt, CsvTable};
use super::engine::{Engine, Entry};
use super::prepared::Prepared;
use super::snapshot::ReportOptions;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The figures when the first `count` systems of an ordering build the pool at the current
/// depth, averaged over orderings of the pooled systems.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct CountPoint {
    /// Number of pooled systems building the pool.
    pub count: usize,
    /// Orderings averaged over: every ordering (`exact`), or a seeded sample.
    pub orderings: u64,
    /// Whether every ordering was enumerated.
    pub exact: bool,
    /// Mean evidence discovered.
    pub evidence_mean: f64,
    /// Its standard deviation over orderings.
    pub evidence_sd: f64,
    /// Every system's F1 (pooled or not).
    pub f1: ByName<MeanSd>,
}

/// A mean over orderings and the standard deviation over them (population: divided by the
/// number of orderings).
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct MeanSd {
    /// The mean.
    pub mean: f64,
    /// The population standard deviation.
    pub sd: f64,
}

impl MeanSd {
    /// Mean and population standard deviation of `values` (0 and 0 when empty).
    pub fn of(values: &[f64]) -> MeanSd {
        if values.is_empty() {
            return MeanSd { mean: 0.0, sd: 0.0 };
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let squares: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        MeanSd {
            mean,
            sd: (squares / n).sqrt(),
        }
    }
}

/// The system-count curve, one point per count from 1 to the number of pooled systems.
#[derive(Clone, PartialEq, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SystemCountCurve(pub Vec<CountPoint>);

/// One pooled system's F1 with and without its contributions to the pool.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct InclusionRow {
    /// The pooled system.
    pub system: String,
    /// F1 against the pool of all pooled systems.
    pub included_f1: f64,
    /// F1 against the pool of the other pooled systems (its unique evidence is not gold).
    pub excluded_f1: f64,
    /// 100 × (excluded − included) / included; `None` when the included F1 is 0.
    pub change_pct: Option<f64>,
    /// Evidence only this system's pool contribution discovers.
    pub unique_evidence: u64,
}

/// The leave-one-system-out table, in pooled-system order.
#[derive(Clone, PartialEq, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Inclusion(pub Vec<InclusionRow>);

/// What one pool yields: evidence discovered and every system's F1.
struct Outcome {
    evidence: f64,
    f1: Vec<f64>,
}

fn outcome(engine: &Engine, entry: &Entry, depth: u32) -> Outcome {
    let discovered = engine.discovered(entry, depth);
    Outcome {
        evidence: discovered.count as f64,
        f1: (0..engine.system_count())
            .map(|s| engine.f1(s, &discovered))
            .collect(),
    }
}

/// Per count `k` (index `k - 1`), the outcome of each ordering's first-`k` prefix.
struct ByCount(Vec<Vec<Outcome>>);

/// `n!`, or `None` past `u64`.
fn factorial(n: usize) -> Option<u64> {
    (1..=n as u64).try_fold(1_u64, |acc, k| acc.checked_mul(k))
}

pub(super) fn system_count_curve(
    prepared: &Prepared<'_>,
    engine: &Engine,
    options: &ReportOptions,
    exact_up_to: usize,
) -> SystemCountCurve {
    let n = engine.pooled_count();
    let depth = prepared.depth;
    let mut by_count = ByCount((0..n).map(|_| Vec::new()).collect());
    let exact = n <= exact_up_to;
    let orderings = if exact {
        // Over all n! orderings, the first k systems are each k-subset equally often
        // (k!(n-k)! times), so the average over orderings is the average over k-subsets.
        for mask in 1_u64..(1_u64 << n) {
            let members = (0..n).filter(|&m| mask & (1 << m) != 0);
            let entry = engine.entry(members);
            let k = mask.count_ones() as usize;
            if let Some(slot) = by_count.0.get_mut(k - 1) {
                slot.push(outcome(engine, &entry, depth));
            }
        }
        factorial(n).unwrap_or(u64::MAX)
    } else {
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        let mut order: Vec<usize> = (0..n).collect();
        for _ in 0..options.ordering_samples.get() {
            order.sort_unstable();
            order.shuffle(&mut rng);
            let mut entry = engine.empty_entry();
            for (slot, &member) in by_count.0.iter_mut().zip(&order) {
                engine.add_member(&mut entry, member);
                slot.push(outcome(engine, &entry, depth));
            }
        }
        u64::from(options.ordering_samples.get())
    };
    SystemCountCurve(
        by_count
            .0
            .iter()
            .enumerate()
            .map(|(i, outcomes)| {
                let evidence: Vec<f64> = outcomes.iter().map(|o| o.evidence).collect();
                let evidence = MeanSd::of(&evidence);
                CountPoint {
                    count: i + 1,
                    orderings,
                    exact,
                    evidence_mean: evidence.mean,
                    evidence_sd: evidence.sd,
                    f1: prepared
                        .systems
                        .iter()
                        .enumerate()
                        .map(|(s, system)| {
                            let values: Vec<f64> = outcomes
                                .iter()
                                .map(|o| o.f1.get(s).copied().unwrap_or(0.0))
                                .collect();
                            (system.name.to_owned(), MeanSd::of(&values))
                        })
                        .collect(),
                }
            })
            .collect(),
    )
}

pub(super) fn inclusion(prepared: &Prepared<'_>, engine: &Engine) -> Inclusion {
    let n = engine.pooled_count();
    let depth = prepared.depth;
    let all = engine.discovered(&engine.full_entry(), depth);
    Inclusion(
        engine
            .pooled
            .iter()
            .enumerate()
            .map(|(member, &system)| {
                let others = engine.entry((0..n).filter(|&m| m != member));
                let without = engine.discovered(&others, depth);
                let included_f1 = engine.f1(system, &all);
                let excluded_f1 = engine.f1(system, &without);
                InclusionRow {
                    system: prepared.systems[system].name.to_owned(),
                    included_f1,
                    excluded_f1,
                    change_pct: (included_f1 != 0.0)
                        .then(|| 100.0 * (excluded_f1 - included_f1) / included_f1),
                    unique_evidence: all.count - without.count,
                }
            })
            .collect(),
    )
}

impl SystemCountCurve {
    /// One row per count and system.
    pub fn csv_table(&self) -> CsvTable {
        let mut table = CsvTable::new(
            "system_count_curve",
            &[
                "count",
                "orderings",
                "exact",
                "evidence_mean",
                "evidence_sd",
                "system",
                "f1_mean",
                "f1_sd",
            ],
        );
        for point in &self.0 {
            for (system, f1) in point.f1.iter() {
                table.push(vec![
                    point.count.to_string(),
                    point.orderings.to_string(),
                    point.exact.to_string(),
                    num(point.evidence_mean),
                    num(point.evidence_sd),
                    system.to_owned(),
                    num(f1.mean),
                    num(f1.sd),
                ]);
            }
        }
        table
    }

    /// [`SystemCountCurve::csv_table`] as CSV text.
    pub fn to_csv(&self) -> String {
        self.csv_table().to_csv()
    }
}

impl Inclusion {
    /// One row per pooled system.
    pub fn csv_table(&self) -> CsvTable {
        let mut table = CsvTable::new(
            "inclusion",
            &[
                "system",
                "included_f1",
                "excluded_f1",
                "change_pct",
                "unique_evidence",
            ],
        );
        for row in &self.0 {
            table.push(vec![
                row.system.clone(),
                num(row.included_f1),
                num(row.excluded_f1),
                opt(row.change_pct),
                row.unique_evidence.to_string(),
            ]);
        }
        table
    }

    /// [`Inclusion::csv_table`] as CSV text.
    pub fn to_csv(&self) -> String {
        self.csv_table().to_csv()
    }
}
