//! Hedge (Aslam, Pavlu & Savell 2003) for one scope (all claims, or one claim): weights over
//! the pooled systems and the unjudged pair of highest weighted rank value.
//!
//! Formulas (ours where the paper leaves a choice; `N` = the longest pooled ranking in the
//! scope, `r` = a system's 1-based rank of the pair in the scope):
//!
//! - rank value `v(r) = ln((N + 1) / r) / ln(N + 1)`, in (0, 1]: the average-precision weight
//!   ½·ln(N/r) of the paper, scaled to [0, 1]; `v = 0` for a pair the system did not rank.
//! - loss of system `s` on a judged pair: `(1 - v_s) / 2` if it is evidence, `(1 + v_s) / 2`
//!   if not (so in [0, 1]; ½ for a pair `s` did not rank, the same whatever the label).
//! - weights `w_s = β^{L_s}` with `L_s` the summed losses and `β = 0.1` (`HEDGE_BETA`); only
//!   their ratios matter, so `L_s − min L` is used (no underflow of all weights at once).
//! - next pair: the unjudged pair maximising `Σ_s w_s · v_s`, the mixture's rank value (its
//!   loss if the pair is not evidence); ties go to the lower (claim, doc).
//!
//! The maximum is found exactly with a bounding-box tree over the pairs' rank-value vectors
//! (a k-d tree whose nodes keep, per system, the largest value among their unjudged pairs):
//! branch and bound prunes a node whose `Σ_s w_s · max_s` is below the best pair so far. A
//! judged pair is removed in O(S·(leaf + log n)).

/// Hedge's learning rate β (Freund & Schapire's `β ∈ [0, 1)`): a system's weight is multiplied
/// by `β^loss` after each judgment.
pub const HEDGE_BETA: f64 = 0.1;

/// Pairs per leaf of the tree.
const LEAF: usize = 8;

/// `v(r) = ln((N + 1) / r) / ln(N + 1)` for rank `r` in 1..=`longest` (`N`).
pub(crate) fn rank_value(rank: usize, longest: usize) -> f64 {
    // Ranks and lengths stay far below 2^53: the conversions are exact.
    let n1 = longest as f64 + 1.0;
    (n1 / rank as f64).ln() / n1.ln()
}

/// One node of the tree: positions `lo..hi` of `order`.
#[derive(Clone, Debug)]
struct Node {
    lo: usize,
    hi: usize,
    /// Child node indexes; `None` for a leaf.
    children: Option<(usize, usize)>,
    parent: Option<usize>,
}

/// Hedge's state for one scope: the systems' cumulative losses and the tree of unjudged pairs.
#[derive(Clone, Debug)]
pub(crate) struct HedgeState {
    dims: usize,
    losses: Vec<f64>,
    /// Rank values by point (the scope's pairs in (claim, doc) order): `coords[p * dims + s]`.
    coords: Vec<f64>,
    /// Points in tree order.
    order: Vec<u32>,
    /// Each point's position in `order`.
    position: Vec<u32>,
    alive: Vec<bool>,
    nodes: Vec<Node>,
    /// The leaf holding each position.
    leaf_of: Vec<u32>,
    /// Per node and system, the largest rank value among the node's unjudged points.
    node_max: Vec<f64>,
    /// Unjudged points per node.
    node_alive: Vec<u32>,
}

impl HedgeState {
    /// The state for `points` pairs over `dims` systems, `coords` as documented on the field.
    pub(crate) fn new(dims: usize, points: usize, coords: Vec<f64>) -> HedgeState {
        // A scope holds at most u32::MAX pairs (checked by the selector).
        let order: Vec<u32> = (0..points)
            .map(|p| u32::try_from(p).unwrap_or(u32::MAX))
            .collect();
        let mut state = HedgeState {
            dims,
            losses: vec![0.0; dims],
            coords,
            position: order.clone(),
            order,
            alive: vec![true; points],
            nodes: Vec::new(),
            leaf_of: vec![0; points],
            node_max: Vec::new(),
            node_alive: Vec::new(),
        };
        if points > 0 {
            state.build(0, points, None);
            for (pos, &point) in state.order.iter().enumerate() {
                if let Some(slot) = state.position.get_mut(point as usize) {
                    *slot = u32::try_from(pos).unwrap_or(u32::MAX);
                }
            }
            for node in (0..state.nodes.len()).rev() {
                state.refresh(node);
            }
        }
        state
    }

    fn coord(&self, point: u32, dim: usize) -> f64 {
        self.coords
            .get(point as usize * self.dims + dim)
            .copied()
            .unwrap_or(0.0)
    }

    /// Builds the subtree over positions `lo..hi`; returns its node index. Children get larger
    /// indexes than their parent, so refreshing in reverse index order goes bottom-up.
    fn build(&mut self, lo: usize, hi: usize, parent: Option<usize>) -> usize {
        let index = self.nodes.len();
        self.nodes.push(Node {
            lo,
            hi,
            children: None,
            parent,
        });
        self.node_max.extend(std::iter::repeat_n(0.0, self.dims));
        self.node_alive.push(0);
        if hi - lo <= LEAF {
            for slot in self.leaf_of.iter_mut().take(hi).skip(lo) {
                *slot = u32::try_from(index).unwrap_or(u32::MAX);
            }
            return index;
        }
        // Split at the median of the system whose values spread most.
        let mut split_dim = 0;
        let mut widest = f64::NEG_INFINITY;
        for dim in 0..self.dims {
            let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
            for &point in &self.order[lo..hi] {
                let value = self.coord(point, dim);
                min = min.min(value);
                max = max.max(value);
            }
            if max - min > widest {
                widest = max - min;
                split_dim = dim;
            }
        }
        let mid = lo + (hi - lo) / 2;
        let dims = self.dims;
        let coords = &self.coords;
        let value = |p: u32| {
            coords
                .get(p as usize * dims + split_dim)
                .copied()
                .unwrap_or(0.0)
        };
        self.order[lo..hi].select_nth_unstable_by(mid - lo, |&a, &b| {
            value(a).total_cmp(&value(b)).then(a.cmp(&b))
        });
        let left = self.build(lo, mid, Some(index));
        let right = self.build(mid, hi, Some(index));
        if let Some(node) = self.nodes.get_mut(index) {
            node.children = Some((left, right));
        }
        index
    }

    /// Recomputes a node's maxima and unjudged count from its points or children.
    fn refresh(&mut self, index: usize) {
        let Some(node) = self.nodes.get(index).cloned() else {
            return;
        };
        let dims = self.dims;
        let mut max = vec![0.0_f64; dims];
        let mut alive = 0_u32;
        match node.children {
            None => {
                for &point in &self.order[node.lo..node.hi] {
                    if self.alive.get(point as usize).copied().unwrap_or(false) {
                        alive += 1;
                        for (dim, m) in max.iter_mut().enumerate() {
                            *m = m.max(self.coord(point, dim));
                        }
                    }
                }
            }
            Some((left, right)) => {
                for child in [left, right] {
                    if self.node_alive.get(child).copied().unwrap_or(0) > 0 {
                        alive += self.node_alive[child];
                        let child_max = &self.node_max[child * dims..(child + 1) * dims];
                        for (m, &c) in max.iter_mut().zip(child_max) {
                            *m = m.max(c);
                        }
                    }
                }
            }
        }
        self.node_max[index * dims..(index + 1) * dims].copy_from_slice(&max);
        self.node_alive[index] = alive;
    }

    /// The current weights `β^{L_s − min L}`.
    pub(crate) fn weights(&self) -> Vec<f64> {
        let min = self.losses.iter().copied().fold(f64::INFINITY, f64::min);
        self.losses
            .iter()
            .map(|&loss| HEDGE_BETA.powf(loss - min))
            .collect()
    }

    fn dot(weights: &[f64], values: &[f64]) -> f64 {
        weights.iter().zip(values).map(|(w, v)| w * v).sum()
    }

    /// The unjudged point of largest `Σ_s w_s v_s`, ties to the lower point; `None` when all
    /// are judged.
    pub(crate) fn best(&self) -> Option<u32> {
        if self.nodes.is_empty() {
            return None;
        }
        let weights = self.weights();
        let dims = self.dims;
        let bound =
            |node: usize| Self::dot(&weights, &self.node_max[node * dims..(node + 1) * dims]);
        let mut best: Option<(f64, u32)> = None;
        let mut stack = vec![0_usize];
        while let Some(index) = stack.pop() {
            if self.node_alive.get(index).copied().unwrap_or(0) == 0 {
                continue;
            }
            // Floating-point products and sums are monotone, so the bound is never below the
            // score of a point of the node computed the same way.
            if best.is_some_and(|(score, _)| bound(index) < score) {
                continue;
            }
            let Some(node) = self.nodes.get(index) else {
                continue;
            };
            match node.children {
                None => {
                    for &point in &self.order[node.lo..node.hi] {
                        if !self.alive.get(point as usize).copied().unwrap_or(false) {
                            continue;
                        }
                        let start = point as usize * dims;
                        let score = Self::dot(&weights, &self.coords[start..start + dims]);
                        let better = match best {
                            None => true,
                            Some((top, top_point)) => {
                                score > top || (score == top && point < top_point)
                            }
                        };
                        if better {
                            best = Some((score, point));
                        }
                    }
                }
                Some((left, right)) => {
                    // Visit the child of larger bound first: push it last.
                    if bound(left) >= bound(right) {
                        stack.push(right);
                        stack.push(left);
                    } else {
                        stack.push(left);
                        stack.push(right);
                    }
                }
            }
        }
        best.map(|(_, point)| point)
    }

    /// Judges `point`: every system takes its loss and the point leaves the tree.
    pub(crate) fn judge(&mut self, point: u32, evidence: bool) {
        for dim in 0..self.dims {
            let value = self.coord(point, dim);
            let loss = if evidence {
                (1.0 - value) / 2.0
            } else {
                (1.0 + value) / 2.0
            };
            if let Some(total) = self.losses.get_mut(dim) {
                *total += loss;
            }
        }
        let Some(alive) = self.alive.get_mut(point as usize) else {
            return;
        };
        if !*alive {
            return;
        }
        *alive = false;
        let position = self.position.get(point as usize).copied().unwrap_or(0) as usize;
        let mut node = self.leaf_of.get(position).map(|&n| n as usize);
        while let Some(index) = node {
            self.refresh(index);
            node = self.nodes.get(index).and_then(|n| n.parent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The naive maximum: every unjudged point scored.
    fn naive_best(state: &HedgeState) -> Option<u32> {
        let weights = state.weights();
        let mut best: Option<(f64, u32)> = None;
        for point in 0..state.alive.len() {
            if !state.alive[point] {
                continue;
            }
            let start = point * state.dims;
            let score = HedgeState::dot(&weights, &state.coords[start..start + state.dims]);
            if best.is_none_or(|(top, _)| score > top) {
                best = Some((score, point as u32));
            }
        }
        best.map(|(_, p)| p)
    }

    #[test]
    fn rank_values_fall_from_one_with_rank() {
        assert_eq!(rank_value(1, 1), 1.0);
        assert!((rank_value(1, 99) - 1.0).abs() < 1e-15);
        assert!((rank_value(10, 99) - 0.5).abs() < 1e-15);
        assert!(rank_value(99, 99) > 0.0);
        assert!(rank_value(2, 99) < rank_value(1, 99));
    }

    /// The tree's maximum equals the naive maximum through random judgments, with many ties
    /// (values from a few ranks) and without.
    #[test]
    fn tree_maximum_equals_naive_maximum() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for round in 0..60 {
            let dims = rng.gen_range(1..=4);
            let points = rng.gen_range(0..300);
            let ties = round % 2 == 0;
            let coords: Vec<f64> = (0..points * dims)
                .map(|_| {
                    if rng.gen_bool(0.3) {
                        0.0
                    } else if ties {
                        rank_value(rng.gen_range(1..=4), 10)
                    } else {
                        rng.gen::<f64>()
                    }
                })
                .collect();
            let mut state = HedgeState::new(dims, points, coords);
            for _ in 0..points {
                let best = state.best();
                assert_eq!(best, naive_best(&state), "round {round}");
                let Some(point) = best else { break };
                state.judge(point, rng.gen_bool(0.3));
            }
            assert_eq!(state.best(), None);
        }
    }
}
