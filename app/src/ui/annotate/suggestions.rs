//! The lead's suggestions panel on the annotation page: whether annotators see a model
//! assessor's label for the pair they label (never which model), whose, and why to be wary.

use crate::api::suggestions::{load_suggestions, set_suggestions};
use crate::error::ApiError;
use crate::model::annotate::SuggestionsView;
use crate::ui::widgets::ErrorNote;
use leptos::prelude::*;

/// What anchoring does to the labels, in plain words.
const ANCHORING: &str = "Annotators shown a model's label tend to agree with it (anchoring): \
    agreement with the model, and among annotators, is then inflated. Keep suggestions off for \
    test collections unless you measure that.";

/// The panel: loads the project's suggestions and shows the choice.
#[component]
pub fn SuggestionsPanel(project: Signal<String>) -> AnyView {
    let version = RwSignal::new(0u32);
    let message = RwSignal::new(None::<Result<String, ApiError>>);
    let shown = Resource::new(
        move || (project.get(), version.get()),
        |(p, _)| load_suggestions(p),
    );
    view! {
        <section data-testid="suggestions">
            <h2>"Model suggestions"</h2>
            <p class="muted" data-testid="anchoring-note">{ANCHORING}</p>
            {move || message.get().map(|m| match m {
                Ok(t) => view! { <p class="ok" role="status">{t}</p> }.into_any(),
                Err(e) => view! { <ErrorNote error=e /> }.into_any(),
            })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match shown.await {
                        Ok(s) => view! { <SuggestionsForm s=s project=project version=version message=message /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
    .into_any()
}

/// What is set, and a choice of the project's model assessors (or off).
#[component]
fn SuggestionsForm(
    s: SuggestionsView,
    project: Signal<String>,
    version: RwSignal<u32>,
    message: RwSignal<Option<Result<String, ApiError>>>,
) -> AnyView {
    if s.assessors.is_empty() {
        return view! {
            <p data-testid="suggestions-current">"Off · the project has no model assessor (claimpool assessor add registers one)."</p>
        }
        .into_any();
    }
    let choice = RwSignal::new(s.current.clone().unwrap_or_default());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (p, a) = (project.get_untracked(), choice.get_untracked());
        leptos::task::spawn_local(async move {
            let r = set_suggestions(p, a).await.map(|now| match now.current {
                Some(name) => {
                    format!("Annotators now see {name}'s label for each pair (not its name).")
                }
                None => "Suggestions are off.".to_owned(),
            });
            if r.is_ok() {
                version.update(|v| *v += 1);
            }
            message.set(Some(r));
        });
    };
    let current = s.current.clone().unwrap_or_else(|| "off".to_owned());
    let options = s
        .assessors
        .iter()
        .map(|a| {
            let selected = s.current.as_deref() == Some(a.as_str());
            view! { <option value=a.clone() selected=selected>{a.clone()}</option> }
        })
        .collect_view();
    view! {
        <p>"Annotators see: " <strong data-testid="suggestions-current">{current}</strong></p>
        <form class="toolbar" on:submit=save>
            <label for="suggest-from">"Suggest labels from "</label>
            <select id="suggest-from" name="assessor" on:change=move |ev| choice.set(event_target_value(&ev))>
                <option value="" selected=s.current.is_none()>"off"</option>
                {options}
            </select>
            <button type="submit" data-testid="suggestions-save">"Save"</button>
        </form>
    }
    .into_any()
}
