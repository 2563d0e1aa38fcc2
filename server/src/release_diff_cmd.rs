//! `claimpool release diff --project P A B`: what changed between two recorded releases of a
//! project (pairs whose final label changed, added, withdrawn) and each evaluated system's
//! precision, recall and F1 under both, with the difference and its paired bootstrap 95%
//! interval over claims. The same command as the lead's diff page
//! (`commands::release_diff::CompareReleases`).

use anyhow::Context;
use app::model::release_diff::{
    DiffBootstrap, DiffScores, ReleaseDiff, ScoreDifference, DEFAULT_DIFF_SAMPLES,
    DEFAULT_DIFF_SEED,
};
use clap::{Args, Subcommand};
use commands::release_diff::CompareReleases;
use commands::Operator;
use std::fmt::Write as _;

/// `claimpool release ...`.
#[derive(Subcommand)]
pub enum ReleaseCommand {
    /// Compare release B of a project with release A: pairs whose label changed, added or
    /// withdrawn, and each system's P/R/F1 under both with the difference (B - A) and its
    /// paired bootstrap 95% interval over claims
    Diff(DiffArgs),
}

/// Options of `claimpool release diff`.
#[derive(Args)]
pub struct DiffArgs {
    #[arg(long)]
    project: String,
    /// The earlier release's number
    #[arg(value_name = "A")]
    a: u32,
    /// The later release's number
    #[arg(value_name = "B")]
    b: u32,
    /// Bootstrap resamples of the claims (at least 2)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_DIFF_SAMPLES)]
    bootstrap: u32,
    /// Seed of the bootstrap
    #[arg(long, value_name = "S", default_value_t = DEFAULT_DIFF_SEED)]
    seed: u64,
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

/// Runs `claimpool release ...`.
pub async fn run(db: &commands::Db, command: ReleaseCommand) -> anyhow::Result<()> {
    match command {
        ReleaseCommand::Diff(args) => diff(db, args).await,
    }
}

async fn diff(db: &commands::Db, args: DiffArgs) -> anyhow::Result<()> {
    let lead = Operator::at_the_shell().lead(db, &args.project).await?;
    let command = CompareReleases {
        a: args.a,
        b: args.b,
        bootstrap: DiffBootstrap {
            samples: args.bootstrap,
            seed: args.seed,
        },
    };
    let diff = command.run(db, &lead).await.with_context(|| {
        format!(
            "comparing releases {} and {} of {}",
            args.a, args.b, args.project
        )
    })?;
    let text = if args.json {
        serde_json::to_string_pretty(&diff)?
    } else {
        text(&diff)
    };
    crate::release_cmd::say(&text)
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

fn scores(s: Option<DiffScores>) -> [String; 3] {
    match s {
        Some(s) => [f3(s.precision), f3(s.recall), f3(s.f1)],
        None => std::array::from_fn(|_| "-".to_owned()),
    }
}

fn difference(d: Option<ScoreDifference>) -> String {
    d.map_or_else(
        || "-".to_owned(),
        |d| {
            format!(
                "{} [{}, {}]",
                signed(d.value),
                signed(d.low),
                signed(d.high)
            )
        },
    )
}

/// The diff as readable text: counts, the systems table, then the pairs.
pub fn text(d: &ReleaseDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: release {} against release {} ({} and {} claims)",
        d.project, d.b, d.a, d.claims_b, d.claims_a
    );
    let _ = writeln!(
        out,
        "pairs: {} changed label, {} added, {} withdrawn",
        d.changed.len(),
        d.added.len(),
        d.withdrawn.len()
    );
    if !d.claims_only_in_a.is_empty() || !d.claims_only_in_b.is_empty() {
        let ids = |ids: &[app::domain::ids::ClaimId]| {
            ids.iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "claims only in {}: {}\nclaims only in {}: {}",
            d.a,
            ids(&d.claims_only_in_a),
            d.b,
            ids(&d.claims_only_in_b)
        );
    }
    let _ = writeln!(
        out,
        "\nSystems (difference {b} - {a}, paired bootstrap 95% interval over claims, {} resamples, seed {}):",
        d.bootstrap.samples,
        d.bootstrap.seed,
        a = d.a,
        b = d.b,
    );
    let header = [
        "system".to_owned(),
        format!("P {}", d.a),
        format!("R {}", d.a),
        format!("F1 {}", d.a),
        format!("P {}", d.b),
        format!("R {}", d.b),
        format!("F1 {}", d.b),
        "ΔP".to_owned(),
        "ΔR".to_owned(),
        "ΔF1".to_owned(),
    ];
    let rows: Vec<Vec<String>> = d
        .systems
        .iter()
        .map(|s| {
            let mut row = vec![s.system.clone()];
            row.extend(scores(s.under_a));
            row.extend(scores(s.under_b));
            row.push(difference(s.difference.map(|x| x.precision)));
            row.push(difference(s.difference.map(|x| x.recall)));
            row.push(difference(s.difference.map(|x| x.f1)));
            row
        })
        .collect();
    table(&mut out, &header, &rows);
    let _ = writeln!(out, "\nLabel changed ({} → {}):", d.a, d.b);
    for c in &d.changed {
        let _ = writeln!(out, "  {} {} {} -> {}", c.claim, c.doc, c.old, c.new);
    }
    let _ = writeln!(out, "\nAdded in {}:", d.b);
    for p in &d.added {
        let _ = writeln!(out, "  {} {} {}", p.claim, p.doc, p.label);
    }
    let _ = writeln!(out, "\nWithdrawn since {}:", d.a);
    for p in &d.withdrawn {
        let _ = writeln!(out, "  {} {} {}", p.claim, p.doc, p.label);
    }
    out.trim_end().to_owned()
}

/// Columns padded to their widest cell; the first left-aligned, the others right-aligned.
fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, cells: &[String]| {
        let mut text = String::new();
        for (i, (cell, &w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            if i == 0 {
                let _ = write!(text, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(text, "  {}{cell}", " ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(out, header);
    if rows.is_empty() {
        let _ = writeln!(out, "(no system publishes a run in either release)");
    }
    for row in rows {
        line(out, row);
    }
}
