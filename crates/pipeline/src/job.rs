//! A pipeline run started from the web: what the server offers (set on its command line, never
//! from the browser), what a lead chooses, and the blocking run itself over exported files.
//!
//! External commands and trained model files are named by the server's administrator
//! (`claimpool serve --pipeline-command NAME=CMD --pipeline-model NAME=FILE`); a lead picks a
//! name. Nothing a browser sends becomes a path or a command line.

use super::external::{CommandLineError, ExternalCommand};
use super::generate::{self, GenerateError, Scorer};
use super::{Bm25Scorer, CandidateRetriever, Embedder, HybridReranker, Retriever};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What the server offers pipeline jobs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PipelineSettings {
    /// External scorer commands by name.
    pub commands: Vec<(String, ExternalCommand)>,
    /// Trained model files by name.
    pub models: Vec<(String, PathBuf)>,
    /// The MiniLM directory; the hybrid retriever is offered only with one.
    pub embedder_dir: Option<PathBuf>,
    /// The longest a job may run (external commands are killed then); None: [`JOB_TIMEOUT`].
    pub job_timeout: Option<std::time::Duration>,
}

/// How long a job may run unless the server says otherwise (`serve --job-timeout-min`).
pub const JOB_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4 * 3600);

/// A bad `NAME=VALUE` server option.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    #[error("{0:?}: expected NAME=VALUE, NAME of letters, digits, '-', '_' or '.'")]
    Malformed(String),
    #[error("{name:?}: {error}")]
    Command {
        name: String,
        error: CommandLineError,
    },
    #[error("the name {0:?} is given twice")]
    Repeated(String),
}

/// Splits `NAME=VALUE`, checking the name.
fn named(spec: &str) -> Result<(String, &str), SettingError> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| SettingError::Malformed(spec.to_owned()))?;
    let name = name.trim();
    let good = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !good || value.trim().is_empty() {
        return Err(SettingError::Malformed(spec.to_owned()));
    }
    Ok((name.to_owned(), value.trim()))
}

impl PipelineSettings {
    /// Settings from `NAME=COMMAND LINE` and `NAME=MODEL FILE` options.
    pub fn from_options(
        commands: &[String],
        models: &[String],
        embedder_dir: Option<PathBuf>,
    ) -> Result<PipelineSettings, SettingError> {
        let mut settings = PipelineSettings {
            embedder_dir,
            ..PipelineSettings::default()
        };
        for spec in commands {
            let (name, line) = named(spec)?;
            let command = ExternalCommand::parse(line).map_err(|error| SettingError::Command {
                name: name.clone(),
                error,
            })?;
            if settings.command(&name).is_some() {
                return Err(SettingError::Repeated(name));
            }
            settings.commands.push((name, command));
        }
        for spec in models {
            let (name, file) = named(spec)?;
            if settings.model(&name).is_some() {
                return Err(SettingError::Repeated(name));
            }
            settings.models.push((name, PathBuf::from(file)));
        }
        Ok(settings)
    }

    /// The command named `name`.
    pub fn command(&self, name: &str) -> Option<&ExternalCommand> {
        self.commands
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
    }

    /// The model file named `name`.
    pub fn model(&self, name: &str) -> Option<&Path> {
        self.models
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.as_path())
    }
}

/// How candidates are retrieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrieverChoice {
    Bm25,
    Hybrid,
}

/// How pairs are scored, by the names the server offers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ScorerChoice {
    Bm25,
    Trained { model: String },
    External { command: String },
}

/// A pipeline job's parameters (the job row's `params`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineJobParams {
    pub retriever: RetrieverChoice,
    pub k: u32,
    pub scorer: ScorerChoice,
    /// The new system's name and role.
    pub system: String,
    pub role: String,
}

/// The largest k a job may ask for.
pub const MAX_K: u32 = 1000;

impl PipelineJobParams {
    /// Checks the choices against what the server offers; the message says which is wrong.
    pub fn check(&self, settings: &PipelineSettings) -> Result<(), String> {
        if !(1..=MAX_K).contains(&self.k) {
            return Err(format!("k must be between 1 and {MAX_K} (got {})", self.k));
        }
        if self.retriever == RetrieverChoice::Hybrid && settings.embedder_dir.is_none() {
            return Err("the hybrid retriever is not set up on this server \
                        (claimpool serve --embedder-dir DIR)"
                .into());
        }
        match &self.scorer {
            ScorerChoice::Bm25 => {}
            ScorerChoice::Trained { model } if settings.model(model).is_none() => {
                return Err(format!("no trained model named {model:?} on this server"));
            }
            ScorerChoice::External { command } if settings.command(command).is_none() => {
                return Err(format!(
                    "no external command named {command:?} on this server"
                ));
            }
            _ => {}
        }
        if self.system.trim().is_empty() {
            return Err("give the new system a name".into());
        }
        Ok(())
    }

    /// A description of the run for the new system.
    pub fn describe(&self) -> String {
        let retriever = match self.retriever {
            RetrieverChoice::Bm25 => "BM25".to_owned(),
            RetrieverChoice::Hybrid => "BM25 top 200 + MiniLM, reciprocal-rank fusion".to_owned(),
        };
        let scorer = match &self.scorer {
            ScorerChoice::Bm25 => "calibrated BM25 probability".to_owned(),
            ScorerChoice::Trained { model } => format!("trained model {model}"),
            ScorerChoice::External { command } => format!("external command {command}"),
        };
        format!("pipeline: {retriever}, top {}, {scorer}", self.k)
    }
}

/// A problem of a pipeline job, for its row's message.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Generate(Box<GenerateError>),
}

/// Every pipeline error converts, boxed, so a job's result stays small.
impl<E: Into<GenerateError>> From<E> for JobError {
    fn from(error: E) -> Self {
        JobError::Generate(Box::new(error.into()))
    }
}

/// The files of a job: the project's corpus and claims exported, a work directory, the run.
pub struct JobFiles<'a> {
    pub corpus: &'a Path,
    pub claims: &'a Path,
    pub work: &'a Path,
    pub out: &'a Path,
}

/// Indexes `corpus` into `work/index`, runs the pipeline over `claims`, and writes the run to
/// `out` (only when it succeeds). `progress` gets the number of claims done; returns the pairs
/// written. Setting `stop` ends the job early with an error: at the next claim written, or at
/// once for an external command (which is killed).
pub fn run_job(
    settings: &PipelineSettings,
    params: &PipelineJobParams,
    files: JobFiles<'_>,
    progress: &(dyn Fn(u64) + Sync),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<u64, JobError> {
    let JobFiles {
        corpus,
        claims,
        work,
        out,
    } = files;
    params.check(settings).map_err(JobError::Invalid)?;
    let index_dir = work.join("index");
    generate::index_corpus(corpus, &index_dir, &|_| {})?;
    let index = Retriever::open(&index_dir)?;
    let reranker = match (params.retriever, &settings.embedder_dir) {
        (RetrieverChoice::Hybrid, Some(dir)) => Some(HybridReranker::new(Embedder::load(dir)?)),
        _ => None,
    };
    let retriever = match &reranker {
        Some(reranker) => CandidateRetriever::hybrid(&index, reranker),
        None => CandidateRetriever::bm25(&index),
    };
    let claims = generate::read_claims(claims)?;
    let k = params.k as usize;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let pairs = match &params.scorer {
        ScorerChoice::External { command } => {
            let command = settings
                .command(command)
                .ok_or_else(|| JobError::Invalid(format!("no command {command:?}")))?;
            generate::write_run_file(out, |w| {
                let mut w = generate::StopWriter::new(w, stop);
                generate::generate_external_run(
                    &retriever, &claims, k, command, &mut w, progress, stop,
                )
            })?
            .pairs as u64
        }
        choice => {
            let scorer = match choice {
                ScorerChoice::Trained { model } => {
                    let file = settings
                        .model(model)
                        .ok_or_else(|| JobError::Invalid(format!("no model {model:?}")))?;
                    Scorer::Trained {
                        model: Box::new(super::trained::TrainedModel::load(file)?),
                        corpus: generate::read_corpus(corpus)?,
                    }
                }
                _ => Scorer::Bm25(Bm25Scorer::SCIFACT_TRAIN),
            };
            generate::write_run_file(out, |w| {
                let mut w = generate::StopWriter::new(w, stop);
                generate::generate_run_with(
                    &retriever, &claims, k, &scorer, threads, &mut w, progress,
                )
            })?
        }
    };
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_come_from_name_value_options() {
        let settings = PipelineSettings::from_options(
            &["multivers=python3 run.py --gpu 0".into()],
            &["r20=/models/r20.json.gz".into()],
            None,
        )
        .unwrap();
        assert_eq!(
            settings.command("multivers").unwrap().args(),
            ["run.py", "--gpu", "0"]
        );
        assert_eq!(
            settings.model("r20"),
            Some(Path::new("/models/r20.json.gz"))
        );
        assert!(settings.command("r20").is_none());
        for bad in ["noequals", "=cmd", "a b=cmd", "x="] {
            assert!(
                PipelineSettings::from_options(&[bad.into()], &[], None).is_err(),
                "{bad}"
            );
        }
        assert_eq!(
            PipelineSettings::from_options(&["a=x".into(), "a=y".into()], &[], None),
            Err(SettingError::Repeated("a".into()))
        );
    }

    #[test]
    fn params_are_checked_against_the_settings() {
        let settings = PipelineSettings::from_options(&["m=run".into()], &[], None).unwrap();
        let mut params = PipelineJobParams {
            retriever: RetrieverChoice::Bm25,
            k: 50,
            scorer: ScorerChoice::External {
                command: "m".into(),
            },
            system: "ext".into(),
            role: "pooled".into(),
        };
        assert_eq!(params.check(&settings), Ok(()));
        params.scorer = ScorerChoice::External {
            command: "rm -rf /".into(),
        };
        assert!(params
            .check(&settings)
            .unwrap_err()
            .contains("no external command"));
        params.scorer = ScorerChoice::Trained { model: "x".into() };
        assert!(params
            .check(&settings)
            .unwrap_err()
            .contains("no trained model"));
        params.scorer = ScorerChoice::Bm25;
        params.retriever = RetrieverChoice::Hybrid;
        assert!(params.check(&settings).unwrap_err().contains("hybrid"));
        params.retriever = RetrieverChoice::Bm25;
        params.k = 0;
        assert!(params.check(&settings).is_err());
        let json = serde_json::to_value(&PipelineJobParams {
            k: 5,
            ..params.clone()
        })
        .unwrap();
        assert_eq!(json["scorer"], serde_json::json!({"kind": "bm25"}));
        assert_eq!(json["retriever"], "bm25");
    }
}
