//! `claimpool export` (release a project's test collection into a directory, recording the
//! release) and `claimpool eval` (evaluate a run against a claims file). Both call the same
//! store and domain functions as the web pages.

use anyhow::Context;
use app::domain::formats::{LabelOrder, RunFormat, RunReadOptions};
use app::domain::metrics::BootstrapSamples;
use app::domain::release::{
    check_target_dir, evaluate, read_gold, read_run, BootstrapRequest, EvalReport, ReleaseOptions,
};
use app::store::{self, release::ReleaseRequest};
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
    /// The run, in any format `import run` reads (plain or .gz; parquet too)
    #[arg(long, value_name = "RUN")]
    run: PathBuf,
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
    /// Seed of the bootstrap
    #[arg(long, value_name = "S", default_value_t = 0, requires = "bootstrap")]
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
        let (format, options) = run_options(self.format.as_deref(), &self.label_order, &self.run)?;
        let run = read_run(&self.run, format, &options, self.system.as_deref())?;
        let pairs = run
            .pairs()
            .iter()
            .filter(|p| p.prediction.claims_evidence())
            .map(|p| (p.claim.clone(), p.doc.clone()))
            .collect();
        let name = self.system.clone().unwrap_or_else(|| {
            self.run
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
fn say(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}") {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => other.context("writing to standard output"),
    }
}

/// What `export` prints.
#[derive(Serialize)]
struct Exported<'a> {
    release: &'a store::release::Release,
    /// `false`: the state equals this release's, and nothing new was recorded.
    new: bool,
    out: String,
    files: Vec<&'a str>,
}

/// Releases the project (or finds that its latest release holds the same state) and writes the
/// files into `--out`. A refused directory is checked before anything is recorded.
pub async fn export(db: &store::Db, args: ExportArgs) -> anyhow::Result<()> {
    check_target_dir(&args.out, args.force).context("--out")?;
    let project = store::projects::id_by_name(db, &args.project).await?;
    let request = ReleaseRequest {
        partial: args.partial,
        options: ReleaseOptions {
            qrels_unjudged: args.unjudged,
        },
    };
    let created = store::release::create(db, project, request, None).await?;
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

/// Evaluates a run against a claims file and prints the report (blocking: file reading and
/// the bootstrap are CPU work).
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
    let gold = read_gold(claims)?;
    let (format, options) = run_options(args.format.as_deref(), &args.label_order, &args.run)?;
    let run = read_run(&args.run, format, &options, args.system.as_deref())?;
    let report = evaluate(&gold, &run, bootstrap, args.by_claim)?;
    if args.json {
        say(&serde_json::to_string(&report)?)
    } else {
        print_report(&report, format)
    }
}

fn print_report(report: &EvalReport, format: RunFormat) -> anyhow::Result<()> {
    let c = &report.counts;
    say(&format!(
        "gold: {} claims, {} evidence pairs; run ({format}): {} pairs evaluated, {} predicted as evidence",
        c.claims, c.gold_evidence, c.predicted_pairs, c.predicted_evidence
    ))?;
    if c.skipped_pairs > 0 {
        say(&format!(
            "left out: {} pairs of {} claims that are not in the claims file",
            c.skipped_pairs, c.skipped_claims
        ))?;
    }
    let sd = |value: Option<f64>| value.map(|v| format!("{v:.4}")).unwrap_or_default();
    say("")?;
    match report.bootstrap {
        Some(b) => say(&format!(
            "metric\tvalue\tsd ({} resamples, seed {})",
            b.samples.get(),
            b.seed
        ))?,
        None => say("metric\tvalue")?,
    }
    let rows = [
        ("precision", report.precision, report.precision_sd),
        ("recall", report.recall, report.recall_sd),
        ("f1", report.f1, report.f1_sd),
        (
            "average_precision",
            report.average_precision,
            report.average_precision_sd,
        ),
    ];
    for (name, value, value_sd) in rows {
        let line = format!("{name}\t{value:.4}\t{}", sd(value_sd));
        say(line.trim_end())?;
    }
    if let Some(claims) = &report.by_claim {
        say("\nclaim\tgold\tpredicted\tcorrect\tprecision\trecall\tf1")?;
        for m in claims {
            say(&format!(
                "{}\t{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}",
                m.claim, m.gold_evidence, m.predicted, m.correct, m.precision, m.recall, m.f1
            ))?;
        }
    }
    Ok(())
}
