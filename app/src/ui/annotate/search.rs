//! Search and judge on the annotation page (issue 38): `/` opens a search of the project's
//! corpus for the current item's claim, its text as the first query. Results show their title
//! and a snippet with the query's words marked, 20 a page, and say which pairs you judged
//! already and which are in the pool; "Judge this pair" adds a result to the pool as your find
//! and makes it your current item (a first pass). Nothing here shows a system, a score or
//! another person's label.

use super::paper::PaperLine;
use crate::api::search::{judge_found, search_corpus};
use crate::error::ApiError;
use crate::model::annotate::QueueHead;
use crate::model::search::{FoundPair, Marked, SearchAnswer, SearchResult, SearchResults};
use crate::ui::guidelines::in_field;
use crate::ui::widgets::{format_count, ErrorNote, Pager};
use leptos::prelude::*;

/// How often a search asks again while the index is being built.
const POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// What the panel shows below its search box.
#[derive(Clone, Debug)]
enum Shown {
    Nothing,
    Searching,
    Indexing { done: u64, total: u64 },
    Results(SearchResults),
    Failed(ApiError),
}

/// The search panel of the annotation page, for claim `claim_id` (text `claim`). `on_judged`
/// gets the queue head once a result was judged (its pair is the current item).
#[component]
pub fn SearchPanel(
    project: String,
    claim_id: String,
    claim: String,
    on_judged: Callback<QueueHead>,
) -> AnyView {
    let open = RwSignal::new(false);
    let query = RwSignal::new(claim.clone());
    let shown = RwSignal::new(Shown::Nothing);
    // When the panel was opened (ms): the time spent searching before a pair is chosen.
    let opened_at = StoredValue::new(0.0f64);
    // Each search's number: only the last one's answer is shown.
    let asked = StoredValue::new(0u64);
    let names = StoredValue::new((project, claim_id));
    // The search itself, for the poll that asks again while the index is built.
    let again = StoredValue::new(None::<Callback<usize>>);

    let run = Callback::new(move |page: usize| {
        let text = query.get_untracked();
        if text.trim().is_empty() {
            return;
        }
        let n = asked.get_value() + 1;
        asked.set_value(n);
        shown.set(Shown::Searching);
        let (project, claim_id) = names.get_value();
        leptos::task::spawn_local(async move {
            let answer = search_corpus(project, claim_id, text, page).await;
            if asked.get_value() != n {
                return;
            }
            match answer {
                Ok(SearchAnswer::Results(results)) => shown.set(Shown::Results(results)),
                Ok(SearchAnswer::Indexing { done, total }) => {
                    shown.set(Shown::Indexing { done, total });
                    set_timeout(
                        move || {
                            if asked.get_value() == n && open.get_untracked() {
                                if let Some(again) = again.get_value() {
                                    again.run(page);
                                }
                            }
                        },
                        POLL,
                    );
                }
                Err(e) => shown.set(Shown::Failed(e)),
            }
        });
    });
    again.set_value(Some(run));

    let toggle = move || {
        let now_open = !open.get_untracked();
        open.set(now_open);
        if now_open {
            // After the panel is drawn: the query field has the focus, to edit or press Enter.
            request_animation_frame(|| super::form::focus("search-query"));
            opened_at.set_value(super::now_ms());
            if shown.with_untracked(|s| matches!(s, Shown::Nothing)) {
                run.run(0);
            }
        }
    };
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        match ev.key().as_str() {
            "/" if !in_field(&ev) => {
                ev.prevent_default();
                toggle();
            }
            "Escape" if open.get_untracked() => open.set(false),
            _ => {}
        }
    });
    on_cleanup(move || handle.remove());

    let judge = Callback::new(move |result: SearchResult| {
        let Shown::Results(results) = shown.get_untracked() else {
            return;
        };
        let (project, _) = names.get_value();
        let seconds_searching = ((super::now_ms() - opened_at.get_value()) / 1000.0).max(0.0);
        let found = FoundPair {
            claim_id: results.claim_id.clone(),
            doc_id: result.doc_id.clone(),
            query: results.query.clone(),
            rank: result.rank,
            seconds_searching,
        };
        leptos::task::spawn_local(async move {
            match judge_found(project, found).await {
                Ok(head) => {
                    open.set(false);
                    shown.set(Shown::Nothing);
                    on_judged.run(head);
                }
                Err(e) => shown.set(Shown::Failed(e)),
            }
        });
    });

    view! {
        <button class="secondary" data-testid="search-toggle" aria-expanded=move || open.get().to_string()
            aria-controls="search-panel" on:click=move |_| toggle()>"Search (/)"</button>
        <Show when=move || open.get()>
            <section id="search-panel" class="search-panel card" aria-label="Search the corpus for this claim" data-testid="search-panel">
                <form role="search" class="search-form" on:submit=move |ev| { ev.prevent_default(); run.run(0); }>
                    <label for="search-query">"Search the corpus for this claim"</label>
                    <input id="search-query" type="search" data-testid="search-query"
                        prop:value=move || query.get() on:input=move |ev| query.set(event_target_value(&ev)) />
                    <button type="submit">"Search"</button>
                    <span class="muted">"Esc closes"</span>
                </form>
                {move || shown_view(shown.get(), run, judge)}
            </section>
        </Show>
    }
    .into_any()
}

fn shown_view(shown: Shown, run: Callback<usize>, judge: Callback<SearchResult>) -> AnyView {
    match shown {
        Shown::Nothing => ().into_any(),
        Shown::Searching => view! { <p class="muted" role="status">"Searching…"</p> }.into_any(),
        Shown::Indexing { done, total } => view! {
            <p role="status" data-testid="search-indexing">
                "Building the search index of this project's corpus: "
                {format_count(done as i64)} " of " {format_count(total as i64)} " abstracts."
                <progress max=total.max(1).to_string() value=done.to_string()></progress>
            </p>
        }
        .into_any(),
        Shown::Failed(e) => view! { <ErrorNote error=e /> }.into_any(),
        Shown::Results(results) => results_view(results, run, judge),
    }
}

fn results_view(
    results: SearchResults,
    run: Callback<usize>,
    judge: Callback<SearchResult>,
) -> AnyView {
    let (page, pages) = (results.page, results.pages);
    let summary = if results.total_hits == 0 {
        "No abstract holds a word of this query.".to_owned()
    } else {
        format!(
            "{} abstracts hold a word of the query · page {} of {}",
            format_count(results.total_hits as i64),
            page + 1,
            pages.max(1)
        )
    };
    view! {
        <p class="muted" role="status" data-testid="search-summary">{summary}</p>
        <ol class="search-results" start=(page * crate::model::search::PAGE_SIZE + 1).to_string()>
            {results.results.into_iter().map(|r| view! { <ResultItem result=r judge=judge /> }).collect_view()}
        </ol>
        <Pager at=page pages=pages label="Result pages" go=run />
    }
    .into_any()
}

#[component]
fn ResultItem(result: SearchResult, judge: Callback<SearchResult>) -> AnyView {
    let badge = if result.judged_by_you {
        Some(("judged by you", "badge done"))
    } else if result.in_pool {
        Some(("in the queue", "badge"))
    } else {
        None
    };
    let can_judge = !result.in_pool && !result.judged_by_you;
    let terms = result.matched_terms.join(", ");
    let doc = result.doc_id.clone();
    let chosen = result.clone();
    view! {
        <li class="search-result" data-testid="search-result" data-doc=result.doc_id.clone()>
            <h3 class="search-title">{marked_view(&result.title)}</h3>
            <p class="muted">"doc " {doc}
                {badge.map(|(text, class)| view! { " · " <span class=class>{text}</span> })}
            </p>
            <PaperLine paper=result.paper.clone() />
            <p class="search-snippet">{marked_view(&result.snippet)}</p>
            {(!terms.is_empty()).then(|| view! { <p class="muted">"matched: " {terms}</p> })}
            {can_judge.then(|| view! {
                <button data-testid="judge-found" on:click=move |_| judge.run(chosen.clone())>"Judge this pair"</button>
            })}
        </li>
    }
    .into_any()
}

fn marked_view(marked: &Marked) -> AnyView {
    marked
        .runs()
        .into_iter()
        .map(|(text, mark)| {
            let text = text.to_owned();
            if mark {
                view! { <mark>{text}</mark> }.into_any()
            } else {
                text.into_any()
            }
        })
        .collect_view()
        .into_any()
}
