//! An annotator's own judgments in a project (`/work/:project/history`): filtered by label,
//! stage and text, newest first, 50 a page, with Undo on the one submission that may still be
//! undone (the same undo as the annotation page's `u`, inside its window).

use crate::api::annotate::{own_history, undo_last};
use crate::error::ApiError;
use crate::model::history::{HistoryFilter, HistoryPage, HistoryRow};
use crate::ui::guidelines::utc_minute;
use crate::ui::widgets::{format_count, ErrorNote, Pager};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

#[component]
pub fn HistoryPage() -> AnyView {
    let params = use_params_map();
    let project = Memo::new(move |_| params.read().get("project").unwrap_or_default());
    let filter = RwSignal::new(HistoryFilter::default());
    let page = RwSignal::new(0usize);
    // Bumped after an undo, so that the list is read again.
    let version = RwSignal::new(0u32);
    let rows = Resource::new(
        move || (project.get(), filter.get(), page.get(), version.get()),
        |(project, filter, page, _)| own_history(project, filter, page),
    );
    let message = RwSignal::new(None::<Result<String, ApiError>>);
    view! {
        <Title text="Your judgments" />
        <main class="page history">
            <h1>"Your judgments"</h1>
            <p class="muted">
                <a href=move || format!("/work/{}", project.get())>"Back to annotating"</a>
                " · only your own answers are listed; undone ones are kept, marked, when you ask for them."
            </p>
            <FilterForm filter=filter page=page />
            <div role="status" aria-live="polite" class="history-message">
                {move || message.get().map(|m| match m {
                    Ok(text) => view! { <p data-testid="history-message">{text}</p> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                })}
            </div>
            <Suspense fallback=|| view! { <p class="muted">"Loading your judgments…"</p> }>
                {move || Suspend::new(async move {
                    match rows.await {
                        Ok(found) => view! { <HistoryTable found=found page=page version=version message=message /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
    .into_any()
}

/// Label, stage, text and "undone too": applied on submit (Enter in the text field).
#[component]
fn FilterForm(filter: RwSignal<HistoryFilter>, page: RwSignal<usize>) -> AnyView {
    let label = RwSignal::new(String::new());
    let stage = RwSignal::new(String::new());
    let text = RwSignal::new(String::new());
    let with_undone = RwSignal::new(false);
    let apply = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let some = |s: String| (!s.trim().is_empty()).then_some(s);
        filter.set(HistoryFilter {
            label: some(label.get_untracked()),
            stage: some(stage.get_untracked()),
            text: some(text.get_untracked()),
            with_undone: with_undone.get_untracked(),
        });
        page.set(0);
    };
    view! {
        <form class="history-filter toolbar" on:submit=apply data-testid="history-filter">
            <label>"Label "
                <select on:change=move |ev| label.set(event_target_value(&ev)) prop:value=move || label.get()>
                    <option value="">"any"</option>
                    <option value="SUPPORT">"SUPPORT"</option>
                    <option value="CONTRADICT">"CONTRADICT"</option>
                    <option value="NEI">"NEI"</option>
                </select>
            </label>
            <label>"Stage "
                <select on:change=move |ev| stage.set(event_target_value(&ev)) prop:value=move || stage.get()>
                    <option value="">"any"</option>
                    <option value="first">"first pass"</option>
                    <option value="second">"second pass"</option>
                    <option value="adjudication">"adjudication"</option>
                </select>
            </label>
            <label>"Claim or title contains "
                <input type="search" maxlength="200" on:input=move |ev| text.set(event_target_value(&ev)) prop:value=move || text.get() />
            </label>
            <label><input type="checkbox" on:change=move |ev| with_undone.set(event_target_checked(&ev)) prop:checked=move || with_undone.get() />" undone too"</label>
            <button type="submit">"Filter"</button>
        </form>
    }
    .into_any()
}

#[component]
fn HistoryTable(
    found: HistoryPage,
    page: RwSignal<usize>,
    version: RwSignal<u32>,
    message: RwSignal<Option<Result<String, ApiError>>>,
) -> AnyView {
    let HistoryPage {
        project,
        rows,
        total,
        page: at,
        pages,
        last,
        server_ms,
    } = found;
    // The one judgment Undo may act on, until its window closes (on the server's clock).
    let undo_id = last
        .as_ref()
        .filter(|l| l.undoable && l.undo_until_ms > server_ms)
        .map(|l| l.judgment_id);
    let seconds_left = last
        .as_ref()
        .map(|l| (l.undo_until_ms - server_ms).max(0) / 1000)
        .unwrap_or(0);
    let open = RwSignal::new(undo_id);
    let left = RwSignal::new(seconds_left);
    // The window counts down in the browser (effects run there only) and Undo goes at 0.
    Effect::new(move |_| {
        if undo_id.is_none() {
            return;
        }
        let tick = move || {
            left.update(|s| *s = (*s - 1).max(0));
            if left.get_untracked() == 0 {
                open.set(None);
            }
        };
        if let Ok(handle) = set_interval_with_handle(tick, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
    let undo = Callback::new(move |()| {
        let project = project.clone();
        leptos::task::spawn_local(async move {
            match undo_last(project).await {
                Ok(_) => {
                    message.set(Some(Ok(
                        "Undone: the item is back in your queue with your answer filled in."
                            .to_owned(),
                    )));
                    version.update(|v| *v += 1);
                }
                Err(e) => message.set(Some(Err(e))),
            }
        });
    });
    let summary = format!(
        "{} judgments · page {} of {}",
        format_count(total),
        at + 1,
        pages
    );
    view! {
        <p class="muted" data-testid="history-summary">{summary}</p>
        {if rows.is_empty() {
            view! { <p data-testid="history-empty">"No judgment of yours matches."</p> }.into_any()
        } else {
            view! {
                <div class="scroll">
                    <table class="grid history-table" data-testid="history">
                        <thead><tr>
                            <th scope="col">"When (UTC)"</th><th scope="col">"Claim"</th><th scope="col">"Abstract"</th>
                            <th scope="col">"Stage"</th><th scope="col">"Your label"</th><th scope="col">"Rationale"</th>
                            <th scope="col"><span class="sr-only">"Undo"</span></th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|row| view! { <Row row=row open=open undo=undo left=left /> }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
        <Pager at=at pages=pages label="History pages" go=Callback::new(move |p| page.set(p)) />
    }
    .into_any()
}

#[component]
fn Row(
    row: HistoryRow,
    open: RwSignal<Option<i64>>,
    undo: Callback<()>,
    left: RwSignal<i64>,
) -> AnyView {
    let id = row.judgment_id;
    let label = if row.no_evidence {
        format!("{} (clearly no evidence)", row.label)
    } else {
        row.label.clone()
    };
    let rationale = if row.sentences.is_empty() {
        "—".to_owned()
    } else {
        row.sentences
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let stage = match row.stage.as_str() {
        "first" => "first pass",
        "second" => "second pass",
        "adjudication" => "adjudication",
        other => other,
    }
    .to_owned();
    view! {
        <tr data-testid="history-row" data-judgment=id.to_string() data-undone=row.undone.to_string()>
            <td>{utc_minute(row.at_ms)}</td>
            <td><span class="muted">{row.claim_id.clone()} " · "</span>{row.claim.clone()}</td>
            <td><span class="muted">"doc " {row.doc_id.clone()} " · "</span>{row.title.clone()}</td>
            <td>{stage}</td>
            <td>{label}{row.undone.then(|| view! { " " <span class="badge">"undone"</span> })}</td>
            <td>{rationale}</td>
            <td>
                {move || (open.get() == Some(id)).then(|| view! {
                    <button class="secondary" data-testid="history-undo" on:click=move |_| undo.run(())>
                        "Undo (" {move || left.get()} " s left)"
                    </button>
                })}
            </td>
        </tr>
    }
    .into_any()
}
