//! Lead report benchmark (issue "Lead dashboards"): the full report of a project of
//! SciFact-Open size — 300 claims, 5 pooled systems, about 50,000 predictions, about 1,000
//! judged pairs, depths 25…250, all 120 orderings, 1,000 bootstrap resamples — from reading
//! the database (`store::report::snapshot`) through `Report::compute`. Target < 1 s.
//!
//! `cargo bench -p server --bench report [-- --repeats N] [--permutations N]`
//!
//! `--permutations` sets the randomization tests between systems (default
//! `app::domain::report::DEFAULT_PERMUTATIONS`; 0 leaves the tests out, every p-value 1), to
//! measure what the significance marks cost.
//!
//! The project is generated (`benchdata::report::generate`, seeded) and written into
//! a fresh database first (not timed; SQLite, or PostgreSQL with `--engine postgres`: see
//! support/database.rs). Prints each phase's time (min / median / max over
//! the repeats), the machine's load average, and checks that the report read back from the
//! database equals the report of the generated snapshot.

#[path = "support/database.rs"]
mod database;
#[path = "support/machine.rs"]
mod machine;
#[path = "../tests/it/support/snapshot_db.rs"]
mod snapshot_db;

use anyhow::Context;
use app::domain::metrics::BootstrapSamples;
use app::domain::report::{Report, ReportOptions, DEFAULT_BOOTSTRAP_SAMPLES};
use benchdata::report::{generate, GenShape};
use std::time::{Duration, Instant};

fn summary(times: &[Duration]) -> String {
    let mut sorted = times.to_vec();
    sorted.sort();
    match (sorted.first(), sorted.last()) {
        (Some(min), Some(max)) => format!(
            "min {min:>9.3?}  median {:>9.3?}  max {max:>9.3?}",
            sorted[sorted.len() / 2]
        ),
        _ => "no runs".into(),
    }
}

fn main() -> anyhow::Result<()> {
    let mut repeats = 5_usize;
    let mut permutations = app::domain::report::DEFAULT_PERMUTATIONS;
    let all: Vec<String> = std::env::args().collect();
    let mut args = all.iter().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--repeats" {
            repeats = args
                .next()
                .context("--repeats needs a number")?
                .parse()
                .context("--repeats")?;
        } else if arg == "--permutations" {
            permutations = args
                .next()
                .context("--permutations needs a number")?
                .parse()
                .context("--permutations")?;
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let shape = GenShape::SCIFACT_OPEN;
        let start = Instant::now();
        let snapshot = generate(&shape)?;
        println!("generate                {:>9.3?}", start.elapsed());
        let dir = tempfile::tempdir()?;
        let db = database::open(&all, dir.path(), "report-bench").await?;
        let start = Instant::now();
        let project = snapshot_db::write(&db, "scifact-open-size", &snapshot).await;
        println!("write to the database   {:>9.3?}  (not part of the target)", start.elapsed());

        let options = ReportOptions {
            permutations,
            ..ReportOptions::new(
                BootstrapSamples::new(DEFAULT_BOOTSTRAP_SAMPLES)?,
                shape.seed,
            )
        };
        println!("load average before     {}", machine::load_average());
        let (mut load, mut compute, mut total) = (Vec::new(), Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..repeats.max(1) {
            let start = Instant::now();
            let loaded = store::report::snapshot(&db, project).await?;
            let loaded_at = start.elapsed();
            let report = Report::compute(&loaded.snapshot, &options)?;
            let done = start.elapsed();
            load.push(loaded_at);
            compute.push(done - loaded_at);
            total.push(done);
            last = Some(report);
        }
        println!("load average after      {}", machine::load_average());
        let report = last.context("no run")?;
        let expected = Report::compute(&snapshot, &options)?;
        anyhow::ensure!(
            report == expected,
            "the report read from the database differs from the generated snapshot's"
        );
        let predictions: usize = snapshot.systems.iter().map(|s| s.predictions.len()).sum();
        let judged_pool = report.annotation.progress.finalized + report.annotation.progress.prior_judged;
        println!(
            "{} claims, {} pooled systems, {} predictions, depth {} in {} steps, {} orderings, {} bootstrap resamples, {} permutations per pair of systems",
            snapshot.claims.len(),
            snapshot.systems.len(),
            predictions,
            shape.depth,
            report.depth_curve.0.len(),
            report.system_count_curve.0.first().map_or(0, |p| p.orderings),
            options.bootstrap_samples.get(),
            options.permutations
        );
        println!(
            "pool {} pairs, {} of them judged; {} final labels, {} judgments",
            report.annotation.progress.pool_pairs,
            judged_pool,
            snapshot.final_labels.len(),
            snapshot.annotations.len()
        );
        println!("store::report::snapshot {}", summary(&load));
        println!("Report::compute         {}", summary(&compute));
        println!("load + compute          {}  ({} runs; target < 1 s)", summary(&total), total.len());
        Ok(())
    })
}
