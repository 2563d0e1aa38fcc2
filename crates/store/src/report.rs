//! The lead report's input, read from the database: one project's [`Snapshot`] (claims,
//! citation evidence, every system's predictions, the pool's setting, final labels,
//! specificity relations and the annotations that stand), from which the report command
//! (`app::command::report`) computes the report.
//!
//! Eight queries in one read transaction, each one pass over one table group with integer
//! keys; the external ids of the documents named are read last, by key (a corpus may hold
//! 500,000 documents; a report needs a few thousand). Which systems built the current pool is read from
//! the last pool build: a system imported with the pooled role after it is not in the pool
//! until the next build, so the report counts it as evaluation-only and names it in
//! [`ProjectSnapshot::not_yet_pooled`].

use super::pool::parse_strategy;
use super::{Db, StoreError, StoreResult};
use domain::ids::{ClaimId, DocId};
use domain::label::{Label, Probability};
use domain::metrics::{Confidence, Prediction};
use domain::pool::{Pair, Role};
use domain::report::{
    AnnotationRecord, FinalLabel, LabelledPair, PairId, PoolSetting, Provenance, Rationale,
    SecondPassMode, Seconds, Snapshot, Specificity, SpecificityNote, Stage, SystemPrediction,
    SystemSnapshot,
};
use futures::TryStreamExt;
use sqlx::AnyConnection;
use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;

/// A project's snapshot, and the pooled systems the current pool does not include yet.
#[derive(Clone, Debug)]
pub struct ProjectSnapshot {
    /// What the report is computed from.
    pub snapshot: Snapshot,
    /// Systems with the pooled role added after the last pool build (in the snapshot as
    /// evaluation-only until the pool is grown with them).
    pub not_yet_pooled: Vec<String>,
}

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

/// Reads the snapshot of project `project_id`, in one read transaction (a consistent view
/// while annotators keep writing).
pub async fn snapshot(db: &Db, project_id: i64) -> StoreResult<ProjectSnapshot> {
    let mut tx = super::db::begin_read(db).await?;
    let conn: &mut AnyConnection = &mut tx;
    let (mode, strategy, depth): (String, Option<String>, Option<i64>) = sqlx::query_as(
        "SELECT second_pass_mode, pool_strategy, pool_depth FROM projects WHERE id = $1",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("project #{project_id}")))?;
    let second_pass_mode = SecondPassMode::parse(&mode).map_err(corrupt)?;
    let pool = match (strategy, depth) {
        (Some(strategy), Some(depth)) => Some(PoolSetting {
            strategy: parse_strategy(&strategy)?,
            depth: u32::try_from(depth)
                .ok()
                .and_then(NonZeroU32::new)
                .ok_or_else(|| corrupt(format!("project #{project_id}: pool depth {depth}")))?,
        }),
        _ => None,
    };
    let built_with = last_build_systems(conn, project_id).await?;
    let claims = claim_ids(conn, project_id).await?;
    let (mut systems, not_yet_pooled, mut predictions) =
        systems(conn, project_id, built_with.as_ref()).await?;
    finder_systems(conn, project_id, &mut systems, &mut predictions).await?;
    let finals = final_labels(conn, project_id).await?;
    let annotations = annotations(conn, project_id).await?;
    let mut named: Vec<i64> = predictions
        .iter()
        .map(|p| p.doc)
        .chain(finals.iter().map(|f| f.doc))
        .chain(annotations.iter().map(|a| a.doc))
        .collect();
    named.sort_unstable();
    named.dedup();
    let docs = doc_ids(conn, project_id, &named).await?;
    tx.commit().await?;

    let pair = |claim: i64, doc: i64| -> StoreResult<PairId> {
        match (claims.get(&claim), docs.get(&doc)) {
            (Some(c), Some(d)) => Ok(Pair::new(c.clone(), d.clone())),
            _ => Err(corrupt(format!(
                "claim #{claim} / document #{doc} are not both of project #{project_id}"
            ))),
        }
    };
    for p in predictions {
        let Some(system) = systems.get_mut(p.system) else {
            continue;
        };
        system.predictions.push(SystemPrediction {
            pair: pair(p.claim, p.doc)?,
            prediction: p.prediction,
            confidence: p.confidence,
            retrieval_rank: p.retrieval_rank,
        });
    }
    let mut final_labels = Vec::with_capacity(finals.len());
    let mut citation_evidence = Vec::new();
    let mut specificity = Vec::new();
    for f in finals {
        let pair = pair(f.claim, f.doc)?;
        if let Some(relation) = f.specificity {
            specificity.push(SpecificityNote {
                pair: pair.clone(),
                relation,
            });
        }
        if f.provenance == Provenance::Citation && f.label.is_evidence() {
            citation_evidence.push(LabelledPair {
                pair: pair.clone(),
                label: f.label,
            });
        }
        final_labels.push(FinalLabel {
            pair,
            label: f.label,
            provenance: f.provenance,
        });
    }
    let annotations = annotations
        .into_iter()
        .map(|a| {
            Ok(AnnotationRecord {
                pair: pair(a.claim, a.doc)?,
                stage: a.stage,
                annotator: a.annotator,
                label: a.label,
                seconds: a.seconds,
                at_ms: a.at_ms,
                rationale: a.rationale,
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let mut claim_list: Vec<ClaimId> = claims.into_values().collect();
    claim_list.sort_unstable();
    Ok(ProjectSnapshot {
        snapshot: Snapshot {
            claims: claim_list,
            citation_evidence,
            systems,
            pool,
            final_labels,
            specificity,
            annotations,
            second_pass_mode,
        },
        not_yet_pooled,
    })
}

/// The pooled systems of the last pool build, or `None` before the first build.
async fn last_build_systems(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<Option<HashSet<String>>> {
    let row: Option<(i64, String)> = sqlx::query_as(
        "SELECT id, systems FROM pool_builds WHERE project_id = $1 ORDER BY id DESC LIMIT 1",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|(id, names)| {
        serde_json::from_str::<Vec<String>>(&names)
            .map(|names| names.into_iter().collect())
            .map_err(|e| corrupt(format!("pool build #{id}: systems {names:?}: {e}")))
    })
    .transpose()
}

async fn claim_ids(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<HashMap<i64, ClaimId>> {
    let mut out = HashMap::new();
    let mut rows =
        sqlx::query_as::<_, (i64, String)>("SELECT id, claim_id FROM claims WHERE project_id = $1")
            .bind(project_id)
            .fetch(&mut *conn);
    while let Some((key, id)) = rows.try_next().await? {
        let id = ClaimId::parse(id.as_str()).map_err(|e| corrupt(format!("claim {id:?}: {e}")))?;
        out.insert(key, id);
    }
    Ok(out)
}

/// The external ids of documents `keys` (sorted, distinct) of the project.
async fn doc_ids(
    conn: &mut AnyConnection,
    project_id: i64,
    keys: &[i64],
) -> StoreResult<HashMap<i64, DocId>> {
    let mut out = HashMap::with_capacity(keys.len());
    for chunk in keys.chunks(5_000) {
        let sql = format!(
            "SELECT id, doc_id FROM documents WHERE project_id = $1 AND id IN ({})",
            super::dialect::params(2, chunk.len())
        );
        let mut query = sqlx::query_as::<_, (i64, String)>(&sql).bind(project_id);
        for key in chunk {
            query = query.bind(*key);
        }
        let mut rows = query.fetch(&mut *conn);
        while let Some((key, id)) = rows.try_next().await? {
            let id =
                DocId::parse(id.as_str()).map_err(|e| corrupt(format!("document {id:?}: {e}")))?;
            out.insert(key, id);
        }
    }
    Ok(out)
}

/// What a stored prediction says: scored with a label and both probabilities, labelled with a
/// label only, unlabelled without a label (as the evaluation reads a run).
fn prediction(
    label: Option<String>,
    p_support: Option<f64>,
    p_contradict: Option<f64>,
) -> Result<Prediction, String> {
    let label = label
        .map(|l| Label::parse(&l))
        .transpose()
        .map_err(|e| e.to_string())?;
    let probability = |p: Option<f64>| {
        p.map(Probability::new)
            .transpose()
            .map_err(|e| e.to_string())
    };
    Ok(
        match (label, probability(p_support)?, probability(p_contradict)?) {
            (Some(label), Some(p_support), Some(p_contradict)) => Prediction::Scored {
                label,
                p_support,
                p_contradict,
            },
            (Some(label), _, _) => Prediction::Labelled { label },
            (None, _, _) => Prediction::Unlabelled,
        },
    )
}

/// A prediction with its pair by database keys; `system` indexes the system list.
struct KeyedPrediction {
    system: usize,
    claim: i64,
    doc: i64,
    prediction: Prediction,
    confidence: Confidence,
    retrieval_rank: Option<u32>,
}

/// A prediction row: system, claim, document, label, p_support, p_contradict, confidence,
/// retrieval rank.
type PredictionRow = (
    i64,
    i64,
    i64,
    Option<String>,
    Option<f64>,
    Option<f64>,
    f64,
    Option<i64>,
);

/// Every system by name (predictions still empty), the pooled ones not in the last build, and
/// every prediction by keys.
async fn systems(
    conn: &mut AnyConnection,
    project_id: i64,
    built_with: Option<&HashSet<String>>,
) -> StoreResult<(Vec<SystemSnapshot>, Vec<String>, Vec<KeyedPrediction>)> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT id, name, role FROM systems WHERE project_id = $1 AND ready = 1 ORDER BY name",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut systems = Vec::with_capacity(rows.len());
    let mut index = HashMap::with_capacity(rows.len());
    let mut not_yet_pooled = Vec::new();
    for (id, name, role) in rows {
        let stored = Role::parse(&role).map_err(|e| corrupt(format!("system {name:?}: {e}")))?;
        let role = match stored {
            // Before the first build every pooled system is pooled (at depth 0).
            Role::Pooled if built_with.is_none_or(|names| names.contains(&name)) => Role::Pooled,
            Role::Pooled => {
                not_yet_pooled.push(name.clone());
                Role::EvaluationOnly
            }
            Role::EvaluationOnly => Role::EvaluationOnly,
        };
        index.insert(id, systems.len());
        systems.push(SystemSnapshot {
            name,
            role,
            predictions: Vec::new(),
        });
    }
    let mut predictions = Vec::new();
    let mut rows = sqlx::query_as::<_, PredictionRow>(
        "SELECT p.system_id, p.claim_id, p.doc_id, p.label, p.p_support, p.p_contradict,
                p.confidence, p.retrieval_rank
         FROM predictions p JOIN systems s ON s.id = p.system_id WHERE s.project_id = $1 AND s.ready = 1",
    )
    .bind(project_id)
    .fetch(&mut *conn);
    while let Some(row) = rows.try_next().await? {
        let (system, claim, doc, label, p_support, p_contradict, confidence, rank) = row;
        let Some(&system) = index.get(&system) else {
            return Err(corrupt(format!("a prediction of unknown system #{system}")));
        };
        let context = |e: String| {
            let name = systems.get(system).map_or("?", |s| s.name.as_str());
            corrupt(format!(
                "prediction of system {name:?} for claim #{claim}, document #{doc}: {e}"
            ))
        };
        predictions.push(KeyedPrediction {
            system,
            claim,
            doc,
            prediction: prediction(label, p_support, p_contradict).map_err(context)?,
            confidence: Confidence::new(confidence).map_err(|e| context(e.to_string()))?,
            retrieval_rank: rank
                .map(|r| u32::try_from(r).map_err(|_| context(format!("retrieval rank {r}"))))
                .transpose()?,
        });
    }
    Ok((systems, not_yet_pooled, predictions))
}

/// The pairs found beyond the runs (issue 38) as pooled systems of their own: `search`, the
/// pairs found by search, and `cal`, the pairs the live `cal` order added that no pooled run
/// ranked.
async fn finder_systems(
    conn: &mut AnyConnection,
    project_id: i64,
    systems: &mut Vec<SystemSnapshot>,
    predictions: &mut Vec<KeyedPrediction>,
) -> StoreResult<()> {
    let finders = [
        (
            super::search::SEARCH_SYSTEM,
            "SELECT claim_id, doc_id FROM search_finds WHERE project_id = $1
             ORDER BY claim_id, found_at, pool_entry_id",
        ),
        (
            super::search::CAL_SYSTEM,
            "SELECT e.claim_id, e.doc_id FROM cal_picks p JOIN pool_entry_rows e ON e.id = p.pool_entry_id
             WHERE p.project_id = $1 AND p.in_runs = 0
             ORDER BY e.claim_id, p.picked_at, p.pool_entry_id",
        ),
    ];
    for (name, sql) in finders {
        let finds: Vec<(i64, i64)> = sqlx::query_as(sql)
            .bind(project_id)
            .fetch_all(&mut *conn)
            .await?;
        finder_system(name, finds, systems, predictions)?;
    }
    Ok(())
}

/// The pairs one finder found, when there are any, as a pooled system named `name`: each
/// claim's pairs in the order they were found (the first, rank 1 and the highest confidence),
/// label-less like a TREC run, so that every table and curve of the report counts what it
/// added beyond the runs.
fn finder_system(
    name: &str,
    finds: Vec<(i64, i64)>,
    systems: &mut Vec<SystemSnapshot>,
    predictions: &mut Vec<KeyedPrediction>,
) -> StoreResult<()> {
    if finds.is_empty() {
        return Ok(());
    }
    let system = systems.len();
    systems.push(SystemSnapshot {
        name: name.to_owned(),
        role: Role::Pooled,
        predictions: Vec::new(),
    });
    let mut previous = None;
    let mut position = 0u32;
    for (claim, doc) in finds {
        position = if previous == Some(claim) {
            position + 1
        } else {
            1
        };
        previous = Some(claim);
        predictions.push(KeyedPrediction {
            system,
            claim,
            doc,
            prediction: Prediction::Unlabelled,
            confidence: Confidence::new(1.0 / f64::from(position))
                .map_err(|e| corrupt(format!("{name} find's confidence: {e}")))?,
            retrieval_rank: Some(position),
        });
    }
    Ok(())
}

/// A final label by keys, with the specificity relation of the judgment it rests on.
struct KeyedFinal {
    claim: i64,
    doc: i64,
    label: Label,
    provenance: Provenance,
    specificity: Option<Specificity>,
}

/// Every final label, with the specificity relation of its deciding judgment, where it notes
/// one.
async fn final_labels(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Vec<KeyedFinal>> {
    let mut out = Vec::new();
    let mut rows = sqlx::query_as::<_, (i64, i64, String, String, Option<String>)>(
        "SELECT f.claim_id, f.doc_id, f.label, f.provenance, j.specificity
         FROM final_labels f JOIN judgments j ON j.id = f.judgment_id
         WHERE f.project_id = $1",
    )
    .bind(project_id)
    .fetch(&mut *conn);
    while let Some((claim, doc, label, provenance, specificity)) = rows.try_next().await? {
        let context = |e: String| {
            corrupt(format!(
                "final label of claim #{claim}, document #{doc}: {e}"
            ))
        };
        out.push(KeyedFinal {
            claim,
            doc,
            label: Label::parse(&label).map_err(|e| context(e.to_string()))?,
            provenance: Provenance::parse(&provenance).map_err(|e| context(e.to_string()))?,
            specificity: specificity
                .map(|s| Specificity::parse(&s))
                .transpose()
                .map_err(|e| context(e.to_string()))?,
        });
    }
    Ok(out)
}

/// An annotation by keys.
struct KeyedAnnotation {
    claim: i64,
    doc: i64,
    stage: Stage,
    annotator: String,
    label: Label,
    seconds: Option<Seconds>,
    at_ms: i64,
    rationale: Rationale,
}

/// An annotation row: id, claim, document, stage, annotator, label, seconds, time, rationale
/// (JSON evidence sets), sentences in the document's abstract.
type AnnotationRow = (
    i64,
    i64,
    i64,
    String,
    String,
    String,
    Option<f64>,
    i64,
    String,
    Option<i64>,
);

/// The union of a judgment's evidence sets (JSON arrays of sentence indices), sorted and
/// distinct, and the abstract's length.
fn rationale(sets: &str, abstract_sentences: Option<i64>) -> Result<Rationale, String> {
    let sets: Vec<Vec<u32>> =
        serde_json::from_str(sets).map_err(|e| format!("rationale {sets:?}: {e}"))?;
    let mut sentences: Vec<u32> = sets.into_iter().flatten().collect();
    sentences.sort_unstable();
    sentences.dedup();
    let abstract_sentences = abstract_sentences.unwrap_or(0);
    Ok(Rationale {
        sentences,
        abstract_sentences: u32::try_from(abstract_sentences)
            .map_err(|_| format!("an abstract of {abstract_sentences} sentences"))?,
    })
}

/// The first-pass, second-pass and adjudication judgments that stand (not retracted), with
/// their annotators, in the order they were written.
async fn annotations(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<Vec<KeyedAnnotation>> {
    let mut out = Vec::new();
    let sentences = super::dialect::json_array_length(super::db::engine_of(conn), "d.sentences");
    let sql = format!(
        "SELECT j.id, j.claim_id, j.doc_id, j.stage, u.username, j.label, j.seconds_spent,
                j.created_at, j.rationale,
                (SELECT {sentences} FROM document_rows d WHERE d.id = j.doc_id)
         FROM judgments j JOIN users u ON u.id = j.annotator_id
         WHERE j.project_id = $1 AND j.stage IN ('first', 'second', 'adjudication')
           AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)
         ORDER BY j.id"
    );
    let mut rows = sqlx::query_as::<_, AnnotationRow>(&sql)
        .bind(project_id)
        .fetch(&mut *conn);
    while let Some(row) = rows.try_next().await? {
        let (id, claim, doc, stage, annotator, label, seconds, at_ms, sets, abstract_sentences) =
            row;
        let context = |e: String| corrupt(format!("judgment #{id}: {e}"));
        let stage = match stage.as_str() {
            "first" => Stage::First,
            "second" => Stage::Second,
            "adjudication" => Stage::Adjudication,
            other => return Err(context(format!("stage {other:?}"))),
        };
        out.push(KeyedAnnotation {
            claim,
            doc,
            stage,
            annotator,
            label: Label::parse(&label).map_err(|e| context(e.to_string()))?,
            seconds: seconds
                .map(Seconds::new)
                .transpose()
                .map_err(|e| context(e.to_string()))?,
            at_ms,
            rationale: rationale(&sets, abstract_sentences).map_err(context)?,
        });
    }
    Ok(out)
}
