//! Bulk judgments from elsewhere (an earlier round, another tool): `claimpool import judgments`.
//!
//! Formats: `qrels-labels` (`claim_id 0 doc_id SUPPORT|CONTRADICT|NEI`) and SciFact claims
//! (`scifact`: each claim's evidence documents with their labels and rationales; the claim's
//! other pooled pairs count as NEI). Every pair must be pooled. The same checks as the web form
//! apply: the stage must be the one the pair needs, a second pass never comes from the first
//! annotator, nothing after a final label. Decision: a first-stage NEI imports as the first
//! pass's "clearly no evidence" (final NEI, as in SciFact-Open, where such pairs get no second
//! pass); at the second stage NEI is a label like the others. A final-stage import makes the
//! label final at once. Any problem rejects the whole file with every problem listed.

use super::super::import::{
    begin_import, display_name, file_sha, finish_import, format_error, refuse_repeat, ImportReport,
    NewImport, Problems,
};
use super::super::{now_ms, Db, StoreError, StoreResult};
use super::assign::assign_pending;
use super::begin_write;
use super::history::project_states;
use crate::domain::annotation::{check_submission, AnnotatorId, Judged, PairState, Stage, Verdict};
use crate::domain::formats::{ClaimsReader, Judgment, QrelsReader};
use crate::domain::label::Label;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

/// The file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgmentsFormat {
    QrelsLabels,
    Scifact,
}

impl JudgmentsFormat {
    /// `qrels-labels` or `scifact`.
    pub fn parse(text: &str) -> StoreResult<JudgmentsFormat> {
        match text {
            "qrels-labels" => Ok(JudgmentsFormat::QrelsLabels),
            "scifact" => Ok(JudgmentsFormat::Scifact),
            other => Err(StoreError::Invalid(format!(
                "unknown judgments format {other:?} (expected qrels-labels or scifact)"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            JudgmentsFormat::QrelsLabels => "qrels-labels",
            JudgmentsFormat::Scifact => "scifact",
        }
    }
}

/// What to import.
#[derive(Clone, Debug)]
pub struct JudgmentsImport {
    pub path: PathBuf,
    /// None: `scifact` for names ending in .jsonl or .json (optionally .gz), else `qrels-labels`.
    pub format: Option<JudgmentsFormat>,
    /// Whose judgments these are.
    pub annotator: String,
    /// first, second or final.
    pub stage: Stage,
}

/// One judgment read from the file.
struct Line {
    line: usize,
    claim: String,
    doc: String,
    label: Label,
    rationale: Vec<Vec<u32>>,
}

fn detect(path: &std::path::Path) -> JudgmentsFormat {
    let name = path.to_string_lossy().to_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    if name.ends_with(".jsonl") || name.ends_with(".json") {
        JudgmentsFormat::Scifact
    } else {
        JudgmentsFormat::QrelsLabels
    }
}

/// Reads the file (blocking), noting parse problems.
fn read_lines(
    spec: &JudgmentsImport,
    format: JudgmentsFormat,
    pooled_docs: &HashMap<String, Vec<String>>,
    problems: &mut Problems,
) -> StoreResult<Vec<Line>> {
    let mut out = Vec::new();
    match format {
        JudgmentsFormat::QrelsLabels => {
            for item in QrelsReader::open(&spec.path).map_err(format_error)? {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let q = located.record;
                match q.judgment {
                    Judgment::Label(label) => out.push(Line {
                        line: located.line,
                        claim: q.claim_id.as_str().to_owned(),
                        doc: q.doc_id.as_str().to_owned(),
                        label,
                        rationale: Vec::new(),
                    }),
                    Judgment::Relevance(_) => problems.at(
                        located.line,
                        Some("judgment"),
                        "expected SUPPORT, CONTRADICT or NEI, not a relevance grade",
                    ),
                }
            }
        }
        JudgmentsFormat::Scifact => {
            for item in ClaimsReader::open(&spec.path).map_err(format_error)? {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let claim = located.record;
                let id = claim.id.as_str().to_owned();
                let mut evidence = HashSet::new();
                for ev in &claim.evidence {
                    evidence.insert(ev.doc_id.as_str().to_owned());
                    out.push(Line {
                        line: located.line,
                        claim: id.clone(),
                        doc: ev.doc_id.as_str().to_owned(),
                        label: ev.label,
                        rationale: ev.sentence_sets.clone(),
                    });
                }
                for doc in pooled_docs.get(&id).into_iter().flatten() {
                    if !evidence.contains(doc) {
                        out.push(Line {
                            line: located.line,
                            claim: id.clone(),
                            doc: doc.clone(),
                            label: Label::Nei,
                            rationale: Vec::new(),
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Imports judgments by `spec.annotator` at `spec.stage` into the project; see the module
/// documentation. One transaction: a rejected file writes nothing.
pub async fn import_judgments(
    db: &Db,
    project_id: i64,
    spec: JudgmentsImport,
    actor_id: Option<i64>,
) -> StoreResult<ImportReport> {
    if !matches!(spec.stage, Stage::First | Stage::Second | Stage::Final) {
        return Err(StoreError::Invalid(
            "stage: imports are first, second or final".into(),
        ));
    }
    let format = spec.format.unwrap_or_else(|| detect(&spec.path));
    let file = display_name(&spec.path);
    let sha = file_sha(&spec.path).await?;
    refuse_repeat(db, project_id, "judgments", &spec.path, &sha).await?;
    // The file is read and hashed before the write lock is taken: pool entries and users are
    // never deleted, so what is read here holds in the write transaction below.
    let annotator: i64 = sqlx::query_scalar("SELECT id FROM users WHERE username = ?")
        .bind(&spec.annotator)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("annotator: no user {}", spec.annotator)))?;
    // Pooled pairs by external ids: (claim, doc) -> (entry, claim row, doc row, sentences).
    let pooled: Vec<(i64, i64, i64, String, String, String)> = sqlx::query_as(
        "SELECT e.id, e.claim_id, e.doc_id, c.claim_id, d.doc_id, d.sentences FROM pool_entries e
         JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id WHERE e.project_id = ?",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let mut by_ext = HashMap::new();
    let mut pooled_docs: HashMap<String, Vec<String>> = HashMap::new();
    for (entry, claim, doc, claim_ext, doc_ext, sentences) in pooled {
        let count = serde_json::from_str::<Vec<serde_json::Value>>(&sentences)
            .map(|s| s.len())
            .unwrap_or(0);
        pooled_docs
            .entry(claim_ext.clone())
            .or_default()
            .push(doc_ext.clone());
        by_ext.insert((claim_ext, doc_ext), (entry, claim, doc, count));
    }
    let (lines, mut problems) = {
        let spec = spec.clone();
        let mut p = Problems::new(&file);
        tokio::task::spawn_blocking(move || {
            read_lines(&spec, format, &pooled_docs, &mut p).map(|l| (l, p))
        })
        .await
        .map_err(|e| StoreError::Fault(format!("the import stopped: {e}")))??
    };
    let mut tx = begin_write(db).await?;
    let states = project_states(&mut tx, project_id).await?;
    let who = AnnotatorId(annotator);
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for l in lines {
        let field = format!("{} {}", l.claim, l.doc);
        let Some(&(entry, claim, doc, sentence_count)) =
            by_ext.get(&(l.claim.clone(), l.doc.clone()))
        else {
            problems.at(
                l.line,
                Some("doc_id"),
                format!("claim {} / doc {} is not a pooled pair", l.claim, l.doc),
            );
            continue;
        };
        if !seen.insert(entry) {
            problems.at(
                l.line,
                Some("doc_id"),
                format!("claim {} / doc {} appears twice", l.claim, l.doc),
            );
            continue;
        }
        if let Some(bad) = l
            .rationale
            .iter()
            .flatten()
            .find(|&&s| s as usize >= sentence_count)
        {
            problems.at(
                l.line,
                Some("sentences"),
                format!("sentence {bad} is past the abstract's {sentence_count} sentences"),
            );
            continue;
        }
        let state = states
            .get(&(claim, doc))
            .copied()
            .unwrap_or(PairState::NeedsFirst);
        let verdict = match (spec.stage, l.label) {
            (Stage::First, Label::Nei) => Verdict::ClearlyNoEvidence,
            (_, label) => Verdict::Label(label),
        };
        let checked = match spec.stage {
            Stage::Final => match state {
                PairState::Final(done) => Err(format!(
                    "the pair is already final ({})",
                    done.label.as_str()
                )),
                _ => Ok(()),
            },
            stage => check_submission(&state, stage, who, false).map_err(|e| e.to_string()),
        };
        if let Err(reason) = checked {
            problems.at(l.line, Some(&field), reason);
            continue;
        }
        let after = Judged::new(spec.stage, Some(who), verdict)
            .and_then(|j| state.after(0, &j))
            .map_err(|e| e.to_string());
        match after {
            Ok(after) => rows.push((l, entry, claim, doc, verdict, after)),
            Err(reason) => problems.at(l.line, Some(&field), reason),
        }
    }
    if !problems.is_empty() {
        return Err(problems.into_error());
    }
    let import_id = begin_import(
        &mut tx,
        NewImport {
            project_id,
            kind: "judgments",
            path: &spec.path,
            sha: &sha,
            format: format.name(),
            actor_id,
            lock_token: None,
        },
    )
    .await?;
    let now = now_ms();
    let mut finals = 0u64;
    let mut per_label: BTreeMap<&'static str, u64> = BTreeMap::new();
    for (l, entry, claim, doc, verdict, after) in &rows {
        let id = sqlx::query(
            "INSERT INTO judgment_rows (project_id, claim_id, doc_id, annotator_id, stage, label, no_evidence,
                                    rationale, provenance, import_id, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'import', ?, ?)",
        )
        .bind(project_id)
        .bind(claim)
        .bind(doc)
        .bind(annotator)
        .bind(spec.stage.as_str())
        .bind(verdict.label().as_str())
        .bind(verdict.no_evidence())
        .bind(serde_json::to_string(&l.rationale).unwrap_or_else(|_| "[]".into()))
        .bind(import_id)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .last_insert_rowid();
        *per_label.entry(verdict.label().as_str()).or_insert(0) += 1;
        // The work the import did is no longer anyone's open item.
        sqlx::query("UPDATE assignments SET status = 'withdrawn', closed_at = ? WHERE pool_entry_id = ? AND status = 'open'")
            .bind(now)
            .bind(entry)
            .execute(&mut *tx)
            .await?;
        if let PairState::Final(done) = after {
            sqlx::query(
                "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
                 VALUES (?, ?, ?, ?, ?, 'import', ?)",
            )
            .bind(project_id)
            .bind(claim)
            .bind(doc)
            .bind(id)
            .bind(done.label.as_str())
            .bind(now)
            .execute(&mut *tx)
            .await?;
            finals += 1;
        }
    }
    assign_pending(&mut tx, project_id, actor_id).await?;
    let report = ImportReport {
        import_id,
        file,
        format: format.name().to_owned(),
        rows: rows.len() as u64,
        systems: Vec::new(),
        judgments: finals,
        missing_docs: 0,
    };
    finish_import(&mut tx, project_id, import_id, actor_id, &report).await?;
    tx.commit().await?;
    Ok(report)
}
