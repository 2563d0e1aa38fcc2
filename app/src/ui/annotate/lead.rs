//! The lead's annotation pages: progress, annotators, disagreements, flags, reassignment, the
//! second-pass mode, the judging order; and adjudication of a pair.

use super::form::{FormState, ItemPanel};
use super::judging::JudgingPanel;
use crate::api::annotate::{
    adjudicate, annotation_summary, open_items, pair_for_lead, reassign_item, set_annotator_active,
    set_second_pass_mode,
};
use crate::error::ApiError;
use crate::model::annotate::{AnnotationOverview, DraftForm, OpenItemRow};
use crate::ui::widgets::{format_count, ErrorNote, Stat};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "–".to_owned(), |x| format!("{x:.digits$}"))
}

#[component]
pub fn AnnotationPage() -> AnyView {
    let params = use_params_map();
    let project = Signal::derive(move || params.read().get("name").unwrap_or_default());
    let version = RwSignal::new(0u32);
    let overview = Resource::new(
        move || (project.get(), version.get()),
        |(p, _)| annotation_summary(p),
    );
    let message = RwSignal::new(None::<Result<String, ApiError>>);
    view! {
        <Title text="Annotation" />
        <main class="page">
            <p class="muted"><A href=move || format!("/lead/projects/{}", project.get())>"← " {project}</A></p>
            <h1>"Annotation"</h1>
            <p><A href=move || format!("/lead/projects/{}/gold", project.get()) attr:data-testid="gold-link">"Gold checks and qualification →"</A></p>
            {move || message.get().map(|m| match m {
                Ok(t) => view! { <p class="ok" role="status">{t}</p> }.into_any(),
                Err(e) => view! { <ErrorNote error=e /> }.into_any(),
            })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match overview.await {
                        Ok(o) => view! { <Overview o=o project=project version=version message=message /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }.into_any()
}

#[component]
fn Overview(
    o: AnnotationOverview,
    project: Signal<String>,
    version: RwSignal<u32>,
    message: RwSignal<Option<Result<String, ApiError>>>,
) -> AnyView {
    let done = move |r: Result<String, ApiError>| {
        if r.is_ok() {
            version.update(|v| *v += 1);
        }
        message.set(Some(r));
    };
    let set_member = move |name: String, active: bool| {
        let p = project.get_untracked();
        leptos::task::spawn_local(async move {
            let r = set_annotator_active(p, name.clone(), active)
                .await
                .map(|moved| {
                    if active {
                        format!("{name} is active; {moved} waiting item(s) assigned.")
                    } else {
                        format!("{name} is deactivated; {moved} open item(s) handed to others.")
                    }
                });
            done(r);
        });
    };
    let mode = o.mode.clone();
    let other_mode = if mode == "confirm" {
        "blind"
    } else {
        "confirm"
    };
    let pct = if o.pooled > 0 {
        o.finished as f64 * 100.0 / o.pooled as f64
    } else {
        0.0
    };
    let candidates = o.candidates.clone();
    let judging = o.judging.clone();
    let add_choice = RwSignal::new(candidates.first().cloned().unwrap_or_default());
    view! {
        <section class="stats" data-testid="annotation-stats">
            <Stat label="pooled pairs" value=o.pooled />
            <Stat label="pooled pairs with a final label" value=o.finished />
            <Stat label="open first passes" value=o.open_first />
            <Stat label="open second passes" value=o.open_second />
            <Stat label="open adjudications" value=o.open_adjudication />
            <Stat label="waiting for someone eligible" value=o.unassigned />
        </section>
        <div class="progress" title=format!("{pct:.0} % of pooled pairs final")>
            <div class="progress-bar" style=format!("width: {pct:.1}%")></div>
        </div>
        <p>
            "Second pass: " <strong data-testid="mode">{mode.clone()}</strong>
            {if mode == "confirm" { " (the second annotator sees the first label)" } else { " (the second annotator labels without seeing the first)" }}
            " · "
            <button class="link" data-testid="switch-mode" on:click=move |_| {
                let p = project.get_untracked();
                leptos::task::spawn_local(async move {
                    done(set_second_pass_mode(p, other_mode.to_owned()).await.map(|()| format!("Second pass is now {other_mode}.")));
                });
            }>"switch to " {other_mode}</button>
        </p>
        <JudgingPanel j=judging project=project done=done />
        <super::suggestions::SuggestionsPanel project=project />
        <section>
            <h2>"Annotators"</h2>
            <table class="grid" data-testid="annotators">
                <thead><tr><th>"Annotator"</th><th>"Status"</th><th class="num">"Open"</th><th class="num">"First"</th><th class="num">"Second"</th><th class="num">"Adjud."</th><th class="num">"Median s/item"</th><th class="num">"Items/hour"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
                <tbody>
                    {o.annotators.into_iter().map(|a| {
                        let name = a.username.clone();
                        let active = a.active;
                        view! {
                            <tr>
                                <td>{a.username.clone()}</td>
                                <td>{if active { "active" } else { "inactive" }}</td>
                                <td class="num">{format_count(a.open)}</td>
                                <td class="num">{format_count(a.done_first)}</td>
                                <td class="num">{format_count(a.done_second)}</td>
                                <td class="num">{format_count(a.done_adjudication)}</td>
                                <td class="num">{fmt_opt(a.median_seconds, 1)}</td>
                                <td class="num">{fmt_opt(a.items_per_hour, 0)}</td>
                                <td><button class="link" on:click=move |_| set_member(name.clone(), !active)>
                                    {if active { "deactivate" } else { "activate" }}
                                </button></td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            <Show when={let c = candidates.clone(); move || !c.is_empty()}>
                <p class="toolbar">
                    <label for="add-annotator">"Add annotator "</label>
                    <select id="add-annotator" on:change=move |ev| add_choice.set(event_target_value(&ev))>
                        {candidates.clone().into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
                    </select>
                    <button on:click=move |_| set_member(add_choice.get_untracked(), true)>"Add"</button>
                </p>
            </Show>
        </section>
        <section>
            <h2>"Disagreements waiting for adjudication"</h2>
            {if o.disagreements.is_empty() {
                view! { <p class="muted" data-testid="no-disagreements">"None."</p> }.into_any()
            } else {
                view! {
                    <table class="grid" data-testid="disagreements">
                        <thead><tr><th>"Claim"</th><th>"Doc"</th><th>"First"</th><th>"Second"</th><th>"Adjudicator"</th><th class="num">"Comments"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
                        <tbody>
                            {o.disagreements.into_iter().map(|d| view! {
                                <tr>
                                    <td title=d.claim.clone()>{d.claim_id.clone()}</td>
                                    <td>{d.doc_id.clone()}</td>
                                    <td>{d.first.clone()}</td>
                                    <td>{d.second.clone()}</td>
                                    <td>{d.adjudicator.clone().unwrap_or_else(|| "— (a lead)".into())}</td>
                                    <td class="num">{d.comments}</td>
                                    <td><A href=format!("/lead/projects/{}/adjudicate/{}", project.get_untracked(), d.pool_entry_id)>"adjudicate"</A></td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
        <section>
            <h2>"Flagged items"</h2>
            {if o.flagged.is_empty() {
                view! { <p class="muted">"None."</p> }.into_any()
            } else {
                view! { <ItemTable rows=o.flagged project=project done=done /> }.into_any()
            }}
        </section>
        <OpenItems project=project done=done />
    }.into_any()
}

/// Every open item, with reassignment.
#[component]
fn OpenItems(
    project: Signal<String>,
    done: impl Fn(Result<String, ApiError>) + Copy + Send + Sync + 'static,
) -> AnyView {
    let shown = RwSignal::new(false);
    let items = Resource::new(
        move || (project.get(), shown.get()),
        |(p, s)| async move {
            if s {
                open_items(p).await
            } else {
                Ok(Vec::new())
            }
        },
    );
    view! {
        <section>
            <h2>"Open items"</h2>
            <Show when=move || !shown.get() fallback=move || view! {
                <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                    {move || Suspend::new(async move {
                        match items.await {
                            Ok(rows) => view! { <ItemTable rows=rows project=project done=done /> }.into_any(),
                            Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                        }
                    })}
                </Suspense>
            }>
                <button on:click=move |_| shown.set(true)>"List open items to reassign"</button>
            </Show>
        </section>
    }.into_any()
}

#[component]
fn ItemTable(
    rows: Vec<OpenItemRow>,
    project: Signal<String>,
    done: impl Fn(Result<String, ApiError>) + Copy + Send + Sync + 'static,
) -> AnyView {
    view! {
        <table class="grid" data-testid="open-items">
            <thead><tr><th>"Item"</th><th>"Claim"</th><th>"Doc"</th><th>"Stage"</th><th class="num">"Depth"</th><th>"Annotator"</th><th>"Flag"</th><th>"Reassign to"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|r| {
                    let to = RwSignal::new(String::new());
                    let id = r.assignment_id;
                    view! {
                        <tr>
                            <td>"#" {r.assignment_id}</td>
                            <td>{r.claim_id.clone()}</td>
                            <td>{r.doc_id.clone()}</td>
                            <td>{r.stage.clone()}</td>
                            <td class="num">{r.entry_depth}</td>
                            <td>{r.annotator.clone()}</td>
                            <td>{r.flag_note.clone().unwrap_or_default()}</td>
                            <td>
                                <input size="10" placeholder="user name" on:input=move |ev| to.set(event_target_value(&ev)) />
                                <button on:click=move |_| {
                                    let p = project.get_untracked();
                                    let name = to.get_untracked();
                                    leptos::task::spawn_local(async move {
                                        done(reassign_item(p, id, name.clone()).await.map(|()| format!("Item #{id} is now {name}'s.")));
                                    });
                                }>"Reassign"</button>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }.into_any()
}

/// A lead adjudicates one pair: both annotations, the discussion, and the form.
#[component]
pub fn AdjudicatePage() -> AnyView {
    let params = use_params_map();
    let project = move || params.read().get("name").unwrap_or_default();
    let entry = move || {
        params
            .read()
            .get("entry")
            .and_then(|e| e.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let version = RwSignal::new(0u32);
    let item = Resource::new(
        move || (project(), entry(), version.get()),
        |(p, e, _)| pair_for_lead(p, e),
    );
    let result = RwSignal::new(None::<Result<String, ApiError>>);
    // The disagreements still waiting, for the way to the next one.
    let waiting = Resource::new(
        move || (project(), version.get()),
        |(p, _)| annotation_summary(p),
    );
    view! {
        <Title text="Adjudicate" />
        <main class="page work">
            <p class="muted"><A href=move || format!("/lead/projects/{}/annotation", project())>"← annotation"</A></p>
            <h1>"Adjudicate a pair"</h1>
            {move || result.get().map(|r| match r {
                Ok(t) => view! { <p class="ok" role="status" data-testid="adjudicated">{t}</p> }.into_any(),
                Err(e) => view! { <div data-testid="form-error"><ErrorNote error=e /></div> }.into_any(),
            })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match item.await {
                        Ok(item) if item.stage != "adjudication" => view! {
                            <p data-testid="not-adjudication">"This pair does not need adjudication (" {item.stage.clone()} ")."</p>
                            <NextDisagreement project=project() current=item.pool_entry_id waiting=waiting />
                            <h2>"Annotations"</h2>
                            <super::Opinions opinions=item.opinions.clone() />
                            <super::form::Discussion entry_id=item.pool_entry_id comments=item.comments.clone() />
                        }.into_any(),
                        Ok(item) => {
                            let state = FormState::new();
                            let p = project();
                            let id = item.pool_entry_id;
                            let submit = Callback::new(move |form: DraftForm| {
                                let p = p.clone();
                                let seconds = ((super::now_ms() - state.started.get_value()) / 1000.0).max(0.0);
                                leptos::task::spawn_local(async move {
                                    let r = adjudicate(p, id, form, seconds).await.map(|s| format!("Recorded: {} — {}.", s.label, s.outcome));
                                    if r.is_ok() { version.update(|v| *v += 1); }
                                    result.set(Some(r));
                                });
                            });
                            view! {
                                <ItemPanel item=item state=state on_submit=submit on_command=Callback::new(|_| ()) flagging=RwSignal::new(false) />
                            }.into_any()
                        }
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }.into_any()
}

/// A link to the next disagreement waiting for adjudication (not `current`), or that none is
/// left.
#[component]
fn NextDisagreement(
    project: String,
    current: i64,
    waiting: Resource<Result<AnnotationOverview, ApiError>>,
) -> AnyView {
    view! {
        <Suspense fallback=|| ()>
            {move || {
                let project = project.clone();
                Suspend::new(async move {
                    let next = waiting
                        .await
                        .ok()
                        .and_then(|o| o.disagreements.into_iter().find(|d| d.pool_entry_id != current));
                    match next {
                        Some(d) => view! {
                            <p>
                                <A href=format!("/lead/projects/{project}/adjudicate/{}", d.pool_entry_id) attr:data-testid="next-disagreement">
                                    {format!("Next disagreement → claim {} / doc {} ({} against {})", d.claim_id, d.doc_id, d.first, d.second)}
                                </A>
                            </p>
                        }.into_any(),
                        None => view! { <p class="muted" data-testid="no-next-disagreement">"No other disagreement waits."</p> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
    .into_any()
}
