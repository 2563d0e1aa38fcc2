//! The order of an annotator's queue, and skipping.
//!
//! An assignment is created at [`FRESH_POSITION`]; skipping it sets its `queue_pos` to
//! [`skip_position`], one past the highest position among the annotator's open assignments.
//! The queue is ordered by [`QueueKey`]: position, then entry depth (shallowest first), then pool
//! entry; in SQL `ORDER BY a.queue_pos, e.entry_depth, e.id`. So items never skipped come first,
//! shallowest first (pairs added by a later, deeper pool growth still queue by depth), and each
//! skip moves an item behind everything else, including items skipped before it.

use super::keys::PoolEntryId;

/// `assignments.queue_pos` of an assignment that was never skipped.
pub const FRESH_POSITION: i64 = 0;

/// The sort key of an open assignment in its annotator's queue (ascending = sooner).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct QueueKey {
    /// `assignments.queue_pos`.
    pub queue_pos: i64,
    /// `pool_entries.entry_depth`.
    pub entry_depth: u32,
    /// `pool_entries.id`.
    pub entry: PoolEntryId,
}

/// The queue positions are exhausted (a position reached `i64::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("queue positions are exhausted; renumber the queue's skipped items from 1")]
pub struct QueueFull;

/// The `queue_pos` that puts a skipped item at the end of the queue: one past the highest of
/// `open_positions` (the positions of the annotator's open assignments, the skipped one
/// included) and never below 1, so it follows every fresh item.
pub fn skip_position(open_positions: impl IntoIterator<Item = i64>) -> Result<i64, QueueFull> {
    open_positions
        .into_iter()
        .fold(FRESH_POSITION, i64::max)
        .checked_add(1)
        .ok_or(QueueFull)
}
