//! The pool equals the naive pool on random inputs, for both strategies.

use super::naive;
use super::{as_naive, random_systems, to_ranking, Shape, STRATEGIES};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn pool_equals_naive_pool_on_random_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut nonempty = [0, 0];
    for _ in 0..300 {
        let shape = Shape {
            systems: rng.gen_range(1..=4),
            claims: rng.gen_range(1..=5),
            docs: rng.gen_range(1..=8),
            coverage: rng.gen_range(0.3..1.0),
        };
        let systems = random_systems(&mut rng, shape);
        for (i, (strategy, per_claim)) in STRATEGIES.into_iter().enumerate() {
            let ranking = to_ranking(&systems, strategy);
            for depth in [0, 1, 2, rng.gen_range(3..=12), 50] {
                let pool = ranking.pool(depth);
                assert_eq!(
                    as_naive(&pool),
                    naive::pool(&systems, per_claim, depth),
                    "{strategy:?} depth {depth} systems {systems:?}"
                );
                nonempty[i] += usize::from(!pool.is_empty());
            }
        }
    }
    // The comparison was not vacuous.
    assert!(nonempty.iter().all(|&n| n > 500), "{nonempty:?}");
}

#[test]
fn ranked_runs_give_the_naive_ranks() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for _ in 0..200 {
        let shape = Shape {
            systems: 1,
            claims: rng.gen_range(1..=4),
            docs: rng.gen_range(1..=10),
            coverage: 0.8,
        };
        let systems = random_systems(&mut rng, shape);
        for (strategy, per_claim) in STRATEGIES {
            let ranking = to_ranking(&systems, strategy);
            let mut fast: Vec<((u32, u32), u32)> = ranking.runs()[0]
                .ranked()
                .map(|(rank, p)| ((p.pair.claim, p.pair.doc), rank))
                .collect();
            let mut slow: Vec<((u32, u32), u32)> = systems[0]
                .pairs
                .iter()
                .zip(naive::ranks(&systems[0], per_claim))
                .map(|(p, rank)| ((p.0, p.1), rank))
                .collect();
            fast.sort_unstable();
            slow.sort_unstable();
            assert_eq!(fast, slow, "{strategy:?}");
        }
    }
}
