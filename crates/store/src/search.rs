//! Search and judge (issue 38): what the corpus search reads (the corpus to index and its
//! fingerprint, the marks of a claim's results) and the one write, a pair found by search
//! joining the pool (`search_finds`, migration 20261201000001). Who may search and judge is
//! the commands' decision; the store checks only that the claim and the document are the
//! project's and that the pair is not pooled yet.

use super::annotate::begin_write;
use super::audit::AuditEvent;
use super::{now_ms, Constraint, Db, OnConstraint as _, StoreError, StoreResult};
use domain::annotation::{AnnotatorId, PoolEntryId, Stage};
use domain::ids::{ClaimId, DocId};
use domain::model::paper::PaperMeta;
use std::collections::{HashMap, HashSet};

/// Name the pairs found by search go by in the reports, as a system of their own.
pub const SEARCH_SYSTEM: &str = "search";

/// The name under which the reports count the pairs the live `cal` order added to the pool that
/// no pooled run ranked (its corpus retrievals found them), as a system of their own.
pub const CAL_SYSTEM: &str = "cal";

/// What the project's corpus is made of: its completed corpus imports (id, SHA-256 of the file)
/// in order, and its document count. Any change to the corpus changes one of them.
pub async fn corpus_imports(db: &Db, project_id: i64) -> StoreResult<(Vec<(i64, String)>, u64)> {
    let imports: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, sha256 FROM imports WHERE project_id = $1 AND kind = 'corpus' AND state = 'done'
         ORDER BY id",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM documents WHERE project_id = $1")
        .bind(project_id)
        .fetch_one(db)
        .await?;
    Ok((imports, u64::try_from(count).unwrap_or(0)))
}

/// The key of the project's claim `claim`, or not found.
pub async fn claim_key(db: &Db, project_id: i64, claim: &ClaimId) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT id FROM claims WHERE project_id = $1 AND claim_id = $2")
        .bind(project_id)
        .bind(claim.as_str())
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("claim {claim} in this project")))
}

/// The documents of one claim's pairs that `annotator` has judged (a judgment not retracted),
/// and those in the pool: the marks of the claim's search results.
pub async fn marks(
    db: &Db,
    project_id: i64,
    claim: i64,
    annotator: AnnotatorId,
) -> StoreResult<(HashSet<String>, HashSet<String>)> {
    let judged: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT d.doc_id FROM judgments j JOIN documents d ON d.id = j.doc_id
         WHERE j.project_id = $1 AND j.claim_id = $2 AND j.annotator_id = $3",
    )
    .bind(project_id)
    .bind(claim)
    .bind(annotator.0)
    .fetch_all(db)
    .await?;
    let pooled: Vec<String> = sqlx::query_scalar(
        "SELECT d.doc_id FROM pool_entries e JOIN documents d ON d.id = e.doc_id
         WHERE e.project_id = $1 AND e.claim_id = $2",
    )
    .bind(project_id)
    .bind(claim)
    .fetch_all(db)
    .await?;
    Ok((judged.into_iter().collect(), pooled.into_iter().collect()))
}

/// What the corpus lines of `doc_ids` (a page of results) tell of their papers, by document id;
/// a document whose line has nothing to tell is left out.
pub async fn papers(
    db: &Db,
    project_id: i64,
    doc_ids: &[&str],
) -> StoreResult<HashMap<String, PaperMeta>> {
    if doc_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let marks: Vec<String> = (0..doc_ids.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT doc_id, extra FROM documents
         WHERE project_id = $1 AND extra IS NOT NULL AND doc_id IN ({})",
        marks.join(", ")
    );
    let mut query = sqlx::query_as::<_, (String, String)>(&sql).bind(project_id);
    for id in doc_ids {
        query = query.bind(*id);
    }
    let mut papers = HashMap::new();
    for (doc_id, extra) in query.fetch_all(db).await? {
        let extra = serde_json::from_str(&extra)
            .map_err(|e| StoreError::Corrupt(format!("document {doc_id}: extra: {e}")))?;
        let paper = PaperMeta::from_extra(&extra);
        if !paper.is_empty() {
            papers.insert(doc_id, paper);
        }
    }
    Ok(papers)
}

/// Whether `annotator` may get the project's real items: what the queue and the assignment
/// read (`gold::ADMITTED_SQL`), for an active member.
pub async fn admitted(db: &Db, project_id: i64, annotator: AnnotatorId) -> StoreResult<bool> {
    let admitted: Option<crate::flag::Flag> = sqlx::query_scalar(&format!(
        "SELECT {} FROM project_members m JOIN users u ON u.id = m.user_id
         WHERE m.project_id = $1 AND m.user_id = $2 AND m.active = 1",
        super::annotate::gold::ADMITTED_SQL
    ))
    .bind(project_id)
    .bind(annotator.0)
    .fetch_optional(db)
    .await?;
    Ok(admitted.is_some_and(|flag| flag.0))
}

/// A pair found by search, to add to the pool.
#[derive(Clone, Debug)]
pub struct NewFind<'a> {
    pub project_id: i64,
    pub claim: &'a ClaimId,
    pub doc: &'a DocId,
    pub found_by: AnnotatorId,
    /// The query that found it, as searched.
    pub query: &'a str,
    /// The result's 1-based rank in that search.
    pub result_rank: u32,
    /// Seconds spent searching before the pair was chosen.
    pub seconds_searching: f64,
}

/// A pair found by search, pooled, and served to its finder as a first pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub entry: PoolEntryId,
    /// The finder's first-pass item, at the front of their queue.
    pub assignment_id: i64,
}

/// Adds the pair `find` names to the project's pool, found by search: a step of kind `search`
/// (who, when, the result's rank as the entry's depth), the find's record, the finder's first
/// pass at the front of their queue, and the audit event, in one transaction. A conflict when
/// the pair is in the pool already (or being added by a pool build) or has a final label.
pub async fn add_find(db: &Db, find: &NewFind<'_>) -> StoreResult<Found> {
    if find.result_rank == 0 {
        return Err(StoreError::invalid(None, "a result's rank starts at 1"));
    }
    if !(find.seconds_searching.is_finite() && find.seconds_searching >= 0.0) {
        return Err(StoreError::invalid(
            None,
            "the seconds spent searching are a number, 0 or more",
        ));
    }
    let mut tx = begin_write(db).await?;
    let project_id = find.project_id;
    let claim: Option<i64> =
        sqlx::query_scalar("SELECT id FROM claims WHERE project_id = $1 AND claim_id = $2")
            .bind(project_id)
            .bind(find.claim.as_str())
            .fetch_optional(&mut *tx)
            .await?;
    let claim = claim
        .ok_or_else(|| StoreError::NotFound(format!("claim {} in this project", find.claim)))?;
    let doc: Option<i64> =
        sqlx::query_scalar("SELECT id FROM documents WHERE project_id = $1 AND doc_id = $2")
            .bind(project_id)
            .bind(find.doc.as_str())
            .fetch_optional(&mut *tx)
            .await?;
    let doc = doc.ok_or_else(|| {
        StoreError::NotFound(format!("document {} in this project", find.doc.as_str()))
    })?;
    let pooled: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM pool_entry_rows WHERE project_id = $1 AND claim_id = $2 AND doc_id = $3",
    )
    .bind(project_id)
    .bind(claim)
    .bind(doc)
    .fetch_optional(&mut *tx)
    .await?;
    if pooled.is_some() {
        return Err(StoreError::conflict(
            Constraint::Pooled,
            "this pair is in the pool already: it comes to its annotators through the queue",
        ));
    }
    let labelled: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM final_labels WHERE project_id = $1 AND claim_id = $2 AND doc_id = $3",
    )
    .bind(project_id)
    .bind(claim)
    .bind(doc)
    .fetch_optional(&mut *tx)
    .await?;
    if labelled.is_some() {
        return Err(StoreError::conflict(
            Constraint::Pooled,
            "this pair has a final label already",
        ));
    }
    let strategy: Option<String> =
        sqlx::query_scalar("SELECT pool_strategy FROM projects WHERE id = $1")
            .bind(project_id)
            .fetch_one(&mut *tx)
            .await?;
    let now = now_ms();
    let rank = i64::from(find.result_rank);
    let step: i64 = sqlx::query_scalar(
        "INSERT INTO pool_build_rows (project_id, strategy, depth, systems, added, built_by, built_at, state, kind)
         VALUES ($1, $2, $3, $4, 1, $5, $6, 'done', 'search') RETURNING id",
    )
    .bind(project_id)
    .bind(strategy.as_deref().unwrap_or("per-claim"))
    .bind(rank)
    .bind(format!("[\"{SEARCH_SYSTEM}\"]"))
    .bind(find.found_by.0)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let entry = insert_entry_row(&mut tx, project_id, (claim, doc), rank, step)
        .await
        .on_unique(Constraint::PoolBuilding, || {
            "a pool build is adding this pair: it comes through the queue".to_owned()
        })?;
    sqlx::query(
        "INSERT INTO search_finds (pool_entry_id, project_id, claim_id, doc_id, found_by, query,
                                   result_rank, seconds_searching, found_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(entry)
    .bind(project_id)
    .bind(claim)
    .bind(doc)
    .bind(find.found_by.0)
    .bind(find.query)
    .bind(rank)
    .bind(find.seconds_searching)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let front = super::annotate::assign::front_of_queue(&mut tx, find.found_by).await?;
    let entry = PoolEntryId(entry);
    let assignment_id = super::annotate::assign::insert(
        &mut tx,
        project_id,
        entry,
        find.found_by,
        Stage::First,
        front,
    )
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id: Some(find.found_by.0),
        action: "search_find",
        entity: "pool_entry",
        entity_id: Some(entry.0.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({
            "claim_id": find.claim.as_str(),
            "doc_id": find.doc.as_str(),
            "query": find.query,
            "result_rank": find.result_rank,
            "seconds_searching": find.seconds_searching,
            "assignment_id": assignment_id,
        })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(Found {
        entry,
        assignment_id,
    })
}

/// A pool entry of the pair `(claim, doc)` at `depth` in the pool step `step` (a find's or a
/// cal pick's): its id, or the database's error (a UNIQUE violation when the pair is pooled).
pub(crate) async fn insert_entry_row(
    conn: &mut sqlx::AnyConnection,
    project_id: i64,
    (claim, doc): (i64, i64),
    depth: i64,
    step: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO pool_entry_rows (project_id, claim_id, doc_id, entry_depth, build_id)
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(project_id)
    .bind(claim)
    .bind(doc)
    .bind(depth)
    .bind(step)
    .fetch_one(&mut *conn)
    .await
}

/// The pairs of the project found by search, as (claim key, document key): entries a pool
/// build need not hold at its depth.
pub async fn found_pairs(db: &Db, project_id: i64) -> StoreResult<Vec<(i64, i64)>> {
    Ok(
        sqlx::query_as("SELECT claim_id, doc_id FROM search_finds WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(db)
            .await?,
    )
}
