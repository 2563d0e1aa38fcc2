//! The lead's judging-order panel on the annotation page: the order, its seed and the
//! first-pass budget, with the first passes spent so far.

use crate::api::annotate::set_judging_order;
use crate::error::ApiError;
use crate::model::annotate::{CalView, JudgingView};
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
    let how = if j.live {
        "first passes are chosen by the order when an annotator asks for one"
    } else {
        "first passes are given out shallowest first when the pool is built"
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let p = project.get_untracked();
        let (o, s, b, k) = (
            order.get_untracked(),
            seed.get_untracked(),
            budget.get_untracked(),
            candidates.get_untracked(),
        );
        leptos::task::spawn_local(async move {
            done(set_judging_order(p, o, s, b, Some(k)).await);
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
                <button type="submit" data-testid="judging-save">"Save"</button>
            </form>
            {j.cal.as_ref().map(cal_line)}
        </section>
    }
    .into_any()
}
