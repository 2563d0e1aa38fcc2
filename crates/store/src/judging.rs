//! What the judging orders' replays read of a project (the replay simulator behind `claimpool
//! simulate` and the report's discovery curves, in `app::command::simulate`).

use super::pool::{final_labels, load, settings, Loaded};
use super::{Db, StoreResult};
use domain::pool::{Pair, Strategy};
use std::collections::HashSet;

/// What a replay needs of a project: its pool strategy, its runs, and the truth.
pub struct ReplayInputs {
    /// The project's pool strategy (confidence when never built).
    pub strategy: Strategy,
    pub loaded: Loaded,
    /// Pairs with a SUPPORT or CONTRADICT final label (citation evidence included).
    pub truth: HashSet<Pair<u32, u32>>,
}

/// Reads [`ReplayInputs`] of a project.
pub async fn replay_inputs(db: &Db, project_id: i64) -> StoreResult<ReplayInputs> {
    let strategy = settings(db, project_id)
        .await?
        .map_or(Strategy::Confidence, |(strategy, _)| strategy);
    let loaded = load(db, project_id, strategy).await?;
    let truth = final_labels(db, project_id, &loaded)
        .await?
        .into_iter()
        .filter(|(_, label)| label.is_evidence())
        .map(|(pair, _)| pair)
        .collect();
    Ok(ReplayInputs {
        strategy,
        loaded,
        truth,
    })
}

/// Pairs in the project's pool.
pub async fn pooled_pairs(db: &Db, project_id: i64) -> StoreResult<usize> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pool_entries WHERE project_id = $1")
        .bind(project_id)
        .fetch_one(db)
        .await?;
    Ok(usize::try_from(n).unwrap_or(0))
}
