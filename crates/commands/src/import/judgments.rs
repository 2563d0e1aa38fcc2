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

use super::file::{blocking, display_name, file_sha};
use super::problems::{format_error, Problems};
use crate::error::{CommandError, CommandResult};
use crate::Lead;
use domain::annotation::{check_new_judgment, AnnotatorId, Judged, PairState, Stage, Verdict};
use domain::formats::{ClaimsReader, Judgment, QrelsReader};
use domain::label::Label;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use store::annotate::import::{self as stored, ImportedJudgment, JudgingSnapshot};
use store::import::{self as imports, ImportReport, NewImport};
use store::Db;

/// The file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgmentsFormat {
    QrelsLabels,
    Scifact,
}

impl JudgmentsFormat {
    /// `qrels-labels` or `scifact`.
    pub fn parse(text: &str) -> CommandResult<JudgmentsFormat> {
        match text {
            "qrels-labels" => Ok(JudgmentsFormat::QrelsLabels),
            "scifact" => Ok(JudgmentsFormat::Scifact),
            other => Err(CommandError::Invalid(format!(
                "unknown judgments format {other:?} (expected qrels-labels or scifact)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            JudgmentsFormat::QrelsLabels => "qrels-labels",
            JudgmentsFormat::Scifact => "scifact",
        }
    }

    /// `scifact` for names ending in .jsonl or .json (optionally .gz), else `qrels-labels`.
    fn detect(path: &Path) -> JudgmentsFormat {
        let name = path.to_string_lossy().to_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".jsonl") || name.ends_with(".json") {
            JudgmentsFormat::Scifact
        } else {
            JudgmentsFormat::QrelsLabels
        }
    }
}

/// What to import.
#[derive(Clone, Debug)]
pub struct JudgmentsImport {
    pub path: PathBuf,
    /// None: detected from the file's name ([`JudgmentsFormat::detect`]).
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

/// Reads the file (blocking), noting parse problems.
fn read_lines(
    path: &Path,
    format: JudgmentsFormat,
    pooled_docs: &HashMap<String, Vec<String>>,
    problems: &mut Problems,
) -> CommandResult<Vec<Line>> {
    let mut out = Vec::new();
    match format {
        JudgmentsFormat::QrelsLabels => {
            for item in QrelsReader::open(path).map_err(format_error)? {
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
            for item in ClaimsReader::open(path).map_err(format_error)? {
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

/// The annotator a file's judgments are credited to: an active member of the project.
/// Judgments are a member's: a deactivated account, or one not (or no longer) in the project,
/// would put labels in the release that nobody of the project stands for.
async fn annotator(db: &Db, project_id: i64, username: &str) -> CommandResult<i64> {
    let (annotator, active) = stored::annotator(db, username)
        .await?
        .ok_or_else(|| CommandError::NotFound(format!("annotator: no user {username}")))?;
    if !active {
        return Err(CommandError::Invalid(format!(
            "annotator: {username} is deactivated"
        )));
    }
    if store::projects::membership_at(db, project_id, annotator)
        .await?
        .role
        .is_none()
    {
        return Err(CommandError::Invalid(format!(
            "annotator: {username} is not a member of the project (add them first: \
             claimpool project member add)"
        )));
    }
    Ok(annotator)
}

/// Imports judgments by `spec.annotator` at `spec.stage` into the project; see the module
/// documentation. Checked against one snapshot, written in short transactions hidden until
/// the last (which fails, writing nothing, if someone judged the file's pairs meanwhile): a
/// rejected file writes nothing.
pub async fn judgments(db: &Db, lead: &Lead, spec: JudgmentsImport) -> CommandResult<ImportReport> {
    let (project_id, actor_id) = (lead.project_id(), lead.audit_id());
    // A crashed import of this file no longer stands in the way.
    imports::reclaim_abandoned(db).await?;
    let format = spec
        .format
        .unwrap_or_else(|| JudgmentsFormat::detect(&spec.path));
    let file = display_name(&spec.path);
    // The file is read and hashed before the write lock is taken: pool entries and users are
    // never deleted, so what is read here holds in the write transaction below.
    let annotator = annotator(db, project_id, &spec.annotator).await?;
    let sha = repeat_key(&file_sha(&spec.path).await?, annotator, spec.stage);
    imports::refuse_repeat(db, project_id, "judgments", &file, &sha).await?;
    // Pooled pairs by external ids: (claim, doc) -> (claim row, doc row, sentences).
    let mut by_ext = HashMap::new();
    let mut pooled_docs: HashMap<String, Vec<String>> = HashMap::new();
    for pair in stored::pooled_pairs(db, project_id).await? {
        pooled_docs
            .entry(pair.claim_id.clone())
            .or_default()
            .push(pair.doc_id.clone());
        by_ext.insert(
            (pair.claim_id, pair.doc_id),
            (pair.entry, pair.claim, pair.doc, pair.sentences),
        );
    }
    let (lines, mut problems) = {
        let (path, mut p) = (spec.path.clone(), Problems::new(&file));
        blocking(move || read_lines(&path, format, &pooled_docs, &mut p).map(|l| (l, p))).await?
    };
    // The pairs' states and the last judgment, read in one snapshot; the last transaction
    // checks that nobody judged the file's pairs since.
    let JudgingSnapshot {
        states,
        watermark,
        reannotates,
    } = stored::judging_snapshot(db, project_id).await?;
    let who = AnnotatorId(annotator);
    let mut seen = HashSet::new();
    let mut rows: Vec<ImportedJudgment> = Vec::new();
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
            Ok(after) => rows.push(ImportedJudgment {
                claim,
                doc,
                verdict,
                rationale: l.rationale,
                after,
            }),
            Err(reason) => problems.at(l.line, Some(&field), reason),
        }
    }
    if !problems.is_empty() {
        return Err(problems.into_error());
    }
    let chunked = imports::begin_chunked(
        db,
        NewImport {
            project_id,
            kind: "judgments",
            file: &file,
            sha: &sha,
            format: format.name(),
            actor_id,
            lock_token: None,
        },
    )
    .await?;
    let import_id = chunked.import_id();
    let result = async {
        let finals =
            stored::write_judgments(db, project_id, import_id, annotator, spec.stage, &rows)
                .await?;
        let report = ImportReport {
            import_id,
            file: file.clone(),
            format: format.name().to_owned(),
            rows: rows.len() as u64,
            systems: Vec::new(),
            judgments: finals.len() as u64,
            missing_docs: 0,
        };
        stored::complete_judgments(
            db, project_id, import_id, watermark, &finals, actor_id, &report,
        )
        .await?;
        Ok(report)
    }
    .await;
    imports::finish_chunked(db, chunked, result).await
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
