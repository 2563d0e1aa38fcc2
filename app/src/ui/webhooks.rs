//! The lead's webhooks page of a project: register a URL for events (its signing secret shown
//! once), the hooks, and the latest deliveries with their state, attempts and last answer.

use crate::api::report::encode_path_segment;
use crate::api::webhooks::{lead_webhooks, CreateWebhook, DeliveryItem, HookRow, RemoveWebhook};
use crate::domain::webhooks::{DeliveryState, Event};
use crate::ui::guidelines::utc_minute;
use crate::ui::widgets::ErrorNote;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

#[component]
pub fn WebhooksPage() -> AnyView {
    let params = use_params_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let create = ServerAction::<CreateWebhook>::new();
    let remove = ServerAction::<RemoveWebhook>::new();
    // Bumped by every change and by "Refresh", so the lists reload.
    let version = RwSignal::new(0u32);
    Effect::new(move |_| {
        if create.version().get() > 0 || remove.version().get() > 0 {
            version.update(|v| *v += 1);
        }
    });
    let view_data = Resource::new(
        move || (name(), version.get()),
        |(name, _)| lead_webhooks(name),
    );
    view! {
        <Title text=move || format!("Webhooks of {}", name()) />
        <main class="page">
            <p><A href=move || format!("/lead/projects/{}", encode_path_segment(&name()))>{move || format!("← {}", name())}</A></p>
            <h1>"Webhooks"</h1>
            <p class="muted">"claimpool sends each event as a signed JSON POST to the URLs below, retried with growing waits while the receiver fails (README: Webhooks). A request that causes an event never waits for its delivery."</p>
            <NewWebhook project=Signal::derive(name) create=create />
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match view_data.await {
                        Ok(v) => view! {
                            <HookTable project=name() hooks=v.hooks remove=remove />
                            <section aria-labelledby="deliveries-heading">
                                <h2 id="deliveries-heading">"Deliveries"</h2>
                                <button class="secondary" data-testid="webhooks-refresh" on:click=move |_| version.update(|n| *n += 1)>"Refresh"</button>
                                <DeliveryTable deliveries=v.deliveries />
                            </section>
                        }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
            {move || remove.value().get().and_then(Result::err).map(|e| view! { <ErrorNote error=e /> })}
        </main>
    }
    .into_any()
}

/// The form that registers a hook; the secret of the one just made.
#[component]
fn NewWebhook(project: Signal<String>, create: ServerAction<CreateWebhook>) -> AnyView {
    let url = RwSignal::new(String::new());
    let chosen = RwSignal::new(vec![Event::LabelFinal, Event::ReleaseMade]);
    view! {
        <section class="card" aria-labelledby="new-webhook-heading">
            <h2 id="new-webhook-heading">"Add a webhook"</h2>
            <form class="form-grid webhook-form" on:submit=move |ev| {
                ev.prevent_default();
                create.dispatch(CreateWebhook {
                    project: project.get_untracked(),
                    url: url.get_untracked(),
                    events: chosen.get_untracked().iter().map(|e| e.as_str().to_owned()).collect(),
                });
            }>
                <label for="webhook-url">"URL"</label>
                <input id="webhook-url" type="url" required placeholder="https://hooks.example.org/claimpool"
                    data-testid="webhook-url" prop:value=move || url.get()
                    on:input=move |ev| url.set(event_target_value(&ev)) />
                <fieldset class="span-all">
                    <legend>"Events"</legend>
                    {Event::ALL.iter().map(|&event| view! {
                        <label class="check">
                            <input type="checkbox" value=event.as_str() data-testid=format!("webhook-event-{}", event.as_str())
                                prop:checked=move || chosen.get().contains(&event)
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    chosen.update(|c| {
                                        c.retain(|e| *e != event);
                                        if on { c.push(event) }
                                    });
                                } />
                            " " {event.human()} " " <code>{event.as_str()}</code>
                        </label>
                    }).collect_view()}
                </fieldset>
                <div class="span-all">
                    <button type="submit" data-testid="webhook-add" disabled=move || create.pending().get()>"Add webhook"</button>
                </div>
            </form>
            {move || create.value().get().map(|r| match r {
                Ok(made) => view! {
                    <p class="ok" role="status" data-testid="webhook-created">
                        {format!("Webhook #{} added. Its signing secret, shown only now: ", made.hook.id)}
                        <code data-testid="webhook-secret">{made.secret}</code>
                    </p>
                }.into_any(),
                Err(e) => view! { <ErrorNote error=e /> }.into_any(),
            })}
        </section>
    }
    .into_any()
}

#[component]
fn HookTable(project: String, hooks: Vec<HookRow>, remove: ServerAction<RemoveWebhook>) -> AnyView {
    if hooks.is_empty() {
        return view! { <p class="muted" data-testid="webhooks-none">"No webhook yet."</p> }
            .into_any();
    }
    view! {
        <table class="grid" data-testid="webhooks">
            <caption>"Webhooks"</caption>
            <thead><tr><th class="num">"#"</th><th>"URL"</th><th>"Events"</th><th>"Added"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
            <tbody>
                {hooks.into_iter().map(|hook| {
                    let project = project.clone();
                    let id = hook.id;
                    let events = hook.events.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ");
                    view! {
                        <tr>
                            <td class="num">{id}</td>
                            <td><code>{hook.url.clone()}</code></td>
                            <td>{events}</td>
                            <td>{utc_minute(hook.created_at_ms)}</td>
                            <td><button class="secondary" aria-label=format!("Remove webhook #{id}")
                                on:click=move |_| { remove.dispatch(RemoveWebhook { project: project.clone(), id }); }>"Remove"</button></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// A delivery's last answer in words.
fn last_answer(d: &DeliveryItem) -> String {
    match (&d.last_status, &d.last_error) {
        (Some(status), Some(error)) => format!("{status}: {error}"),
        (Some(status), None) => status.to_string(),
        (None, Some(error)) => error.clone(),
        (None, None) => "—".to_owned(),
    }
}

#[component]
fn DeliveryTable(deliveries: Vec<DeliveryItem>) -> AnyView {
    if deliveries.is_empty() {
        return view! { <p class="muted" data-testid="deliveries-none">"No delivery yet."</p> }
            .into_any();
    }
    view! {
        <table class="grid" data-testid="deliveries">
            <thead><tr><th class="num">"#"</th><th class="num">"Webhook"</th><th>"Event"</th><th>"State"</th>
                <th class="num">"Attempts"</th><th>"Last answer"</th><th>"Created"</th><th>"Next attempt / ended"</th></tr></thead>
            <tbody>
                {deliveries.into_iter().map(|d| {
                    let when = match (d.state, d.ended_at_ms) {
                        (DeliveryState::Pending, _) => format!("next {}", utc_minute(d.next_attempt_at_ms)),
                        (_, Some(ended)) => utc_minute(ended),
                        (_, None) => "—".to_owned(),
                    };
                    view! {
                        <tr data-testid=format!("delivery-{}", d.id) data-state=d.state.as_str()>
                            <td class="num">{d.id}</td>
                            <td class="num">{d.hook_id}</td>
                            <td><code>{d.event.clone()}</code></td>
                            <td><span class=format!("badge {}", d.state.as_str())>{d.state.as_str()}</span></td>
                            <td class="num">{d.attempts}</td>
                            <td>{last_answer(&d)}</td>
                            <td>{utc_minute(d.created_at_ms)}</td>
                            <td>{when}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
