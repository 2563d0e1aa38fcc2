//! An annotator's own judgments in a project, newest first, filtered and paged: what their
//! history page lists. Reads only rows the annotator wrote (`annotator_id`), undone ones marked.

use super::super::{Db, StoreError, StoreResult};
use crate::flag::Flag;
use domain::annotation::AnnotatorId;
use domain::label::Label;
use domain::model::history::{HistoryRow, HISTORY_PAGE_SIZE};
use sqlx::Row as _;

/// A filter the command checked: a label, a stage (first, second or adjudication), a text.
#[derive(Clone, Debug, Default)]
pub struct OwnHistoryQuery {
    pub label: Option<Label>,
    pub stage: Option<domain::annotation::Stage>,
    /// Matched case-insensitively against the claim's id and text, the document's id and title.
    pub text: Option<String>,
    pub with_undone: bool,
}

/// The page `page` (0-based) of `annotator`'s judgments in `project_id` that `query` lets
/// through, and how many it lets through in all.
pub async fn own_history(
    db: &Db,
    annotator: AnnotatorId,
    project_id: i64,
    query: &OwnHistoryQuery,
    page: usize,
) -> StoreResult<(Vec<HistoryRow>, i64)> {
    let mut conditions = vec![
        "j.project_id = $1".to_owned(),
        "j.annotator_id = $2".to_owned(),
        "j.provenance = 'pooling'".to_owned(),
    ];
    let mut binds: Vec<String> = Vec::new();
    if let Some(label) = query.label {
        binds.push(label.as_str().to_owned());
        conditions.push(format!("j.label = ${}", binds.len() + 2));
    }
    if let Some(stage) = query.stage {
        binds.push(stage.as_str().to_owned());
        conditions.push(format!("j.stage = ${}", binds.len() + 2));
    }
    if let Some(text) = query.text.as_deref().filter(|t| !t.trim().is_empty()) {
        binds.push(format!(
            "%{}%",
            text.trim()
                .to_lowercase()
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        ));
        let n = binds.len() + 2;
        conditions.push(format!(
            "(LOWER(c.claim_id) LIKE ${n} ESCAPE '\\' OR LOWER(c.text) LIKE ${n} ESCAPE '\\'
              OR LOWER(d.doc_id) LIKE ${n} ESCAPE '\\' OR LOWER(d.title) LIKE ${n} ESCAPE '\\')"
        ));
    }
    if !query.with_undone {
        conditions.push("r.judgment_id IS NULL".to_owned());
    }
    let from = format!(
        "FROM judgments j JOIN claims c ON c.id = j.claim_id JOIN documents d ON d.id = j.doc_id
         LEFT JOIN judgment_retractions r ON r.judgment_id = j.id
         WHERE {}",
        conditions.join(" AND ")
    );
    let count_sql = format!("SELECT COUNT(*) {from}");
    let mut count = sqlx::query_scalar::<_, i64>(&count_sql)
        .bind(project_id)
        .bind(annotator.0);
    for b in &binds {
        count = count.bind(b.as_str());
    }
    let total = count.fetch_one(db).await?;
    let limit = HISTORY_PAGE_SIZE as i64;
    let offset = i64::try_from(page)
        .unwrap_or(i64::MAX / 2)
        .saturating_mul(limit);
    let n = binds.len() + 2;
    let sql = format!(
        "SELECT j.id, c.claim_id, c.text, d.doc_id, d.title, j.stage, j.label, j.no_evidence,
                j.rationale, j.specificity, j.created_at,
                r.judgment_id IS NOT NULL AS undone
         {from} ORDER BY j.id DESC LIMIT ${} OFFSET ${}",
        n + 1,
        n + 2
    );
    let mut rows = sqlx::query(&sql).bind(project_id).bind(annotator.0);
    for b in &binds {
        rows = rows.bind(b.as_str());
    }
    let rows = rows.bind(limit).bind(offset).fetch_all(db).await?;
    let rows = rows
        .iter()
        .map(|row| {
            let id: i64 = row.try_get("id")?;
            let rationale: String = row.try_get("rationale")?;
            let sets: Vec<Vec<u32>> = serde_json::from_str(&rationale)
                .map_err(|e| StoreError::Corrupt(format!("judgment {id}: rationale: {e}")))?;
            let mut sentences: Vec<u32> = sets.into_iter().flatten().map(|s| s + 1).collect();
            sentences.sort_unstable();
            sentences.dedup();
            let no_evidence: Flag = row.try_get("no_evidence")?;
            let undone: Flag = row.try_get("undone")?;
            Ok(HistoryRow {
                judgment_id: id,
                claim_id: row.try_get("claim_id")?,
                claim: row.try_get("text")?,
                doc_id: row.try_get("doc_id")?,
                title: row.try_get("title")?,
                stage: row.try_get("stage")?,
                label: row.try_get("label")?,
                no_evidence: no_evidence.0,
                sentences,
                specificity: row.try_get("specificity")?,
                at_ms: row.try_get("created_at")?,
                undone: undone.0,
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    Ok((rows, total))
}
