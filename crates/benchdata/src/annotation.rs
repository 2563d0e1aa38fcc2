//! Benchmark of assignment and protocol replay at pool scale: `pairs` first passes assigned to
//! `annotators`, every pair's second pass assigned, then every pair's history replayed. Data
//! from a seeded RNG.

use domain::annotation::Stage;
use domain::annotation::{assign_first, assign_second, AssignError, Loads, PoolPair};
use domain::annotation::{AnnotatorId, PoolEntryId};
use domain::annotation::{Judged, PairState, ProtocolError, Verdict};
use domain::label::Label;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// Times measured by [`run`].
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub pairs: usize,
    pub annotators: usize,
    /// `assign_first` of every pair.
    pub assign_first: Duration,
    /// `assign_second` of every pair, one call each.
    pub assign_second: Duration,
    /// `PairState::from_judgments` of every pair's two or three judgments.
    pub replay: Duration,
    /// Pairs final after the replay (all of them: disagreements are adjudicated).
    pub finals: usize,
    /// Highest minus lowest load after both passes.
    pub load_spread: usize,
}

/// Why the benchmark stopped.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Assign(#[from] AssignError),
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
}

/// Runs the benchmark once.
pub fn run(pairs: usize, annotators: i64, seed: u64) -> Result<BenchReport, BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pool: Vec<PoolPair> = (0..pairs)
        .map(|i| PoolPair {
            entry: PoolEntryId(i64::try_from(i).unwrap_or(i64::MAX)),
            entry_depth: rng.gen_range(1..=500),
        })
        .collect();
    let roster: Vec<AnnotatorId> = (1..=annotators).map(AnnotatorId).collect();
    let mut loads = Loads::new();

    let start = Instant::now();
    let firsts = assign_first(&pool, &roster, &mut loads, seed)?;
    let assign_first_time = start.elapsed();

    let start = Instant::now();
    let mut seconds = Vec::with_capacity(firsts.len());
    for first in &firsts {
        seconds.push(assign_second(
            first.entry,
            first.annotator,
            &roster,
            &mut loads,
            seed,
        )?);
    }
    let assign_second_time = start.elapsed();

    let labels = Label::ALL;
    let histories = firsts
        .iter()
        .zip(&seconds)
        .map(|(first, &second)| {
            let pick = |rng: &mut ChaCha8Rng| labels[rng.gen_range(0..labels.len())];
            let mut h = vec![
                Judged::new(
                    Stage::First,
                    Some(first.annotator),
                    Verdict::Label(pick(&mut rng)),
                )?,
                Judged::new(Stage::Second, Some(second), Verdict::Label(pick(&mut rng)))?,
            ];
            h.push(Judged::new(
                Stage::Adjudication,
                Some(second),
                Verdict::Label(pick(&mut rng)),
            )?);
            Ok(h)
        })
        .collect::<Result<Vec<Vec<Judged>>, ProtocolError>>()?;

    let start = Instant::now();
    let mut finals = 0usize;
    for h in &histories {
        // Agreeing pairs are final after two judgments; the third is for the others.
        let two = h.get(..2).unwrap_or(h);
        let state = match PairState::from_judgments(two)? {
            PairState::NeedsAdjudication { .. } => PairState::from_judgments(h)?,
            done => done,
        };
        finals += usize::from(matches!(state, PairState::Final(_)));
    }
    let replay = start.elapsed();

    let counts: Vec<usize> = roster.iter().map(|&a| loads.get(a)).collect();
    let load_spread = counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0);
    Ok(BenchReport {
        pairs,
        annotators: roster.len(),
        assign_first: assign_first_time,
        assign_second: assign_second_time,
        replay,
        finals,
        load_spread,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_benchmark_runs_and_balances() {
        let report = super::run(300, 4, 1).unwrap();
        assert_eq!(
            (report.pairs, report.annotators, report.finals),
            (300, 4, 300)
        );
        assert!(report.load_spread <= 1);
    }
}
