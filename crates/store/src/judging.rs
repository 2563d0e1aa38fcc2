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

/// How a project's `cal` corpus retrievals were made: per claim, by which retriever, of how
/// many claims, by whom.
#[derive(Clone, Debug, PartialEq)]
pub struct CalRetrievalSet {
    pub per_claim: u32,
    /// `bm25` or `hybrid`.
    pub retriever: &'static str,
    pub claims: u64,
    pub made_by: Option<i64>,
}

/// One corpus retrieval: a claim row, a document row, the rank within the claim's retrieval
/// and the BM25 score's share of the claim's ceiling.
pub type CalRetrievalRow = (i64, i64, u32, f64);

/// Replaces the project's `cal` corpus retrievals with `rows` (one transaction, audited): the
/// live `cal` order rebuilds over them at its next request.
pub async fn replace_cal_retrievals(
    db: &Db,
    project_id: i64,
    set: &CalRetrievalSet,
    rows: &[CalRetrievalRow],
) -> StoreResult<()> {
    let mut tx = super::write_gate::begin(db).await?;
    sqlx::query("DELETE FROM cal_retrievals WHERE project_id = $1")
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    // Five parameters a row; 100 rows a statement stays under either engine's limit.
    for chunk in rows.chunks(100) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("({})", super::dialect::params(1 + 5 * i, 5)))
            .collect();
        let sql = format!(
            "INSERT INTO cal_retrievals (project_id, claim_id, doc_id, rank, share) VALUES {}",
            values.join(", ")
        );
        let mut query = sqlx::query(&sql);
        for &(claim, doc, rank, share) in chunk {
            query = query
                .bind(project_id)
                .bind(claim)
                .bind(doc)
                .bind(i64::from(rank))
                .bind(share.clamp(0.0, 1.0));
        }
        query.execute(&mut *tx).await?;
    }
    let made_at = super::now_ms();
    sqlx::query("DELETE FROM cal_retrieval_sets WHERE project_id = $1")
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO cal_retrieval_sets (project_id, per_claim, retriever, claims, made_by, made_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(project_id)
    .bind(i64::from(set.per_claim))
    .bind(set.retriever)
    .bind(i64::try_from(set.claims).unwrap_or(i64::MAX))
    .bind(set.made_by)
    .bind(made_at)
    .execute(&mut *tx)
    .await?;
    super::audit::AuditEvent {
        project_id: Some(project_id),
        actor_id: set.made_by,
        action: "cal_retrievals",
        entity: "project",
        entity_id: Some(project_id.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({
            "per_claim": set.per_claim,
            "retriever": set.retriever,
            "claims": set.claims,
            "pairs": rows.len(),
        })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// How the project's `cal` retrievals were made, if they were: per claim and the retriever.
pub async fn cal_retrieval_set(db: &Db, project_id: i64) -> StoreResult<Option<(u32, String)>> {
    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT per_claim, retriever FROM cal_retrieval_sets WHERE project_id = $1")
            .bind(project_id)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(k, r)| (u32::try_from(k).unwrap_or(u32::MAX), r)))
}
