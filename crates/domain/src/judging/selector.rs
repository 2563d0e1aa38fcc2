//! The stateful chooser: given the pooled systems' rankings and the labels so far, which pair
//! to judge next.
//!
//! # The model: an order replayed over the labels known
//!
//! A selector plays its [`Order`] over the pooled rankings. Each step the order picks one
//! unused pair (for the system orders, the top unused pair of the system it picks); if the
//! pair is labelled already the step uses that label at no cost and the order goes on;
//! otherwise the pair is the proposal, [`Selector::next_pair`] returns it (again and again)
//! until a label for it is [`Selector::record`]ed. A label recorded for any other pair (judged
//! earlier, by another annotator, prior citation evidence) waits until the order reaches that
//! pair, which it then uses for free. "Used" pairs are skipped by every system's pointer.
//!
//! So the selector's state (and every later proposal) is a function of the rankings, the
//! order, the seed and the *set* of labels, not of the order labels came in: a server may
//! rebuild it from the labels so far ([`Selector::with_labels`]) at each request and gets the
//! proposal an incrementally fed selector would make. A label may change until the order has
//! used its pair; after that a different label is refused ([`JudgingError::LabelChanged`]):
//! rebuild to apply it.
//!
//! # Scopes: global and per claim
//!
//! Under [`Strategy::Confidence`] each ranking is one list across claims and the order runs
//! once over all of them. Under [`Strategy::PerClaim`] each claim is its own scope with its own
//! system statistics (priorities, bandit counts, Hedge weights: TREC's per-topic ordering),
//! and the budget is spread by round robin over claims in key order: each turn the next claim
//! in the rotation makes one step (a free one, using a known label, counts as its turn), and a
//! claim whose pairs are all used leaves the rotation. `depth` is the exception: in both modes
//! it is one list sorted by entry depth (the smallest rank any system gives the pair, within
//! its claim under `PerClaim`), then claim, then doc, so every claim's depth-`d` pairs come
//! before any depth `d + 1` pair and its curve is depth pooling's.
//!
//! # The system orders
//!
//! - `mtf`: every system starts at priority 0; the system of highest priority (ties: lowest
//!   system index) gives its top unused pair; a non-evidence pair lowers its priority by one,
//!   evidence keeps it (so the order stays with a system while its pairs are evidence).
//! - `mab-maxmean`: the system of highest (evidence + 1) / (used + 2) (ties: lowest index).
//! - `mab-thompson`: one Beta(1 + evidence, 1 + non-evidence) draw per system that has unused
//!   pairs left, in system order, from the selector's `ChaCha8Rng` seeded with the seed; the
//!   largest draw wins (ties: lowest index).
//!
//! A system's statistics count exactly the pairs the order took from it (free or judged);
//! pairs its pointer skips because another system's turn used them do not count for it.
//! `hedge` picks a pair, not a system; its formulas are in the `hedge` module's documentation
//! (weights `β^loss` with [`super::HEDGE_BETA`], rank value `ln((N+1)/r)/ln(N+1)`).
//!
//! # Cost
//!
//! With `E` ranked entries over `U` distinct pairs, `S` pooled systems and `k` labels,
//! construction is O(E + U log U) (one hash pass, one sort; Hedge adds its tree, O(U·S log U)),
//! recording a label O(1), and the order's steps up to the next proposal cost O(S) each for
//! `mtf` and `mab` (plus pointer moves, O(E) in all), O(1) for `depth`, and a branch-and-bound
//! search of the tree for `hedge` (typically O(S log U), O(U·S) at worst). Rebuilding from `k`
//! labels therefore costs O(E + U log U + k·S) for the system orders.
//!
//! Measured (release build, 2 cores, 4 correlated systems × 2.5 million pairs = 10 million
//! entries, 10,000 labels): construction 0.7–1.4 s (Hedge 1.0–3.4 s, its tree), then the
//! 10,000 labels 3–12 ms (Hedge 50–480 ms). For pools that large, keep one selector per
//! collection and order in memory and feed it each label ([`Selector::record`]); by the model
//! above that equals a rebuild, which is then only needed after a restart, a pool change or a
//! changed label.

use super::beta::beta;
use super::error::{pair_text, JudgingError};
use super::hedge::{rank_value, HedgeState};
use super::order::Order;
use crate::pool::{FxHashMap, Key, Pair, Ranking, Strategy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// A system's pointer into its ranking within one scope: positions `next..end` of its list
/// may still hold unused pairs.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    start: usize,
    next: usize,
    end: usize,
}

/// What a system order keeps per scope.
#[derive(Clone, Debug)]
enum Policy {
    Mtf {
        priority: Vec<i64>,
    },
    Mab {
        thompson: bool,
        evidence: Vec<u64>,
        used: Vec<u64>,
    },
    Hedge(Box<HedgeState>),
}

/// One claim (or, under `Confidence`, everything): its pairs are the ids `lo..lo + n`.
#[derive(Clone, Debug)]
struct Scope {
    lo: u32,
    /// Pairs of the scope the order has not used yet.
    remaining: u32,
    /// By system index.
    cursors: Vec<Cursor>,
    policy: Policy,
}

/// How the order walks the pairs.
#[derive(Clone, Debug)]
enum Engine {
    /// `depth`: one fixed sequence.
    Depth { sequence: Vec<u32>, next: usize },
    /// The system orders and Hedge: scopes taken in turn.
    Scopes {
        scopes: Vec<Scope>,
        rotation: VecDeque<u32>,
    },
}

/// The step the order chose and has not yet used.
#[derive(Clone, Copy, Debug)]
struct Choice {
    scope: u32,
    /// The system whose pointer gave the pair (system orders only).
    system: Option<usize>,
    pair: u32,
}

/// Picks the next pair to judge under an [`Order`] (see the module documentation for the
/// exact rules). Deterministic for a seed.
#[derive(Clone, Debug)]
pub struct Selector<C, D> {
    strategy: Strategy,
    order: Order,
    /// Every pair of the rankings, by claim then doc; a pair's id is its index here.
    pairs: Vec<Pair<C, D>>,
    ids: FxHashMap<Pair<C, D>, u32>,
    labels: Vec<Option<bool>>,
    used: Vec<bool>,
    used_count: usize,
    /// Each pooled system's ranking as ids, best first.
    lists: Vec<Vec<u32>>,
    engine: Engine,
    rng: ChaCha8Rng,
    pending: Option<Choice>,
}

impl<C: Key, D: Key> Selector<C, D> {
    /// A selector over the pooled systems' `rankings` (each best first; under `PerClaim`
    /// grouped by claim, ranks restarting at each claim, as [`crate::pool::RankedRun`]
    /// sorts them), playing `order`; `seed` drives Thompson sampling.
    ///
    /// Fails if a ranking lists a pair twice, if a per-claim ranking splits a claim, or if the
    /// rankings hold more than `u32::MAX` distinct pairs.
    pub fn new(
        strategy: Strategy,
        rankings: Vec<Vec<Pair<C, D>>>,
        order: Order,
        seed: u64,
    ) -> Result<Self, JudgingError> {
        let (pairs, ids, lists) = intern(&rankings)?;
        drop(rankings);
        let segments = segments(strategy, &pairs, &lists)?;
        let engine = match order {
            Order::Depth => depth_engine(&pairs, &lists, &segments),
            _ => scopes_engine(order, &lists, &segments),
        };
        Ok(Selector {
            strategy,
            order,
            labels: vec![None; pairs.len()],
            used: vec![false; pairs.len()],
            used_count: 0,
            pairs,
            ids,
            lists,
            engine,
            rng: ChaCha8Rng::seed_from_u64(seed),
            pending: None,
        })
    }

    /// A selector over the pooled systems of `ranking` (in system index order; evaluation-only
    /// systems are left out), each cut at rank `max_rank`, under the ranking's strategy.
    pub fn from_ranking(
        ranking: &Ranking<C, D>,
        max_rank: u32,
        order: Order,
        seed: u64,
    ) -> Result<Self, JudgingError> {
        let rankings = ranking
            .pooled()
            .map(|(_, run)| run.top(max_rank).map(|(_, scored)| scored.pair).collect())
            .collect();
        Selector::new(ranking.strategy(), rankings, order, seed)
    }

    /// This selector with `labels` (pair, is evidence) recorded, as [`Selector::record`] each.
    pub fn with_labels(
        mut self,
        labels: impl IntoIterator<Item = (Pair<C, D>, bool)>,
    ) -> Result<Self, JudgingError> {
        for (pair, evidence) in labels {
            self.record(pair, evidence)?;
        }
        Ok(self)
    }

    /// Records a judgment: `pair` is (`evidence = true`) or is not evidence. The pair need not
    /// be the proposal; a pair outside the rankings is ignored. Fails only if the order has
    /// already used the pair with the other label.
    pub fn record(&mut self, pair: Pair<C, D>, evidence: bool) -> Result<(), JudgingError> {
        let Some(&id) = self.ids.get(&pair) else {
            return Ok(());
        };
        let id = id as usize;
        if self.used.get(id).copied().unwrap_or(false) {
            return match self.labels.get(id).copied().flatten() {
                Some(was) if was != evidence => {
                    let (claim, doc) = pair_text(&pair);
                    Err(JudgingError::LabelChanged {
                        claim,
                        doc,
                        was: if was { "evidence" } else { "not evidence" },
                    })
                }
                _ => Ok(()),
            };
        }
        if let Some(label) = self.labels.get_mut(id) {
            *label = Some(evidence);
        }
        Ok(())
    }

    /// The pair to judge next: unlabelled, in the rankings, never proposed before unless it is
    /// still the proposal (it stays so until a label for it is recorded). `None` when every
    /// pair of the rankings is used.
    pub fn next_pair(&mut self) -> Option<Pair<C, D>> {
        let id = match self.engine {
            Engine::Depth { .. } => self.advance_depth(),
            Engine::Scopes { .. } => self.advance_scopes(),
        }?;
        self.pairs.get(id as usize).copied()
    }

    /// The order (`depth`, `mtf`, ...).
    pub fn order(&self) -> Order {
        self.order
    }

    /// Global or per-claim.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Distinct pairs in the rankings.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether the rankings hold no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Pairs the order has used so far (each with its label).
    pub fn used(&self) -> usize {
        self.used_count
    }

    fn advance_depth(&mut self) -> Option<u32> {
        let Engine::Depth { sequence, next } = &mut self.engine else {
            return None;
        };
        while let Some(&id) = sequence.get(*next) {
            match self.labels.get(id as usize).copied().flatten() {
                None => return Some(id),
                Some(_) => {
                    if let Some(used) = self.used.get_mut(id as usize) {
                        *used = true;
                    }
                    self.used_count += 1;
                    *next += 1;
                }
            }
        }
        None
    }

    fn advance_scopes(&mut self) -> Option<u32> {
        let Engine::Scopes { scopes, rotation } = &mut self.engine else {
            return None;
        };
        loop {
            let choice = match self.pending.take() {
                Some(choice) => choice,
                None => {
                    let scope_index = *rotation.front()?;
                    let scope = scopes.get_mut(scope_index as usize)?;
                    match choose(scope_index, scope, &self.lists, &self.used, &mut self.rng) {
                        Some(choice) => choice,
                        None => {
                            // Unreachable while `remaining > 0`; leave the rotation anyway.
                            rotation.pop_front();
                            continue;
                        }
                    }
                }
            };
            let Some(evidence) = self.labels.get(choice.pair as usize).copied().flatten() else {
                self.pending = Some(choice);
                return Some(choice.pair);
            };
            let scope = scopes.get_mut(choice.scope as usize)?;
            use_pair(scope, choice, evidence);
            if let Some(used) = self.used.get_mut(choice.pair as usize) {
                *used = true;
            }
            self.used_count += 1;
            rotation.pop_front();
            if scope.remaining > 0 {
                rotation.push_back(choice.scope);
            }
        }
    }
}

/// The distinct pairs by claim then doc, the id of each, and each ranking as ids. Fails on a
/// pair listed twice in one ranking or more than `u32::MAX` pairs.
#[allow(clippy::type_complexity)]
fn intern<C: Key, D: Key>(
    rankings: &[Vec<Pair<C, D>>],
) -> Result<(Vec<Pair<C, D>>, FxHashMap<Pair<C, D>, u32>, Vec<Vec<u32>>), JudgingError> {
    // The longest ranking is a lower bound on the distinct pairs (reserving for every entry
    // would spread the map over up to S times the memory it needs).
    let longest = rankings.iter().map(Vec::len).max().unwrap_or(0);
    let mut ids: FxHashMap<Pair<C, D>, u32> = FxHashMap::default();
    ids.reserve(longest);
    let mut first_seen: Vec<Pair<C, D>> = Vec::new();
    // The last ranking (index + 1) that listed each pair: a repeat within a ranking is caught.
    let mut last_list: Vec<usize> = Vec::new();
    let mut lists: Vec<Vec<u32>> = Vec::with_capacity(rankings.len());
    for (system, ranking) in rankings.iter().enumerate() {
        let mut list = Vec::with_capacity(ranking.len());
        for pair in ranking {
            let next_id = first_seen.len();
            let id = *ids.entry(*pair).or_insert_with(|| {
                first_seen.push(*pair);
                last_list.push(0);
                u32::try_from(next_id).unwrap_or(u32::MAX)
            });
            if id == u32::MAX {
                return Err(JudgingError::TooManyPairs {
                    pairs: first_seen.len(),
                    max: u32::MAX,
                });
            }
            if let Some(last) = last_list.get_mut(id as usize) {
                if *last == system + 1 {
                    let (claim, doc) = pair_text(pair);
                    return Err(JudgingError::DuplicateRankedPair { system, claim, doc });
                }
                *last = system + 1;
            }
            list.push(id);
        }
        lists.push(list);
    }
    // Renumber by (claim, doc).
    let mut by_pair: Vec<u32> = (0..first_seen.len())
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    by_pair.sort_unstable_by_key(|&i| first_seen.get(i as usize).copied());
    let mut renumber = vec![0_u32; first_seen.len()];
    let mut pairs = Vec::with_capacity(first_seen.len());
    for (new_id, &old) in by_pair.iter().enumerate() {
        if let (Some(slot), Some(pair)) =
            (renumber.get_mut(old as usize), first_seen.get(old as usize))
        {
            *slot = u32::try_from(new_id).unwrap_or(u32::MAX);
            pairs.push(*pair);
        }
    }
    for id in ids.values_mut() {
        *id = renumber.get(*id as usize).copied().unwrap_or(u32::MAX);
    }
    for list in &mut lists {
        for id in list.iter_mut() {
            *id = renumber.get(*id as usize).copied().unwrap_or(u32::MAX);
        }
    }
    Ok((pairs, ids, lists))
}

/// The scopes and, per scope and system, the positions of the system's list in the scope.
struct Segments {
    /// Per scope: its id range `lo..hi`.
    bounds: Vec<(u32, u32)>,
    /// Per scope, per system: `(start, end)` positions in the system's list.
    ranges: Vec<Vec<(usize, usize)>>,
}

/// One scope for `Confidence`; one per claim (in key order) for `PerClaim`. Fails if a
/// per-claim list splits a claim.
fn segments<C: Key, D: Key>(
    strategy: Strategy,
    pairs: &[Pair<C, D>],
    lists: &[Vec<u32>],
) -> Result<Segments, JudgingError> {
    let total = u32::try_from(pairs.len()).unwrap_or(u32::MAX);
    if strategy == Strategy::Confidence {
        return Ok(Segments {
            bounds: vec![(0, total)],
            ranges: vec![lists.iter().map(|list| (0, list.len())).collect()],
        });
    }
    // Ids are sorted by claim: each claim is a run of ids.
    let mut bounds: Vec<(u32, u32)> = Vec::new();
    let mut scope_of: Vec<u32> = Vec::with_capacity(pairs.len());
    for (id, pair) in pairs.iter().enumerate() {
        let id = u32::try_from(id).unwrap_or(u32::MAX);
        let same_claim = id > 0 && pairs.get(id as usize - 1).map(|p| p.claim) == Some(pair.claim);
        if !same_claim {
            bounds.push((id, id));
        }
        if let Some(last) = bounds.last_mut() {
            last.1 = id + 1;
        }
        scope_of.push(u32::try_from(bounds.len() - 1).unwrap_or(u32::MAX));
    }
    let mut ranges = vec![vec![(0, 0); lists.len()]; bounds.len()];
    for (system, list) in lists.iter().enumerate() {
        let mut start = 0;
        while start < list.len() {
            let scope = scope_of.get(list[start] as usize).copied().unwrap_or(0);
            let mut end = start + 1;
            while end < list.len() && scope_of.get(list[end] as usize) == Some(&scope) {
                end += 1;
            }
            let slot = ranges
                .get_mut(scope as usize)
                .and_then(|per_system| per_system.get_mut(system));
            match slot {
                Some(slot) if *slot == (0, 0) => *slot = (start, end),
                _ => {
                    let claim = pairs
                        .get(list[start] as usize)
                        .map(|p| format!("{:?}", p.claim))
                        .unwrap_or_default();
                    return Err(JudgingError::ClaimsNotGrouped { system, claim });
                }
            }
            start = end;
        }
    }
    Ok(Segments { bounds, ranges })
}

/// `depth`: ids by (entry depth within the scope, id).
fn depth_engine<C: Key, D: Key>(
    pairs: &[Pair<C, D>],
    lists: &[Vec<u32>],
    segments: &Segments,
) -> Engine {
    let mut entry = vec![usize::MAX; pairs.len()];
    for per_system in &segments.ranges {
        for (list, &(start, end)) in lists.iter().zip(per_system) {
            for (offset, &id) in list.get(start..end).unwrap_or(&[]).iter().enumerate() {
                if let Some(best) = entry.get_mut(id as usize) {
                    *best = (*best).min(offset + 1);
                }
            }
        }
    }
    let mut sequence: Vec<u32> = (0..pairs.len())
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    sequence.sort_unstable_by_key(|&id| (entry.get(id as usize).copied(), id));
    Engine::Depth { sequence, next: 0 }
}

/// The system orders and Hedge: one scope per segment set, all in the rotation.
fn scopes_engine(order: Order, lists: &[Vec<u32>], segments: &Segments) -> Engine {
    let systems = lists.len();
    let mut scopes = Vec::with_capacity(segments.bounds.len());
    for (&(lo, hi), ranges) in segments.bounds.iter().zip(&segments.ranges) {
        let cursors: Vec<Cursor> = ranges
            .iter()
            .map(|&(start, end)| Cursor {
                start,
                next: start,
                end,
            })
            .collect();
        let policy = match order {
            Order::Mtf => Policy::Mtf {
                priority: vec![0; systems],
            },
            Order::MabMaxMean | Order::MabThompson => Policy::Mab {
                thompson: order == Order::MabThompson,
                evidence: vec![0; systems],
                used: vec![0; systems],
            },
            // `Depth` has its own engine; Hedge for the rest.
            Order::Depth | Order::Hedge => {
                Policy::Hedge(Box::new(hedge_state(lo, hi, lists, &cursors)))
            }
        };
        scopes.push(Scope {
            lo,
            remaining: hi - lo,
            cursors,
            policy,
        });
    }
    let rotation = (0..scopes.len())
        .filter(|&i| scopes.get(i).is_some_and(|s| s.remaining > 0))
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    Engine::Scopes { scopes, rotation }
}

/// Hedge's tree for the scope of ids `lo..hi`: each pair's rank value in each system.
fn hedge_state(lo: u32, hi: u32, lists: &[Vec<u32>], cursors: &[Cursor]) -> HedgeState {
    let dims = lists.len();
    let points = (hi - lo) as usize;
    let longest = cursors.iter().map(|c| c.end - c.start).max().unwrap_or(0);
    let mut coords = vec![0.0; points * dims];
    for (system, (list, cursor)) in lists.iter().zip(cursors).enumerate() {
        for (offset, &id) in list
            .get(cursor.start..cursor.end)
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let point = (id - lo) as usize;
            if let Some(slot) = coords.get_mut(point * dims + system) {
                *slot = rank_value(offset + 1, longest);
            }
        }
    }
    HedgeState::new(dims, points, coords)
}

/// The top unused pair of a system's pointer, moving the pointer past used pairs.
fn top(cursor: &mut Cursor, list: &[u32], used: &[bool]) -> Option<u32> {
    while cursor.next < cursor.end {
        let id = *list.get(cursor.next)?;
        if !used.get(id as usize).copied().unwrap_or(true) {
            return Some(id);
        }
        cursor.next += 1;
    }
    None
}

/// The scope's next step under its policy.
fn choose(
    scope_index: u32,
    scope: &mut Scope,
    lists: &[Vec<u32>],
    used: &[bool],
    rng: &mut ChaCha8Rng,
) -> Option<Choice> {
    if let Policy::Hedge(state) = &scope.policy {
        return state.best().map(|point| Choice {
            scope: scope_index,
            system: None,
            pair: scope.lo + point,
        });
    }
    // Each system with an unused pair left, and that pair, by system index.
    let active: Vec<(usize, u32)> = scope
        .cursors
        .iter_mut()
        .zip(lists)
        .enumerate()
        .filter_map(|(system, (cursor, list))| top(cursor, list, used).map(|pair| (system, pair)))
        .collect();
    // Every comparison ends on the system index (the lower wins), so `max_by` is exact.
    let lower_index = |a: &(usize, u32), b: &(usize, u32)| b.0.cmp(&a.0);
    let picked = match &scope.policy {
        Policy::Mtf { priority } => {
            let of = |system: usize| priority.get(system).copied().unwrap_or(0);
            active
                .iter()
                .copied()
                .max_by(|a, b| of(a.0).cmp(&of(b.0)).then_with(|| lower_index(a, b)))
        }
        Policy::Mab {
            thompson: false,
            evidence,
            used: taken,
        } => {
            let counts = |system: usize| {
                (
                    u128::from(evidence.get(system).copied().unwrap_or(0)),
                    u128::from(taken.get(system).copied().unwrap_or(0)),
                )
            };
            // (e + 1) / (n + 2) compared in exact integers.
            active.iter().copied().max_by(|a, b| {
                let ((ea, na), (eb, nb)) = (counts(a.0), counts(b.0));
                ((ea + 1) * (nb + 2))
                    .cmp(&((eb + 1) * (na + 2)))
                    .then_with(|| lower_index(a, b))
            })
        }
        Policy::Mab {
            thompson: true,
            evidence,
            used: taken,
        } => {
            // One draw per active system, in system order.
            let draws: Vec<(usize, u32, f64)> = active
                .iter()
                .map(|&(system, pair)| {
                    let e = evidence.get(system).copied().unwrap_or(0);
                    let n = taken.get(system).copied().unwrap_or(0);
                    // Counts stay far below 2^53: the conversions are exact.
                    let draw = beta(rng, 1.0 + e as f64, 1.0 + n.saturating_sub(e) as f64);
                    (system, pair, draw)
                })
                .collect();
            draws
                .into_iter()
                .max_by(|a, b| a.2.total_cmp(&b.2).then_with(|| b.0.cmp(&a.0)))
                .map(|(system, pair, _)| (system, pair))
        }
        Policy::Hedge(_) => None,
    };
    picked.map(|(system, pair)| Choice {
        scope: scope_index,
        system: Some(system),
        pair,
    })
}

/// The scope uses the chosen pair with its label.
fn use_pair(scope: &mut Scope, choice: Choice, evidence: bool) {
    scope.remaining = scope.remaining.saturating_sub(1);
    match (&mut scope.policy, choice.system) {
        // Evidence keeps the system's priority; anything else lowers it by one.
        (Policy::Mtf { priority }, Some(system)) if !evidence => {
            if let Some(p) = priority.get_mut(system) {
                *p -= 1;
            }
        }
        (
            Policy::Mab {
                evidence: e, used, ..
            },
            Some(system),
        ) => {
            if let Some(n) = used.get_mut(system) {
                *n += 1;
            }
            if let Some(count) = e.get_mut(system) {
                *count += u64::from(evidence);
            }
        }
        (Policy::Hedge(state), _) => state.judge(choice.pair - scope.lo, evidence),
        _ => {}
    }
}
