//! Beyond the judged depth (issue 15): `claimpool eval --estimate` (a run's Horvitz–Thompson
//! estimates from a project's judged sample) and the report's section on the sample, the
//! stopping test and the planner, as text. Every figure is the survey's
//! (`commands::report::survey`, computed by `app::domain::report::survey`).

use crate::release_cmd::EstimateArgs;
use anyhow::Context;
use app::domain::judging::RecallTarget;
use app::domain::report::survey::{Stopping, Survey};
use app::model::survey::{BudgetView, EstimateView};
use commands::report::Estimated;
use commands::Operator;
use std::fmt::Write as _;
use std::io::Write as _;

/// The stopping test's target, checked (`--target-recall`, `--alpha`).
pub fn target(recall: f64, alpha: f64) -> anyhow::Result<RecallTarget> {
    RecallTarget::new(recall, alpha).map_err(|e| anyhow::anyhow!("--target-recall/--alpha: {e}"))
}

/// Runs `claimpool eval --estimate`.
pub async fn eval_estimate(db: &commands::Db, args: EstimateArgs) -> anyhow::Result<()> {
    let target = target(args.target_recall, args.alpha)?;
    let lead = Operator::at_the_shell().lead(db, &args.project).await?;
    let estimated = Estimated::Run {
        name: args.name,
        pairs: args.pairs,
    };
    let survey = commands::report::survey(db, &lead, target, estimated)
        .await?
        .map_err(|why| anyhow::anyhow!(why))
        .with_context(|| format!("estimating from the sample of project {}", args.project))?;
    let text = if args.json {
        let mut text = serde_json::to_string(&survey).context("writing the JSON")?;
        text.push('\n');
        text
    } else {
        let mut out = String::new();
        survey_text(&mut out, &survey);
        out
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::from(e).context("writing to standard output"))
        }
        _ => Ok(()),
    }
}

/// `value [low, high]`.
pub fn interval(e: &EstimateView, digits: usize) -> String {
    format!(
        "{:.digits$} [{:.digits$}, {:.digits$}]",
        e.value, e.low, e.high
    )
}

fn optional(e: Option<&EstimateView>) -> String {
    e.map_or_else(|| "-".to_owned(), |e| interval(e, 3))
}

fn hours(h: Option<f64>) -> String {
    h.map_or_else(|| "-".to_owned(), |h| format!("{h:.1} h"))
}

/// The survey as readable text.
pub fn survey_text(out: &mut String, survey: &Survey) {
    let _ = writeln!(
        out,
        "\nBeyond the depth: sample, estimates, stopping and planning"
    );
    if let Some(s) = &survey.sample {
        let _ = writeln!(
            out,
            "sample beyond depth {} to rank {}: {} certain pairs ({} judged), {} drawn ({} judged)",
            s.depth, s.reach, s.certain, s.certain_judged, s.drawn, s.drawn_judged
        );
        let _ = writeln!(
            out,
            "stratum\tranks\tpopulation\tsampled\tinclusion\tjudged\tevidence"
        );
        for h in &s.strata {
            let _ = writeln!(
                out,
                "{}\t({}, {}]\t{}\t{}\t{:.4}\t{}\t{}",
                h.stratum,
                h.low_rank,
                h.high_rank,
                h.population,
                h.sampled,
                h.inclusion_probability,
                h.judged,
                h.evidence
            );
        }
    }
    if let Some(why) = &survey.waiting {
        let _ = writeln!(out, "no estimates yet: {why}");
    }
    if let Some(e) = &survey.estimates {
        let _ = writeln!(
            out,
            "total evidence (95% CI): {} over {} pairs; found {}; not yet found {}",
            interval(&e.total_evidence, 1),
            e.universe,
            e.found,
            interval(&e.not_found, 1)
        );
        let _ = writeln!(
            out,
            "system\tretrieved\tprecision\trecall\tf1\toutside the sample's reach"
        );
        for s in &e.systems {
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}\t{}",
                s.system,
                s.estimate.retrieved,
                optional(s.estimate.precision.as_ref()),
                optional(s.estimate.recall.as_ref()),
                optional(s.estimate.f1.as_ref()),
                s.outside
            );
        }
    }
    match &survey.stopping {
        Stopping::NoSample => {}
        Stopping::Waiting => {
            let _ = writeln!(out, "stopping test: waiting for the sample's labels");
        }
        Stopping::Stratified { strata } => {
            let _ = writeln!(
                out,
                "stopping test: needs a simple random sample (this one has {strata} strata): draw one with --strata 1"
            );
        }
        Stopping::Tested {
            sample, decision, ..
        } => {
            let verdict = survey.stopping.verdict().unwrap_or_default();
            let _ = writeln!(
                out,
                "stopping test: {verdict} (p = {:.4}; {} found before the sample, {} of {} unjudged pairs drawn with {} evidence; under H0 at least {} remained)",
                decision.p_value,
                sample.found,
                sample.drawn,
                sample.unjudged,
                sample.drawn_evidence,
                decision.null_remaining
            );
        }
    }
    let plan = &survey.plan;
    let _ = writeln!(
        out,
        "median seconds per judgment: {}",
        plan.median_seconds.map_or_else(
            || "- (no timed judgment yet)".to_owned(),
            |s| format!("{s:.1}")
        )
    );
    if let Some(d) = &plan.next_depth {
        let _ = writeln!(
            out,
            "to depth {}: {} pairs to judge, {}{}",
            d.depth,
            d.pairs_to_judge,
            hours(d.hours),
            d.estimated_evidence.map_or_else(String::new, |e| format!(
                ", about {e:.1} evidence pairs in all"
            ))
        );
    }
    if let Some(r) = &plan.recall {
        let budget = |b: &Option<BudgetView>| {
            b.map_or_else(
                || "beyond the sample's reach".to_owned(),
                |b| format!("{} more judgments, {:.1} h", b.judgments, b.hours),
            )
        };
        let _ = writeln!(
            out,
            "to recall {:.0}%: {} evidence pairs ({} at the interval's upper end): {} ({})",
            100.0 * r.target_recall,
            r.target_evidence,
            r.target_evidence_high,
            budget(&r.budget),
            budget(&r.budget_high)
        );
    }
}
