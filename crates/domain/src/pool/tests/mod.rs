//! Tests of pooling against a naive second implementation ([`naive`]) and hand counts.

mod growth;
mod hand;
mod naive;
mod random;
mod real;
mod stats;

use super::{Pool, Ranking, Role, Score, ScoredPair, Strategy, SystemRun};
use naive::{NaiveEntry, NaiveSystem};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// How big a random collection is.
#[derive(Clone, Copy)]
struct Shape {
    systems: usize,
    claims: u32,
    docs: u32,
    /// Share of the claim × doc grid a system scores.
    coverage: f64,
}

/// Random systems with many ties: scores from a few values (0.0 and -0.0 among them) or, for
/// some systems, continuous; retrieval ranks from a few values or missing; random roles.
fn random_systems(rng: &mut ChaCha8Rng, shape: Shape) -> Vec<NaiveSystem> {
    const SCORES: [f64; 6] = [1.0, 0.5, 0.25, 0.0, -0.0, -1.5];
    (0..shape.systems)
        .map(|s| {
            let continuous = rng.gen_bool(0.2);
            let mut pairs = Vec::new();
            for claim in 0..shape.claims {
                for doc in 0..shape.docs {
                    if rng.gen_bool(shape.coverage) {
                        let score = if continuous {
                            rng.gen_range(-1.0..1.0)
                        } else {
                            *SCORES.choose(rng).unwrap()
                        };
                        let rank = if rng.gen_bool(0.3) {
                            None
                        } else {
                            Some(rng.gen_range(1..=4))
                        };
                        pairs.push((claim, doc, score, rank));
                    }
                }
            }
            pairs.shuffle(rng);
            NaiveSystem {
                name: format!("sys{s}"),
                pooled: rng.gen_bool(0.75),
                pairs,
            }
        })
        .collect()
}

fn to_run(system: &NaiveSystem) -> SystemRun<u32, u32> {
    let role = if system.pooled {
        Role::Pooled
    } else {
        Role::EvaluationOnly
    };
    let pairs = system
        .pairs
        .iter()
        .map(|&(c, d, s, r)| ScoredPair::new(c, d, Score::new(s).unwrap(), r))
        .collect();
    SystemRun::new(system.name.clone(), role, pairs).unwrap()
}

fn to_ranking(systems: &[NaiveSystem], strategy: Strategy) -> Ranking<u32, u32> {
    Ranking::from_runs(strategy, systems.iter().map(to_run)).unwrap()
}

/// The pool in the naive implementation's shape.
fn as_naive(pool: &Pool<u32, u32>) -> BTreeMap<(u32, u32), NaiveEntry> {
    pool.pairs()
        .iter()
        .map(|p| {
            let ranks = p.model_ranks.iter().map(|m| (m.system, m.rank)).collect();
            (
                (p.pair.claim, p.pair.doc),
                (p.entry_depth, p.found_by, ranks),
            )
        })
        .collect()
}

const STRATEGIES: [(Strategy, bool); 2] =
    [(Strategy::Confidence, false), (Strategy::PerClaim, true)];
