//! Stratified samples and Horvitz–Thompson estimates against a synthetic population whose
//! truth is known: unbiasedness and interval coverage over 1,000 seeded samples, and the same
//! checks failing for deliberately wrong estimators.

use super::super::estimate::Method;
use super::super::{
    beyond_depth, rank_band, stratified_sample, Allocation, Candidate, Estimate, Estimator,
    JudgingError, Sample, StratumDesign,
};
use super::p;
use crate::pool::{Pair, Ranking, Role, Score, ScoredPair, Strategy, SystemRun};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[test]
fn rank_bands_double_beyond_the_depth() {
    assert_eq!(rank_band(10, 10), None);
    assert_eq!(rank_band(11, 10), Some(0));
    assert_eq!(rank_band(20, 10), Some(0));
    assert_eq!(rank_band(21, 10), Some(1));
    assert_eq!(rank_band(40, 10), Some(1));
    assert_eq!(rank_band(41, 10), Some(2));
    // Depth 0 counts as 1: (0, 2], (2, 4], ...
    assert_eq!(rank_band(1, 0), Some(0));
    assert_eq!(rank_band(3, 0), Some(1));
    assert_eq!(rank_band(u32::MAX, 1), Some(31));
}

#[test]
fn beyond_depth_lists_unjudged_pairs_by_best_rank_band() {
    let run = |name: &str, pairs: &[(u32, u32, f64)]| {
        let pairs = pairs
            .iter()
            .map(|&(c, d, s)| ScoredPair::new(c, d, Score::new(s).unwrap(), None))
            .collect();
        SystemRun::new(name, Role::Pooled, pairs).unwrap()
    };
    // a: (0,1) 1, (0,2) 2, (0,3) 3, (0,4) 4, (0,5) 5; b: (0,5) 1, (0,6) 2, (0,7) 3.
    let ranking = Ranking::from_runs(
        Strategy::Confidence,
        [
            run(
                "a",
                &[
                    (0, 1, 0.9),
                    (0, 2, 0.8),
                    (0, 3, 0.7),
                    (0, 4, 0.6),
                    (0, 5, 0.5),
                ],
            ),
            run("b", &[(0, 5, 0.9), (0, 6, 0.8), (0, 7, 0.7)]),
        ],
    )
    .unwrap();
    let judged: BTreeSet<Pair<u32, u32>> = [p(0, 3)].into_iter().collect();
    // Depth 1: (0,2) and (0,6) rank 2 -> band 0; (0,3) judged; (0,7) 3 and (0,4) 4 -> band 1;
    // (0,5) is at rank 1 for b, inside the depth; (0,1) inside. Cut at rank 4: a's (0,5) is
    // rank 5 but b ranks it 1 anyway.
    let candidates = beyond_depth(&ranking, 1, 4, &judged);
    assert_eq!(
        candidates,
        vec![
            Candidate {
                pair: p(0, 2),
                stratum: 0
            },
            Candidate {
                pair: p(0, 4),
                stratum: 1
            },
            Candidate {
                pair: p(0, 6),
                stratum: 0
            },
            Candidate {
                pair: p(0, 7),
                stratum: 1
            },
        ]
    );
}

fn candidates(sizes: &[usize]) -> Vec<Candidate<u32, u32>> {
    let mut all = Vec::new();
    for (stratum, &size) in sizes.iter().enumerate() {
        for doc in 0..size {
            all.push(Candidate {
                pair: p(stratum as u32, doc as u32),
                stratum: stratum as u32,
            });
        }
    }
    all
}

#[test]
fn proportional_allocation_floors_and_rounds() {
    let sample = |sizes: &[usize], total| {
        stratified_sample(candidates(sizes), &Allocation::Proportional { total }, 1).map(|s| {
            s.strata()
                .iter()
                .map(|d| (d.population, d.sampled))
                .collect::<Vec<_>>()
        })
    };
    // 100 of 1,000: 40, 30, 20, 10 in proportion.
    assert_eq!(
        sample(&[400, 300, 200, 100], 100),
        Ok(vec![(400, 40), (300, 30), (200, 20), (100, 10)])
    );
    // 10 of 1,003: targets 9.97, 0.01, 0.01, 0.00...; floors of 2 where there is room.
    assert_eq!(
        sample(&[1000, 1, 1, 1], 10),
        Ok(vec![(1000, 7), (1, 1), (1, 1), (1, 1)])
    );
    // 5 of 1,000 over 4 strata: floors of 1 only (2 each would need 8).
    assert_eq!(
        sample(&[970, 10, 10, 10], 5),
        Ok(vec![(970, 2), (10, 1), (10, 1), (10, 1)])
    );
    assert_eq!(
        sample(&[10, 10, 10], 2),
        Err(JudgingError::SampleTooSmall {
            sample: 2,
            strata: 3
        })
    );
    assert_eq!(
        sample(&[3, 3], 7),
        Err(JudgingError::SampleExceedsPopulation {
            sample: 7,
            population: 6
        })
    );
    // All of it: a census.
    assert_eq!(sample(&[3, 4], 7), Ok(vec![(3, 3), (4, 4)]));
}

#[test]
fn samples_are_deterministic_and_ignore_input_order() {
    let all = candidates(&[50, 30, 20]);
    let allocation = Allocation::PerStratum(BTreeMap::from([(0, 5), (2, 20)]));
    let a = stratified_sample(all.clone(), &allocation, 42).unwrap();
    let mut reversed = all.clone();
    reversed.reverse();
    assert_eq!(a, stratified_sample(reversed, &allocation, 42).unwrap());
    assert_ne!(a, stratified_sample(all.clone(), &allocation, 43).unwrap());
    assert_eq!(a.len(), 25);
    for s in a.pairs() {
        let expected = if s.stratum == 0 { 5.0 / 50.0 } else { 1.0 };
        assert_eq!(s.inclusion_probability, expected);
        assert_eq!(s.pair.claim, s.stratum);
    }
    // Read back from its parts.
    let drawn = a.pairs().iter().map(|s| (s.pair, s.stratum)).collect();
    assert_eq!(
        Sample::from_parts(a.strata().to_vec(), drawn),
        Ok(a.clone())
    );
    // Errors.
    let too_many = Allocation::PerStratum(BTreeMap::from([(1, 31)]));
    assert_eq!(
        stratified_sample(all.clone(), &too_many, 1),
        Err(JudgingError::SampleExceedsStratum {
            stratum: 1,
            sample: 31,
            population: 30
        })
    );
    let mut twice = all;
    twice.push(Candidate {
        pair: p(0, 0),
        stratum: 2,
    });
    assert!(matches!(
        stratified_sample(twice, &allocation, 1),
        Err(JudgingError::DuplicatePair { .. })
    ));
    let design = vec![StratumDesign {
        stratum: 0,
        population: 10,
        sampled: 2,
    }];
    assert!(matches!(
        Sample::from_parts(design, vec![(p(0, 1), 0)]),
        Err(JudgingError::InconsistentSample(_))
    ));
}

/// A synthetic population: `certain` pairs (a judged depth pool, 40% evidence) and strata
/// beyond it of the given sizes and evidence rates; three systems retrieving evidence and
/// non-evidence at different rates.
struct Population {
    certain: Vec<(Pair<u32, u32>, bool)>,
    candidates: Vec<Candidate<u32, u32>>,
    evidence: HashMap<Pair<u32, u32>, bool>,
    systems: Vec<Vec<Pair<u32, u32>>>,
}

/// The true total evidence and each system's precision, recall and F1.
struct Truth {
    total: f64,
    systems: Vec<[f64; 3]>,
}

/// Strata of a population: (pairs, evidence rate).
/// Moderate strata: a sample of 500 expects 13–18 evidence pairs in each.
const MODERATE: [(u32, f64); 4] = [(400, 0.3), (600, 0.2), (900, 0.12), (1500, 0.06)];
/// Sparse strata: a sample of 200 expects about 5, 4, 2 and 1 evidence pairs in them.
const SPARSE: [(u32, f64); 4] = [(400, 0.15), (600, 0.08), (900, 0.04), (1500, 0.01)];

fn population(strata: &[(u32, f64)]) -> (Population, Truth) {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let mut certain = Vec::new();
    let mut candidates = Vec::new();
    let mut evidence = HashMap::new();
    for doc in 0..300 {
        let y = rng.gen_bool(0.4);
        certain.push((p(0, doc), y));
        evidence.insert(p(0, doc), y);
    }
    for (stratum, &(size, rate)) in strata.iter().enumerate() {
        let claim = stratum as u32 + 1;
        for doc in 0..size {
            let y = rng.gen_bool(rate);
            candidates.push(Candidate {
                pair: p(claim, doc),
                stratum: stratum as u32,
            });
            evidence.insert(p(claim, doc), y);
        }
    }
    // (retrieves evidence, retrieves non-evidence) probabilities.
    let rates = [(0.8, 0.2), (0.5, 0.05), (0.3, 0.3)];
    let mut universe: Vec<(Pair<u32, u32>, bool)> =
        evidence.iter().map(|(&k, &v)| (k, v)).collect();
    universe.sort_unstable();
    let systems: Vec<Vec<Pair<u32, u32>>> = rates
        .iter()
        .map(|&(yes, no)| {
            universe
                .iter()
                .filter(|(_, y)| rng.gen_bool(if *y { yes } else { no }))
                .map(|(pair, _)| *pair)
                .collect()
        })
        .collect();
    let total = evidence.values().filter(|&&y| y).count() as f64;
    let truth_systems = systems
        .iter()
        .map(|retrieved| {
            let hits = retrieved.iter().filter(|pair| evidence[pair]).count() as f64;
            let size = retrieved.len() as f64;
            [hits / size, hits / total, 2.0 * hits / (size + total)]
        })
        .collect();
    (
        Population {
            certain,
            candidates,
            evidence,
            systems,
        },
        Truth {
            total,
            systems: truth_systems,
        },
    )
}

/// Mean error, its standard error, the coverage and the mean width of the intervals of
/// `estimates` of `truth`.
struct Check {
    mean_error: f64,
    standard_error: f64,
    coverage: f64,
    width: f64,
}

impl Check {
    fn of(estimates: &[Estimate], truth: f64) -> Check {
        let n = estimates.len() as f64;
        let errors: Vec<f64> = estimates.iter().map(|e| e.value - truth).collect();
        let mean_error = errors.iter().sum::<f64>() / n;
        let var = errors.iter().map(|e| (e - mean_error).powi(2)).sum::<f64>() / (n - 1.0);
        Check {
            mean_error,
            standard_error: (var / n).sqrt(),
            coverage: estimates.iter().filter(|e| e.covers(truth)).count() as f64 / n,
            width: estimates.iter().map(|e| e.high - e.low).sum::<f64>() / n,
        }
    }

    /// |mean error| ≤ 2 SE of the mean. The seeds are fixed, so this is deterministic; for an
    /// unbiased estimator it would fail by chance 4.6% of the time per check, so the margins
    /// observed (see the tests) matter: the largest is 1.84 SE.
    fn unbiased(&self) -> bool {
        self.mean_error.abs() <= 2.0 * self.standard_error
    }

    /// Unbiased and coverage at least `min_coverage`.
    fn passes(&self, min_coverage: f64) -> bool {
        self.unbiased() && self.coverage >= min_coverage
    }
}

const SAMPLES: u64 = 1_000;

/// One method's estimates over the simulation: the total, then per system precision, recall
/// and F1.
#[derive(Default)]
struct Simulated {
    totals: Vec<Estimate>,
    per_system: Vec<[Vec<Estimate>; 3]>,
}

/// Estimates from `SAMPLES` seeded samples of `size` pairs (proportional allocation), for each
/// of `methods` (the same samples and point estimates; only the intervals differ).
fn simulate(population: &Population, size: usize, methods: &[Method]) -> Vec<Simulated> {
    let mut out: Vec<Simulated> = methods
        .iter()
        .map(|_| Simulated {
            totals: Vec::new(),
            per_system: vec![Default::default(); population.systems.len()],
        })
        .collect();
    for seed in 0..SAMPLES {
        let sample = stratified_sample(
            population.candidates.clone(),
            &Allocation::Proportional { total: size },
            seed,
        )
        .unwrap();
        let estimator = Estimator::new(population.certain.iter().copied(), &sample, |pair| {
            population.evidence.get(pair).copied()
        })
        .unwrap();
        for (&method, simulated) in methods.iter().zip(&mut out) {
            simulated.totals.push(estimator.total_evidence_by(method));
            for (system, retrieved) in population.systems.iter().enumerate() {
                let e = estimator
                    .system_by(retrieved.iter().copied(), method)
                    .unwrap();
                simulated.per_system[system][0].push(e.precision.unwrap());
                simulated.per_system[system][1].push(e.recall.unwrap());
                simulated.per_system[system][2].push(e.f1.unwrap());
            }
        }
    }
    out
}

/// Prints and returns the checks: total, then (system, measure) in order.
fn report(label: &str, truth: &Truth, simulated: &Simulated) -> Vec<Check> {
    let totals = &simulated.totals;
    let total = Check::of(totals, truth.total);
    let mean_se = totals.iter().map(|e| e.standard_error).sum::<f64>() / SAMPLES as f64;
    eprintln!(
        "[{label}] total evidence {}: mean error {:+.3} ± {:.3} (SE of the mean), 95% CI \
         coverage {:.3}, mean width {:.2} (sd of estimates {:.3}, mean reported SE {mean_se:.3})",
        truth.total,
        total.mean_error,
        total.standard_error,
        total.coverage,
        total.width,
        total.standard_error * (SAMPLES as f64).sqrt()
    );
    let mut checks = vec![total];
    for (system, estimates) in simulated.per_system.iter().enumerate() {
        for (m, name) in ["precision", "recall", "F1"].iter().enumerate() {
            let check = Check::of(&estimates[m], truth.systems[system][m]);
            let mean_se =
                estimates[m].iter().map(|e| e.standard_error).sum::<f64>() / SAMPLES as f64;
            eprintln!(
                "[{label}] system {system} {name} {:.4}: mean error {:+.5} ± {:.5}, coverage {:.3}, \
                 mean width {:.4} (sd of estimates {:.4}, mean reported SE {mean_se:.4})",
                truth.systems[system][m],
                check.mean_error,
                check.standard_error,
                check.coverage,
                check.width,
                check.standard_error * (SAMPLES as f64).sqrt()
            );
            checks.push(check);
        }
    }
    checks
}

/// A simulated design: its name, its strata and the sample size.
struct Design {
    name: &'static str,
    strata: &'static [(u32, f64)],
    size: usize,
}

/// Moderate strata with a sample of 500, sparse strata with a sample of 200.
const DESIGNS: [Design; 2] = [
    Design {
        name: "moderate",
        strata: &MODERATE,
        size: 500,
    },
    Design {
        name: "sparse",
        strata: &SPARSE,
        size: 200,
    },
];

/// Every interval method of `estimate::interval` on the same 1,000 samples of each design:
/// coverage and mean width per measure, printed (`--nocapture`) to choose the method by.
/// Observed lowest coverage over the ten measures, moderate / sparse: Wald 0.937 / 0.780,
/// logit 0.944 / 0.798, Wilson with an effective sample size 0.944 / 0.957, the same truncated
/// at the draws 0.949 / 0.958, Agresti–Coull 0.944 / 0.960. Of the three that reach the
/// nominal rate in both designs Wilson's intervals are the narrowest (sparse system 1
/// precision: mean width 0.359 against 0.365 truncated, 0.366 Agresti–Coull and Wald's
/// 0.405; the truncated intervals are up to 22% wider in the moderate design, covering up to
/// 0.984), so it is the method chosen. The normal intervals falling short in the sparse design
/// is asserted, so that design keeps testing the intervals. (Tried once, not run here: samples
/// of 100 from the same two populations, lowest coverage moderate / sparse: Wald 0.850 /
/// 0.529, Wilson 0.927 / 0.940, truncated 0.939 / 0.949.)
#[test]
fn interval_methods_compared() {
    for Design { name, strata, size } in DESIGNS {
        let (population, truth) = population(strata);
        let simulated = simulate(&population, size, &Method::ALL);
        for (method, simulated) in Method::ALL.iter().zip(&simulated) {
            let checks = report(&format!("{name} {method:?}"), &truth, simulated);
            let worst = checks.iter().map(|c| c.coverage).fold(1.0, f64::min);
            eprintln!("[{name} {method:?}] lowest coverage {worst:.3}");
            if (name, *method) == ("sparse", Method::Wald) {
                assert!(
                    worst < 0.93,
                    "the sparse design no longer tests the intervals"
                );
            }
        }
    }
}

/// Over 1,000 seeded samples of each design, the total evidence and every system's precision,
/// recall and F1 are unbiased (mean error within 2 standard errors of the mean) and their 95%
/// intervals (Wilson with an effective sample size, [`Method::CHOSEN`]) cover the truth at
/// least 93% of the time (Monte-Carlo SE of a 95% coverage: 0.007).
///
/// Observed (`--nocapture`), coverage of systems 0, 1, 2:
///
/// - Moderate strata (13–18 evidence pairs expected in each stratum's draw of a sample of
///   500): total evidence (truth 545) mean error +1.19 ± 1.42, coverage 0.951; precision
///   0.949, 0.962, 0.958; recall 0.962, 0.950, 0.960; F1 0.944, 0.956, 0.965 (normal
///   intervals: 0.937–0.956).
/// - Sparse strata (about 5, 4, 2 and 1 evidence pairs expected in the strata's draws of a
///   sample of 200): total evidence (truth 260) mean error +0.71 ± 1.44, coverage 0.961;
///   precision 0.960, 0.962, 0.957; recall 0.964, 0.972, 0.961; F1 0.962, 0.970, 0.960
///   (normal intervals: 0.780–0.954).
///
/// The ratios' mean errors are within 1.84 standard errors (moderate system 1's F1,
/// −0.0031 ± 0.0017), the largest; the point estimates do not depend on the interval method.
///
/// `wrong_estimators_fail_the_same_checks` shows the checks can fail.
#[test]
fn estimates_are_unbiased_and_intervals_cover() {
    assert_eq!(Method::CHOSEN, Method::Wilson);
    for Design { name, strata, size } in DESIGNS {
        let (population, truth) = population(strata);
        let simulated = simulate(&population, size, &[Method::CHOSEN]);
        let checks = report(name, &truth, &simulated[0]);
        for (i, check) in checks.iter().enumerate() {
            // 0: total; then precision, recall, F1 per system.
            assert!(check.passes(0.93), "{name} check {i}");
        }
    }
}

/// The public estimates are those of the chosen method.
#[test]
fn public_estimates_use_the_chosen_method() {
    let (population, _) = population(&SPARSE);
    let sample = stratified_sample(
        population.candidates.clone(),
        &Allocation::Proportional { total: 200 },
        7,
    )
    .unwrap();
    let estimator = Estimator::new(population.certain.iter().copied(), &sample, |pair| {
        population.evidence.get(pair).copied()
    })
    .unwrap();
    assert_eq!(
        estimator.total_evidence(),
        estimator.total_evidence_by(Method::CHOSEN)
    );
    let retrieved = || population.systems[0].iter().copied();
    assert_eq!(
        estimator.system(retrieved()),
        estimator.system_by(retrieved(), Method::CHOSEN)
    );
    // Point estimates and standard errors do not depend on the method.
    let wald = estimator.system_by(retrieved(), Method::Wald).unwrap();
    let chosen = estimator.system(retrieved()).unwrap();
    for (a, b) in [
        (wald.precision, chosen.precision),
        (wald.recall, chosen.recall),
        (wald.f1, chosen.f1),
    ] {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!((a.value, a.standard_error), (b.value, b.standard_error));
    }
}

/// The checks above fail for wrong estimators: weights `N_h/(n_h + 2)` instead of `N_h/n_h`
/// (an off-by-two, biased low by about 2/n_h of the sampled evidence), and the right
/// estimate with ±1·SE intervals instead of ±1.96·SE (coverage ~68%).
#[test]
fn wrong_estimators_fail_the_same_checks() {
    let (population, truth) = population(&MODERATE);
    let mut biased = Vec::new();
    let mut narrow = Vec::new();
    for seed in 0..SAMPLES {
        let sample = stratified_sample(
            population.candidates.clone(),
            &Allocation::Proportional { total: 500 },
            seed,
        )
        .unwrap();
        let certain = population.certain.iter().filter(|(_, y)| *y).count() as f64;
        let mut wrong = certain;
        for design in sample.strata() {
            let hits = sample
                .pairs()
                .iter()
                .filter(|s| s.stratum == design.stratum && population.evidence[&s.pair])
                .count() as f64;
            wrong += design.population as f64 / (design.sampled as f64 + 2.0) * hits;
        }
        biased.push(Estimate {
            value: wrong,
            standard_error: 0.0,
            low: wrong,
            high: wrong,
        });
        let estimator = Estimator::new(population.certain.iter().copied(), &sample, |pair| {
            population.evidence.get(pair).copied()
        })
        .unwrap();
        let right = estimator.total_evidence();
        narrow.push(Estimate {
            low: right.value - right.standard_error,
            high: right.value + right.standard_error,
            ..right
        });
    }
    let biased = Check::of(&biased, truth.total);
    let narrow = Check::of(&narrow, truth.total);
    eprintln!(
        "[wrong] weights N_h/(n_h+2): mean error {:+.3} ± {:.3}; ±1 SE intervals: coverage {:.3}",
        biased.mean_error, biased.standard_error, narrow.coverage
    );
    assert!(!biased.unbiased());
    assert!(!narrow.passes(0.93));
}

#[test]
fn estimator_refuses_what_it_cannot_estimate() {
    let sample = stratified_sample(
        candidates(&[10, 10]),
        &Allocation::PerStratum(BTreeMap::from([(0, 3)])),
        1,
    )
    .unwrap();
    let yes = |_: &Pair<u32, u32>| Some(true);
    assert_eq!(
        Estimator::new([], &sample, yes).err(),
        Some(JudgingError::UnsampledStratum {
            stratum: 1,
            population: 10
        })
    );
    let sample =
        stratified_sample(candidates(&[10]), &Allocation::Proportional { total: 3 }, 1).unwrap();
    let drawn = sample.pairs()[0].pair;
    assert!(matches!(
        Estimator::new([(drawn, true)], &sample, yes),
        Err(JudgingError::CertainAndSampled { .. })
    ));
    assert!(matches!(
        Estimator::new([], &sample, |_| None),
        Err(JudgingError::UnjudgedSample { .. })
    ));
    let estimator = Estimator::new([(p(9, 9), true)], &sample, yes).unwrap();
    assert_eq!(estimator.universe(), 11);
    assert!(matches!(
        estimator.system([p(9, 9), p(9, 9)]),
        Err(JudgingError::DuplicatePair { .. })
    ));
    // A census: no sampling error.
    let census =
        stratified_sample(candidates(&[4]), &Allocation::Proportional { total: 4 }, 1).unwrap();
    let estimator = Estimator::new([], &census, |pair| Some(pair.doc % 2 == 0)).unwrap();
    let total = estimator.total_evidence();
    assert_eq!((total.value, total.standard_error), (2.0, 0.0));
    let system = estimator.system([p(0, 0), p(0, 1)]).unwrap();
    assert_eq!(system.precision.unwrap().value, 0.5);
    assert_eq!(system.recall.unwrap().value, 0.5);
    assert_eq!(system.f1.unwrap().value, 0.5);
    let empty = estimator.system([]).unwrap();
    assert_eq!(empty.precision, None);
    assert_eq!(empty.f1.unwrap().value, 0.0);
}
