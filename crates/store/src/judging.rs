//! Judging orders on a project's stored runs: the replay simulator behind `claimpool simulate`
//! and the report's discovery curves (issue "judge where the evidence is").

use super::pool::{final_labels, load, settings, Loaded};
use super::{Db, StoreError, StoreResult};
use domain::judging::{replay, Curve, Order, Selector};
use domain::pool::{Pair, Strategy};
use std::collections::HashSet;

/// A replay of one order on a project.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Simulation {
    pub order: Order,
    /// The ranking the order walks: the project's pool strategy (confidence when never built).
    pub strategy: Strategy,
    pub budget: usize,
    /// The truth: pairs with a SUPPORT or CONTRADICT final label (citation evidence included).
    pub evidence_pairs: usize,
    /// Distinct pairs the pooled systems rank (what an order can propose).
    pub candidate_pairs: usize,
    pub curve: Curve,
}

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

/// Replays `orders` over the project's pooled systems' full rankings, each with the same
/// truth and budget; `seed` drives Thompson sampling. One load of the runs serves every order.
pub async fn simulate(
    db: &Db,
    project_id: i64,
    orders: &[Order],
    budget: usize,
    seed: u64,
) -> StoreResult<Vec<Simulation>> {
    let ReplayInputs {
        strategy,
        loaded,
        truth,
    } = replay_inputs(db, project_id).await?;
    let ranking = loaded.ranking;
    let orders = orders.to_vec();
    tokio::task::spawn_blocking(move || {
        orders
            .into_iter()
            .map(|order| {
                let mut selector = Selector::from_ranking(&ranking, u32::MAX, order, seed)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                let candidate_pairs = selector.len();
                let evidence_pairs = truth.len();
                let curve = replay(&mut selector, &truth, budget);
                Ok(Simulation {
                    order,
                    strategy,
                    budget,
                    evidence_pairs,
                    candidate_pairs,
                    curve,
                })
            })
            .collect()
    })
    .await
    .map_err(|e| StoreError::Fault(format!("the simulation stopped: {e}")))?
}

/// Pairs in the project's pool.
pub async fn pooled_pairs(db: &Db, project_id: i64) -> StoreResult<usize> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pool_entries WHERE project_id = $1")
        .bind(project_id)
        .fetch_one(db)
        .await?;
    Ok(usize::try_from(n).unwrap_or(0))
}
