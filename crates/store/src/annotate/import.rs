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
    begin_chunked, display_name, file_sha, finish_chunked, finish_import, format_error,
    refuse_repeat, ImportReport, NewImport, Problems,
};
use super::super::import_writer;
use super::super::write_gate;
use super::super::{now_ms, Db, StoreError, StoreResult};
use super::assign::assign_pending;
use super::begin_write;
use super::history::project_states;
use domain::annotation::{check_new_judgment, AnnotatorId, Judged, PairState, Stage, Verdict};
use domain::formats::{ClaimsReader, Judgment, QrelsReader};
use domain::label::Label;
use std::collections::{HashMap, HashSet};
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
            other => Err(StoreError::invalid(
                None,
                format!("unknown judgments format {other:?} (expected qrels-labels or scifact)"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
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

/// A line that passed the checks: the line, its pool entry, claim and doc keys, the verdict and
/// the pair's state after it.
type Checked = (Line, i64, i64, i64, Verdict, PairState);

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
/// documentation. Checked against one snapshot, written in short transactions hidden until
/// the last (which fails, writing nothing, if someone judged the file's pairs meanwhile): a
/// rejected file writes nothing.
pub async fn import_judgments(
    db: &Db,
    project_id: i64,
    spec: JudgmentsImport,
    actor_id: Option<i64>,
) -> StoreResult<ImportReport> {
    // A crashed import of this file no longer stands in the way.
    import_writer::reclaim_abandoned(db).await?;
    let format = spec.format.unwrap_or_else(|| detect(&spec.path));
    let file = display_name(&spec.path);
    // The file is read and hashed before the write lock is taken: pool entries and users are
    // never deleted, so what is read here holds in the write transaction below.
    let (annotator, active): (i64, crate::flag::Flag) =
        sqlx::query_as("SELECT id, active FROM users WHERE username = $1")
            .bind(&spec.annotator)
            .fetch_optional(db)
            .await?
            .ok_or_else(|| {
                StoreError::NotFound(format!("annotator: no user {}", spec.annotator))
            })?;
    // Judgments are a member's: a deactivated account, or one not (or no longer) in the
    // project, would put labels in the release that nobody of the project stands for.
    if !active.0 {
        return Err(StoreError::invalid(
            None,
            format!("annotator: {} is deactivated", spec.annotator),
        ));
    }
    if crate::projects::membership_at(db, project_id, annotator)
        .await?
        .role
        .is_none()
    {
        return Err(StoreError::invalid(
            None,
            format!(
                "annotator: {} is not a member of the project (add them first: \
             claimpool project member add)",
                spec.annotator
            ),
        ));
    }
    let sha = repeat_key(&file_sha(&spec.path).await?, annotator, spec.stage);
    refuse_repeat(db, project_id, "judgments", &spec.path, &sha).await?;
    // Pooled pairs by external ids: (claim, doc) -> (entry, claim row, doc row, sentences).
    let pooled: Vec<(i64, i64, i64, String, String, String)> = sqlx::query_as(
        "SELECT e.id, e.claim_id, e.doc_id, c.claim_id, d.doc_id, d.sentences FROM pool_entries e
         JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id WHERE e.project_id = $1",
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
    // The pairs' states and the last judgment, read in one snapshot; the last transaction
    // checks that nobody judged the file's pairs since.
    let (states, watermark, reannotates) = {
        let mut read = crate::db::begin_read(db).await?;
        let states = project_states(&mut read, project_id).await?;
        let watermark: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM judgment_rows")
            .fetch_one(&mut *read)
            .await?;
        let reannotates = super::history::reannotates(&mut read, project_id).await?;
        read.rollback().await?;
        (states, watermark, reannotates)
    };
    let who = AnnotatorId(annotator);
    let mut seen = HashSet::new();
    let mut rows: Vec<Checked> = Vec::new();
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
            // The browser's rule: a re-annotation only where the project asks for them.
            stage => check_new_judgment(&state, stage, who, false, reannotates)
                .map_err(|e| e.to_string()),
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
    let (lock, import_id) = begin_chunked(
        db,
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
    let result = async {
        let written = write_judgments(db, project_id, import_id, annotator, spec.stage, &rows).await?;
        // The last transaction: nobody judged these pairs since the snapshot; the labels that
        // are final become final, the pairs' open items close, and the import appears whole.
        let mut tx = begin_write(db).await?;
        let meanwhile: Option<(String, String)> = sqlx::query_as(
            "SELECT c.claim_id, d.doc_id FROM judgments j
             JOIN judgment_rows mine ON mine.claim_id = j.claim_id AND mine.doc_id = j.doc_id
             JOIN claims c ON c.id = j.claim_id JOIN documents d ON d.id = j.doc_id
             WHERE mine.import_id = $1 AND j.id > $2 AND j.import_id IS DISTINCT FROM $1 LIMIT 1",
        )
        .bind(import_id)
        .bind(watermark)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((claim, doc)) = meanwhile {
            return Err(StoreError::conflict(crate::Constraint::JudgedMeanwhile, format!(
                "{file}: claim {claim} / doc {doc} was judged while the file was imported; nothing was imported, import it again"
            )));
        }
        let now = now_ms();
        for chunk in written.finals.chunks(FINALS_PER_STATEMENT) {
            let rows = crate::values::ValuesInsert::new(
                crate::db::engine_of(&tx),
                "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at) ",
                chunk,
                |b, f| {
                    b.bind(project_id)
                        .bind(f.claim)
                        .bind(f.doc)
                        .bind(f.judgment)
                        .bind(f.label.as_str())
                        .bind("import")
                        .bind(now);
                },
            );
            if let Some((sql, args)) = rows.finish()? {
                sqlx::query_with(&sql, args).execute(&mut *tx).await?;
            }
        }
        // The work the import did is no longer anyone's open item.
        sqlx::query(
            "UPDATE assignments SET status = 'withdrawn', closed_at = $1
             WHERE status = 'open' AND pool_entry_id IN
               (SELECT e.id FROM pool_entries e JOIN judgment_rows j
                  ON j.claim_id = e.claim_id AND j.doc_id = e.doc_id
                WHERE j.import_id = $2 AND e.project_id = $3)",
        )
        .bind(now)
        .bind(import_id)
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
        let report = ImportReport {
            import_id,
            file: file.clone(),
            format: format.name().to_owned(),
            rows: rows.len() as u64,
            systems: Vec::new(),
            judgments: written.finals.len() as u64,
            missing_docs: 0,
        };
        finish_import(&mut tx, project_id, import_id, actor_id, &report).await?;
        // After the import is done (in this transaction), so the pairs' new states count.
        assign_pending(&mut tx, project_id, actor_id).await?;
        tx.commit().await?;
        Ok(report)
    }
    .await;
    finish_chunked(db, import_id, lock, result).await
}

/// What a judgments import is refused a second time by (the `sha256` of its `imports` row):
/// the file's SHA-256 with the annotator and the stage it was imported for, so that the same
/// file of labels may be imported for two annotators who agreed on every pair, or for one
/// annotator's first and, later, final stage; the same file for the same annotator and stage
/// is a repeat.
fn repeat_key(file_sha: &str, annotator: i64, stage: Stage) -> String {
    use sha2::{Digest, Sha256};
    let key = format!("judgments\0{file_sha}\0{annotator}\0{}", stage.as_str());
    format!("{:x}", Sha256::digest(key.as_bytes()))
}

/// Judgments per write transaction of a judgments import.
const JUDGMENTS_CHUNK: usize = 2_000;
/// Final labels per INSERT of the last transaction (7 values each, under SQLite's 32,766).
const FINALS_PER_STATEMENT: usize = 1_000;

/// A final label the last transaction of a judgments import writes.
struct FinalRow {
    claim: i64,
    doc: i64,
    judgment: i64,
    label: Label,
}

/// What [`write_judgments`] wrote.
struct Written {
    finals: Vec<FinalRow>,
}

/// Writes the import's judgments in short transactions, each in its turn, hidden (the view
/// `judgments`) while the import is `writing`; returns the final labels they make.
async fn write_judgments(
    db: &Db,
    project_id: i64,
    import_id: i64,
    annotator: i64,
    stage: Stage,
    rows: &[Checked],
) -> StoreResult<Written> {
    let now = now_ms();
    let mut finals = Vec::new();
    for chunk in rows.chunks(JUDGMENTS_CHUNK) {
        let mut tx = write_gate::begin(db).await?;
        for (l, _, claim, doc, verdict, after) in chunk {
            let id = sqlx::query_scalar::<_, i64>(
                "INSERT INTO judgment_rows (project_id, claim_id, doc_id, annotator_id, stage, label, no_evidence,
                                        rationale, provenance, import_id, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'import', $9, $10) RETURNING id",
            )
            .bind(project_id)
            .bind(claim)
            .bind(doc)
            .bind(annotator)
            .bind(stage.as_str())
            .bind(verdict.label().as_str())
            .bind(i64::from(verdict.no_evidence()))
            .bind(serde_json::to_string(&l.rationale).unwrap_or_else(|_| "[]".into()))
            .bind(import_id)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            if let PairState::Final(done) = after {
                finals.push(FinalRow {
                    claim: *claim,
                    doc: *doc,
                    judgment: id,
                    label: done.label,
                });
            }
        }
        tx.commit().await?;
    }
    Ok(Written { finals })
}
