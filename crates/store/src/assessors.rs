//! Model assessors (issue 16): a system's predictions on the pooled pairs, or an external
//! command's answers, registered as an assessor of the pool, and their labels (tables
//! `model_assessor_rows`, `model_label_rows`; views `model_assessors`, `model_labels`). Never
//! judgments, never final labels. Written once, in one transaction with its audit event; never
//! changed (triggers refuse it). A project may suggest one assessor's labels to its annotators
//! (`projects.suggest_from`; off by default).

use super::audit::{json, AuditEvent};
use super::write_gate;
use super::{now_ms, Constraint, Db, Field, StoreError, StoreResult};
use domain::assessor::{AssessorLabels, AssessorSource, AssessorSummary, StoredPrediction};
use domain::ids::{ClaimId, DocId};
use domain::label::Label;
use domain::model::annotate::SuggestionsView;
use sqlx::AnyConnection;

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

fn label(text: &str) -> StoreResult<Label> {
    Label::parse(text).map_err(|e| corrupt(format!("model label: {e}")))
}

/// An assessor's name, and its view's `system`, `command` and `ran_at` columns.
type SourceRow = (String, Option<String>, Option<String>, Option<i64>);

/// An assessor's source from the view's `system`, `command` and `ran_at` columns.
fn source(
    name: &str,
    system: Option<String>,
    command: Option<String>,
    ran_at: Option<i64>,
) -> StoreResult<AssessorSource> {
    match (system, command, ran_at) {
        (Some(system), None, _) => Ok(AssessorSource::System { system }),
        (None, Some(command), Some(ran_at)) => Ok(AssessorSource::Command { command, ran_at }),
        _ => Err(corrupt(format!(
            "model assessor {name:?} has neither a system nor a command"
        ))),
    }
}

/// A ready system of the project: its id (404 naming the system when there is none).
pub async fn system_id(db: &Db, project_id: i64, system: &str) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT id FROM systems WHERE project_id = $1 AND name = $2 AND ready = 1")
        .bind(project_id)
        .bind(system)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("system {system:?} in this project")))
}

/// A pooled pair (by its keys) and the system's prediction of it, if the run holds it.
#[derive(Clone, Debug)]
pub struct PooledPrediction {
    /// `(claims.id, documents.id)`: opaque keys for [`create`].
    pub key: (i64, i64),
    /// The pair's external ids, for messages.
    pub claim: String,
    pub doc: String,
    pub prediction: Option<StoredPrediction>,
}

type PredictionRow = (
    i64,
    i64,
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
);

/// Every pair of the project's pool with `system_id`'s prediction of it, in claim, doc order.
pub async fn pooled_predictions(
    db: &Db,
    project_id: i64,
    system_id: i64,
) -> StoreResult<Vec<PooledPrediction>> {
    let rows: Vec<PredictionRow> = sqlx::query_as(
        "SELECT e.claim_id, e.doc_id, c.claim_id, d.doc_id, p.system_id, p.label, p.p_support,
                p.p_contradict, p.p_nei
         FROM pool_entries e
         JOIN claims c ON c.id = e.claim_id
         JOIN documents d ON d.id = e.doc_id
         LEFT JOIN predictions p
           ON p.system_id = $2 AND p.claim_id = e.claim_id AND p.doc_id = e.doc_id
         WHERE e.project_id = $1
         ORDER BY c.claim_id, d.doc_id",
    )
    .bind(project_id)
    .bind(system_id)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(
            |(claim_key, doc_key, claim, doc, held, label_text, p_support, p_contradict, p_nei)| {
                let prediction = match held {
                    None => None,
                    Some(_) => Some(StoredPrediction {
                        label: label_text.as_deref().map(label).transpose()?,
                        p_support,
                        p_contradict,
                        p_nei,
                    }),
                };
                Ok(PooledPrediction {
                    key: (claim_key, doc_key),
                    claim,
                    doc,
                    prediction,
                })
            },
        )
        .collect()
}

/// A claim of the pool and its pooled abstracts, for an external command to label.
#[derive(Clone, Debug)]
pub struct PooledClaim {
    /// `claims.id`.
    pub key: i64,
    pub claim_id: ClaimId,
    pub text: String,
    /// `(documents.id, doc_id)` of each pooled abstract, by doc id.
    pub docs: Vec<(i64, DocId)>,
}

/// Every claim of the project's pool with its pooled abstracts' keys, by claim id (the texts of
/// the abstracts are read claim by claim with [`abstracts`]).
pub async fn pooled_claims(db: &Db, project_id: i64) -> StoreResult<Vec<PooledClaim>> {
    let rows: Vec<(i64, String, String, i64, String)> = sqlx::query_as(
        "SELECT c.id, c.claim_id, c.text, d.id, d.doc_id
         FROM pool_entries e
         JOIN claims c ON c.id = e.claim_id
         JOIN documents d ON d.id = e.doc_id
         WHERE e.project_id = $1
         ORDER BY c.claim_id, d.doc_id",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let mut claims: Vec<PooledClaim> = Vec::new();
    for (claim_key, claim_id, text, doc_key, doc_id) in rows {
        let doc_id = DocId::parse(&doc_id).map_err(|e| corrupt(format!("doc id: {e}")))?;
        match claims.last_mut() {
            Some(last) if last.key == claim_key => last.docs.push((doc_key, doc_id)),
            _ => claims.push(PooledClaim {
                key: claim_key,
                claim_id: ClaimId::parse(&claim_id)
                    .map_err(|e| corrupt(format!("claim id: {e}")))?,
                text,
                docs: vec![(doc_key, doc_id)],
            }),
        }
    }
    Ok(claims)
}

/// An abstract's title and sentences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abstract {
    pub title: String,
    pub sentences: Vec<String>,
}

/// The abstracts of the documents `keys` (`documents.id`), in that order.
pub async fn abstracts(db: &Db, keys: &[i64]) -> StoreResult<Vec<Abstract>> {
    let mut found: std::collections::HashMap<i64, Abstract> =
        std::collections::HashMap::with_capacity(keys.len());
    for chunk in keys.chunks(500) {
        let marks = (1..=chunk.len())
            .map(|i| format!("${i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("SELECT id, title, sentences FROM documents WHERE id IN ({marks})");
        let mut query = sqlx::query_as::<_, (i64, String, String)>(&sql);
        for key in chunk {
            query = query.bind(key);
        }
        for (key, title, sentences) in query.fetch_all(db).await? {
            let sentences: Vec<String> = serde_json::from_str(&sentences)
                .map_err(|e| corrupt(format!("sentences of document #{key}: {e}")))?;
            found.insert(key, Abstract { title, sentences });
        }
    }
    keys.iter()
        .map(|key| {
            found
                .get(key)
                .cloned()
                .ok_or_else(|| corrupt(format!("pooled document #{key} is gone")))
        })
        .collect()
}

/// One label to store: the pair's keys, the label, whether the model gave it (false: a pooled
/// pair its run does not hold), and the rationale sentences it gave, if any.
#[derive(Clone, Debug)]
pub struct NewLabel {
    pub key: (i64, i64),
    pub label: Label,
    pub predicted: bool,
    pub sentences: Option<Vec<u32>>,
}

/// Where a new assessor's labels come from.
#[derive(Clone, Debug)]
pub enum NewSource<'a> {
    /// The predictions of the ready system `systems.id`.
    System(i64),
    /// A command: its line as given, and when it was started (ms).
    Command { line: &'a str, ran_at: i64 },
}

/// A conflict if the project has a model assessor named `name` already (checked again by
/// [`create`]; this spares a long command run whose labels could not be stored).
pub async fn check_name_free(db: &Db, project_id: i64, name: &str) -> StoreResult<()> {
    let taken: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM model_assessor_rows WHERE project_id = $1 AND name = $2",
    )
    .bind(project_id)
    .bind(name)
    .fetch_one(db)
    .await?;
    if taken > 0 {
        return Err(self::taken(name));
    }
    Ok(())
}

fn taken(name: &str) -> StoreError {
    StoreError::conflict(
        Constraint::AssessorName,
        format!("the project has a model assessor named {name:?} already"),
    )
}

/// Registers the assessor `name` with its labels from `source`, audited; a name the project has
/// already is a conflict.
pub async fn create(
    db: &Db,
    project_id: i64,
    name: &str,
    source: NewSource<'_>,
    labels: &[NewLabel],
    actor_id: Option<i64>,
) -> StoreResult<i64> {
    let mut tx = write_gate::begin(db).await?;
    let (system_id, command, ran_at, provenance) = match source {
        NewSource::System(system_id) => {
            let system: String = sqlx::query_scalar(
                "SELECT name FROM systems WHERE id = $1 AND project_id = $2 AND ready = 1",
            )
            .bind(system_id)
            .bind(project_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("system #{system_id} in this project")))?;
            (
                Some(system_id),
                None,
                None,
                serde_json::json!({ "system": system }),
            )
        }
        NewSource::Command { line, ran_at } => (
            None,
            Some(line),
            Some(ran_at),
            serde_json::json!({ "command": line, "ran_at": ran_at }),
        ),
    };
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO model_assessor_rows
           (project_id, name, system_id, command, ran_at, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(project_id)
    .bind(name)
    .bind(system_id)
    .bind(command)
    .bind(ran_at)
    .bind(actor_id)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| match super::violation(&e) {
        Some(super::Violation::Unique) => taken(name),
        _ => StoreError::Sql(e),
    })?;
    for label in labels {
        let sentences = label
            .sentences
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::Fault(format!("rationale sentences: {e}")))?;
        sqlx::query(
            "INSERT INTO model_label_rows
               (assessor_id, claim_id, doc_id, label, predicted, sentences)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(id)
        .bind(label.key.0)
        .bind(label.key.1)
        .bind(label.label.as_str())
        .bind(i64::from(label.predicted))
        .bind(sentences)
        .execute(&mut *tx)
        .await?;
    }
    let evidence = labels.iter().filter(|l| l.label.is_evidence()).count();
    let mut value = serde_json::json!({
        "name": name,
        "labels": labels.len(),
        "evidence": evidence,
    });
    if let (Some(object), serde_json::Value::Object(from)) = (value.as_object_mut(), provenance) {
        object.extend(from);
    }
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "create",
        entity: "model_assessor",
        entity_id: Some(name.to_owned()),
        old_value: None,
        new_value: json(&value),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

type SummaryRow = (
    String,
    Option<String>,
    Option<String>,
    Option<i64>,
    i64,
    i64,
    i64,
    Option<String>,
    i64,
);

/// The project's model assessors, by name.
pub async fn list(db: &Db, project_id: i64) -> StoreResult<Vec<AssessorSummary>> {
    let rows: Vec<SummaryRow> = sqlx::query_as(
        "SELECT a.name, a.system, a.command, a.ran_at,
                (SELECT COUNT(*) FROM model_labels l WHERE l.assessor_id = a.id),
                (SELECT COUNT(*) FROM model_labels l WHERE l.assessor_id = a.id
                   AND l.label IN ('SUPPORT', 'CONTRADICT')),
                (SELECT COUNT(*) FROM model_labels l WHERE l.assessor_id = a.id
                   AND l.predicted = 0),
                u.username, a.created_at
         FROM model_assessors a LEFT JOIN users u ON u.id = a.created_by
         WHERE a.project_id = $1
         ORDER BY a.name",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let count = |n: i64| u64::try_from(n).map_err(|_| corrupt(format!("count {n}")));
    rows.into_iter()
        .map(
            |(
                name,
                system,
                command,
                ran_at,
                labels,
                evidence,
                not_in_run,
                created_by,
                created_at,
            )| {
                Ok(AssessorSummary {
                    source: source(&name, system, command, ran_at)?,
                    name,
                    labels: count(labels)?,
                    evidence: count(evidence)?,
                    not_in_run: count(not_in_run)?,
                    created_by,
                    created_at,
                })
            },
        )
        .collect()
}

/// Every model assessor of the project with its labels, by name, each in claim, doc order.
pub async fn labels(db: &Db, project_id: i64) -> StoreResult<Vec<AssessorLabels>> {
    let mut tx = super::db::begin_read(db).await?;
    let labels = read_labels(&mut tx, project_id).await;
    tx.rollback().await?;
    labels
}

/// [`labels`], inside the caller's transaction.
pub(crate) async fn read_labels(
    conn: &mut sqlx::AnyConnection,
    project_id: i64,
) -> StoreResult<Vec<AssessorLabels>> {
    let rows: Vec<(String, String, String, String)> = sqlx::query_as(
        "SELECT a.name, c.claim_id, d.doc_id, l.label
         FROM model_assessors a
         JOIN model_labels l ON l.assessor_id = a.id
         JOIN claims c ON c.id = l.claim_id
         JOIN documents d ON d.id = l.doc_id
         WHERE a.project_id = $1
         ORDER BY a.name",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let names: Vec<SourceRow> = sqlx::query_as(
        "SELECT name, system, command, ran_at FROM model_assessors
         WHERE project_id = $1 ORDER BY name",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut assessors: Vec<AssessorLabels> = names
        .into_iter()
        .map(|(name, system, command, ran_at)| {
            Ok(AssessorLabels {
                source: source(&name, system, command, ran_at)?,
                name,
                labels: Vec::new(),
            })
        })
        .collect::<StoreResult<_>>()?;
    for (name, claim, doc, text) in rows {
        let claim = ClaimId::parse(&claim).map_err(|e| corrupt(format!("claim id: {e}")))?;
        let doc = DocId::parse(&doc).map_err(|e| corrupt(format!("doc id: {e}")))?;
        let Some(assessor) = assessors.iter_mut().find(|a| a.name == name) else {
            return Err(corrupt(format!(
                "model labels of unknown assessor {name:?}"
            )));
        };
        assessor.labels.push((claim, doc, label(&text)?));
    }
    for assessor in &mut assessors {
        assessor.labels.sort();
    }
    Ok(assessors)
}

/// The time the latest model assessor of the project was registered (a release that carries
/// `qrels-model.txt` dates from it too).
pub async fn latest_change(
    conn: &mut sqlx::AnyConnection,
    project_id: i64,
) -> StoreResult<Option<i64>> {
    Ok(
        sqlx::query_scalar("SELECT MAX(created_at) FROM model_assessors WHERE project_id = $1")
            .bind(project_id)
            .fetch_one(conn)
            .await?,
    )
}

/// The project's suggestions: the assessor whose labels annotators see (None: off) and every
/// model assessor of the project, by name.
pub async fn suggestions(db: &Db, project_id: i64) -> StoreResult<SuggestionsView> {
    let mut conn = db.acquire().await?;
    let current = suggest_from(&mut conn, project_id).await?;
    let assessors: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM model_assessor_rows WHERE project_id = $1 ORDER BY name",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(SuggestionsView { current, assessors })
}

/// The name of the assessor the project suggests from (None: suggestions off).
async fn suggest_from(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Option<String>> {
    let row: Option<Option<String>> = sqlx::query_scalar(
        "SELECT a.name FROM projects p LEFT JOIN model_assessor_rows a ON a.id = p.suggest_from
         WHERE p.id = $1",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.ok_or_else(|| StoreError::NotFound(format!("project #{project_id}")))
}

/// Turns suggestions on, from the project's model assessor `assessor`, or off (None); audited.
/// An assessor the project does not have is invalid, the message naming the field `assessor`.
pub async fn set_suggestions(
    db: &Db,
    project_id: i64,
    assessor: Option<&str>,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let mut tx = write_gate::begin(db).await?;
    let old = suggest_from(&mut tx, project_id).await?;
    let id = match assessor {
        None => None,
        Some(name) => Some(
            sqlx::query_scalar::<_, i64>(
                "SELECT id FROM model_assessor_rows WHERE project_id = $1 AND name = $2",
            )
            .bind(project_id)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| {
                StoreError::invalid(
                    Field::Assessor,
                    format!(
                        "the project has no model assessor named {name:?} \
                         (claimpool assessor list shows its assessors)"
                    ),
                )
            })?,
        ),
    };
    sqlx::query("UPDATE projects SET suggest_from = $1 WHERE id = $2")
        .bind(id)
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "suggestions",
        entity: "project",
        entity_id: Some(project_id.to_string()),
        old_value: Some(serde_json::json!({ "suggest_from": old })),
        new_value: Some(serde_json::json!({ "suggest_from": assessor })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The label the project's suggestions give the pair `(claims.id, documents.id)`: the chosen
/// assessor's, if suggestions are on and it labelled the pair. Only the label: an annotator
/// never learns which model gave it.
pub(crate) async fn suggestion(
    conn: &mut AnyConnection,
    project_id: i64,
    claim_id: i64,
    doc_id: i64,
) -> StoreResult<Option<Label>> {
    let text: Option<String> = sqlx::query_scalar(
        "SELECT l.label FROM projects p
         JOIN model_label_rows l ON l.assessor_id = p.suggest_from
         WHERE p.id = $1 AND l.claim_id = $2 AND l.doc_id = $3",
    )
    .bind(project_id)
    .bind(claim_id)
    .bind(doc_id)
    .fetch_optional(&mut *conn)
    .await?;
    text.as_deref().map(label).transpose()
}
