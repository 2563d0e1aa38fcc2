//! Annotation benchmark through the server (issue: annotate in the browser).
//!
//! `cargo bench -p server --bench annotate [-- --sessions 50 --pairs 10000 --submits 40 --think-ms 1000 --import-lines 1000000]`
//! A fresh database with a generated corpus, claims and one run of `--pairs` pairs, pooled whole;
//! `--sessions` annotators log in over HTTP and each submits `--submits` items, pausing about
//! `--think-ms` between them, all at once. Each request is a submission whose answer carries the
//! next item (the page shows the preloaded one at once and this answer confirms it). Prints the
//! request times, p50 and p99 (targets: p99 < 20 ms; < 50 ms while a run imports), measured at
//! the client on the same machine.
//!
//! With `--order ORDER` (`depth`, the default, pre-assigns the pool shallowest first; `mtf`,
//! `mab-maxmean`, `mab-thompson`, `hedge` or `cal`, with `--seed S`) first passes are served
//! live by the project's judging order, chosen when the annotator's queue is read after each
//! submission (`cal`: over the runs' pairs and each claim's top `--candidates` K from the
//! corpus, default 100, searched as the lead's command does before the pool is built);
//! `--systems N` pooled systems (default 1 for `depth`, 3 otherwise) rank the same pairs in
//! their own random orders, so the pool stays `--pairs` pairs.
//!
//! With `--import-lines N` (N > 0) a lead imports runs of N lines, one after another, for as long
//! as the sessions submit (each a new file: one system over `--pairs`/50 claims × N/claims
//! abstracts); submissions that overlap an import are reported apart.
//!
//! With `--import-process` as well, each run is imported from the shell instead, by a second
//! process on the same database (`claimpool import run --db …`, as a lead at the server's
//! machine would): the release binary `target/release/claimpool` (build it first with
//! `cargo build --release -p server`), or the one `--claimpool PATH` names.
//!
//! `--engine postgres` (or `--db postgres://…`) runs it on PostgreSQL: see support/database.rs.
//!
//! At the end it prints, from every server's `/metrics`, how long the write transactions of the
//! sessions' time waited before they could write: for their turn among their server's writers,
//! and for the database's write lock (on PostgreSQL the one advisory lock that every server's
//! writers take, whatever their project: what that lock costs at this load).
//!
//! With `--servers N` (N > 1) the annotators are split among N servers on the one database, as
//! behind a load balancer: this process's, and N − 1 `claimpool serve` processes of the release
//! binary (`--claimpool PATH`, as for `--import-process`); the times are also given per server.

#[path = "support/database.rs"]
mod database;
#[path = "support/machine.rs"]
mod machine;

use app::domain::account::{NewPassword, Role, Username};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufWriter, Write};
use std::time::{Duration, Instant};

const SAMPLE: &str = include_str!("../demo/corpus.jsonl");

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // RUST_LOG=... shows the server's log (e.g. sqlx::query=debug: each statement's time).
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    let sessions = arg(&args, "--sessions", 50);
    let pairs = arg(&args, "--pairs", 10_000);
    let submits = arg(&args, "--submits", 40);
    // Pause between one session's submissions (a real annotator reads for 10-60 s); 0 saturates
    // the server, so that latency is mostly queueing.
    let think_ms = arg(&args, "--think-ms", 1000) as u64;
    let import_lines = arg(&args, "--import-lines", 0);
    // Imports by a second process: the `claimpool` binary that runs them.
    let import_process = args
        .iter()
        .any(|a| a == "--import-process")
        .then(|| claimpool_binary(&args))
        .transpose()?;
    let order = match args.iter().position(|a| a == "--order") {
        Some(i) => {
            let text = args
                .get(i + 1)
                .ok_or_else(|| anyhow::anyhow!("--order needs a value"))?;
            app::domain::judging::JudgingOrder::parse(text)?
        }
        None => app::domain::judging::Order::Depth.into(),
    };
    let seed = arg(&args, "--seed", 0) as u64;
    let systems = arg(
        &args,
        "--systems",
        if order == app::domain::judging::Order::Depth.into() {
            1
        } else {
            3
        },
    )
    .max(1);
    let per_claim = 50;
    let claims = pairs.div_ceil(per_claim);
    let dir = tempfile::tempdir()?;
    let mut rng = ChaCha8Rng::seed_from_u64(11);

    // Corpus: the demo sample's abstracts, repeated under new ids; claims; one run.
    let docs: Vec<serde_json::Value> = SAMPLE
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let n_docs = 2_000.max(import_lines.div_ceil(claims.max(1)));
    let corpus = dir.path().join("corpus.jsonl");
    let mut out = BufWriter::new(std::fs::File::create(&corpus)?);
    for id in 0..n_docs {
        let mut d = docs[id % docs.len()].clone();
        d["doc_id"] = serde_json::json!(id);
        writeln!(out, "{d}")?;
    }
    out.flush()?;
    let claims_path = dir.path().join("claims.jsonl");
    let mut out = BufWriter::new(std::fs::File::create(&claims_path)?);
    for id in 0..claims {
        writeln!(
            out,
            "{}",
            serde_json::json!({ "id": id, "claim": format!("Generated claim {id} about aspirin and risk."), "evidence": {} })
        )?;
    }
    out.flush()?;
    let db = database::open(&args, dir.path(), "bench").await?;
    // What a second process opens: the same SQLite file, or the same PostgreSQL database.
    let db_target = match store::engine(&db) {
        store::Engine::Sqlite => dir.path().join("bench.db").display().to_string(),
        store::Engine::Postgres => db.connect_options().database_url.to_string(),
    };
    let project = store::projects::create(&db, "bench", "", None).await?;
    let lead = commands::Operator::at_the_shell()
        .lead(&db, "bench")
        .await?;
    commands::import::corpus(&db, &lead, &corpus, None).await?;
    commands::import::claims(&db, &lead, &claims_path).await?;
    // The pairs of each claim (one list for all systems), then one run per system: the first
    // in rank order, the others in their own random orders over the same pairs.
    let claim_docs: Vec<Vec<usize>> = (0..claims)
        .map(|_| {
            let start = rng.gen_range(0..n_docs);
            (1..=per_claim)
                .map(|rank| (start + rank * 37) % n_docs)
                .collect()
        })
        .collect();
    for system in 0..systems {
        let run = dir.path().join(format!("run-{system}.jsonl"));
        let mut out = BufWriter::new(std::fs::File::create(&run)?);
        for (claim, docs) in claim_docs.iter().enumerate() {
            for (i, &doc) in docs.iter().enumerate() {
                let p: f64 = rng.gen();
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({ "claim_id": claim, "doc_id": doc, "predicted_label": "SUPPORT", "p_support": p, "p_contradict": 0.0, "rank": i + 1 })
                )?;
            }
        }
        out.flush()?;
        let spec = commands::import::RunImport {
            path: run,
            format: Some(app::domain::formats::RunFormat::Canonical),
            options: Default::default(),
            system: commands::import::SystemSpec {
                name: Some(if system == 0 {
                    "sys".to_owned()
                } else {
                    format!("sys-{system}")
                }),
                role: app::domain::pool::Role::Pooled,
                description: String::new(),
                negative_sampling_ratio: None,
            },
            allow_missing_docs: false,
        };
        commands::import::run(&db, &lead, spec).await?;
    }
    let password = "bench password";
    let hash = app::auth::hash_password(&NewPassword::parse(password)?)?;
    for i in 0..sessions {
        let user = store::users::create(
            &db,
            &Username::parse(&format!("ann{i}"))?,
            Role::Annotator,
            &hash,
            None,
        )
        .await?;
        store::projects::add_member(
            &db,
            project,
            user.id,
            app::domain::account::ProjectRole::Annotator,
            None,
        )
        .await?;
    }
    if order == app::domain::judging::JudgingOrder::Cal {
        // As a lead sets it: the corpus searched for each claim's top `--candidates`.
        let t = Instant::now();
        let said = commands::project::SetJudging {
            order: Some(order),
            seed: Some(seed),
            candidates: Some(u32::try_from(arg(&args, "--candidates", 100))?),
            ..Default::default()
        }
        .run(&db, &lead)
        .await?
        .unwrap_or_default();
        println!("{said} ({:.2} s)", t.elapsed().as_secs_f64());
    } else if order != app::domain::judging::Order::Depth.into() {
        let settings = app::domain::judging::JudgingSettings {
            order,
            seed,
            budget: None,
            ..Default::default()
        };
        store::annotate::set_judging(&db, project, settings, None).await?;
    }
    let t = Instant::now();
    let built = store::pool::build(
        &db,
        project,
        app::domain::pool::Strategy::Confidence,
        u32::try_from(pairs)?,
        None,
    )
    .await?;
    println!(
        "pool: {} pairs from {systems} system(s), order {order}, built for {sessions} annotators in {:.2} s",
        built.pool_size,
        t.elapsed().as_secs_f64()
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = server::http::router(db.clone(), addr).await?;
    // With the peer's address, as `serve` gives it (/metrics answers loopback only).
    let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, service).await });
    let mut bases = vec![format!("http://{addr}")];
    // The other servers: processes of the binary on the same database, killed at the end.
    let servers = arg(&args, "--servers", 1).max(1);
    let mut others = Vec::new();
    if servers > 1 {
        let binary = claimpool_binary(&args)?;
        for _ in 1..servers {
            let (child, base) = serve_process(&binary, &db_target).await?;
            others.push(KillOnDrop(child));
            bases.push(base);
        }
        println!("{servers} servers: {}", bases.join(", "));
    }

    let mut clients = Vec::new();
    for i in 0..sessions {
        let base = &bases[i % bases.len()];
        let client = reqwest::Client::builder().cookie_store(true).build()?;
        let res = client
            .post(format!("{base}/api/login"))
            .form(&[
                ("username", format!("ann{i}")),
                ("password", password.into()),
                ("next", "/".into()),
            ])
            .send()
            .await?;
        anyhow::ensure!(res.status().is_success(), "login ann{i}: {}", res.status());
        clients.push((client, base.clone()));
    }

    // The lead's imports: (start, end) of each, from the start of the sessions.
    let sessions_done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let importer = {
        let (db, done, dir) = (db.clone(), sessions_done.clone(), dir.path().to_owned());
        let (import_process, db_target) = (import_process.clone(), db_target.clone());
        tokio::spawn(async move {
            let mut spans: Vec<(Duration, Duration, u64)> = Vec::new();
            let origin = Instant::now();
            let mut k = 0usize;
            while import_lines > 0 && !done.load(std::sync::atomic::Ordering::SeqCst) {
                let path = dir.join(format!("import-{k}.jsonl"));
                let write = path.clone();
                tokio::task::spawn_blocking(move || {
                    write_import_run(&write, k, claims, n_docs, import_lines)
                })
                .await??;
                let spec = commands::import::RunImport {
                    path: path.clone(),
                    format: Some(app::domain::formats::RunFormat::Canonical),
                    options: Default::default(),
                    system: commands::import::SystemSpec {
                        name: Some(format!("import-{k}")),
                        role: app::domain::pool::Role::EvaluationOnly,
                        description: String::new(),
                        negative_sampling_ratio: None,
                    },
                    allow_missing_docs: false,
                };
                let from = origin.elapsed();
                let rows = match &import_process {
                    None => commands::import::run(&db, &lead, spec).await?.rows,
                    Some(binary) => import_by_process(binary, &db_target, k, &path).await?,
                };
                spans.push((from, origin.elapsed(), rows));
                std::fs::remove_file(&path)?;
                k += 1;
            }
            anyhow::Ok(spans)
        })
    };
    let waits_before = write_waits(&bases).await?;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (i, (client, base)) in clients.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::with_capacity(submits);
            let head: serde_json::Value = client
                .post(format!("{base}/api/work/queue"))
                .form(&[("project", "bench")])
                .send()
                .await?
                .json()
                .await?;
            let mut current = head["current"]["assignment_id"].as_i64();
            let mut stage = head["current"]["stage"].as_str().map(str::to_owned);
            for k in 0..submits {
                let Some(id) = current else { break };
                if think_ms > 0 {
                    // Sessions start spread out, then pause between items.
                    let jitter = (i as u64 * 37 + k as u64 * 11) % think_ms.max(1);
                    tokio::time::sleep(Duration::from_millis(think_ms / 2 + jitter)).await;
                }
                // First passes: mostly "clearly no evidence", every fifth a label that needs a
                // second pass; second passes and adjudications: a label.
                let form = if (i + k) % 5 == 0 || stage.as_deref() != Some("first") {
                    serde_json::json!({ "label": "SUPPORT", "sentences": [0], "specificity": "matches" })
                } else {
                    serde_json::json!({ "no_evidence": true })
                };
                let t = Instant::now();
                let sent = start.elapsed();
                let res = client
                    .post(format!("{base}/api/work/submit"))
                    .json(&serde_json::json!({ "project": "bench", "assignment_id": id, "form": form, "seconds_spent": 3.0 }))
                    .send()
                    .await?;
                let status = res.status();
                let head: serde_json::Value = res.json().await?;
                times.push((sent, t.elapsed()));
                anyhow::ensure!(status.is_success(), "submit: {status} {head}");
                current = head["current"]["assignment_id"].as_i64();
                stage = head["current"]["stage"].as_str().map(str::to_owned);
            }
            anyhow::Ok(times)
        }));
    }
    let mut timed = Vec::new();
    let mut by_server: Vec<Vec<Duration>> = vec![Vec::new(); bases.len()];
    for (i, t) in tasks.into_iter().enumerate() {
        let times = t.await??;
        by_server[i % bases.len()].extend(times.iter().map(|t| t.1));
        timed.extend(times);
    }
    let wall = start.elapsed().as_secs_f64();
    sessions_done.store(true, std::sync::atomic::Ordering::SeqCst);
    let spans = importer.await??;
    // The importer's clock started just before the sessions': a submission overlaps an import
    // when it was sent before the import ended and answered after it began.
    let overlaps = |(sent, took): &(Duration, Duration)| {
        spans
            .iter()
            .any(|(from, to, _)| *sent < *to && *sent + *took > *from)
    };
    // --slow-ms T: each submission slower than T, by when it was sent (where a stall was).
    if let Some(slow) = args.iter().position(|a| a == "--slow-ms") {
        let limit: u64 = args
            .get(slow + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(20);
        let mut slow: Vec<&(Duration, Duration)> = timed
            .iter()
            .filter(|t| t.1 > Duration::from_millis(limit))
            .collect();
        slow.sort_unstable();
        for (sent, took) in slow {
            println!(
                "slow: sent at {:.3} s, took {:.1} ms",
                sent.as_secs_f64(),
                took.as_secs_f64() * 1000.0
            );
        }
    }
    let mut during: Vec<Duration> = timed.iter().filter(|t| overlaps(t)).map(|t| t.1).collect();
    let mut all: Vec<Duration> = timed.iter().map(|t| t.1).collect();
    all.sort_unstable();
    during.sort_unstable();
    if import_lines > 0 {
        let lines: u64 = spans.iter().map(|s| s.2).sum();
        let busy: f64 = spans.iter().map(|s| (s.1 - s.0).as_secs_f64()).sum();
        let by = if import_process.is_some() {
            "a second process (claimpool import run)"
        } else {
            "the benchmark's process"
        };
        println!(
            "import by {by}: {} runs of {import_lines} lines ({lines} lines in {busy:.1} s); {} submissions overlapped an import: p50 {:.1} ms, p99 {:.1} ms (target p99 < 50 ms), max {:.1} ms",
            spans.len(),
            during.len(),
            percentile(&during, 0.5),
            percentile(&during, 0.99),
            percentile(&during, 1.0)
        );
    }
    let judgments: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judgments")
        .fetch_one(&db)
        .await?;
    println!(
        "annotate: {sessions} sessions (think time ~{think_ms} ms), {} submissions in {wall:.1} s ({:.0}/s); submit → next item p50 {:.1} ms, p99 {:.1} ms (target p99 < 20 ms), max {:.1} ms",
        all.len(),
        all.len() as f64 / wall,
        percentile(&all, 0.5),
        percentile(&all, 0.99),
        percentile(&all, 1.0)
    );
    if bases.len() > 1 {
        for (base, times) in bases.iter().zip(&mut by_server) {
            times.sort_unstable();
            println!(
                "  server {base}: {} submissions, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                times.len(),
                percentile(times, 0.5),
                percentile(times, 0.99),
                percentile(times, 1.0)
            );
        }
    }
    let waits = write_waits(&bases).await?;
    for (stage, after) in &waits {
        let before = waits_before
            .iter()
            .find(|(s, _)| s == stage)
            .map(|(_, w)| w);
        let during = after.minus(before);
        println!(
            "write transactions' wait for the {stage} (every server's /metrics): {} waits, mean {:.2} ms, 99% within {} ms, {:.1}% within 1 ms",
            during.count,
            during.mean_ms(),
            during.bound_ms(0.99),
            100.0 * during.share_within(0.001),
        );
    }
    drop(others);
    println!("load average: {}", machine::load_average());
    anyhow::ensure!(
        judgments == all.len() as i64,
        "{judgments} judgments for {} submissions",
        all.len()
    );
    Ok(())
}

/// A histogram as scraped: cumulative counts by upper bound (seconds), its count and sum.
#[derive(Clone, Debug, Default)]
struct Waits {
    buckets: Vec<(f64, f64)>,
    count: f64,
    sum: f64,
}

impl Waits {
    /// What was observed since `before` (a scrape of the same servers).
    fn minus(&self, before: Option<&Waits>) -> Waits {
        let Some(before) = before else {
            return self.clone();
        };
        Waits {
            buckets: self
                .buckets
                .iter()
                .map(|(le, n)| {
                    let earlier = before.buckets.iter().find(|(b, _)| b == le);
                    (*le, n - earlier.map_or(0.0, |(_, m)| *m))
                })
                .collect(),
            count: self.count - before.count,
            sum: self.sum - before.sum,
        }
    }

    fn mean_ms(&self) -> f64 {
        if self.count > 0.0 {
            self.sum / self.count * 1000.0
        } else {
            0.0
        }
    }

    /// The smallest bucket bound (ms) within which the share `q` of the waits fell.
    fn bound_ms(&self, q: f64) -> String {
        self.buckets
            .iter()
            .find(|(_, n)| *n >= q * self.count)
            .map_or("?".into(), |(le, _)| {
                if le.is_infinite() {
                    "+Inf".into()
                } else {
                    format!("{}", le * 1000.0)
                }
            })
    }

    /// The share of the waits within the bucket bound `secs`.
    fn share_within(&self, secs: f64) -> f64 {
        let n = self
            .buckets
            .iter()
            .find(|(le, _)| (*le - secs).abs() < 1e-12)
            .map_or(0.0, |(_, n)| *n);
        if self.count > 0.0 {
            n / self.count
        } else {
            0.0
        }
    }
}

/// Every server's `claimpool_write_wait_seconds` histograms, summed, by stage.
async fn write_waits(bases: &[String]) -> anyhow::Result<Vec<(String, Waits)>> {
    let mut total: Vec<(String, Waits)> = Vec::new();
    for base in bases {
        let text = reqwest::get(format!("{base}/metrics"))
            .await?
            .text()
            .await?;
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))?;
        for sample in scrape.samples {
            let Some(stage) = sample.labels.get("stage").map(str::to_owned) else {
                continue;
            };
            let at = match total.iter().position(|(s, _)| *s == stage) {
                Some(at) => at,
                None => {
                    total.push((stage, Waits::default()));
                    total.len() - 1
                }
            };
            let waits = &mut total[at].1;
            match (sample.metric.as_str(), sample.value) {
                ("claimpool_write_wait_seconds", prometheus_parse::Value::Histogram(buckets)) => {
                    for b in buckets {
                        match waits.buckets.iter_mut().find(|(le, _)| *le == b.less_than) {
                            Some((_, n)) => *n += b.count,
                            None => waits.buckets.push((b.less_than, b.count)),
                        }
                    }
                }
                ("claimpool_write_wait_seconds_count", value) => waits.count += scalar(&value),
                ("claimpool_write_wait_seconds_sum", value) => waits.sum += scalar(&value),
                _ => {}
            }
        }
    }
    for (_, waits) in &mut total {
        waits.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(total)
}

fn scalar(value: &prometheus_parse::Value) -> f64 {
    match value {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => *v,
        _ => f64::NAN,
    }
}

/// The options, printed by `--help`.
const USAGE: &str = "cargo bench -p server --bench annotate -- [OPTIONS]

  --sessions N        annotators submitting at once (50)
  --pairs N           the pool's pairs (10000)
  --submits N         submissions per annotator (40)
  --think-ms MS       pause between one annotator's submissions, about (1000)
  --order ORDER       depth (default), mtf, mab-maxmean, mab-thompson, hedge or cal
  --seed S            the judging order's seed (0)
  --slow-ms T         list the submissions slower than T ms, by when they were sent
  --candidates K      cal's corpus retrievals per claim (100)
  --systems N         pooled systems (1 for depth, 3 otherwise)
  --import-lines N    a lead imports runs of N lines back to back meanwhile (0: none)
  --import-process    ... each by a second process: `claimpool import run` on the same database
  --claimpool PATH    the binary of --import-process (target/release/claimpool)
  --servers N         split the annotators among N servers on the database (1): this process's
                      and N - 1 `claimpool serve` processes of the --claimpool binary
  --engine E          sqlite (default) or postgres (a throwaway cluster)
  --db URL            postgres://USER@HOST/DB: an empty database of your own";

/// A child process killed when dropped.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `claimpool serve` of `binary` on `db` at a free local port; waits until `/readyz`
/// answers 200. The process and its base URL.
async fn serve_process(
    binary: &std::path::Path,
    db: &str,
) -> anyhow::Result<(std::process::Child, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut child = std::process::Command::new(binary)
        .args(["--db", db, "serve", "--addr", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .spawn()?;
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..600 {
        if let Some(status) = child.try_wait()? {
            anyhow::bail!("the server process exited: {status}");
        }
        if let Ok(res) = client.get(format!("{base}/readyz")).send().await {
            if res.status().is_success() {
                return Ok((child, base));
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    anyhow::bail!("the server process did not get ready in 30 s")
}

/// The `claimpool` binary that `--import-process` and `--servers` run: `--claimpool PATH`, or
/// the workspace's release build.
fn claimpool_binary(args: &[String]) -> anyhow::Result<std::path::PathBuf> {
    let given = args
        .iter()
        .position(|a| a == "--claimpool")
        .and_then(|i| args.get(i + 1));
    let binary = match given {
        Some(path) => std::path::PathBuf::from(path),
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| {
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
                });
            target.join("release/claimpool")
        }
    };
    anyhow::ensure!(
        binary.is_file(),
        "--import-process runs {}, which is not there: cargo build --release -p server (or give --claimpool PATH)",
        binary.display()
    );
    Ok(binary)
}

/// Imports run `k` (`path`) as the lead would from the shell: `claimpool import run` in a
/// process of its own on the same database. The predictions it wrote.
async fn import_by_process(
    binary: &std::path::Path,
    db: &str,
    k: usize,
    path: &std::path::Path,
) -> anyhow::Result<u64> {
    let out = tokio::process::Command::new(binary)
        .arg("--db")
        .arg(db)
        .args([
            "import",
            "run",
            "--project",
            "bench",
            "--format",
            "canonical",
        ])
        .args(["--role", "evaluation-only", "--system"])
        .arg(format!("import-{k}"))
        .arg(path)
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .output()
        .await?;
    anyhow::ensure!(
        out.status.success(),
        "claimpool import run: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    report["rows"]
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("claimpool import run printed no rows: {report}"))
}

/// Run `k` of the lead's imports: one system's `lines` predictions over the claims × documents.
fn write_import_run(
    path: &std::path::Path,
    k: usize,
    claims: usize,
    n_docs: usize,
    lines: usize,
) -> anyhow::Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    for i in 0..lines {
        let (claim, doc) = ((i / n_docs) % claims, i % n_docs);
        let p = ((i * 7919 + k * 104_729) % 1_000_003) as f64 / 1_000_003.0;
        writeln!(
            out,
            "{{\"claim_id\": {claim}, \"doc_id\": {doc}, \"p_support\": {p}, \"p_contradict\": 0.0}}"
        )?;
    }
    out.flush()?;
    Ok(())
}
