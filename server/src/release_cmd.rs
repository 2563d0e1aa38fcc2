//! `claimpool export` (release a project's test collection into a directory, recording the
//! release) and `claimpool eval` (evaluate a run against a claims file). Both call the same
//! store and domain functions as the web pages.

use anyhow::Context;
use app::domain::formats::{LabelOrder, RunFormat, RunReadOptions};
use app::domain::metrics::BootstrapSamples;
use app::domain::release::{check_target_dir, read_run, BootstrapRequest};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `claimpool export`.
#[derive(Args)]
pub struct ExportArgs {
    #[arg(long)]
    project: String,
    /// The directory to write the release into (created when missing; must be empty)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Release although some pooled pairs have no final label yet
    #[arg(long)]
    partial: bool,
    /// List pooled pairs without a final label in qrels.txt, with relevance -1
    #[arg(long)]
    unjudged: bool,
    /// Also write qrels-model.txt: the model assessors' labels (`claimpool assessor add`), apart
    /// from the people's; never in qrels.txt or claims.jsonl
    #[arg(long)]
    model_qrels: bool,
    /// Write into a directory that is not empty (the release's files are overwritten)
    #[arg(long)]
    force: bool,
}

/// `claimpool eval`.
#[derive(Args)]
pub struct EvalArgs {
    /// The gold: a release's claims.jsonl, or SciFact claims_*.jsonl (plain or .gz)
    #[arg(long, value_name = "CLAIMS", required_unless_present = "estimate")]
    claims: Option<PathBuf>,
    /// The run, in any format `import run` reads (plain or .gz; parquet too); give it several
    /// times to compare systems (randomization test, paired bootstrap, Holm's correction)
    #[arg(long, value_name = "RUN", required = true)]
    run: Vec<PathBuf>,
    /// A release's qrels.txt: which pairs were judged (a -1 row or a missing pair is unjudged),
    /// for Judged@k, bpref and the condensed figures [default: the claims file's evidence and
    /// cited documents]
    #[arg(long, value_name = "QRELS")]
    qrels: Option<PathBuf>,
    /// Permutations of the randomization test when comparing runs
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    permutations: u32,
    /// Resamples of the paired bootstrap when comparing runs
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    comparison_bootstrap: u32,
    /// canonical, scifact-open-parquet, leaderboard, verisci, trec, sentence-scores,
    /// retrieved-claims [default: detected from the file]
    #[arg(long)]
    format: Option<String>,
    /// Order of `label_probs` in leaderboard files, e.g. REFUTE,NEI,SUPPORT
    #[arg(long, default_value = "CONTRADICT,NEI,SUPPORT")]
    label_order: String,
    /// The system to evaluate, when the file holds several (parquet `model`, TREC tag, canonical `system`)
    #[arg(long)]
    system: Option<String>,
    /// Bootstrap resamples of the claims, for standard deviations (at least 2)
    #[arg(long, value_name = "N")]
    bootstrap: Option<u32>,
    /// Seed of the bootstrap and of the comparisons' tests
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// Also give each claim's precision, recall and F1
    #[arg(long)]
    by_claim: bool,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Horvitz–Thompson estimates of the run's precision, recall and F1 (and of the total
    /// evidence) with 95% intervals, from the judged pool and sample of `--project` (drawn with
    /// `pool build --sample`) instead of a claims file
    #[arg(long, requires = "project", conflicts_with_all = ["claims", "bootstrap", "by_claim"])]
    estimate: bool,
    /// The project whose judged sample `--estimate` uses
    #[arg(long, requires = "estimate")]
    project: Option<String>,
    /// The target recall of the stopping test printed with `--estimate`
    #[arg(long, default_value_t = 0.9, requires = "estimate")]
    target_recall: f64,
    /// The stopping test's significance level (0.05: 95% confidence)
    #[arg(long, default_value_t = 0.05, requires = "estimate")]
    alpha: f64,
}

/// What `eval --estimate` needs: the project, the run's name and predicted evidence pairs,
/// the stopping test's target and JSON output.
pub struct EstimateArgs {
    pub project: String,
    pub name: String,
    pub pairs: Vec<(app::domain::ids::ClaimId, app::domain::ids::DocId)>,
    pub target_recall: f64,
    pub alpha: f64,
    pub json: bool,
}

impl EvalArgs {
    /// Whether `--estimate` was given.
    pub fn estimate(&self) -> bool {
        self.estimate
    }

    /// Reads the run for `--estimate` (blocking): the pairs it predicts as evidence
    /// (SUPPORT or CONTRADICT, or every pair of a run without labels).
    pub fn estimate_args(self) -> anyhow::Result<EstimateArgs> {
        let project = self.project.context("--estimate needs --project")?;
        let [run_path] = self.run.as_slice() else {
            anyhow::bail!("--estimate takes one --run");
        };
        let (format, options) = run_options(self.format.as_deref(), &self.label_order, run_path)?;
        let run = read_run(run_path, format, &options, self.system.as_deref())?;
        let pairs = run
            .pairs()
            .iter()
            .filter(|p| p.prediction.claims_evidence())
            .map(|p| (p.claim.clone(), p.doc.clone()))
            .collect();
        let name = self.system.clone().unwrap_or_else(|| {
            run_path
                .file_name()
                .map_or_else(|| "run".to_owned(), |n| n.to_string_lossy().into_owned())
        });
        Ok(EstimateArgs {
            project,
            name,
            pairs,
            target_recall: self.target_recall,
            alpha: self.alpha,
            json: self.json,
        })
    }
}

/// Writes a line to standard output; when the reader has gone (`claimpool eval ... | head`),
/// the command ends quietly as Unix tools do.
pub(crate) fn say(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}") {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => other.context("writing to standard output"),
    }
}

/// What `export` prints.
#[derive(Serialize)]
struct Exported<'a> {
    release: &'a commands::release::Release,
    /// `false`: the state equals this release's, and nothing new was recorded.
    new: bool,
    out: String,
    files: Vec<&'a str>,
}

/// Releases the project (or finds that its latest release holds the same state) and writes the
/// files into `--out`. A refused directory is checked before anything is recorded.
pub async fn export(db: &commands::Db, args: ExportArgs) -> anyhow::Result<()> {
    check_target_dir(&args.out, args.force).context("--out")?;
    let lead = commands::Operator::at_the_shell()
        .lead(db, &args.project)
        .await?;
    let created = commands::release::CreateRelease {
        partial: args.partial,
        unjudged: args.unjudged,
        model_qrels: args.model_qrels,
    }
    .run(db, &lead)
    .await?;
    created
        .files
        .write_to_dir(&args.out, args.force)
        .context("writing the release")?;
    if !created.new {
        eprintln!(
            "note: nothing changed since release {}; its files were written again and no new \
             release was recorded",
            created.release.number
        );
    }
    let report = Exported {
        release: &created.release,
        new: created.new,
        out: args.out.display().to_string(),
        files: created
            .files
            .files()
            .iter()
            .map(|f| f.path.as_str())
            .collect(),
    };
    say(&serde_json::to_string_pretty(&report)?)
}

/// The run format and read options from `--format` and `--label-order`, as `import run` takes
/// them: no format means the format is detected from the file.
pub fn run_options(
    format: Option<&str>,
    label_order: &str,
    path: &Path,
) -> anyhow::Result<(RunFormat, RunReadOptions)> {
    let format = match format {
        Some(name) => name
            .parse::<RunFormat>()
            .map_err(|e| anyhow::anyhow!("--format: {e}"))?,
        None => RunFormat::detect_file(path)?,
    };
    let label_order: LabelOrder = label_order
        .parse()
        .map_err(|e| anyhow::anyhow!("--label-order: {e}"))?;
    Ok((
        format,
        RunReadOptions {
            label_order,
            ..RunReadOptions::default()
        },
    ))
}

/// Evaluates one run (or compares several) against a claims file and prints the report
/// (blocking: file reading, the bootstrap and the tests are CPU work).
pub fn eval(args: EvalArgs) -> anyhow::Result<()> {
    let bootstrap = args
        .bootstrap
        .map(|n| {
            BootstrapSamples::new(n).map(|samples| BootstrapRequest {
                samples,
                seed: args.seed,
            })
        })
        .transpose()
        .context("--bootstrap")?;
    let claims = args
        .claims
        .as_deref()
        .context("--claims is required without --estimate")?;
    crate::eval_cmd::eval(crate::eval_cmd::EvalRequest {
        claims,
        qrels: args.qrels.as_deref(),
        runs: &args.run,
        format: args.format.as_deref(),
        label_order: &args.label_order,
        system: args.system.as_deref(),
        bootstrap,
        by_claim: args.by_claim,
        json: args.json,
        permutations: args.permutations,
        comparison_bootstrap: args.comparison_bootstrap,
        seed: args.seed,
    })
}
