//! Who annotates what: seeded, balanced random assignment of pairs to active annotators.
//!
//! Each item goes to an eligible active annotator with the fewest open assignments (all stages,
//! existing ones included), chosen at random among the tied ones by a ChaCha8 generator seeded
//! from the project's seed, the pool entry and the stage. The result is deterministic for a seed,
//! whatever the order of the annotator list. Eligibility: anyone for the first pass; never the
//! first annotator for the second pass; one of the two annotators for adjudication (when neither
//! is active the item is refused, for a lead to adjudicate).
//!
//! Balance: after [`assign_first`], every annotator who received a pair has at most one more
//! open assignment than the least loaded one; so when the new pairs are enough to bring everyone
//! up to the most loaded annotator's count, the loads differ by at most 1.

use super::keys::{AnnotatorId, PoolEntryId};
use super::vocab::Stage;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// Open assignments per annotator; absent means none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loads(BTreeMap<AnnotatorId, usize>);

impl Loads {
    /// No open assignments.
    pub fn new() -> Loads {
        Loads::default()
    }

    /// `annotator`'s open assignments.
    pub fn get(&self, annotator: AnnotatorId) -> usize {
        self.0.get(&annotator).copied().unwrap_or(0)
    }

    /// Counts one more open assignment for `annotator`.
    pub fn add(&mut self, annotator: AnnotatorId) {
        *self.0.entry(annotator).or_insert(0) += 1;
    }

    /// Every annotator with a count, ascending by id.
    pub fn iter(&self) -> impl Iterator<Item = (AnnotatorId, usize)> + '_ {
        self.0.iter().map(|(&a, &n)| (a, n))
    }
}

impl FromIterator<(AnnotatorId, usize)> for Loads {
    /// Counts per annotator; repeated annotators are summed.
    fn from_iter<I: IntoIterator<Item = (AnnotatorId, usize)>>(counts: I) -> Loads {
        let mut loads = Loads::new();
        for (annotator, n) in counts {
            *loads.0.entry(annotator).or_insert(0) += n;
        }
        loads
    }
}

/// The work an open item asks for, with who may do it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Work {
    /// A first pass: anyone.
    First,
    /// A second pass: anyone but the first annotator.
    Second { first: AnnotatorId },
    /// A re-annotation after a disagreement: anyone who gave neither label.
    Reannotation {
        first: AnnotatorId,
        second: AnnotatorId,
    },
    /// An adjudication: one of the two annotators (or a lead, outside assignment).
    Adjudication {
        first: AnnotatorId,
        second: AnnotatorId,
    },
}

impl Work {
    /// The stage of the assignment.
    pub fn stage(&self) -> Stage {
        match self {
            Work::First => Stage::First,
            Work::Second { .. } | Work::Reannotation { .. } => Stage::Second,
            Work::Adjudication { .. } => Stage::Adjudication,
        }
    }

    fn allows(&self, annotator: AnnotatorId) -> bool {
        match *self {
            Work::First => true,
            Work::Second { first } => annotator != first,
            Work::Reannotation { first, second } => annotator != first && annotator != second,
            Work::Adjudication { first, second } => annotator == first || annotator == second,
        }
    }

    fn nobody(&self, entry: PoolEntryId) -> AssignError {
        match *self {
            Work::First => AssignError::NoActiveAnnotator(entry),
            Work::Second { first } => AssignError::NoOtherAnnotator { entry, first },
            Work::Reannotation { first, second } => AssignError::NoFreshAnnotator {
                entry,
                first,
                second,
            },
            Work::Adjudication { first, second } => AssignError::NoAdjudicator {
                entry,
                first,
                second,
            },
        }
    }
}

/// A pool pair waiting for its first pass.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PoolPair {
    pub entry: PoolEntryId,
    /// `pool_entries.entry_depth`: shallower pairs are assigned and queued first.
    pub entry_depth: u32,
}

/// An open item of a deactivated annotator, to hand to someone else.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct OpenItem {
    pub entry: PoolEntryId,
    pub entry_depth: u32,
    pub work: Work,
}

/// One new assignment.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Assigned {
    pub entry: PoolEntryId,
    pub stage: Stage,
    pub annotator: AnnotatorId,
}

/// What became of one item in [`reassign`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reassigned {
    pub entry: PoolEntryId,
    pub stage: Stage,
    /// The new annotator, or why nobody active may take it.
    pub outcome: Result<AnnotatorId, AssignError>,
}

/// Why an item cannot be assigned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignError {
    #[error("no active annotator to assign {0} to")]
    NoActiveAnnotator(PoolEntryId),
    #[error("{entry} needs a second annotator other than {first}, who gave the first pass, but no other annotator is active")]
    NoOtherAnnotator {
        entry: PoolEntryId,
        first: AnnotatorId,
    },
    #[error("{entry} needs a re-annotation by someone other than {first} and {second}, but no such annotator is active")]
    NoFreshAnnotator {
        entry: PoolEntryId,
        first: AnnotatorId,
        second: AnnotatorId,
    },
    #[error(
        "neither annotator of {entry} ({first}, {second}) is active; a lead must adjudicate it"
    )]
    NoAdjudicator {
        entry: PoolEntryId,
        first: AnnotatorId,
        second: AnnotatorId,
    },
    #[error("{0} appears more than once among the pairs to assign")]
    DuplicateEntry(PoolEntryId),
}

/// A seed for `(seed, entry, stage)`: splitmix64 steps, so nearby inputs give unrelated seeds.
fn item_seed(seed: u64, entry: PoolEntryId, stage: Stage) -> u64 {
    fn splitmix64(x: u64) -> u64 {
        let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    let stage_tag = match stage {
        Stage::First => 1,
        Stage::Second => 2,
        Stage::Adjudication => 3,
        Stage::Final => 4,
    };
    splitmix64(splitmix64(splitmix64(seed) ^ entry.0.cast_unsigned()) ^ stage_tag)
}

/// The active annotators, ascending and distinct, so that results do not depend on list order.
fn roster(annotators: &[AnnotatorId], without: Option<AnnotatorId>) -> Vec<AnnotatorId> {
    let set: BTreeSet<AnnotatorId> = annotators
        .iter()
        .copied()
        .filter(|&a| Some(a) != without)
        .collect();
    set.into_iter().collect()
}

/// The least loaded eligible annotator on `roster`, at random among ties; counts the assignment.
fn pick(
    entry: PoolEntryId,
    work: Work,
    roster: &[AnnotatorId],
    loads: &mut Loads,
    seed: u64,
) -> Result<AnnotatorId, AssignError> {
    let eligible = roster.iter().copied().filter(|&a| work.allows(a));
    let least = eligible
        .clone()
        .map(|a| loads.get(a))
        .min()
        .ok_or_else(|| work.nobody(entry))?;
    let tied: Vec<AnnotatorId> = eligible.filter(|&a| loads.get(a) == least).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(item_seed(seed, entry, work.stage()));
    let chosen = *tied.choose(&mut rng).ok_or_else(|| work.nobody(entry))?;
    loads.add(chosen);
    Ok(chosen)
}

/// Assigns each pair's first pass to one active annotator, shallowest entry depth first (then
/// by pool entry), and counts the new assignments in `loads`. The result is in that order, which
/// is also the order of the annotators' queues. Refused, with `loads` untouched, when a pair is
/// given twice or there are pairs but no active annotator.
pub fn assign_first(
    pairs: &[PoolPair],
    annotators: &[AnnotatorId],
    loads: &mut Loads,
    seed: u64,
) -> Result<Vec<Assigned>, AssignError> {
    let mut ordered = pairs.to_vec();
    ordered.sort_by_key(|p| (p.entry, p.entry_depth));
    let twice = ordered.windows(2).find_map(|w| match w {
        [a, b] if a.entry == b.entry => Some(a.entry),
        _ => None,
    });
    if let Some(entry) = twice {
        return Err(AssignError::DuplicateEntry(entry));
    }
    ordered.sort_by_key(|p| (p.entry_depth, p.entry));
    let roster = roster(annotators, None);
    if let (Some(pair), true) = (ordered.first(), roster.is_empty()) {
        return Err(AssignError::NoActiveAnnotator(pair.entry));
    }
    ordered
        .iter()
        .map(|pair| {
            pick(pair.entry, Work::First, &roster, loads, seed).map(|annotator| Assigned {
                entry: pair.entry,
                stage: Stage::First,
                annotator,
            })
        })
        .collect()
}

/// The second annotator of `entry`: the least loaded active annotator other than `first`.
/// Refused when `first` is the only active annotator.
pub fn assign_second(
    entry: PoolEntryId,
    first: AnnotatorId,
    annotators: &[AnnotatorId],
    loads: &mut Loads,
    seed: u64,
) -> Result<AnnotatorId, AssignError> {
    pick(
        entry,
        Work::Second { first },
        &roster(annotators, None),
        loads,
        seed,
    )
}

/// The adjudicator of `entry`: the less loaded of its two annotators who is active. Refused when
/// neither is; a lead adjudicates such pairs (see [`super::protocol::check_submission`]).
/// A fresh annotator (neither `first` nor `second`) for a disagreement's re-annotation.
pub fn assign_reannotation(
    entry: PoolEntryId,
    first: AnnotatorId,
    second: AnnotatorId,
    annotators: &[AnnotatorId],
    loads: &mut Loads,
    seed: u64,
) -> Result<AnnotatorId, AssignError> {
    pick(
        entry,
        Work::Reannotation { first, second },
        &roster(annotators, None),
        loads,
        seed,
    )
}

pub fn assign_adjudication(
    entry: PoolEntryId,
    first: AnnotatorId,
    second: AnnotatorId,
    annotators: &[AnnotatorId],
    loads: &mut Loads,
    seed: u64,
) -> Result<AnnotatorId, AssignError> {
    pick(
        entry,
        Work::Adjudication { first, second },
        &roster(annotators, None),
        loads,
        seed,
    )
}

/// Hands the open items of `from` (being deactivated) to the other active annotators, by the
/// same rules (never the first annotator for a second pass), shallowest first. Items nobody
/// active may take come back with their reason; the others are counted in `loads`.
pub fn reassign(
    from: AnnotatorId,
    items: &[OpenItem],
    annotators: &[AnnotatorId],
    loads: &mut Loads,
    seed: u64,
) -> Vec<Reassigned> {
    let roster = roster(annotators, Some(from));
    let mut ordered = items.to_vec();
    ordered.sort_by_key(|item| (item.entry_depth, item.entry, item.work.stage()));
    ordered
        .iter()
        .map(|item| Reassigned {
            entry: item.entry,
            stage: item.work.stage(),
            outcome: pick(item.entry, item.work, &roster, loads, seed),
        })
        .collect()
}
