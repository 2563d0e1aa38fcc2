//! Import and pooling benchmark on generated data (issue: import corpora, claims and runs).
//!
//! `cargo bench -p server --bench import [-- corpus|runs] [--docs N] [--claims N]`
//!   corpus: a corpus of 500,000 abstracts of realistic length (sentences resampled from the
//!           shipped SciFact sample) imported into a fresh database; target < 60 s.
//!   runs:   4 systems x 10,000 claims x 250 docs = 10 million prediction lines, imported (one
//!           file per system) and pooled at d = 250; target < 60 s in total, < 2 GiB peak memory.
//! Prints wall times and the process's peak resident memory (VmHWM).
//! `--engine postgres` (or `--db postgres://…`) runs both on PostgreSQL: see support/database.rs.

use app::domain::formats::{CorpusFormat, RunReadOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;
use store::{self, pool};

#[path = "support/database.rs"]
mod database;

const SAMPLE: &str = include_str!("../demo/corpus.jsonl");

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn sample_sentences() -> (Vec<String>, Vec<String>) {
    let mut titles = Vec::new();
    let mut sentences = Vec::new();
    for line in SAMPLE.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("sample line");
        titles.push(v["title"].as_str().unwrap_or_default().to_owned());
        for s in v["abstract"].as_array().into_iter().flatten() {
            sentences.push(s.as_str().unwrap_or_default().to_owned());
        }
    }
    (titles, sentences)
}

fn write_corpus(path: &Path, docs: usize, rng: &mut ChaCha8Rng) -> std::io::Result<u64> {
    let (titles, sentences) = sample_sentences();
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    for id in 0..docs {
        // SciFact abstracts: 3 to ~20 sentences, mean about 9.
        let n = rng.gen_range(3..=15);
        let abs: Vec<&str> = (0..n)
            .map(|_| sentences[rng.gen_range(0..sentences.len())].as_str())
            .collect();
        let line = serde_json::json!({ "doc_id": id, "title": titles[rng.gen_range(0..titles.len())], "abstract": abs });
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

fn write_claims(path: &Path, claims: usize) -> std::io::Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    for id in 0..claims {
        writeln!(
            out,
            "{}",
            serde_json::json!({ "id": id, "claim": format!("Generated claim number {id}.") })
        )?;
    }
    out.flush()
}

fn write_run(
    path: &Path,
    claims: usize,
    per_claim: usize,
    docs: usize,
    rng: &mut ChaCha8Rng,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    for claim in 0..claims {
        let start = rng.gen_range(0..docs);
        for rank in 1..=per_claim {
            let doc = (start + rank * 7919) % docs;
            let ps: f64 = rng.gen::<f64>();
            let pc: f64 = rng.gen::<f64>() * (1.0 - ps);
            let label = if ps > 0.5 {
                "SUPPORT"
            } else if pc > 0.5 {
                "CONTRADICT"
            } else {
                "NEI"
            };
            writeln!(
                out,
                "{{\"claim_id\": {claim}, \"doc_id\": {doc}, \"predicted_label\": \"{label}\", \"p_support\": {ps:.6}, \"p_contradict\": {pc:.6}, \"p_nei\": {:.6}, \"rank\": {rank}}}",
                (1.0 - ps - pc).max(0.0)
            )?;
        }
    }
    out.flush()
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let which = args
        .iter()
        .skip(1)
        .find(|a| *a == "corpus" || *a == "runs")
        .cloned();
    let dir = tempfile::tempdir()?;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    if which.as_deref() != Some("runs") {
        let docs = arg(&args, "--docs", 500_000);
        let path = dir.path().join("corpus.jsonl");
        let t = Instant::now();
        let bytes = write_corpus(&path, docs, &mut rng)?;
        println!(
            "corpus: generated {docs} abstracts ({:.0} MB) in {:.1} s",
            bytes as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
        let db = database::open(&args, dir.path(), "corpus").await?;
        store::projects::create(&db, "bench-corpus", "", None).await?;
        let lead = commands::Operator::at_the_shell()
            .lead(&db, "bench-corpus")
            .await?;
        let t = Instant::now();
        let report =
            commands::import::corpus(&db, &lead, &path, Some(CorpusFormat::SciFact)).await?;
        println!(
            "corpus: imported {} abstracts in {:.1} s (target < 60 s); peak RSS {:.0} MiB",
            report.rows,
            t.elapsed().as_secs_f64(),
            peak_rss_mib()
        );
    }
    if which.as_deref() != Some("corpus") {
        let claims = arg(&args, "--claims", 10_000);
        let docs = arg(&args, "--docs", 500_000);
        let (systems, per_claim, depth) = (4usize, 250usize, 250u32);
        let db = database::open(&args, dir.path(), "runs").await?;
        let project = store::projects::create(&db, "bench-runs", "", None).await?;
        let lead = commands::Operator::at_the_shell()
            .lead(&db, "bench-runs")
            .await?;
        let t = Instant::now();
        let corpus = dir.path().join("ids.jsonl");
        let mut out = BufWriter::new(std::fs::File::create(&corpus)?);
        for id in 0..docs {
            writeln!(
                out,
                "{{\"doc_id\": {id}, \"title\": \"T\", \"abstract\": [\"S.\"]}}"
            )?;
        }
        out.flush()?;
        drop(out);
        commands::import::corpus(&db, &lead, &corpus, None).await?;
        let claims_path = dir.path().join("claims.jsonl");
        write_claims(&claims_path, claims)?;
        commands::import::claims(&db, &lead, &claims_path).await?;
        let mut files = Vec::new();
        for s in 0..systems {
            let path = dir.path().join(format!("run{s}.jsonl"));
            write_run(&path, claims, per_claim, docs, &mut rng)?;
            files.push(path);
        }
        let lines = systems * claims * per_claim;
        println!(
            "runs: generated {lines} lines ({systems} x {claims} x {per_claim}) in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        for (s, path) in files.iter().enumerate() {
            let run = commands::import::RunImport {
                path: path.clone(),
                format: None,
                options: RunReadOptions::default(),
                system: commands::import::SystemSpec {
                    name: Some(format!("system-{s}")),
                    role: app::domain::pool::Role::Pooled,
                    description: String::new(),
                    negative_sampling_ratio: None,
                },
                allow_missing_docs: false,
            };
            commands::import::run(&db, &lead, run).await?;
            println!(
                "runs: system {s} imported at {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
        let imported = t.elapsed().as_secs_f64();
        let report = pool::build(
            &db,
            project,
            pool::parse_strategy("confidence")?,
            depth,
            None,
        )
        .await?;
        let total = t.elapsed().as_secs_f64();
        println!(
            "runs: imported {lines} lines in {imported:.1} s, pooled at d={depth} ({} pairs) in {:.1} s; total {total:.1} s (target < 60 s); peak RSS {:.0} MiB (target < 2048)",
            report.pool_size,
            total - imported,
            peak_rss_mib()
        );
    }
    Ok(())
}
