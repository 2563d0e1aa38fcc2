//! `claimpool report`: the lead report of a project (pool depth and system-count curves,
//! leave-one-out, systems, evidence, annotation and agreement), as JSON or as readable tables.
//! It reads and computes exactly what the dashboard shows (`commands::report`).

use anyhow::Context;
use app::domain::label::Label;
use app::domain::metrics::ConfusionMatrix;
use app::domain::pool::Role;
use app::domain::report::{Report, ReportOptions, Specificity, DEFAULT_BOOTSTRAP_SAMPLES};
use clap::Args;
use commands::report::ProjectReport;
use commands::Operator;
use std::fmt::Write as _;
use std::io::Write as _;

/// Options of `claimpool report`.
#[derive(Args)]
pub struct ReportArgs {
    /// The project
    #[arg(long)]
    project: String,
    /// Distance between the depths of the depth curve
    #[arg(long, default_value_t = app::domain::report::DEFAULT_STEP.get())]
    step: u32,
    /// Bootstrap resamples for the systems' standard deviations (at least 2)
    #[arg(long, default_value_t = DEFAULT_BOOTSTRAP_SAMPLES)]
    bootstrap: u32,
    /// Seed of the bootstrap and of sampled system orderings
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print the report as one JSON object (keys depth_curve, system_count_curve, inclusion,
    /// systems, agreement, evidence, annotation, survey, survey_note, model_assessors)
    #[arg(long)]
    json: bool,
    /// The target recall of the stopping test
    #[arg(long, default_value_t = 0.9)]
    target_recall: f64,
    /// The stopping test's significance level (0.05: 95% confidence)
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
}

/// Runs `claimpool report`.
pub async fn run(db: &commands::Db, args: ReportArgs) -> anyhow::Result<()> {
    let options = ReportOptions::parse(args.step, args.bootstrap, args.seed, u32::MAX)
        .map_err(|e| anyhow::anyhow!("--{e}"))?;
    let target = crate::estimate_cmd::target(args.target_recall, args.alpha)?;
    let lead = Operator::at_the_shell().lead(db, &args.project).await?;
    let computed = commands::report::project_report(db, &lead, options).await?;
    // The sample's estimates, the stopping test and the planner; why not, when they cannot be
    // computed (no pool yet, a pool changed since the sample).
    let estimated = commands::report::Estimated::Project;
    let (survey, survey_note) = match commands::report::survey(db, &lead, target, estimated).await?
    {
        Ok(survey) => (Some(survey), None),
        Err(note) => (None, Some(note)),
    };
    // Model assessors against the people (issue 16); empty without one.
    let assessors = commands::assessor::report(db, &lead).await?;
    if !computed.not_yet_pooled.is_empty() {
        eprintln!(
            "note: pooled systems added after the last pool build are counted as evaluation-only until the pool is grown: {}",
            computed.not_yet_pooled.join(", ")
        );
    }
    let text = if args.json {
        let mut value = serde_json::to_value(&computed.report).context("writing the JSON")?;
        if let Some(object) = value.as_object_mut() {
            object.insert("survey".into(), serde_json::to_value(&survey)?);
            object.insert("survey_note".into(), serde_json::to_value(&survey_note)?);
            object.insert("model_assessors".into(), serde_json::to_value(&assessors)?);
        }
        let mut text = serde_json::to_string(&value).context("writing the JSON")?;
        text.push('\n');
        text
    } else {
        let mut text = tables(&args.project, &options, &computed);
        match (&survey, &survey_note) {
            (Some(survey), _) => crate::estimate_cmd::survey_text(&mut text, survey),
            (None, Some(note)) => {
                let _ = writeln!(text, "\nBeyond the depth: {note}");
            }
            (None, None) => {}
        }
        model_assessor_text(&mut text, &assessors);
        text
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::from(e).context("writing to standard output"))
        }
        _ => Ok(()),
    }
}

/// Each model assessor against the people: κ with its n, and the systems' F1 ranks under the
/// human qrels and under the model's labels, with Kendall's τ-b and the human top three.
fn model_assessor_text(out: &mut String, assessors: &[app::domain::assessor::AssessorReport]) {
    for a in assessors {
        let k = &a.agreement;
        let _ = writeln!(
            out,
            "\nModel assessor {} ({}, {} labels): Cohen's kappa with the final labels {} \
             (n = {}, agreement {})",
            a.name,
            a.source,
            a.labels,
            f3_or_dash(k.kappa),
            k.n,
            pct(k.observed_agreement)
        );
        let rows: Vec<Vec<String>> = a
            .systems
            .iter()
            .map(|s| {
                vec![
                    s.system.clone(),
                    f3(s.human_f1),
                    s.human_rank.to_string(),
                    f3(s.model_f1),
                    s.model_rank.to_string(),
                ]
            })
            .collect();
        table(
            out,
            &format!(
                "Systems by F1: human qrels against {}'s labels as qrels",
                a.name
            ),
            &strings(["system", "human F1", "rank", "model F1", "rank"]),
            &rows,
        );
        let moved: Vec<String> = a
            .top_three
            .iter()
            .filter(|t| t.changed)
            .map(|t| format!("{} ({} -> {})", t.system, t.human_rank, t.model_rank))
            .collect();
        let _ = writeln!(
            out,
            "Kendall's tau-b {}; of the human top three, {}",
            f3_or_dash(a.kendall_tau_b),
            if moved.is_empty() {
                "none changes rank".to_owned()
            } else {
                format!("these change rank: {}", moved.join(", "))
            }
        );
    }
}

/// A column-aligned table: the first column left-aligned, the others right-aligned.
fn table(out: &mut String, title: &str, header: &[String], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let _ = writeln!(out, "\n{title}");
    let line = |out: &mut String, cells: &[String]| {
        let mut text = String::new();
        for (i, (cell, &w)) in cells.iter().zip(&widths).enumerate() {
            if i == 0 {
                let _ = write!(text, "{cell:<w$}");
            } else {
                let _ = write!(text, "  {cell:>w$}");
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(out, header);
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(out, &rule);
    for row in rows {
        line(out, row);
    }
    if rows.is_empty() {
        let _ = writeln!(out, "(none)");
    }
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |x| format!("{x:.1}"))
}

fn pm(mean: f64, sd: f64) -> String {
    format!("{mean:.3} ± {sd:.3}")
}

fn strings<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.iter().map(|c| (*c).to_owned()).collect()
}

/// The whole report as plain-text tables.
fn tables(project: &str, options: &ReportOptions, computed: &ProjectReport) -> String {
    let r: &Report = &computed.report;
    let mut out = String::new();
    let names: Vec<&str> = r.systems.by_system.iter().map(|(n, _)| n).collect();
    match computed.pool {
        Some(pool) => {
            let _ = writeln!(
                out,
                "Report of {project}: pool depth {} ({} strategy), {} pairs; evidence {} (citation {}, discovered {})",
                pool.depth,
                pool.strategy.as_str(),
                r.annotation.progress.pool_pairs,
                r.evidence.total,
                r.evidence.citation,
                r.evidence.discovered
            );
        }
        None => {
            let _ = writeln!(
                out,
                "Report of {project}: no pool yet; citation evidence {}",
                r.evidence.citation
            );
        }
    }
    let _ = writeln!(
        out,
        "Depth step {}, {} bootstrap resamples, seed {}",
        options.step,
        options.bootstrap_samples.get(),
        options.seed
    );

    // Pool depth.
    let mut header = strings(["depth", "pool", "judged", "evidence"]);
    header.extend(names.iter().map(|n| format!("F1 {n}")));
    header.extend(names.iter().map(|n| format!("AP {n}")));
    let rows: Vec<Vec<String>> = r
        .depth_curve
        .0
        .iter()
        .map(|p| {
            let mut row = vec![
                p.depth.to_string(),
                p.pool_size.to_string(),
                p.judged.to_string(),
                p.evidence.to_string(),
            ];
            row.extend(p.systems.iter().map(|(_, s)| f3(s.f1)));
            row.extend(p.systems.iter().map(|(_, s)| f3(s.average_precision)));
            row
        })
        .collect();
    table(
        &mut out,
        "Pool depth: evidence discovered, and each system's F1 and AP",
        &header,
        &rows,
    );
    let mut header = strings(["depth"]);
    header.extend(names.iter().map(|n| format!("|ΔF1|% {n}")));
    header.extend(names.iter().map(|n| format!("|ΔAP|% {n}")));
    let rows: Vec<Vec<String>> = r
        .depth_curve
        .0
        .iter()
        .skip(1)
        .map(|p| {
            let mut row = vec![p.depth.to_string()];
            row.extend(p.systems.iter().map(|(_, s)| pct(s.f1_change_pct)));
            row.extend(
                p.systems
                    .iter()
                    .map(|(_, s)| pct(s.average_precision_change_pct)),
            );
            row
        })
        .collect();
    table(
        &mut out,
        "Pool depth: absolute % change from the previous depth",
        &header,
        &rows,
    );

    // System count.
    let mut header = strings(["systems", "orderings", "evidence"]);
    header.extend(names.iter().map(|n| format!("F1 {n}")));
    let rows: Vec<Vec<String>> = r
        .system_count_curve
        .0
        .iter()
        .map(|p| {
            let orderings = if p.exact {
                format!("{} (all)", p.orderings)
            } else {
                format!("{} (sampled)", p.orderings)
            };
            let mut row = vec![
                p.count.to_string(),
                orderings,
                pm(p.evidence_mean, p.evidence_sd),
            ];
            row.extend(p.f1.iter().map(|(_, m)| pm(m.mean, m.sd)));
            row
        })
        .collect();
    table(
        &mut out,
        "System count: mean ± sd over orderings of the pooled systems",
        &header,
        &rows,
    );
    let rows: Vec<Vec<String>> = r
        .inclusion
        .0
        .iter()
        .map(|row| {
            vec![
                row.system.clone(),
                f3(row.included_f1),
                f3(row.excluded_f1),
                pct(row.change_pct),
                row.unique_evidence.to_string(),
            ]
        })
        .collect();
    table(
        &mut out,
        "System inclusion: F1 with the system's own pool contributions left out",
        &strings([
            "system",
            "F1 included",
            "F1 left out",
            "change %",
            "unique evidence",
        ]),
        &rows,
    );

    // Systems.
    let rows: Vec<Vec<String>> = r
        .systems
        .by_system
        .iter()
        .map(|(name, s)| {
            let m = &s.scores;
            vec![
                name.to_owned(),
                match s.role {
                    Role::Pooled => "pooled".to_owned(),
                    Role::EvaluationOnly => "evaluation-only".to_owned(),
                },
                pm(m.precision, m.precision_sd),
                pm(m.recall, m.recall_sd),
                pm(m.f1, m.f1_sd),
                pm(m.average_precision, m.average_precision_sd),
            ]
        })
        .collect();
    table(
        &mut out,
        "Systems at the current depth (± bootstrap sd)",
        &strings(["system", "role", "precision", "recall", "F1", "AP"]),
        &rows,
    );
    for (name, s) in r.systems.by_system.iter() {
        if let Some(m) = &s.confusion {
            confusion(
                &mut out,
                &format!("Confusion of {name}: gold (rows) vs predicted"),
                m,
            );
        }
    }
    let rows: Vec<Vec<String>> = r
        .systems
        .overlap
        .iter()
        .map(|o| {
            vec![
                format!("{} / {}", o.system_a, o.system_b),
                f3(o.citation),
                f3(o.non_citation),
            ]
        })
        .collect();
    table(
        &mut out,
        "Jaccard overlap of predicted evidence",
        &strings(["systems", "citation", "non-citation"]),
        &rows,
    );
    let significance = &r.systems.significance;
    let mark = |significant: bool| if significant { "*" } else { "" };
    let rows: Vec<Vec<String>> = significance
        .pairs
        .iter()
        .map(|p| {
            vec![
                format!("{} - {}", p.a, p.b),
                format!("{:+.3}{}", p.f1_difference, mark(p.f1_significant)),
                format!("{:.4}", p.f1_p_holm),
                format!(
                    "{:+.3}{}",
                    p.average_precision_difference,
                    mark(p.average_precision_significant)
                ),
                format!("{:.4}", p.average_precision_p_holm),
            ]
        })
        .collect();
    table(
        &mut out,
        "Differences between systems (Holm-adjusted p-values)",
        &strings(["systems", "ΔF1", "p (F1)", "ΔAP", "p (AP)"]),
        &rows,
    );
    let _ = writeln!(out, "{}", significance.legend());

    // Evidence.
    let e = &r.evidence;
    let rows: Vec<Vec<String>> = e
        .claims_by_evidence_count
        .iter()
        .map(|row| {
            vec![
                row.evidence_pairs.to_string(),
                row.claims.to_string(),
                format!("{:.1}", 100.0 * row.cumulative_share),
            ]
        })
        .collect();
    table(
        &mut out,
        "Claims by number of evidence pairs",
        &strings(["evidence pairs", "claims", "cumulative %"]),
        &rows,
    );
    let _ = writeln!(
        out,
        "\nClaims with conflicting evidence (SUPPORT and CONTRADICT): {}",
        if e.conflicting_claims.is_empty() {
            "none".to_owned()
        } else {
            e.conflicting_claims
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    let rows: Vec<Vec<String>> = Specificity::ALL
        .iter()
        .map(|&s| vec![s.as_str().to_owned(), e.specificity.get(s).to_string()])
        .collect();
    table(
        &mut out,
        "Specificity relations",
        &strings(["relation", "pairs"]),
        &rows,
    );

    // Annotation.
    let p = &r.annotation.progress;
    let _ = writeln!(
        out,
        "\nAnnotation: {} pool pairs, {} judged before annotation, {} to annotate, {} of them final",
        p.pool_pairs, p.prior_judged, p.to_annotate, p.finalized
    );
    let rows: Vec<Vec<String>> = p
        .stages
        .iter()
        .map(|s| {
            vec![
                s.stage.as_str().to_owned(),
                s.pairs.to_string(),
                s.records.to_string(),
            ]
        })
        .collect();
    table(
        &mut out,
        "Progress per stage",
        &strings(["stage", "pairs", "labels given"]),
        &rows,
    );
    let rows: Vec<Vec<String>> = r
        .annotation
        .annotators
        .iter()
        .map(|a| {
            vec![
                a.annotator.clone(),
                a.items.to_string(),
                a.median_seconds
                    .map_or_else(|| "-".to_owned(), |s| format!("{s:.1}")),
                a.items_per_hour
                    .map_or_else(|| "-".to_owned(), |s| format!("{s:.1}")),
            ]
        })
        .collect();
    table(
        &mut out,
        "Annotators",
        &strings(["annotator", "items", "median s/item", "items/hour"]),
        &rows,
    );
    let a = &r.agreement;
    match &a.first_vs_second {
        Some(pass) => {
            let _ = writeln!(
                out,
                "\nAgreement of first and second pass{}: {} pairs, kappa {}, {:.1}% agreement (chance {:.1}%)",
                if a.confirm_mode {
                    " (confirm mode: the second annotator saw the first label)"
                } else {
                    " (blind)"
                },
                pass.agreement.pairs,
                pass.agreement
                    .kappa
                    .map_or_else(|| "undefined".to_owned(), f3),
                pass.percent_agreement,
                100.0 * pass.agreement.expected_agreement
            );
            confusion(
                &mut out,
                "First pass (rows) vs second pass",
                &pass.agreement.confusion,
            );
        }
        None => {
            let _ = writeln!(out, "\nAgreement: no pair has both passes yet");
        }
    }
    let rows: Vec<Vec<String>> = a
        .awaiting_adjudication
        .pairs
        .iter()
        .map(|d| {
            vec![
                d.pair.claim.as_str().to_owned(),
                d.pair.doc.as_str().to_owned(),
                d.first.as_str().to_owned(),
                d.second.as_str().to_owned(),
            ]
        })
        .collect();
    table(
        &mut out,
        &format!(
            "Disagreements awaiting adjudication: {}",
            a.awaiting_adjudication.count
        ),
        &strings(["claim", "doc", "first", "second"]),
        &rows,
    );
    agreement_tables(&mut out, &a.reliability);
    out
}

/// A figure to 3 decimals, `-` when undefined.
fn f3_or_dash(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), f3)
}

/// Issue 16: κ of each pair of annotators, α over all, and both by depth band, by system and
/// by stage pair, each with its sample size.
fn agreement_tables(out: &mut String, r: &app::model::agreement::Reliability) {
    use app::model::agreement::GroupAgreement;
    let rows: Vec<Vec<String>> = r
        .annotator_pairs
        .iter()
        .map(|p| {
            vec![
                format!("{} - {}", p.a, p.b),
                p.kappa.n.to_string(),
                pct(p.kappa.observed_agreement.map(|x| 100.0 * x)),
                f3_or_dash(p.kappa.kappa),
            ]
        })
        .collect();
    table(
        out,
        "Cohen's kappa by pair of annotators (first and second passes)",
        &strings(["annotators", "pairs", "agree %", "kappa"]),
        &rows,
    );
    let _ = writeln!(
        out,
        "\nKrippendorff's alpha (nominal) over all annotators: {} ({} pairs, {} labels)",
        f3_or_dash(r.alpha.alpha),
        r.alpha.units,
        r.alpha.values
    );
    let group = |first: String, g: &GroupAgreement| {
        vec![
            first,
            g.first_vs_second.n.to_string(),
            f3_or_dash(g.first_vs_second.kappa),
            g.alpha.units.to_string(),
            f3_or_dash(g.alpha.alpha),
        ]
    };
    let header = |first: &str| strings([first, "pass pairs", "kappa", "pairs", "alpha"]);
    let rows: Vec<Vec<String>> = r
        .by_depth
        .iter()
        .map(|b| {
            let band = match b.to {
                Some(to) => format!("{}-{to}", b.from),
                None => format!("{}+ (outside the pool)", b.from),
            };
            group(band, &b.agreement)
        })
        .collect();
    table(out, "Agreement by entry depth", &header("depth"), &rows);
    let rows: Vec<Vec<String>> = r
        .by_system
        .iter()
        .map(|s| group(s.system.clone(), &s.agreement))
        .collect();
    table(
        out,
        "Agreement on the pairs each pooled system contributed",
        &header("system"),
        &rows,
    );
    let rows: Vec<Vec<String>> = r
        .by_stage
        .iter()
        .map(|s| {
            vec![
                format!("{} - {}", s.a, s.b),
                s.kappa.n.to_string(),
                f3_or_dash(s.kappa.kappa),
                f3_or_dash(s.alpha.alpha),
                s.rationale.pairs.to_string(),
                format!(
                    "{} (n={})",
                    f3_or_dash(s.rationale.mean_f1),
                    s.rationale.f1_pairs
                ),
                f3_or_dash(s.rationale.sentence_alpha.alpha),
            ]
        })
        .collect();
    table(
        out,
        "Agreement by stage pair (rationales: pairs with the same evidence label)",
        &strings([
            "stages",
            "pairs",
            "kappa",
            "alpha",
            "rationale pairs",
            "rationale F1",
            "sentence alpha",
        ]),
        &rows,
    );
}

fn confusion(out: &mut String, title: &str, m: &ConfusionMatrix) {
    let mut header = strings([""]);
    header.extend(Label::ALL.iter().map(|l| l.as_str().to_owned()));
    let rows: Vec<Vec<String>> = Label::ALL
        .iter()
        .map(|&row| {
            let mut cells = vec![row.as_str().to_owned()];
            cells.extend(Label::ALL.iter().map(|&c| m.count(row, c).to_string()));
            cells
        })
        .collect();
    table(out, title, &header, &rows);
}
