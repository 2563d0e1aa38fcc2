//! Annotation storage: assignments and queues, submissions, undo, skip, flags, comments,
//! adjudication, the lead's annotator management, and bulk judgment imports. Every rule comes
//! from [`domain::annotation`]; this module reads and writes the rows the rules act on,
//! one `BEGIN IMMEDIATE` transaction per change, with its audit event.

pub(crate) mod assign;
mod cal;
pub mod gold;
mod history;
pub mod import;
mod judging;
mod lead;
mod own_history;
mod queue;
mod stopping;
mod submit;

pub use assign::assign_pending;
pub use judging::{judging, judging_view, set_judging, JudgingChange};
pub use lead::{overview, reassign_item, set_active, set_mode};
pub use own_history::{own_history, OwnHistoryQuery};
pub use queue::{
    add_comment, check_comment, flag, has_judged, item_for_lead, last_submission, queue_head, skip,
};
pub use stopping::{draw_stop_sample, DrawnStopSample};
pub use submit::{submit, undo_last, Submitted, Target};

use super::{StoreError, StoreResult};

pub use domain::annotation::UNDO_WINDOW_MS;

/// The caller's latest judgment that may be undone, as a condition on `judgments j` (`$1`: the
/// project, `$2`: the caller) with its order: a pooled judgment not retracted. The queue shows
/// the undo of the judgment [`undo_last`] undoes: both read it from here.
pub(crate) const LATEST_OWN_JUDGMENT: &str =
    "j.project_id = $1 AND j.annotator_id = $2 AND j.provenance = 'pooling'
     AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)
     ORDER BY j.id DESC LIMIT 1";

/// What an annotator's queue serves and shows them, as the command decided it from their role
/// in the project (the store checks no role).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueTerms {
    /// Whether gold items are served to them (when the project's settings use gold).
    pub serves_gold: bool,
    /// Whether every item shows both annotations and the pair's discussion, not only an
    /// adjudication.
    pub shows_discussion: bool,
}

/// Starts a write transaction that takes the write lock at once, so that concurrent
/// submissions queue on the busy timeout instead of failing on a stale read.
pub(crate) async fn begin_write(db: &super::Db) -> StoreResult<super::write_gate::WriteTx> {
    super::write_gate::begin(db).await
}

/// A submission to `what`, whose assignment is `status` (done or withdrawn) instead of open.
pub(crate) fn no_longer_open(what: &str, status: &str) -> StoreError {
    StoreError::conflict(
        super::Constraint::ItemClosed,
        format!(
            "{what} was already {}; nothing was recorded",
            if status == "done" {
                "submitted"
            } else {
                "withdrawn"
            }
        ),
    )
}

/// Not yours, or not there: the same answer, so that nobody learns of others' items.
pub fn not_yours(what: &str) -> StoreError {
    StoreError::NotFound(format!("{what} is not in your queue"))
}

/// The project a pool entry belongs to.
pub async fn project_of_entry(db: &super::Db, entry_id: i64) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT project_id FROM pool_entries WHERE id = $1")
        .bind(entry_id)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("pair #{entry_id}")))
}

/// Every open item of the project, shallowest first (lead view).
pub async fn open_items(
    db: &super::Db,
    project_id: i64,
) -> StoreResult<Vec<domain::model::annotate::OpenItemRow>> {
    let mut conn = db.acquire().await?;
    lead::open_items(&mut conn, project_id, false).await
}

/// How many judgments the database holds, of every project (judgments are append-only: the
/// count only grows, and its rate is the annotation throughput).
pub async fn judgments_stored(db: &super::Db) -> super::StoreResult<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM judgment_rows")
        .fetch_one(db)
        .await?)
}
