//! The order a system's pairs are ranked in, and a run sorted into that order.

use super::pair::Key;
use super::run::{Role, ScoredPair, SystemRun};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// How a system's pairs are ranked before its top `d` are pooled.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// SciFact-Open (Wadden et al. 2022, §3.1): all pairs of all claims in one list, by score
    /// descending; ties by lower retrieval rank (missing last), then claim, then doc.
    /// Rank = position in that list.
    Confidence,
    /// TREC depth-k: each claim's pairs in the same order as `Confidence`; rank = position
    /// within the claim's list.
    PerClaim,
}

impl Strategy {
    /// The database and command-line spelling: `confidence` or `per-claim`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Confidence => "confidence",
            Strategy::PerClaim => "per-claim",
        }
    }

    /// The order of the ranking: `Less` when `a` ranks before `b`. Total on pairs of one run
    /// (the pair keys end every tie).
    pub fn compare<C: Key, D: Key>(self, a: &ScoredPair<C, D>, b: &ScoredPair<C, D>) -> Ordering {
        match self {
            Strategy::Confidence => by_confidence(a, b),
            Strategy::PerClaim => a
                .pair
                .claim
                .cmp(&b.pair.claim)
                .then_with(|| by_confidence(a, b)),
        }
    }
}

/// Score descending, then retrieval rank ascending (missing last), then claim, then doc.
fn by_confidence<C: Key, D: Key>(a: &ScoredPair<C, D>, b: &ScoredPair<C, D>) -> Ordering {
    b.score
        .total_cmp(a.score)
        .then_with(|| retrieval_key(a).cmp(&retrieval_key(b)))
        .then_with(|| a.pair.cmp(&b.pair))
}

fn retrieval_key<C, D>(p: &ScoredPair<C, D>) -> u64 {
    p.retrieval_rank.map_or(u64::MAX, u64::from)
}

/// A system's run sorted into its strategy's order: the one sort pooling needs.
#[derive(Clone, Debug)]
pub struct RankedRun<C, D> {
    name: String,
    role: Role,
    strategy: Strategy,
    /// Sorted by `strategy.compare`.
    pairs: Vec<ScoredPair<C, D>>,
}

impl<C: Key, D: Key> RankedRun<C, D> {
    /// Sorts `run` (in place, no copy) into `strategy`'s order.
    pub fn new(run: SystemRun<C, D>, strategy: Strategy) -> Self {
        let (name, role, mut pairs) = run.into_parts();
        // The order is total and a run holds each pair once, so the unstable sort is
        // deterministic.
        pairs.sort_unstable_by(|a, b| strategy.compare(a, b));
        RankedRun {
            name,
            role,
            strategy,
            pairs,
        }
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Pooled or evaluation-only.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The strategy the run is sorted by.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Number of pairs the system scored.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether the system scored no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Every pair with its 1-based rank, in rank order (for `PerClaim`, claim by claim).
    pub fn ranked(&self) -> impl Iterator<Item = (u32, &ScoredPair<C, D>)> + '_ {
        let per_claim = self.strategy == Strategy::PerClaim;
        let mut current: Option<C> = None;
        let mut rank: u32 = 0;
        self.pairs.iter().map(move |p| {
            if per_claim && current != Some(p.pair.claim) {
                current = Some(p.pair.claim);
                rank = 0;
            }
            // A run holds at most u32::MAX pairs (checked by `SystemRun::new`).
            rank += 1;
            (rank, p)
        })
    }

    /// The pairs of rank at most `depth`, with their ranks.
    pub fn top(&self, depth: u32) -> impl Iterator<Item = (u32, &ScoredPair<C, D>)> + '_ {
        // Under `Confidence` ranks rise along the list, so only a prefix is read.
        let read = match self.strategy {
            Strategy::Confidence => usize::try_from(depth).unwrap_or(usize::MAX),
            Strategy::PerClaim => self.pairs.len(),
        };
        self.ranked()
            .take(read)
            .filter(move |&(rank, _)| rank <= depth)
    }
}
