//! The systems of one collection, each sorted once into the pooling order.

use super::error::PoolError;
use super::order::{RankedRun, Strategy};
use super::pair::Key;
use super::run::{Role, SystemRun};

/// Every system of a collection, ranked under one strategy, with distinct names.
///
/// Built once (one sort per system); pools at any depth, previews, growth and statistics
/// then only read it.
#[derive(Clone, Debug)]
pub struct Ranking<C, D> {
    strategy: Strategy,
    runs: Vec<RankedRun<C, D>>,
}

impl<C: Key, D: Key> Ranking<C, D> {
    /// An empty ranking under `strategy`.
    pub fn new(strategy: Strategy) -> Self {
        Ranking {
            strategy,
            runs: Vec::new(),
        }
    }

    /// Ranks every run of `runs`, in order. Fails if two share a name.
    pub fn from_runs(
        strategy: Strategy,
        runs: impl IntoIterator<Item = SystemRun<C, D>>,
    ) -> Result<Self, PoolError> {
        let mut ranking = Ranking::new(strategy);
        for run in runs {
            ranking.add(run)?;
        }
        Ok(ranking)
    }

    /// Sorts `run` and adds it; returns its system index (used by [`super::ModelRank`]).
    /// Fails if a system of that name is already there.
    pub fn add(&mut self, run: SystemRun<C, D>) -> Result<usize, PoolError> {
        if self.runs.iter().any(|r| r.name() == run.name()) {
            return Err(PoolError::DuplicateSystem(run.name().to_owned()));
        }
        self.runs.push(RankedRun::new(run, self.strategy));
        Ok(self.runs.len() - 1)
    }

    /// The strategy every run is ranked by.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The ranked runs; a run's position is its system index.
    pub fn runs(&self) -> &[RankedRun<C, D>] {
        &self.runs
    }

    /// The pooled runs with their system indexes.
    pub fn pooled(&self) -> impl Iterator<Item = (usize, &RankedRun<C, D>)> + '_ {
        self.runs
            .iter()
            .enumerate()
            .filter(|(_, run)| run.role() == Role::Pooled)
    }
}
