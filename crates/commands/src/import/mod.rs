//! The import command: a corpus, claims, a run or judgments, from a file on the server's disk.
//! The command line, the browser's upload form, the HTTP API and the job worker all describe an
//! import as an [`ImportWhat`] (the options as text, as a form or a job's stored parameters have
//! them) and parse it once, here, into an [`ImportKind`]; [`Import::run`] takes the typed value
//! and a [`Lead`] proof. A rejected file writes nothing.

use super::Lead;
use crate::error::{CommandError, CommandResult, Field};
use domain::annotation::Stage;
use domain::formats::{CorpusFormat, LabelOrder, RunFormat, RunReadOptions};
use domain::pool::Role;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use store::Db;

mod chunked;
mod claims;
mod corpus;
mod file;
mod judgments;
mod parser;
mod problems;
mod run;
mod staged;

pub use claims::claims;
pub use corpus::corpus;
pub use judgments::{judgments, JudgmentsFormat, JudgmentsImport};
pub use problems::MAX_ERRORS;
pub use run::{run, RunImport};
pub use store::import::{ImportReport, SystemSpec};

/// The kind of an import job (`jobs.kind`).
pub const IMPORT: &str = store::jobs::IMPORT;

/// The name every upload's directory starts with: what may be removed as an upload's.
pub const UPLOAD_DIR_PREFIX: &str = "claimpool-upload-";

/// What a file imports, with its options as text: a form's fields, the command line's
/// arguments, or a job's stored parameters. [`ImportKind::try_from`] is its one parse.
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
        /// Training's negative sampling ratio, recorded with the system.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        negative_sampling_ratio: Option<f64>,
        /// Skip pairs whose document is not in the corpus instead of refusing the file.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        allow_missing_docs: bool,
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

/// A run import's options, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// None: the file names its systems.
    pub system: Option<String>,
    pub role: Role,
    /// None: detected from the file.
    pub format: Option<RunFormat>,
    pub label_order: LabelOrder,
    pub description: String,
    /// A finite ratio >= 0.
    pub negative_sampling_ratio: Option<f64>,
    pub allow_missing_docs: bool,
}

/// What a file imports, with its options parsed. Stored in a job's parameters in its text form
/// ([`ImportWhat`]), so a stored job reads back only as a valid import.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ImportWhat", into = "ImportWhat")]
pub enum ImportKind {
    /// None: detect the format from the first line.
    Corpus {
        format: Option<CorpusFormat>,
    },
    Claims,
    Run(RunOptions),
    Judgments {
        /// Non-empty, trimmed.
        annotator: String,
        stage: Stage,
        /// None: detected.
        format: Option<JudgmentsFormat>,
    },
}

impl ImportKind {
    /// `corpus`, `claims`, `run` or `judgments`.
    pub fn kind(&self) -> &'static str {
        match self {
            ImportKind::Corpus { .. } => "corpus",
            ImportKind::Claims => "claims",
            ImportKind::Run(_) => "run",
            ImportKind::Judgments { .. } => "judgments",
        }
    }
}

fn blank(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

fn invalid(field: Field, message: impl std::fmt::Display) -> CommandError {
    CommandError::field(field, message)
}

fn corpus_format_name(format: CorpusFormat) -> &'static str {
    match format {
        CorpusFormat::SciFact => "scifact",
        CorpusFormat::Beir => "beir",
    }
}

impl TryFrom<ImportWhat> for ImportKind {
    type Error = CommandError;

    fn try_from(what: ImportWhat) -> CommandResult<ImportKind> {
        Ok(match what {
            ImportWhat::Corpus { format } => ImportKind::Corpus {
                format: match blank(format.as_deref()) {
                    None => None,
                    Some("scifact") => Some(CorpusFormat::SciFact),
                    Some("beir") => Some(CorpusFormat::Beir),
                    Some(other) => {
                        return Err(invalid(
                            Field::Format,
                            format!("{other:?} is no corpus format (scifact or beir)"),
                        ))
                    }
                },
            },
            ImportWhat::Claims => ImportKind::Claims,
            ImportWhat::Run {
                system,
                role,
                format,
                label_order,
                description,
                negative_sampling_ratio,
                allow_missing_docs,
            } => {
                if let Some(r) = negative_sampling_ratio.filter(|r| !(r.is_finite() && *r >= 0.0)) {
                    return Err(invalid(
                        Field::NegativeSamplingRatio,
                        format!("{r} is not a ratio (a number >= 0)"),
                    ));
                }
                ImportKind::Run(RunOptions {
                    system: blank(system.as_deref()).map(str::to_owned),
                    role: Role::parse(role.trim()).map_err(|e| invalid(Field::Role, e))?,
                    format: blank(format.as_deref())
                        .map(|t| {
                            t.parse::<RunFormat>()
                                .map_err(|e| invalid(Field::Format, e))
                        })
                        .transpose()?,
                    label_order: match blank(label_order.as_deref()) {
                        None => LabelOrder::default(),
                        Some(t) => t.parse().map_err(|e| invalid(Field::LabelOrder, e))?,
                    },
                    description: description.trim().to_owned(),
                    negative_sampling_ratio,
                    allow_missing_docs,
                })
            }
            ImportWhat::Judgments {
                annotator,
                stage,
                format,
            } => {
                let annotator = annotator.trim();
                if annotator.is_empty() {
                    return Err(invalid(Field::Annotator, "whose judgments these are"));
                }
                let stage = Stage::parse(&stage).map_err(|e| invalid(Field::Stage, e))?;
                if !matches!(stage, Stage::First | Stage::Second | Stage::Final) {
                    return Err(invalid(Field::Stage, "imports are first, second or final"));
                }
                ImportKind::Judgments {
                    annotator: annotator.to_owned(),
                    stage,
                    format: blank(format.as_deref())
                        .map(|t| JudgmentsFormat::parse(t).map_err(|e| invalid(Field::Format, e)))
                        .transpose()?,
                }
            }
        })
    }
}

impl From<ImportKind> for ImportWhat {
    fn from(kind: ImportKind) -> ImportWhat {
        match kind {
            ImportKind::Corpus { format } => ImportWhat::Corpus {
                format: format.map(|f| corpus_format_name(f).to_owned()),
            },
            ImportKind::Claims => ImportWhat::Claims,
            ImportKind::Run(run) => ImportWhat::Run {
                system: run.system,
                role: run.role.as_str().to_owned(),
                format: run.format.map(|f| f.as_str().to_owned()),
                label_order: Some(run.label_order.to_string()),
                description: run.description,
                negative_sampling_ratio: run.negative_sampling_ratio,
                allow_missing_docs: run.allow_missing_docs,
            },
            ImportKind::Judgments {
                annotator,
                stage,
                format,
            } => ImportWhat::Judgments {
                annotator,
                stage: stage.as_str().to_owned(),
                format: format.map(|f| f.name().to_owned()),
            },
        }
    }
}

/// Limits an uploaded file is read under (the server's, at the time of the upload).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadLimits {
    pub max_decompressed_bytes: u64,
    pub max_line_bytes: usize,
    pub max_sentences: usize,
}

/// The import command: a file on the server's disk, what it is, and the limits it is read
/// under (None: the command line's defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub path: PathBuf,
    pub kind: ImportKind,
    pub limits: Option<ReadLimits>,
}

impl Import {
    /// Imports the file into the lead's project, audited as the lead's action. The limits, when
    /// given, bound every read of the file, whatever it imports (through
    /// [`domain::formats::bound`]).
    pub async fn run(&self, db: &Db, lead: &Lead) -> CommandResult<ImportReport> {
        let path = self.path.clone();
        let _bounds = self.limits.map(|limits| {
            domain::formats::bound(
                &path,
                domain::formats::ReadBounds {
                    max_decompressed_bytes: limits.max_decompressed_bytes,
                    max_line_bytes: limits.max_line_bytes,
                },
            )
        });
        Ok(match &self.kind {
            ImportKind::Corpus { format } => corpus(db, lead, &path, *format).await?,
            ImportKind::Claims => claims(db, lead, &path).await?,
            ImportKind::Run(opts) => {
                let mut options = RunReadOptions {
                    label_order: opts.label_order,
                    ..RunReadOptions::default()
                };
                if let Some(limits) = self.limits {
                    options.max_decompressed_bytes = Some(limits.max_decompressed_bytes);
                    options.max_line_bytes = limits.max_line_bytes;
                    options.max_sentences = limits.max_sentences;
                }
                let import = RunImport {
                    path,
                    format: opts.format,
                    options,
                    system: SystemSpec {
                        name: opts.system.clone(),
                        role: opts.role,
                        description: opts.description.clone(),
                        negative_sampling_ratio: opts.negative_sampling_ratio,
                    },
                    allow_missing_docs: opts.allow_missing_docs,
                };
                run(db, lead, import).await?
            }
            ImportKind::Judgments {
                annotator,
                stage,
                format,
            } => {
                let spec = JudgmentsImport {
                    path,
                    format: *format,
                    annotator: annotator.clone(),
                    stage: *stage,
                };
                judgments(db, lead, spec).await?
            }
        })
    }
}

/// An import job's parameters (`jobs.params`): an upload saved to disk and what it imports.
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
    pub what: ImportKind,
    /// The upload as kept in the database (on PostgreSQL, [`crate::jobs::create_import`]):
    /// the job reads it from there, on whichever server runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<i64>,
}

impl ImportJob {
    /// "run from arsjoint.jsonl", for the jobs list.
    pub fn describe(&self) -> String {
        format!("{} from {}", self.what.kind(), self.file)
    }

    /// The import command of this job.
    pub fn command(&self) -> Import {
        Import {
            path: self.path.clone(),
            kind: self.what.clone(),
            limits: Some(self.limits),
        }
    }

    /// `message` as the lead may read it: the saved upload named as uploaded, and any other
    /// upload's directory (an earlier import's, which "imported already" quotes) taken out.
    pub fn shown(&self, message: &str) -> String {
        hide_upload_dirs(&message.replace(&self.path.display().to_string(), &self.file))
    }

    /// The job as the worker runs it: an upload kept in the database written first to a new
    /// upload directory of this machine's (its file named as the saved one), and the job's
    /// path that file; a job whose upload stayed on disk as it is.
    pub async fn fetched(mut self, db: &store::Db) -> crate::CommandResult<ImportJob> {
        let Some(upload) = self.upload else {
            return Ok(self);
        };
        let dir = tempfile::Builder::new()
            .prefix(UPLOAD_DIR_PREFIX)
            .tempdir()
            .map_err(|e| crate::CommandError::Internal(format!("a directory for the upload: {e}")))?
            .keep();
        let name = self
            .path
            .file_name()
            .map_or_else(|| std::ffi::OsString::from("upload"), ToOwned::to_owned);
        let path = dir.join(name);
        if let Err(e) = crate::uploads::write_to(db, upload, &path).await {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        self.path = path;
        Ok(self)
    }

    /// Removes the upload's directory (only a directory the upload form made: its name says
    /// so), once the job has ended.
    pub fn remove_upload(&self) {
        let Some(dir) = self.path.parent() else {
            return;
        };
        if is_upload_dir(dir) {
            if let Err(e) = std::fs::remove_dir_all(dir) {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove an upload's directory");
            }
        }
    }
}

/// `text` with every upload directory taken out of the paths it quotes
/// (`/tmp/claimpool-upload-x1Y/run.jsonl` becomes `run.jsonl`): messages name uploaded files,
/// never where the server keeps them.
pub fn hide_upload_dirs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(UPLOAD_DIR_PREFIX) {
        let (before, after) = rest.split_at(at);
        // The path starts after the white space, quote or bracket before it.
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | '[' | '`'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        out.push_str(&before[..start]);
        match after.find(['/', '\\']) {
            Some(slash) => rest = &after[slash + 1..],
            None => {
                // The directory itself, no file in it.
                out.push_str("the upload");
                rest = after.trim_start_matches(|c: char| {
                    !c.is_whitespace() && !matches!(c, '"' | '\'' | ')' | ']' | '`' | ',' | ':')
                });
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_upload_dir(dir: &Path) -> bool {
    dir.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(UPLOAD_DIR_PREFIX))
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
            what: ImportKind::try_from(what).expect("valid options"),
            upload: None,
        }
    }

    fn run(role: &str) -> ImportWhat {
        ImportWhat::Run {
            system: Some("bm25".into()),
            role: role.into(),
            format: None,
            label_order: None,
            description: "d".into(),
            negative_sampling_ratio: None,
            allow_missing_docs: false,
        }
    }

    #[test]
    fn messages_name_uploads_never_the_servers_directories() {
        let job = ImportJob {
            file: "my run (1).jsonl".into(),
            path: "/tmp/claimpool-upload-aB3/my_run__1_.jsonl".into(),
            ..job(run("pooled"))
        };
        let message = "/tmp/claimpool-upload-aB3/my_run__1_.jsonl: this file was imported into \
                       the project already (import #4, /var/tmp/claimpool-upload-Zz9/run.jsonl); \
                       nothing was imported";
        assert_eq!(
            job.shown(message),
            "my run (1).jsonl: this file was imported into the project already (import #4, \
             run.jsonl); nothing was imported"
        );
        assert_eq!(
            hide_upload_dirs("\"/tmp/claimpool-upload-x/c.jsonl\":3: bad"),
            "\"c.jsonl\":3: bad"
        );
        assert_eq!(
            hide_upload_dirs("cannot remove /tmp/claimpool-upload-x: busy"),
            "cannot remove the upload: busy"
        );
        assert_eq!(
            hide_upload_dirs("corpus.jsonl:2: bad"),
            "corpus.jsonl:2: bad"
        );
    }

    #[test]
    fn parameters_round_trip_through_json_with_their_kind() {
        for what in [
            ImportWhat::Corpus {
                format: Some("beir".into()),
            },
            ImportWhat::Claims,
            run("pooled"),
            ImportWhat::Judgments {
                annotator: "a1".into(),
                stage: "final".into(),
                format: Some("qrels-labels".into()),
            },
        ] {
            let job = job(what);
            let text = serde_json::to_string(&job).expect("serializes");
            let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(value["kind"], job.what.kind());
            assert_eq!(
                serde_json::from_str::<ImportJob>(&text).expect("reads back"),
                job
            );
        }
    }

    #[test]
    fn a_job_stored_before_the_typed_command_reads_back() {
        // The parameters as an earlier version stored them (no run-only CLI options).
        let stored = r#"{"file":"r.jsonl","path":"/tmp/x/r.jsonl","bytes":5,
            "limits":{"max_decompressed_bytes":1,"max_line_bytes":2,"max_sentences":3},
            "kind":"run","system":null,"role":"evaluation-only","format":"trec",
            "label_order":null,"description":""}"#;
        let job: ImportJob = serde_json::from_str(stored).expect("reads");
        let ImportKind::Run(run) = &job.what else {
            panic!("not a run: {:?}", job.what)
        };
        assert_eq!(run.role, Role::EvaluationOnly);
        assert_eq!(run.format, Some(RunFormat::Trec));
        assert_eq!(run.label_order, LabelOrder::default());
    }

    #[test]
    fn options_are_parsed_once_and_bad_ones_are_named() {
        let bad = [
            (
                ImportWhat::Corpus {
                    format: Some("csv".into()),
                },
                "format",
            ),
            (run("judge"), "role"),
            (
                ImportWhat::Judgments {
                    annotator: " ".into(),
                    stage: "final".into(),
                    format: None,
                },
                "annotator",
            ),
            (
                ImportWhat::Judgments {
                    annotator: "a1".into(),
                    stage: "adjudication-ish".into(),
                    format: None,
                },
                "stage",
            ),
            (
                ImportWhat::Run {
                    system: None,
                    role: "pooled".into(),
                    format: None,
                    label_order: None,
                    description: String::new(),
                    negative_sampling_ratio: Some(-1.0),
                    allow_missing_docs: false,
                },
                "negative sampling ratio",
            ),
        ];
        for (what, field) in bad {
            let e = ImportKind::try_from(what.clone()).expect_err("refused");
            assert!(e.to_string().starts_with(field), "{what:?}: {e}");
        }
        // A stored job with bad options does not read back as an import.
        let stored = r#"{"file":"c.jsonl","path":"/tmp/c","bytes":1,
            "limits":{"max_decompressed_bytes":1,"max_line_bytes":2,"max_sentences":3},
            "kind":"corpus","format":"csv"}"#;
        assert!(serde_json::from_str::<ImportJob>(stored).is_err());
    }
}
