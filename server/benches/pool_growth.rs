//! Pool growth and release benchmark on generated data (issue 13: long work holds the write
//! lock for milliseconds, not seconds).
//!
//! `cargo bench -p server --bench pool_growth [-- --claims N --annotators N --from D --to D]`
//! A fresh database with `--claims` claims (default 20,000), a corpus and three pooled systems,
//! each ranking 30 of a window of 80 abstracts per claim (1.8 million prediction lines), and
//! `--annotators` (default 4) active annotators. The per-claim (TREC-style) pool is built at
//! depth `--from` (default 10, about 530,000 pairs) and grown to `--to` (default 25, about
//! 1,080,000 pairs); both steps assign every new pair.
//!
//! While each step runs, a probe writer changes the project's second-pass mode every 10 ms (a
//! write transaction through the same writer queue as an annotator's submission) and times
//! each change: the longest probe is the longest the build made another writer wait, that is
//! its longest single write transaction (plus the probe's own). Prints, per step, the pool
//! size, the step's total time, and the probes' count, p50, p99 and max. Last, a partial
//! release of the grown project (every system's predictions, the documents of every pooled
//! pair) is recorded under the same probe: its archive is written in parts.
//!
//! `--engine postgres` (or `--db postgres://…`) runs it on PostgreSQL: see support/database.rs.

#[path = "support/database.rs"]
mod database;
#[path = "support/machine.rs"]
mod machine;

use app::domain::account::{NewPassword, ProjectRole, Role, Username};
use app::domain::annotation::SecondPassMode;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::{self, pool, Db};

/// Pooled systems of the generated project.
const SYSTEMS: usize = 3;
/// Abstracts each claim's candidates are drawn from, and how many of them each system ranks.
const WINDOW: usize = 80;
const RANKED: usize = 30;

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

/// Writes the corpus (`docs` one-sentence abstracts) and the claims.
fn write_inputs(dir: &Path, claims: usize, docs: usize) -> std::io::Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(dir.join("corpus.jsonl"))?);
    for id in 0..docs {
        writeln!(
            out,
            "{{\"doc_id\": {id}, \"title\": \"T{id}\", \"abstract\": [\"Sentence one.\", \"Sentence two.\"]}}"
        )?;
    }
    out.flush()?;
    let mut out = BufWriter::new(std::fs::File::create(dir.join("claims.jsonl"))?);
    for id in 0..claims {
        writeln!(
            out,
            "{{\"id\": {id}, \"claim\": \"Generated claim {id}.\"}}"
        )?;
    }
    out.flush()
}

/// One system's run: for each claim, RANKED abstracts of the claim's window, random scores.
fn write_run(path: &Path, claims: usize, docs: usize, rng: &mut ChaCha8Rng) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut window: Vec<usize> = (0..WINDOW).collect();
    for claim in 0..claims {
        let start = (claim * 7919) % docs;
        window.shuffle(rng);
        for offset in &window[..RANKED] {
            let doc = (start + offset) % docs;
            let p: f64 = rng.gen();
            writeln!(
                out,
                "{{\"claim_id\": {claim}, \"doc_id\": {doc}, \"p_support\": {p:.6}, \"p_contradict\": 0.0}}"
            )?;
        }
    }
    out.flush()
}

/// A project with the generated corpus, claims and runs, and `annotators` active annotators;
/// returns it and a lead's id (the probe's actor).
async fn project(
    db: &Db,
    dir: &Path,
    claims: usize,
    annotators: usize,
) -> anyhow::Result<(i64, i64)> {
    let docs = claims.max(WINDOW * 4);
    write_inputs(dir, claims, docs)?;
    let project = store::projects::create(db, "bench", "", None).await?;
    let lead = commands::Operator::at_the_shell().lead(db, "bench").await?;
    commands::import::corpus(db, &lead, &dir.join("corpus.jsonl"), None).await?;
    commands::import::claims(db, &lead, &dir.join("claims.jsonl")).await?;
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for s in 0..SYSTEMS {
        let path = dir.join(format!("run{s}.jsonl"));
        write_run(&path, claims, docs, &mut rng)?;
        let run = commands::import::RunImport {
            path: path.clone(),
            format: Some(app::domain::formats::RunFormat::Canonical),
            options: Default::default(),
            system: commands::import::SystemSpec {
                name: Some(format!("system-{s}")),
                role: app::domain::pool::Role::Pooled,
                description: String::new(),
                negative_sampling_ratio: None,
            },
            allow_missing_docs: false,
        };
        commands::import::run(db, &lead, run).await?;
        std::fs::remove_file(&path)?;
    }
    let hash = app::auth::hash_password(&NewPassword::parse("bench password")?)?;
    for i in 0..annotators {
        let user = store::users::create(
            db,
            &Username::parse(&format!("ann{i}"))?,
            Role::Annotator,
            &hash,
            None,
        )
        .await?;
        store::projects::add_member(db, project, user.id, ProjectRole::Annotator, None).await?;
    }
    let lead = store::users::create(db, &Username::parse("lead")?, Role::Lead, &hash, None).await?;
    Ok((project, lead.id))
}

/// Runs `work` while a probe writer changes the project's second-pass mode every 10 ms and
/// times each change; gives the work's outcome, how long it took and the probes' times, sorted.
async fn probed<T>(
    db: &Db,
    project: i64,
    lead: i64,
    work: impl std::future::Future<Output = T>,
) -> anyhow::Result<(T, Duration, Vec<Duration>)> {
    let done = Arc::new(AtomicBool::new(false));
    let probe = {
        let (db, done) = (db.clone(), Arc::clone(&done));
        tokio::spawn(async move {
            let mut times = Vec::new();
            let mut blind = false;
            while !done.load(Ordering::SeqCst) {
                blind = !blind;
                let mode = if blind {
                    SecondPassMode::Blind
                } else {
                    SecondPassMode::Confirm
                };
                let t = Instant::now();
                store::annotate::set_mode(&db, project, mode, Some(lead)).await?;
                times.push(t.elapsed());
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            anyhow::Ok(times)
        })
    };
    let t = Instant::now();
    let outcome = work.await;
    let took = t.elapsed();
    done.store(true, Ordering::SeqCst);
    let mut times = probe.await??;
    times.sort_unstable();
    Ok((outcome, took, times))
}

/// The probes' count, p50, p99 and max.
fn probes(times: &[Duration]) -> String {
    format!(
        "{} probe writes meanwhile: p50 {:.1} ms, p99 {:.1} ms, longest {:.1} ms (the longest write transaction)",
        times.len(),
        percentile(times, 0.5),
        percentile(times, 0.99),
        percentile(times, 1.0)
    )
}

/// Builds (or grows) the pool to `depth` while a probe writer times its own writes.
async fn step(db: &Db, project: i64, lead: i64, depth: u32) -> anyhow::Result<()> {
    let strategy = pool::parse_strategy("per-claim")?;
    let (built, took, times) = probed(
        db,
        project,
        lead,
        pool::build(db, project, strategy, depth, None),
    )
    .await?;
    let built = built?;
    let assigned: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM assignments WHERE status = 'open'")
            .fetch_one(db)
            .await?;
    println!(
        "pool_growth: per-claim depth {depth}: {} pairs (+{}), {assigned} open assignments, in {:.1} s; {}",
        built.pool_size,
        built.added,
        took.as_secs_f64(),
        probes(&times)
    );
    Ok(())
}

/// Records a (partial) release of the whole project while a probe writer times its own writes.
async fn release(db: &Db, project: i64, lead: i64) -> anyhow::Result<()> {
    // The release command, as the operator (`claimpool export` at the shell).
    let operator = commands::Operator::at_the_shell().lead(db, "bench").await?;
    let release = commands::release::CreateRelease {
        partial: true,
        ..Default::default()
    };
    let (created, took, times) = probed(db, project, lead, release.run(db, &operator)).await?;
    let created = created?;
    anyhow::ensure!(created.new, "the release should be new");
    let parts: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM release_parts")
        .fetch_one(db)
        .await?;
    println!(
        "pool_growth: release {}: archive {:.1} MB in {parts} parts, in {:.1} s; {}",
        created.release.number,
        created.release.archive_bytes as f64 / 1e6,
        took.as_secs_f64(),
        probes(&times)
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let claims = arg(&args, "--claims", 20_000);
    let annotators = arg(&args, "--annotators", 4);
    let from = u32::try_from(arg(&args, "--from", 10))?;
    let to = u32::try_from(arg(&args, "--to", 25))?;
    println!(
        "pool_growth: {claims} claims, {SYSTEMS} systems x {RANKED} abstracts per claim, {annotators} annotators; load average {}",
        machine::load_average()
    );
    let dir = tempfile::tempdir()?;
    let db = database::open(&args, dir.path(), "bench").await?;
    let t = Instant::now();
    let (project, lead) = project(&db, dir.path(), claims, annotators).await?;
    println!(
        "pool_growth: generated and imported {} prediction lines in {:.1} s",
        SYSTEMS * claims * RANKED,
        t.elapsed().as_secs_f64()
    );
    step(&db, project, lead, from).await?;
    step(&db, project, lead, to).await?;
    release(&db, project, lead).await?;
    Ok(())
}
