//! Imports as background jobs (issue 14): a lead uploads a corpus, claims, a run or judgments
//! from the browser; the file is saved to disk and the server's worker imports it with the same
//! checks as the command line, reporting how much of the file it has read and stopping when a
//! lead cancels (see [`crate::domain::formats::watch`]). A cancelled or failed import writes
//! nothing.

use super::annotate::{import_judgments, JudgmentsFormat, JudgmentsImport};
use super::import::{self, ImportReport, RunImport, SystemRole, SystemSpec};
use super::{Db, StoreError, StoreResult};
use crate::domain::annotation::Stage;
use crate::domain::formats::{CorpusFormat, LabelOrder, RunFormat, RunReadOptions};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The kind of an import job (`jobs.kind`).
pub const IMPORT: &str = "import";

/// The name every upload's directory starts with: what may be removed as an upload's.
pub const UPLOAD_DIR_PREFIX: &str = "claimpool-upload-";

/// What an uploaded file is, with the options its import takes (as the command line's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ImportWhat {
    /// A corpus; `format` `scifact` or `beir`, None to detect.
    Corpus { format: Option<String> },
    /// Claims (SciFact format, evidence as citation labels).
    Claims,
    /// A system run.
    Run {
        /// None: the file names its systems.
        system: Option<String>,
        /// `pooled` or `evaluation-only`.
        role: String,
        /// None: detected.
        format: Option<String>,
        /// None: the default order.
        label_order: Option<String>,
        description: String,
    },
    /// Judgments by one annotator at one stage.
    Judgments {
        annotator: String,
        /// first, second or final.
        stage: String,
        /// `qrels-labels` or `scifact`; None to detect.
        format: Option<String>,
    },
}

impl ImportWhat {
    /// `corpus`, `claims`, `run` or `judgments`.
    pub fn kind(&self) -> &'static str {
        match self {
            ImportWhat::Corpus { .. } => "corpus",
            ImportWhat::Claims => "claims",
            ImportWhat::Run { .. } => "run",
            ImportWhat::Judgments { .. } => "judgments",
        }
    }

    /// Checks the options before a job is queued, so that a mistyped one is refused at once.
    pub fn check(&self) -> StoreResult<()> {
        match self {
            ImportWhat::Corpus { format } => corpus_format(format.as_deref()).map(drop),
            ImportWhat::Claims => Ok(()),
            ImportWhat::Run {
                role,
                format,
                label_order,
                ..
            } => {
                SystemRole::parse(role)?;
                run_format(format.as_deref())?;
                label_order_of(label_order.as_deref()).map(drop)
            }
            ImportWhat::Judgments {
                annotator,
                stage,
                format,
            } => {
                if annotator.trim().is_empty() {
                    return Err(StoreError::Invalid(
                        "annotator: whose judgments these are".into(),
                    ));
                }
                stage_of(stage)?;
                judgments_format(format.as_deref()).map(drop)
            }
        }
    }
}

/// Limits an uploaded run is read under (the server's, at the time of the upload).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadLimits {
    pub max_decompressed_bytes: u64,
    pub max_line_bytes: usize,
    pub max_sentences: usize,
}

/// An import job's parameters (`jobs.params`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportJob {
    /// The file's name as uploaded (what messages name).
    pub file: String,
    /// The saved upload, in a directory of its own that the job removes when it ends.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    pub limits: ReadLimits,
    #[serde(flatten)]
    pub what: ImportWhat,
}

impl ImportJob {
    /// "run of arsjoint.jsonl", for the jobs list.
    pub fn describe(&self) -> String {
        format!("{} from {}", self.what.kind(), self.file)
    }

    /// Removes the upload's directory (only a directory the upload form made: its name says
    /// so), once the job has ended.
    pub fn remove_upload(&self) {
        let Some(dir) = self.path.parent() else {
            return;
        };
        let ours = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(UPLOAD_DIR_PREFIX));
        if ours {
            if let Err(e) = std::fs::remove_dir_all(dir) {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove an upload's directory");
            }
        }
    }

    /// Imports the file into `project_id` for `actor_id`, as the command line would.
    pub async fn run(
        &self,
        db: &Db,
        project_id: i64,
        actor_id: Option<i64>,
    ) -> StoreResult<ImportReport> {
        let path = self.path.clone();
        match &self.what {
            ImportWhat::Corpus { format } => {
                import::corpus(
                    db,
                    project_id,
                    &path,
                    corpus_format(format.as_deref())?,
                    actor_id,
                )
                .await
            }
            ImportWhat::Claims => import::claims(db, project_id, &path, actor_id).await,
            ImportWhat::Run {
                system,
                role,
                format,
                label_order,
                description,
            } => {
                let run = RunImport {
                    path,
                    format: run_format(format.as_deref())?,
                    options: RunReadOptions {
                        label_order: label_order_of(label_order.as_deref())?,
                        max_decompressed_bytes: Some(self.limits.max_decompressed_bytes),
                        max_line_bytes: self.limits.max_line_bytes,
                        max_sentences: self.limits.max_sentences,
                        ..RunReadOptions::default()
                    },
                    system: SystemSpec {
                        name: system.clone().filter(|s| !s.trim().is_empty()),
                        role: SystemRole::parse(role)?,
                        description: description.clone(),
                        negative_sampling_ratio: None,
                    },
                    allow_missing_docs: false,
                };
                import::run(db, project_id, run, actor_id).await
            }
            ImportWhat::Judgments {
                annotator,
                stage,
                format,
            } => {
                let spec = JudgmentsImport {
                    path,
                    format: judgments_format(format.as_deref())?,
                    annotator: annotator.trim().to_owned(),
                    stage: stage_of(stage)?,
                };
                import_judgments(db, project_id, spec, actor_id).await
            }
        }
    }
}

fn blank(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

fn corpus_format(text: Option<&str>) -> StoreResult<Option<CorpusFormat>> {
    match blank(text) {
        None => Ok(None),
        Some("scifact") => Ok(Some(CorpusFormat::SciFact)),
        Some("beir") => Ok(Some(CorpusFormat::Beir)),
        Some(other) => Err(StoreError::Invalid(format!(
            "format: {other:?} is no corpus format (scifact or beir)"
        ))),
    }
}

fn run_format(text: Option<&str>) -> StoreResult<Option<RunFormat>> {
    blank(text)
        .map(|t| {
            t.parse::<RunFormat>()
                .map_err(|e| StoreError::Invalid(format!("format: {e}")))
        })
        .transpose()
}

fn label_order_of(text: Option<&str>) -> StoreResult<LabelOrder> {
    match blank(text) {
        None => Ok(LabelOrder::default()),
        Some(t) => t
            .parse::<LabelOrder>()
            .map_err(|e| StoreError::Invalid(format!("label order: {e}"))),
    }
}

fn judgments_format(text: Option<&str>) -> StoreResult<Option<JudgmentsFormat>> {
    blank(text).map(JudgmentsFormat::parse).transpose()
}

fn stage_of(text: &str) -> StoreResult<Stage> {
    Stage::parse(text.trim()).map_err(|e| StoreError::Invalid(format!("stage: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(what: ImportWhat) -> ImportJob {
        ImportJob {
            file: "f.jsonl".into(),
            path: "/tmp/f.jsonl".into(),
            bytes: 10,
            limits: ReadLimits {
                max_decompressed_bytes: 1 << 30,
                max_line_bytes: 1 << 20,
                max_sentences: 100,
            },
            what,
        }
    }

    #[test]
    fn parameters_round_trip_through_json_with_their_kind() {
        for what in [
            ImportWhat::Corpus {
                format: Some("beir".into()),
            },
            ImportWhat::Claims,
            ImportWhat::Run {
                system: Some("bm25".into()),
                role: "pooled".into(),
                format: None,
                label_order: None,
                description: "d".into(),
            },
            ImportWhat::Judgments {
                annotator: "a1".into(),
                stage: "final".into(),
                format: Some("qrels-labels".into()),
            },
        ] {
            let job = job(what);
            let text = serde_json::to_string(&job).unwrap();
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["kind"], job.what.kind());
            assert_eq!(serde_json::from_str::<ImportJob>(&text).unwrap(), job);
            assert!(job.what.check().is_ok(), "{text}");
        }
    }

    #[test]
    fn options_are_checked_before_the_job_is_queued() {
        let bad = [
            ImportWhat::Corpus {
                format: Some("csv".into()),
            },
            ImportWhat::Run {
                system: None,
                role: "judge".into(),
                format: None,
                label_order: None,
                description: String::new(),
            },
            ImportWhat::Judgments {
                annotator: " ".into(),
                stage: "final".into(),
                format: None,
            },
            ImportWhat::Judgments {
                annotator: "a1".into(),
                stage: "adjudication-ish".into(),
                format: None,
            },
        ];
        for what in bad {
            assert!(what.check().is_err(), "{what:?}");
        }
    }
}
