//! The lead's judging-order panel on the annotation page: the order, its seed and the
//! first-pass budget, with the first passes spent so far.

use crate::api::annotate::{draw_stop_sample, set_judging_order};
use crate::error::ApiError;
use crate::model::annotate::{CalStopView, CalView, JudgingView};
use crate::model::survey::Stopping;
use crate::ui::widgets::format_count;
use leptos::prelude::*;

/// What the budget line says: spent / budget (or "no budget"), and those held.
fn spent_text(j: &JudgingView) -> String {
    let spent = format_count(i64::try_from(j.spent).unwrap_or(i64::MAX));
    let held = format_count(i64::try_from(j.held).unwrap_or(i64::MAX));
    match j.budget {
        Some(budget) => {
            let budget = format_count(i64::try_from(budget).unwrap_or(i64::MAX));
            format!("{spent} / {budget} first passes spent ({held} open)")
        }
        None => format!("{spent} first passes spent ({held} open), no budget"),
    }
}

/// What `cal` works with and has added to the pool.
fn cal_line(cal: &CalView) -> AnyView {
    let count = |n: u64| format_count(i64::try_from(n).unwrap_or(i64::MAX));
    view! {
        <p data-testid="judging-cal">
            "cal's candidates: every pair a pooled run ranked, and each claim's top "
            {cal.per_claim} " from the corpus (" {cal.retriever.clone()} ", "
            {count(cal.claims)} " claims). It added " {count(cal.picks)}
            " pairs to the pool, " <strong>{count(cal.outside_runs)}</strong>
            " of them ranked by no run."
        </p>
        {cal.stale.then(|| view! {
            <p class="warning" data-testid="judging-cal-stale">
                "The corpus or the claims were imported after these retrievals were made: save with \"make the retrievals again\" so that cal sees the new abstracts and claims."
            </p>
        })}
    }
    .into_any()
}

/// Where the latest stopping sample stands, in words.
fn stop_text(stop: &CalStopView) -> String {
    let count = |n: u64| format_count(i64::try_from(n).unwrap_or(i64::MAX));
    let drawn = format!(
        "drawn from {} unjudged candidates after {} evidence pairs were found, for recall {:.0}% with {:.0}% confidence",
        count(stop.unjudged),
        count(stop.found),
        100.0 * stop.target_recall,
        100.0 * stop.confidence
    );
    match &stop.stopping {
        Stopping::Tested {
            sample, decision, ..
        } => format!(
            "Stopping sample ({drawn}): {}. p = {:.4}; {} of its {} pairs are evidence.",
            stop.stopping.verdict().unwrap_or_default(),
            decision.p_value,
            count(sample.drawn_evidence),
            count(sample.drawn)
        ),
        _ => format!(
            "Stopping sample ({drawn}): {} of {} pairs judged; they are served before cal's proposals, and the test is made when all are judged.",
            count(stop.judged),
            count(stop.size)
        ),
    }
}

/// `cal`'s stopping test: the latest sample's state, and a form to draw one.
#[component]
fn StopPanel(
    stop: Option<CalStopView>,
    project: Signal<String>,
    done: impl Fn(Result<String, ApiError>) + Copy + Send + Sync + 'static,
) -> AnyView {
    let recall = RwSignal::new(String::from("0.9"));
    let confidence = RwSignal::new(String::from("0.95"));
    let size = RwSignal::new(String::new());
    let seed = RwSignal::new(String::from("0"));
    let draw = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let p = project.get_untracked();
        let (r, c, n, s) = (
            recall.get_untracked(),
            confidence.get_untracked(),
            size.get_untracked(),
            seed.get_untracked(),
        );
        leptos::task::spawn_local(async move {
            done(draw_stop_sample(p, r, c, n, s).await);
        });
    };
    let state = match &stop {
        None => view! {
            <p data-testid="cal-stopping">"No stopping sample yet: draw one when cal seems to find little more."</p>
        }
        .into_any(),
        Some(stop) => {
            let (max, value) = (stop.size.to_string(), stop.judged.to_string());
            view! {
                <p data-testid="cal-stopping">{stop_text(stop)}</p>
                <progress max=max value=value aria-label="Stopping sample judged"></progress>
            }
            .into_any()
        }
    };
    view! {
        <h3>"Stopping"</h3>
        {state}
        <form class="toolbar" on:submit=draw>
            <label for="stop-recall">"Target recall "</label>
            <input id="stop-recall" name="recall" inputmode="decimal" size="5"
                prop:value=move || recall.get() on:input=move |ev| recall.set(event_target_value(&ev)) />
            <label for="stop-confidence">" Confidence "</label>
            <input id="stop-confidence" name="confidence" inputmode="decimal" size="5"
                prop:value=move || confidence.get() on:input=move |ev| confidence.set(event_target_value(&ev)) />
            <label for="stop-size">" Sample size "</label>
            <input id="stop-size" name="size" inputmode="numeric" size="7" placeholder="as needed"
                prop:value=move || size.get() on:input=move |ev| size.set(event_target_value(&ev)) />
            <label for="stop-seed">" Seed "</label>
            <input id="stop-seed" name="seed" inputmode="numeric" size="6"
                prop:value=move || seed.get() on:input=move |ev| seed.set(event_target_value(&ev)) />
            <button type="submit" data-testid="stop-draw">"Draw a stopping sample"</button>
        </form>
    }
    .into_any()
}

/// The panel: what is set, and a form to change it.
#[component]
pub fn JudgingPanel(
    j: JudgingView,
    project: Signal<String>,
    done: impl Fn(Result<String, ApiError>) + Copy + Send + Sync + 'static,
) -> AnyView {
    let order = RwSignal::new(j.order.clone());
    let seed = RwSignal::new(j.seed.to_string());
    let budget = RwSignal::new(j.budget.map(|b| b.to_string()).unwrap_or_default());
    let candidates = RwSignal::new(j.candidates.to_string());
    let again = RwSignal::new(false);
    let how = if j.live {
        "first passes are chosen by the order when an annotator asks for one"
    } else {
        "first passes are given out shallowest first when the pool is built"
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let p = project.get_untracked();
        let (o, s, b, k, a) = (
            order.get_untracked(),
            seed.get_untracked(),
            budget.get_untracked(),
            candidates.get_untracked(),
            again.get_untracked(),
        );
        leptos::task::spawn_local(async move {
            done(set_judging_order(p, o, s, b, Some(k), a).await);
        });
    };
    let options = j
        .orders
        .iter()
        .map(|o| {
            let selected = *o == j.order;
            view! { <option value=o.clone() selected=selected>{o.clone()}</option> }
        })
        .collect_view();
    view! {
        <section data-testid="judging">
            <h2>"Judging order"</h2>
            <p>
                "Order: " <strong data-testid="judging-order">{j.order.clone()}</strong>
                " (seed " {j.seed} ") · " <span data-testid="judging-spent">{spent_text(&j)}</span>
                " · " {how}
            </p>
            <form class="toolbar" on:submit=save>
                <label for="judging-order">"Order "</label>
                <select id="judging-order" name="order" on:change=move |ev| order.set(event_target_value(&ev))>
                    {options}
                </select>
                <label for="judging-seed">" Seed "</label>
                <input id="judging-seed" name="seed" inputmode="numeric" size="8"
                    prop:value=move || seed.get() on:input=move |ev| seed.set(event_target_value(&ev)) />
                <label for="judging-budget">" Budget "</label>
                <input id="judging-budget" name="budget" inputmode="numeric" size="8" placeholder="none"
                    prop:value=move || budget.get() on:input=move |ev| budget.set(event_target_value(&ev)) />
                <label for="judging-candidates">" cal: corpus retrievals per claim "</label>
                <input id="judging-candidates" name="candidates" inputmode="numeric" size="6"
                    prop:value=move || candidates.get() on:input=move |ev| candidates.set(event_target_value(&ev)) />
                <label><input type="checkbox" name="retrieve_again" data-testid="judging-retrieve-again"
                    prop:checked=move || again.get() on:change=move |ev| again.set(event_target_checked(&ev)) />
                    " make the retrievals again"</label>
                <button type="submit" data-testid="judging-save">"Save"</button>
            </form>
            {j.cal.as_ref().map(cal_line)}
            {(j.order == "cal").then(|| {
                let stop = j.cal.as_ref().and_then(|c| c.stopping.clone());
                view! { <StopPanel stop=stop project=project done=done /> }
            })}
        </section>
    }
    .into_any()
}
