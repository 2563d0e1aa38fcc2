//! The annotator's workbench (`/work/:project`): one item at a time, keyboard first, the next item
//! preloaded so that submit → next is immediate; and the pieces the lead's adjudication page
//! shares with it.

mod form;
mod judging;
pub mod keys;
mod lead;
mod paper;
mod qualification;
mod search;
mod suggestions;
mod text;
mod unsent;

pub use form::{ItemPanel, Opinions};
pub use lead::{AdjudicatePage, AnnotationPage};
pub use search::SearchPanel;

use crate::api::annotate::{flag_item, load_queue, skip_item, submit_item, undo_last};
use crate::error::ApiError;
use crate::model::annotate::{DraftForm, QueueHead};
use crate::ui::widgets::{format_count, ErrorNote};
use form::FormState;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;
use unsent::Unsent;

/// How long a submission may be undone, in seconds, as the page tells it.
const UNDO_SECONDS: i64 = crate::domain::annotation::UNDO_WINDOW_MS / 1000;

/// How long a submission that did not reach the server waits before it is sent again.
const RETRY: std::time::Duration = std::time::Duration::from_secs(3);

/// Milliseconds since the epoch in the browser (0 on the server, where no handler runs).
pub(crate) fn now_ms() -> f64 {
    #[cfg(feature = "hydrate")]
    {
        web_sys::js_sys::Date::now()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0.0
    }
}

#[component]
pub fn WorkPage() -> AnyView {
    let params = use_params_map();
    let project = move || params.read().get("project").unwrap_or_default();
    let initial = Resource::new(project, load_queue);
    // The guidelines panel's text, loaded here and not inside the Suspense below: on the server,
    // a resource made inside a `Suspend` may fetch after its owner is gone ("the server state is
    // missing"), and the error it sends the browser does not match the page it rendered, which
    // panics the hydration. Bumped when the version to confirm changes.
    let guidelines_changed = RwSignal::new(0u32);
    let guidelines = Resource::new(
        move || (project(), guidelines_changed.get()),
        |(project, _)| crate::api::guidelines::view_guidelines(project),
    );
    view! {
        <Title text="Annotate" />
        <main class="page work">
            <Suspense fallback=|| view! { <p class="muted">"Loading your queue…"</p> }>
                {move || Suspend::new(async move {
                    match initial.await {
                        Ok(head) => view! { <Workbench head=head guidelines=guidelines guidelines_changed=guidelines_changed /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
    .into_any()
}

/// The queue head and the form of its current item.
#[component]
fn Workbench(
    head: QueueHead,
    guidelines: crate::ui::guidelines::GuidelinesResource,
    guidelines_changed: RwSignal<u32>,
) -> AnyView {
    let project = head.project.clone();
    let head = RwSignal::new(head);
    let state = FormState::new();
    let message = RwSignal::new(None::<Result<String, ApiError>>);
    // Requests in flight: a response only replaces the page when it is the last one.
    let in_flight = RwSignal::new(0u32);
    let flagging = RwSignal::new(false);
    // The item on screen changes only when another item comes, not on every queue update.
    let current = Memo::new(move |_| head.with(|h| h.current.clone()));
    // The guidelines version to confirm before any item (None: nothing to confirm).
    let to_confirm = Memo::new(move |_| head.with(|h| h.guidelines_to_confirm));

    // Answers typed into an item that a pair found by search put back in the queue, by
    // assignment: they come back into the form when the item does.
    let parked = StoredValue::new(std::collections::HashMap::<i64, DraftForm>::new());
    let apply = move |result: Result<QueueHead, ApiError>| {
        in_flight.update(|n| *n = n.saturating_sub(1));
        match result {
            Ok(h) => {
                if in_flight.get_untracked() == 0 {
                    let coming = h.current.as_ref().and_then(|c| c.assignment_id);
                    let changed = h.current.as_ref().map(|c| c.assignment_id)
                        != head.with_untracked(|x| x.current.as_ref().map(|c| c.assignment_id));
                    if changed {
                        state.reset();
                        let kept = coming.and_then(|id| {
                            let mut kept = None;
                            parked.update_value(|p| kept = p.remove(&id));
                            kept
                        });
                        if let Some(form) = kept {
                            state.form.set(form);
                        }
                    }
                    head.set(h);
                }
            }
            Err(e) => message.set(Some(Err(e))),
        }
    };

    // A submitted answer the server has not confirmed: a request failed on the way (the network
    // was down). The item stays on screen with the answer as typed, and it is sent again every
    // RETRY until the server answers; it is also kept in the browser's storage (unsent.rs).
    let retrying = RwSignal::new(None::<Unsent>);
    let resend = StoredValue::new(None::<Callback<Unsent>>);
    let project_for_send = project.clone();
    // Sends an answer: `optimistic`, the preloaded next item is shown at once (a first try),
    // else the item stays until the server's answer (a retry).
    let send = move |unsent: Unsent, optimistic: bool| {
        let project = project_for_send.clone();
        unsent::keep(&project, &unsent);
        let previous = head.get_untracked();
        if optimistic {
            state.reset();
            head.update(|h| {
                h.current = h.next.take();
                h.open = (h.open - 1).max(0);
                h.done += 1;
            });
            message.set(None);
        }
        in_flight.update(|n| *n += 1);
        leptos::task::spawn_local(async move {
            let result = submit_item(
                project.clone(),
                unsent.assignment_id,
                unsent.form.clone(),
                unsent.seconds,
                Some(unsent.key.clone()),
            )
            .await;
            match result {
                Ok(h) => {
                    unsent::forget(&project, &unsent.key);
                    if retrying.with_untracked(|r| r.as_ref().map(|r| r.key.clone()))
                        == Some(unsent.key.clone())
                    {
                        retrying.set(None);
                        message.set(Some(Ok("Saved.".to_owned())));
                    }
                    apply(Ok(h));
                }
                // The request did not reach the server, or its answer did not come back: the
                // answer is kept and tried again (the key makes a second arrival harmless).
                Err(ApiError::ServerFn(_)) => {
                    in_flight.update(|n| *n = n.saturating_sub(1));
                    if optimistic {
                        head.set(previous);
                        state.form.set(unsent.form.clone());
                    }
                    let key = unsent.key.clone();
                    retrying.set(Some(unsent));
                    set_timeout(
                        move || {
                            // Tried again only while it is still the answer on screen, with
                            // what the form holds now (the annotator may have changed it).
                            let Some(mut again) = retrying.get_untracked() else {
                                return;
                            };
                            if again.key != key {
                                return;
                            }
                            again.form = state.form.get_untracked();
                            if let Some(send) = resend.get_value() {
                                send.run(again);
                            }
                        },
                        RETRY,
                    );
                }
                // The server refused it: the answer comes back to the form with the reason.
                Err(e) => {
                    unsent::forget(&project, &unsent.key);
                    retrying.set(None);
                    in_flight.update(|n| *n = n.saturating_sub(1));
                    head.set(previous.clone());
                    if optimistic {
                        state.form.set(unsent.form.clone());
                    }
                    message.set(Some(Err(e)));
                }
            }
        });
    };
    let send_again = send.clone();
    resend.set_value(Some(Callback::new(move |unsent| send_again(unsent, false))));

    let submit = Callback::new(move |form: DraftForm| {
        let Some(current) = head.with_untracked(|h| h.current.clone()) else {
            return;
        };
        let Some(assignment_id) = current.assignment_id else {
            return;
        };
        let seconds = ((now_ms() - state.started.get_value()) / 1000.0).max(0.0);
        // A submission while the last one is being retried is that answer, as it now is, sent
        // under its key; otherwise a new submission.
        let pending = retrying
            .get_untracked()
            .filter(|r| r.assignment_id == assignment_id);
        match pending {
            Some(mut again) => {
                again.form = form;
                again.seconds = seconds;
                send(again, false);
            }
            None => send(Unsent::new(assignment_id, form, seconds), true),
        }
    });

    // An answer kept from before a reload comes back into its item's form, not yet saved.
    let project_for_restore = project.clone();
    Effect::new(move |_| {
        let Some(kept) = unsent::kept(&project_for_restore) else {
            return;
        };
        let on_screen = head.with_untracked(|h| h.current.as_ref().and_then(|c| c.assignment_id));
        if on_screen == Some(kept.assignment_id) {
            state.form.set(kept.form.clone());
            retrying.set(Some(kept));
            message.set(Some(Ok(
                "Your answer from before the reload is back: not saved yet, Enter saves it."
                    .to_owned(),
            )));
        } else {
            // The server has it (the item is done) or the item went elsewhere.
            unsent::forget(&project_for_restore, &kept.key);
        }
    });

    // The last submission whose undo window is open, by judgment id: closed by a timer when
    // the window the server gave ends (measured on the server's clock, so a browser clock that
    // is off does not matter), so that Undo is offered only while it can work.
    let undo_open = RwSignal::new(None::<i64>);
    // The seconds left to undo, counted down in the browser, shown beside Undo.
    let undo_left = RwSignal::new(0i64);
    let ticker = StoredValue::new(None::<IntervalHandle>);
    on_cleanup(move || {
        if let Some(t) = ticker.try_get_value().flatten() {
            t.clear();
        }
    });
    Effect::new(move |_| {
        let open = head.with(|h| {
            h.last
                .as_ref()
                .filter(|l| l.undoable)
                .map(|l| (l.judgment_id, l.undo_until_ms.saturating_sub(h.server_ms)))
        });
        if let Some(t) = ticker.get_value() {
            t.clear();
        }
        match open {
            Some((id, left)) if left > 0 => {
                undo_open.set(Some(id));
                undo_left.set(left.div_euclid(1000));
                let tick = move || undo_left.update(|s| *s = (*s - 1).max(0));
                ticker.set_value(
                    set_interval_with_handle(tick, std::time::Duration::from_secs(1)).ok(),
                );
                set_timeout(
                    move || {
                        if undo_open.get_untracked() == Some(id) {
                            undo_open.set(None);
                        }
                    },
                    std::time::Duration::from_millis(left.unsigned_abs()),
                );
            }
            _ => undo_open.set(None),
        }
    });

    let project_for_cmd = project.clone();
    let run = Callback::new(move |what: &'static str| {
        if what == "undo" && undo_open.get_untracked().is_none() {
            message.set(Some(Ok(format!(
                "Nothing to undo: a submission can be undone for {} s after it is saved.",
                UNDO_SECONDS
            ))));
            return;
        }
        let project = project_for_cmd.clone();
        let current = head.with_untracked(|h| h.current.as_ref().and_then(|c| c.assignment_id));
        let note = state.flag_note.get_untracked();
        in_flight.update(|n| *n += 1);
        message.set(None);
        leptos::task::spawn_local(async move {
            let result = match (what, current) {
                ("undo", _) => undo_last(project).await,
                ("skip", Some(id)) => skip_item(project, id).await,
                ("flag", Some(id)) => flag_item(project, id, note).await,
                _ => load_queue(project).await,
            };
            let ok = result.is_ok();
            apply(result);
            if ok {
                message.set(Some(Ok(match what {
                    "undo" => "Undone: the item is back at the front of your queue.".to_owned(),
                    "skip" => "Skipped: the item went to the end of your queue.".to_owned(),
                    "flag" => "Flagged for a lead's attention.".to_owned(),
                    _ => String::new(),
                })));
            }
        });
    });

    // A pair found by search is the current item now; what was typed into the one before is
    // kept for when it comes back.
    let judged_found = Callback::new(move |h: QueueHead| {
        let on_screen = head.with_untracked(|x| x.current.as_ref().and_then(|c| c.assignment_id));
        let typed = state.form.get_untracked();
        if let Some(id) = on_screen.filter(|_| typed != DraftForm::default()) {
            parked.update_value(|p| {
                p.insert(id, typed);
            });
        }
        in_flight.update(|n| *n += 1);
        apply(Ok(h));
        message.set(Some(Ok(
            "Added to the pool as your find: it is your current item (a first pass).".to_owned(),
        )));
    });
    let project_for_search = project.clone();
    view! {
        <div class="work-head">
            <h1>"Annotate · " {project.clone()}</h1>
            {move || {
                let h = head.get();
                let total = h.open + h.done;
                let pct = if total > 0 { h.done as f64 * 100.0 / total as f64 } else { 0.0 };
                view! {
                    <div class="progress" data-testid="progress" title=format!("{pct:.0} % of your items done")>
                        <div class="progress-bar" style=format!("width: {pct:.1}%")></div>
                    </div>
                    <span class="muted">{format!("{} done · {} open", format_count(h.done), format_count(h.open))}</span>
                }
            }}
            <a href=format!("/work/{project}/history") data-testid="history-link">"Your judgments"</a>
            <crate::ui::guidelines::GuidelinesPanel project=project.clone() to_confirm=to_confirm.into()
                guidelines=guidelines changed=guidelines_changed
                on_confirmed=Callback::new(move |()| run.run("reload")) />
            {move || current.get().filter(|item| item.assignment_id.is_some()).map(|item| view! {
                <search::SearchPanel project=project_for_search.clone() claim_id=item.claim_id claim=item.claim on_judged=judged_found />
            })}
        </div>
        <div aria-live="polite" data-testid="last-region">
        {move || head.get().last.map(|last| { let revealed = last.first_label.is_some(); view! {
            <p class="last" data-testid="last-submission">
                "Last: claim " {last.claim_id} " / doc " {last.doc_id} " — you said "
                <strong>{last.label}</strong>
                {last.first_label.map(|f| view! { <span>" (first annotator: " <strong data-testid="revealed-first">{f}</strong> ")"</span> })}
                " — " {last.outcome} ". "
                {if last.undoable {
                    let id = last.judgment_id;
                    (move || if undo_open.get() == Some(id) {
                        view! { <button class="link" on:click=move |_| run.run("undo") data-testid="undo">"Undo (u) · " {move || undo_left.get()} " s left"</button> }.into_any()
                    } else {
                        view! { <span class="muted" data-testid="no-undo">{format!("Saved for good: the {UNDO_SECONDS} s to undo have passed.")}</span> }.into_any()
                    }).into_any()
                } else if revealed {
                    view! { <span class="muted" data-testid="no-undo">"Final for you: the first annotation was shown."</span> }.into_any()
                } else {
                    view! { <span class="muted" data-testid="no-undo">"Qualification answers are final."</span> }.into_any()
                }}
            </p>
        }})}
        </div>
        {move || head.get().last.and_then(|last| last.feedback).map(|f| view! { <qualification::Feedback feedback=f /> })}
        {move || head.get().qualification.map(|q| view! { <qualification::QualificationBanner status=q /> })}
        {move || retrying.get().is_some().then(|| view! {
            <p class="warning" role="status" data-testid="unsent">
                "Not saved yet: the server cannot be reached. Your answer stays here and is sent again every few seconds."
            </p>
        })}
        {move || message.get().map(|m| match m {
            Ok(text) if !text.is_empty() => view! { <p class="ok" role="status">{text}</p> }.into_any(),
            Ok(_) => ().into_any(),
            Err(e) => view! { <div data-testid="form-error"><ErrorNote error=e /></div> }.into_any(),
        })}
        {move || match current.get() {
            None if to_confirm.get().is_some() => view! {
                <section class="card" data-testid="confirm-first">
                    <h2>"Confirm the guidelines first"</h2>
                    <p class="muted">"Your items wait until you have read this project's current guidelines and confirmed them (in the panel; ? shows it)."</p>
                </section>
            }.into_any(),
            None if head.with(|h| h.qualification.is_some()) => ().into_any(),
            None => view! {
                <section class="card" data-testid="queue-empty">
                    <h2>"Your queue is empty"</h2>
                    <p class="muted">"Nothing waits for you in this project. New items appear when the pool grows or a pair needs you."</p>
                </section>
            }.into_any(),
            Some(item) => view! {
                <ItemPanel
                    item=item
                    state=state
                    on_submit=submit
                    on_command=run
                    flagging=flagging
                />
            }.into_any(),
        }}
    }.into_any()
}
