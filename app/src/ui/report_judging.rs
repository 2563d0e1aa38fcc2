//! The report's "Judging orders" section: evidence found against judgments spent for every
//! judging order replayed over the project's runs (`claimpool simulate --order all`).

use crate::api::report::{judging_curves, JudgingReplay};
use crate::ui::charts::{LinePlot, Point, Series};
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;

/// Judgments at which the table reads the curves.
const CHECKPOINTS: [u32; 4] = [250, 500, 1_000, 2_000];

#[component]
pub fn JudgingSection(project: Signal<String>) -> AnyView {
    let curves = Resource::new(move || project.get(), judging_curves);
    view! {
        <section data-testid="judging">
            <h2>"Judging orders"</h2>
            <p class="muted">"Evidence found against judgments spent if the pool were judged in each order, replayed over the pooled systems' full rankings with the final labels (citation evidence included) as the truth: depth pooling, move-to-front, two bandits over systems and Hedge."</p>
            <Suspense fallback=|| view! { <p class="muted">"Replaying the orders…"</p> }>
                {move || Suspend::new(async move {
                    match curves.await {
                        Ok(c) => view! { <JudgingBody curves=c /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
    .into_any()
}

#[component]
fn JudgingBody(curves: JudgingReplay) -> AnyView {
    let series: Vec<Series> = curves
        .curves
        .iter()
        .map(|(order, points)| Series {
            name: order.clone(),
            points: points
                .iter()
                .map(|&(j, e)| Point {
                    x: f64::from(j),
                    y: f64::from(e),
                    sd: None,
                })
                .collect(),
        })
        .collect();
    let note = format!(
        "{} candidate pairs, {} evidence pairs as the truth, {} judgments replayed.",
        format_count(curves.candidate_pairs as i64),
        format_count(curves.evidence_pairs as i64),
        format_count(curves.budget as i64)
    );
    view! {
        <p class="muted" data-testid="judging-note">{note}</p>
        <div class="plots">
            <figure>
                <LinePlot title="Evidence found by judgments spent, per judging order".into() x_label="judgments".into() y_label="evidence pairs".into() series=series y_from_zero=true y_integer=true x_integer=true testid="plot-judging" empty="Nothing to replay yet: import pooled runs and labels.".into() />
            </figure>
        </div>
        <JudgingTable curves=curves />
    }
    .into_any()
}

#[component]
fn JudgingTable(curves: JudgingReplay) -> AnyView {
    let points: Vec<u32> = CHECKPOINTS
        .into_iter()
        .filter(|&b| b as usize <= curves.budget)
        .collect();
    let header = points
        .iter()
        .map(|b| view! { <th class="num">{format_count(i64::from(*b))}</th> })
        .collect_view();
    let rows = curves
        .curves
        .iter()
        .map(|(order, _)| {
            let cells = points
                .iter()
                .map(|&b| {
                    let found = curves.evidence_at(order, b).unwrap_or(0);
                    view! { <td class="num">{format_count(i64::from(found))}</td> }
                })
                .collect_view();
            view! { <tr><td>{order.clone()}</td>{cells}</tr> }
        })
        .collect_view();
    view! {
        <table class="grid compact" data-testid="judging-table">
            <thead><tr><th>"Order"</th>{header}</tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}
