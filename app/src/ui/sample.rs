//! Sampled pools (issue 15): the pool page's "Add a sample" control and the report's section
//! beyond the depth (the sample's Horvitz–Thompson estimates, the stopping test and the
//! planner). Every number is the survey's; this module only places it.

use crate::api::sample::{AddPoolSample, SurveyView, TARGET_RECALL};
use crate::model::survey::{
    BudgetView, EstimateView, Estimates, Plan, SampleSummary, Stopping, Survey, SystemSurvey,
};
use crate::ui::charts::{LinePlot, Point, Series};
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;

fn count(n: usize) -> String {
    format_count(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `value [low, high]`.
fn interval(e: &EstimateView, digits: usize) -> String {
    format!(
        "{:.digits$} [{:.digits$}, {:.digits$}]",
        e.value, e.low, e.high
    )
}

fn optional(e: Option<&EstimateView>) -> String {
    e.map_or_else(|| "–".to_owned(), |e| interval(e, 3))
}

/// The pool page's control: draw a stratified sample beyond the depth into the pool.
#[component]
pub fn SampleControl(project: Signal<String>, version: RwSignal<u32>) -> AnyView {
    let size = RwSignal::new(100u32);
    let strata = RwSignal::new(3u32);
    let seed = RwSignal::new(0u64);
    let add = ServerAction::<AddPoolSample>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = add.value().get() {
            version.update(|v| *v += 1);
        }
    });
    view! {
        <div class="toolbar" data-testid="sample-control">
            <label title="Unjudged pairs beyond the depth, drawn at random and annotated like pooled pairs">"Sample N "
                <input type="number" min="1" data-testid="sample-size" prop:value=move || size.get().to_string()
                    on:input=move |ev| size.set(event_target_value(&ev).parse().unwrap_or(1)) />
            </label>
            <label title="Rank bands (d, 2d], (2d, 4d], …; 1 band is a simple random sample, which the stopping test needs">"Strata K "
                <input type="number" min="1" max="16" data-testid="sample-strata" prop:value=move || strata.get().to_string()
                    on:input=move |ev| strata.set(event_target_value(&ev).parse().unwrap_or(1)) />
            </label>
            <label>"Seed "
                <input type="number" min="0" prop:value=move || seed.get().to_string()
                    on:input=move |ev| seed.set(event_target_value(&ev).parse().unwrap_or(0)) />
            </label>
            <button class="secondary" data-testid="sample-add" on:click=move |_| {
                add.dispatch(AddPoolSample { project: project.get(), size: size.get(), strata: strata.get(), seed: seed.get() });
            }>"Add a sample"</button>
        </div>
        {move || add.value().get().map(|r| match r {
            Ok(b) => view! {
                <p class="ok" data-testid="sample-result">{format!(
                    "Sample beyond depth {}: {} pairs drawn into the pool ({} pairs in all), each to be annotated; the report estimates from it once they are judged.",
                    b.depth, format_count(b.added as i64), format_count(b.pool_size as i64)
                )}</p>
            }.into_any(),
            Err(e) => view! { <ErrorNote error=e /> }.into_any(),
        })}
    }
    .into_any()
}

/// Each system's estimated F1 with its 95% interval, as text, from a survey (none without
/// estimates).
pub fn estimated_f1(survey: Result<SurveyView, crate::error::ApiError>) -> Vec<(String, String)> {
    survey
        .ok()
        .and_then(|v| v.survey)
        .and_then(|s| s.estimates)
        .map(|e| {
            e.systems
                .into_iter()
                .map(|s| (s.system, optional(s.estimate.f1.as_ref())))
                .collect()
        })
        .unwrap_or_default()
}

/// The report's section beyond the depth, from the page's `survey`.
#[component]
pub fn SurveySection(survey: Resource<Result<SurveyView, crate::error::ApiError>>) -> AnyView {
    view! {
        <section data-testid="survey">
            <h2>"Beyond the depth: estimates, stopping and planning"</h2>
            <p class="muted">"From a stratified random sample of the pairs beyond the depth (the pool page's Add a sample, or claimpool pool build --sample): Horvitz–Thompson estimates with 95% intervals of the evidence and of each system's evidence retrieval, the stopping test and annotator-hours."</p>
            <Suspense fallback=|| view! { <p class="muted">"Estimating…"</p> }>
                {move || Suspend::new(async move {
                    match survey.await {
                        Ok(v) => view! { <SurveyBody view=v /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
    .into_any()
}

#[component]
fn SurveyBody(view: SurveyView) -> AnyView {
    let Some(survey) = view.survey else {
        let note = view.note.unwrap_or_default();
        return view! { <p class="muted" data-testid="survey-note">{note}</p> }.into_any();
    };
    let Survey {
        sample,
        waiting,
        estimates,
        stopping,
        plan,
    } = survey;
    view! {
        {sample.map(|s| view! { <SampleTable sample=s /> })}
        {waiting.map(|w| view! { <p class="muted" data-testid="survey-waiting">{format!("No estimates yet: {w}.")}</p> })}
        {estimates.map(|e| view! { <EstimatesTables estimates=e /> })}
        <StoppingNote stopping=stopping />
        <PlanSection plan=plan />
    }
    .into_any()
}

#[component]
fn SampleTable(sample: SampleSummary) -> AnyView {
    let caption = format!(
        "Sample beyond depth {} to rank {}: {} certain pairs ({} judged), {} drawn ({} judged)",
        sample.depth,
        sample.reach,
        count(sample.certain),
        count(sample.certain_judged),
        count(sample.drawn),
        count(sample.drawn_judged)
    );
    let rows = sample
        .strata
        .into_iter()
        .map(|h| {
            view! {
                <tr>
                    <td>{format!("({}, {}]", h.low_rank, h.high_rank)}</td>
                    <td class="num">{count(h.population)}</td>
                    <td class="num">{count(h.sampled)}</td>
                    <td class="num">{format!("{:.4}", h.inclusion_probability)}</td>
                    <td class="num">{count(h.judged)}</td>
                    <td class="num">{count(h.evidence)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <p>{caption}</p>
        <table class="grid compact" data-testid="survey-strata">
            <thead><tr><th>"Best ranks"</th><th class="num">"Pairs"</th><th class="num">"Drawn"</th><th class="num">"Inclusion probability"</th><th class="num">"Judged"</th><th class="num">"Evidence"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
fn EstimatesTables(estimates: Estimates) -> AnyView {
    let total = format!(
        "Total evidence: {} (95% CI) over {} pairs; {} found; not yet found: {}.",
        interval(&estimates.total_evidence, 1),
        count(estimates.universe),
        count(estimates.found),
        interval(&estimates.not_found, 1)
    );
    view! {
        <p data-testid="survey-total"><strong>{total}</strong></p>
        <SystemsEstimates systems=estimates.systems />
    }
    .into_any()
}

#[component]
fn SystemsEstimates(systems: Vec<SystemSurvey>) -> AnyView {
    let rows = systems
        .into_iter()
        .map(|s| {
            view! {
                <tr>
                    <td>{s.system}</td>
                    <td class="num">{count(s.estimate.retrieved)}</td>
                    <td class="num">{optional(s.estimate.precision.as_ref())}</td>
                    <td class="num">{optional(s.estimate.recall.as_ref())}</td>
                    <td class="num">{optional(s.estimate.f1.as_ref())}</td>
                    <td class="num">{count(s.outside)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="grid compact" data-testid="survey-systems">
            <thead><tr><th>"System"</th><th class="num">"Predicted evidence"</th><th class="num">"Precision [95% CI]"</th><th class="num">"Recall"</th><th class="num">"F1"</th><th class="num">"Beyond reach"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
fn StoppingNote(stopping: Stopping) -> AnyView {
    let text = match &stopping {
        Stopping::NoSample => return ().into_any(),
        Stopping::Waiting => "Stopping test: waiting for the sample's labels.".to_owned(),
        Stopping::Stratified { strata } => format!(
            "Stopping test: needs a simple random sample; this one has {strata} strata (draw one with 1 stratum)."
        ),
        Stopping::Tested {
            sample, decision, ..
        } => {
            let verdict = stopping.verdict().unwrap_or_default();
            format!(
                "Stopping test: {verdict} (p = {:.4}; {} evidence pairs found before the sample; {} of {} unjudged pairs drawn, {} of them evidence; were recall below the target, at least {} would have remained).",
                decision.p_value, sample.found, sample.drawn, sample.unjudged, sample.drawn_evidence, decision.null_remaining
            )
        }
    };
    view! { <p data-testid="survey-stopping">{text}</p> }.into_any()
}

#[component]
fn PlanSection(plan: Plan) -> AnyView {
    let hours = |h: Option<f64>| h.map_or_else(|| "–".to_owned(), |h| format!("{h:.1} h"));
    let median = plan.median_seconds.map_or_else(
        || "no timed judgment yet".to_owned(),
        |s| format!("{s:.1} s"),
    );
    let next = plan.next_depth.map(|d| {
        let evidence = d
            .estimated_evidence
            .map_or_else(String::new, |e| format!(", about {e:.1} evidence pairs in all"));
        view! { <li data-testid="plan-next-depth">{format!("To depth {}: {} pairs to judge, {}{evidence}.", d.depth, count(d.pairs_to_judge), hours(d.hours))}</li> }
    });
    let recall = plan.recall.map(|r| {
        let budget = |b: Option<BudgetView>| {
            b.map_or_else(
                || "beyond the sample's reach".to_owned(),
                |b| format!("{} more judgments, {:.1} h", count(b.judgments), b.hours),
            )
        };
        view! { <li data-testid="plan-recall">{format!(
            "To recall {:.0}% of the estimated evidence ({} pairs): {}; of its upper bound ({} pairs): {}.",
            100.0 * r.target_recall, count(r.target_evidence), budget(r.budget), count(r.target_evidence_high), budget(r.budget_high)
        )}</li> }
    });
    let target = plan.recall.map(|r| r.target_evidence);
    view! {
        <h3>"Budget"</h3>
        <ul class="plain">
            <li>{format!("Median time per judgment: {median}.")}</li>
            {next}
            {recall}
        </ul>
        <DiscoveryPlot knots=plan.discovery target=target />
    }
    .into_any()
}

#[component]
fn DiscoveryPlot(knots: Vec<(usize, f64)>, target: Option<usize>) -> AnyView {
    // Counts stay far below 2^53: the conversions are exact.
    let points: Vec<Point> = knots
        .iter()
        .map(|&(j, e)| Point {
            x: j as f64,
            y: e,
            sd: None,
        })
        .collect();
    let mut series = vec![Series {
        name: "expected evidence found".into(),
        points,
    }];
    if let (Some(t), Some(last)) = (target, knots.last()) {
        series.push(Series {
            name: format!("{:.0}% of the estimate", 100.0 * TARGET_RECALL),
            points: vec![
                Point {
                    x: 0.0,
                    y: t as f64,
                    sd: None,
                },
                Point {
                    x: last.0 as f64,
                    y: t as f64,
                    sd: None,
                },
            ],
        });
    }
    view! {
        <div class="plots">
            <figure>
                <LinePlot title="Expected evidence found by judgments beyond the sample".into() x_label="judgments beyond the sample".into() y_label="evidence pairs".into() series=series y_from_zero=true x_integer=true testid="plot-discovery" empty="The expected discovery curve appears once the sample and the pool at its depth are judged.".into() />
            </figure>
        </div>
    }
    .into_any()
}
