//! BM25 index benchmark (issue "Pipeline backend"): a corpus of 500,000 abstracts resampled
//! from real SciFact sentences (`benchdata::index::synthetic_corpus`) is indexed with the
//! pipeline's tantivy index, then every claim's top 50 is retrieved. Targets: under 2 minutes
//! to index, top-50 query p50 under 5 ms on the 2-core machine.
//!
//! `cargo bench -p server --bench index [-- --docs N] [--corpus FILE] [--claims FILE]`
//!
//! The source abstracts and the timed claims are SciFact's corpus and dev claims when
//! `../shared/data/scifact` is there, else the demo sample this repository ships (443
//! abstracts, 40 claims). Prints index time (wall and CPU), index size, query p50 / p99 (each
//! claim's fastest of 3 timed runs), peak resident memory and the machine's load average.

#[path = "support/machine.rs"]
mod machine;

use anyhow::Context;
use app::pipeline::generate::{corpus_index_docs, read_claims};
use app::pipeline::IndexDoc;
use benchdata::index::{run, BenchConfig};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// SciFact's file if the shared data is there, else the shipped demo file.
fn default_file(scifact: &str, demo: &str) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = manifest.join("../../shared/data/scifact").join(scifact);
    if shared.is_file() {
        shared
    } else {
        manifest.join("demo").join(demo)
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let mut config = BenchConfig::default();
    if let Some(docs) = arg(&args, "--docs") {
        config.docs = docs.parse().context("--docs")?;
    }
    let corpus = arg(&args, "--corpus")
        .map(PathBuf::from)
        .unwrap_or_else(|| default_file("corpus.jsonl", "corpus.jsonl"));
    let claims_file = arg(&args, "--claims")
        .map(PathBuf::from)
        .unwrap_or_else(|| default_file("claims_dev.jsonl", "claims.jsonl"));
    let source: Vec<IndexDoc> = corpus_index_docs(&corpus)
        .and_then(|docs| Ok(docs.collect::<Result<_, _>>()?))
        .with_context(|| corpus.display().to_string())?;
    let claims: Vec<String> = read_claims(&claims_file)?
        .into_iter()
        .map(|claim| claim.text)
        .collect();
    println!(
        "index: {} abstracts resampled from {} ({} abstracts); {} claims from {}",
        config.docs,
        corpus.display(),
        source.len(),
        claims.len(),
        claims_file.display()
    );
    let bar = ProgressBar::new(config.docs).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} abstracts {elapsed} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let dir = tempfile::tempdir()?;
    let report = run(dir.path(), &source, &claims, config, &|done| {
        bar.set_position(done)
    })?;
    bar.finish_and_clear();
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    println!(
        "index: {} abstracts in {:.1} s (CPU {}; target < 120 s), {} segment(s), {:.1} MiB",
        report.summary.documents,
        report.index_time.as_secs_f64(),
        report
            .index_cpu_time
            .map_or("unknown".into(), |t| format!("{:.1} s", t.as_secs_f64())),
        report.summary.segments,
        mib(report.index_bytes)
    );
    println!(
        "query: top {} of {} claims, p50 {:.2} ms (target < 5 ms), p99 {:.2} ms",
        config.k,
        report.queries,
        report.latency_p50.as_secs_f64() * 1e3,
        report.latency_p99.as_secs_f64() * 1e3
    );
    println!(
        "peak RSS {}; load average {}",
        report
            .peak_rss_bytes
            .map_or("unknown".into(), |b| format!("{:.0} MiB", mib(b))),
        machine::load_average()
    );
    Ok(())
}
