//! `claimpool eval` against a claims file: one run (today's figures, the figures for incomplete
//! judgments, optionally per claim), or several runs (each system, then every pair of systems
//! with the paired randomization test, the paired bootstrap and Holm's correction). The figures
//! come from the domain (`app::domain::release`, `app::domain::metrics`); this module reads
//! the files and prints.

use anyhow::Context;
use app::domain::metrics::{Judgments, Run};
use app::domain::release::{
    compare, evaluate_judged, read_gold_judged, read_qrels_judgments, read_run, restrict_to_gold,
    BootstrapRequest, CompareRequest, EvalReport, JudgedFrom, JudgedPairs, PairComparison,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `eval` was asked, its files read or not yet.
pub struct EvalRequest<'a> {
    pub claims: &'a Path,
    pub qrels: Option<&'a Path>,
    pub runs: &'a [PathBuf],
    pub format: Option<&'a str>,
    pub label_order: &'a str,
    pub system: Option<&'a str>,
    pub bootstrap: Option<BootstrapRequest>,
    pub by_claim: bool,
    pub json: bool,
    /// Randomization-test permutations and paired-bootstrap resamples, for several runs.
    pub permutations: u32,
    pub comparison_bootstrap: u32,
    pub seed: u64,
}

/// One evaluated system.
#[derive(Serialize)]
struct System {
    name: String,
    file: String,
    format: String,
    #[serde(flatten)]
    report: EvalReport,
}

#[derive(Serialize)]
struct Comparison {
    systems: Vec<System>,
    comparisons: Vec<PairComparison>,
    tests: CompareRequest,
}

/// Reads the files, evaluates and prints (blocking: CPU work).
pub fn eval(request: EvalRequest<'_>) -> anyhow::Result<()> {
    let (gold, claims_judgments) = read_gold_judged(request.claims)?;
    let (judgments, from): (Judgments, JudgedFrom) = match request.qrels {
        Some(path) => (
            read_qrels_judgments(path, &gold)?,
            JudgedFrom::Qrels {
                file: path.display().to_string(),
            },
        ),
        None => (claims_judgments, JudgedFrom::Claims),
    };
    let judged = JudgedPairs {
        judgments: &judgments,
        from: &from,
    };
    let mut systems = Vec::new();
    let mut runs: Vec<(String, Run)> = Vec::new();
    for path in request.runs {
        let (format, options) =
            crate::release_cmd::run_options(request.format, request.label_order, path)?;
        let run = read_run(path, format, &options, request.system)?;
        let report = evaluate_judged(
            &gold,
            Some(judged),
            &run,
            request.bootstrap,
            request.by_claim,
        )?;
        let name = system_name(path, request.system, request.runs);
        systems.push(System {
            name: name.clone(),
            file: path.display().to_string(),
            format: format.to_string(),
            report,
        });
        if request.runs.len() > 1 {
            let run = restrict_to_gold(&gold, &run)?.unwrap_or(run);
            runs.push((name, run));
        }
    }
    if request.runs.len() == 1 {
        let system = systems.pop().context("no run")?;
        return if request.json {
            say(&serde_json::to_string(&system.report)?)
        } else {
            print_one(&system)
        };
    }
    let tests = CompareRequest {
        permutations: request.permutations,
        bootstrap_samples: request.comparison_bootstrap,
        seed: request.seed,
    };
    let named: Vec<(String, &Run)> = runs.iter().map(|(n, r)| (n.clone(), r)).collect();
    let comparisons = compare(&gold, &named, tests)?;
    let comparison = Comparison {
        systems,
        comparisons,
        tests,
    };
    if request.json {
        say(&serde_json::to_string(&comparison)?)
    } else {
        print_comparison(&comparison)
    }
}

/// `--system` when given with one run; otherwise the file's name, or its parent directory and
/// name (or its whole path) when another run has the same file name.
fn system_name(path: &Path, system: Option<&str>, all: &[PathBuf]) -> String {
    let file_name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    match system {
        Some(name) if all.len() == 1 => name.to_owned(),
        _ => {
            let mine = file_name(path);
            if all.iter().filter(|p| file_name(p) == mine).count() > 1 {
                // The parent directory tells them apart (a commit, a checkpoint), else the path.
                let with_parent = |p: &Path| {
                    p.parent()
                        .and_then(Path::file_name)
                        .map(|d| format!("{}/{}", d.to_string_lossy(), file_name(p)))
                };
                match with_parent(path) {
                    Some(name)
                        if all
                            .iter()
                            .filter(|p| with_parent(p).as_ref() == Some(&name))
                            .count()
                            == 1 =>
                    {
                        name
                    }
                    _ => path.display().to_string(),
                }
            } else {
                mine
            }
        }
    }
}

fn say(line: &str) -> anyhow::Result<()> {
    crate::release_cmd::say(line)
}

fn judged_from(report: &EvalReport) -> String {
    match &report.incomplete {
        Some(i) => match &i.judged_from {
            JudgedFrom::Claims => format!(
                "{} judged pairs: the claims file's evidence and cited documents (pass --qrels \
                 with a release's qrels.txt for its judged NEI pairs)",
                i.judged_pairs
            ),
            JudgedFrom::Qrels { file } => {
                format!("{} judged pairs, from {file}", i.judged_pairs)
            }
        },
        None => String::new(),
    }
}

fn print_one(system: &System) -> anyhow::Result<()> {
    let report = &system.report;
    let c = &report.counts;
    say(&format!(
        "gold: {} claims, {} evidence pairs; run ({}): {} pairs evaluated, {} predicted as evidence",
        c.claims, c.gold_evidence, system.format, c.predicted_pairs, c.predicted_evidence
    ))?;
    if c.skipped_pairs > 0 {
        say(&format!(
            "left out: {} pairs of {} claims that are not in the claims file",
            c.skipped_pairs, c.skipped_claims
        ))?;
    }
    say(&judged_from(report))?;
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
    if let Some(i) = &report.incomplete {
        let m = &i.metrics;
        for j in &m.judged_at {
            let note = if j.k == m.depth {
                " (the run's depth)"
            } else {
                ""
            };
            say(&format!("judged@{}\t{:.4}{note}", j.k, j.value))?;
        }
        say(&format!("unjudged_pairs\t{}", m.unjudged_pairs))?;
        say(&format!(
            "unjudged_predicted_evidence\t{}",
            m.unjudged_predicted_evidence
        ))?;
        say(&format!(
            "bpref\t{:.4}\t(mean over {} claims with evidence)",
            m.bpref, m.claims_with_evidence
        ))?;
        say(&format!(
            "condensed_precision\t{:.4}",
            m.condensed.precision
        ))?;
        say(&format!("condensed_recall\t{:.4}", m.condensed.recall))?;
        say(&format!("condensed_f1\t{:.4}", m.condensed.f1))?;
        say(&format!(
            "condensed_average_precision\t{:.4}",
            m.condensed.average_precision
        ))?;
        say(&format!(
            "condensed_map\t{:.4}\t(mean per-claim AP of the condensed run)",
            m.condensed_map
        ))?;
    }
    if let Some(claims) = &report.by_claim {
        let extra = report.incomplete_by_claim.as_deref();
        let mut header = "\nclaim\tgold\tpredicted\tcorrect\tprecision\trecall\tf1".to_owned();
        if let Some(first) = extra.and_then(|e| e.first()) {
            for j in &first.judged_at {
                header.push_str(&format!("\tjudged@{}", j.k));
            }
            header.push_str(
                "\tunjudged_evidence\tbpref\tcondensed_precision\tcondensed_f1\tcondensed_ap",
            );
        }
        say(&header)?;
        for (n, m) in claims.iter().enumerate() {
            let mut line = format!(
                "{}\t{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}",
                m.claim, m.gold_evidence, m.predicted, m.correct, m.precision, m.recall, m.f1
            );
            if let Some(i) = extra.and_then(|e| e.get(n)) {
                for j in &i.judged_at {
                    line.push_str(&format!("\t{:.4}", j.value));
                }
                line.push_str(&format!(
                    "\t{}\t{:.4}\t{:.4}\t{:.4}\t{:.4}",
                    i.unjudged_predicted_evidence,
                    i.bpref,
                    i.condensed.precision,
                    i.condensed.f1,
                    i.condensed.average_precision
                ));
            }
            say(&line)?;
        }
    }
    Ok(())
}

fn print_comparison(comparison: &Comparison) -> anyhow::Result<()> {
    if let Some(first) = comparison.systems.first() {
        let c = &first.report.counts;
        say(&format!(
            "gold: {} claims, {} evidence pairs; {}",
            c.claims,
            c.gold_evidence,
            judged_from(&first.report)
        ))?;
    }
    say("")?;
    say("system\tpairs\tprecision\trecall\tf1\tap\tjudged@10\tbpref\tcondensed_f1\tcondensed_ap")?;
    for s in &comparison.systems {
        let r = &s.report;
        let (judged10, bpref, cf1, cap) = r.incomplete.as_ref().map_or((0.0, 0.0, 0.0, 0.0), |i| {
            let m = &i.metrics;
            let judged10 = m
                .judged_at
                .iter()
                .find(|j| j.k == 10)
                .map_or(0.0, |j| j.value);
            (
                judged10,
                m.bpref,
                m.condensed.f1,
                m.condensed.average_precision,
            )
        });
        say(&format!(
            "{}\t{}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}",
            s.name,
            r.counts.predicted_pairs,
            r.precision,
            r.recall,
            r.f1,
            r.average_precision,
            judged10,
            bpref,
            cf1,
            cap
        ))?;
    }
    let t = &comparison.tests;
    say(&format!(
        "\npairs (a - b): randomization test ({} permutations), paired bootstrap ({} resamples), \
         seed {}; Holm over {} pairs; * significant at 0.05 after Holm",
        t.permutations,
        t.bootstrap_samples,
        t.seed,
        comparison.comparisons.len()
    ))?;
    say("a\tb\tmeasure\tdifference\tp\tp_holm\tbootstrap_95%\tbootstrap_p")?;
    for p in &comparison.comparisons {
        let rows = [
            (
                "f1",
                p.f1_difference,
                p.randomization.f1_p,
                p.f1_p_holm,
                p.bootstrap.f1,
            ),
            (
                "ap",
                p.average_precision_difference,
                p.randomization.average_precision_p,
                p.average_precision_p_holm,
                p.bootstrap.average_precision,
            ),
        ];
        for (measure, diff, p_value, holm, boot) in rows {
            let star = if holm < 0.05 { " *" } else { "" };
            say(&format!(
                "{}\t{}\t{measure}\t{diff:+.4}\t{p_value:.4}\t{holm:.4}{star}\t[{:+.4}, {:+.4}]\t{:.4}",
                p.a, p.b, boot.low, boot.high, boot.p
            ))?;
        }
    }
    Ok(())
}
