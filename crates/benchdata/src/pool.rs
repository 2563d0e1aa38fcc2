//! Benchmark of the large case: 4 pooled systems × 2.5 million pairs (10,000 claims × 250
//! docs), `Confidence` strategy, depth 250 (and the same data per claim, depth 20). Data from
//! a seeded RNG.

use crate::machine::peak_rss_kib;
use domain::label::Label;
use domain::pool::Pair;
use domain::pool::PoolError;
use domain::pool::Ranking;
use domain::pool::Strategy;
use domain::pool::{Role, Score, ScoredPair, SystemRun};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

/// Shape of the generated data.
#[derive(Clone, Copy, Debug)]
pub struct BenchShape {
    pub systems: u32,
    pub claims: u32,
    pub docs_per_claim: u32,
    pub strategy: Strategy,
    pub depth: u32,
    pub seed: u64,
}

impl BenchShape {
    /// The large case of the pooling issue.
    pub const LARGE: BenchShape = BenchShape {
        systems: 4,
        claims: 10_000,
        docs_per_claim: 250,
        strategy: Strategy::Confidence,
        depth: 250,
        seed: 2022,
    };

    /// The same data pooled TREC-style, each claim's top 20.
    pub const LARGE_PER_CLAIM: BenchShape = BenchShape {
        strategy: Strategy::PerClaim,
        depth: 20,
        ..BenchShape::LARGE
    };
}

/// Times and sizes measured by [`run`].
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub shape: BenchShape,
    pub pairs_per_system: usize,
    /// Generating the scored pairs.
    pub generate: Duration,
    /// `SystemRun::new` (duplicate check) for every system.
    pub check: Duration,
    /// `Ranking::add` (the one sort) for every system.
    pub rank: Duration,
    /// `Ranking::pool` at the depth, model ranks included.
    pub pool: Duration,
    /// `Ranking::preview` at five depths from the depth on, a tenth of it apart.
    pub preview: Duration,
    /// `Pool::stats` and `Ranking::prior_evidence_stats`.
    pub stats: Duration,
    pub pool_size: usize,
    /// Peak resident set (VmHWM), KiB, if /proc/self/status tells.
    pub peak_rss_kib: Option<u64>,
}

/// Distinct docs per claim come from this many docs.
const CORPUS: u32 = 1_000_000;

/// One system's pairs: each claim gets `docs_per_claim` docs from a window that shifts by 40
/// per system (so systems share most candidates), retrieval rank = position (10% missing).
/// Scores mix a relevance shared by all systems with the system's own noise, in steps of
/// 1/10,000 (so ties occur).
pub fn generate_run(
    shape: BenchShape,
    system: u32,
    rng: &mut ChaCha8Rng,
) -> Vec<ScoredPair<u32, u32>> {
    let mut pairs = Vec::with_capacity(shape.claims as usize * shape.docs_per_claim as usize);
    for claim in 0..shape.claims {
        let base = claim.wrapping_mul(7_919) % CORPUS;
        for position in 0..shape.docs_per_claim {
            let doc = (base + position + 40 * system) % CORPUS;
            let retrieval_rank = (rng.gen_range(0..10) != 0).then_some(position + 1);
            let noise: f64 = rng.gen();
            let score = (9_000.0 * relevance(claim, doc) + 1_000.0 * noise).round() / 10_000.0;
            // Scores in [0, 1] are finite.
            if let Ok(score) = Score::new(score) {
                pairs.push(ScoredPair::new(claim, doc, score, retrieval_rank));
            }
        }
    }
    pairs
}

/// A relevance in [0, 1) that every system sees: a hash of the pair, cubed so few pairs are
/// relevant.
fn relevance(claim: u32, doc: u32) -> f64 {
    let mut x = (u64::from(claim) << 32 | u64::from(doc)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    // The top 53 bits, as a fraction of 2^53: exact.
    let unit = (x >> 11) as f64 / (1_u64 << 53) as f64;
    unit * unit * unit
}

/// Runs the benchmark on `shape`.
pub fn run(shape: BenchShape) -> Result<BenchReport, PoolError> {
    let mut rng = ChaCha8Rng::seed_from_u64(shape.seed);
    let (mut generate, mut check, mut rank) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut ranking = Ranking::new(shape.strategy);
    let mut pairs_per_system = 0;
    for system in 0..shape.systems {
        let start = Instant::now();
        let pairs = generate_run(shape, system, &mut rng);
        pairs_per_system = pairs.len();
        generate += start.elapsed();
        let start = Instant::now();
        let run = SystemRun::new(format!("system-{system}"), Role::Pooled, pairs)?;
        check += start.elapsed();
        let start = Instant::now();
        ranking.add(run)?;
        rank += start.elapsed();
    }

    let start = Instant::now();
    let pool = ranking.pool(shape.depth);
    let pool_time = start.elapsed();

    let step = (shape.depth / 10).max(1);
    let depths: Vec<u32> = (0..5).map(|i| shape.depth + step * i).collect();
    let start = Instant::now();
    let steps = ranking.preview(&depths, &HashSet::<Pair<u32, u32>>::new());
    let preview = start.elapsed();

    // Label every other pooled pair; one prior evidence pair per claim.
    let labels: HashMap<Pair<u32, u32>, Label> = pool
        .pairs()
        .iter()
        .step_by(2)
        .zip(Label::ALL.iter().cycle())
        .map(|(p, &l)| (p.pair, l))
        .collect();
    let prior: HashSet<Pair<u32, u32>> = (0..shape.claims)
        .map(|claim| Pair::new(claim, (claim.wrapping_mul(7_919) + 100) % CORPUS))
        .collect();
    let start = Instant::now();
    let table_b = pool.stats(&labels);
    let table_c = ranking.prior_evidence_stats(&prior, shape.depth, 100);
    let stats = start.elapsed();
    // Keep the results alive up to here so no step is optimised away.
    let _ = (steps.len(), table_b.pool_size, table_c.in_pool);

    Ok(BenchReport {
        shape,
        pairs_per_system,
        generate,
        check,
        rank,
        pool: pool_time,
        preview,
        stats,
        pool_size: pool.len(),
        peak_rss_kib: peak_rss_kib(),
    })
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.shape;
        writeln!(
            f,
            "{} systems x {} pairs ({} claims x {} docs), {:?}, depth {}",
            s.systems, self.pairs_per_system, s.claims, s.docs_per_claim, s.strategy, s.depth
        )?;
        writeln!(f, "generate          {:>9.3?}", self.generate)?;
        writeln!(f, "check runs        {:>9.3?}", self.check)?;
        writeln!(f, "rank (sort)       {:>9.3?}", self.rank)?;
        writeln!(
            f,
            "pool+model_ranks  {:>9.3?}  ({} pairs)",
            self.pool, self.pool_size
        )?;
        writeln!(f, "preview (5 depths){:>9.3?}", self.preview)?;
        writeln!(f, "stats (2b + 2c)   {:>9.3?}", self.stats)?;
        writeln!(
            f,
            "check+rank+pool   {:>9.3?}",
            self.check + self.rank + self.pool
        )?;
        match self.peak_rss_kib {
            Some(kib) => write!(f, "peak RSS          {:>6} MiB", kib / 1024),
            None => write!(f, "peak RSS          unknown"),
        }
    }
}
