//! A project's annotation guidelines: the panel on the annotation page (key `?`), where an
//! annotator confirms the current version, and the editor on the lead's project page.

use crate::api::guidelines::{confirm_guidelines, lead_guidelines, SaveGuidelines};
use crate::error::ApiError;
use crate::model::guidelines::{GuidelinesEditor, GuidelinesVersion, GuidelinesView};
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;
use web_sys::wasm_bindgen::JsCast;

/// `ms` since the epoch as "YYYY-MM-DD HH:MM UTC" (the same on the server and in the browser).
pub fn utc_minute(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// Whether a key event comes from a text field (whose keys are its own).
pub(crate) fn in_field(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"))
}

/// The guidelines of the annotation page, as [`crate::api::guidelines::view_guidelines`] gives them.
pub type GuidelinesResource = Resource<Result<Option<GuidelinesView>, ApiError>>;

/// The guidelines button and panel of the annotation page. `?` shows or hides the panel; it
/// shows by itself while `to_confirm` names a version the caller must confirm before any item.
/// `on_confirmed` runs once they did. The page makes `guidelines` (outside its Suspense, so
/// that the server renders and sends the same text) and reloads it when `changed` is bumped,
/// which the panel does when the version to confirm changes.
#[component]
pub fn GuidelinesPanel(
    project: String,
    to_confirm: Signal<Option<i64>>,
    on_confirmed: Callback<()>,
    guidelines: GuidelinesResource,
    changed: RwSignal<u32>,
) -> AnyView {
    let open = RwSignal::new(false);
    let name = StoredValue::new(project);
    Effect::new(move |seen: Option<Option<i64>>| {
        let now = to_confirm.get();
        if seen.is_some_and(|before| before != now) {
            changed.update(|v| *v += 1);
        }
        now
    });
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || in_field(&ev) {
            return;
        }
        match ev.key().as_str() {
            "?" => open.update(|o| *o = !*o),
            "Escape" if open.get_untracked() => open.set(false),
            _ => {}
        }
    });
    on_cleanup(move || handle.remove());
    let shown = move || open.get() || to_confirm.get().is_some();
    view! {
        <button class="secondary" data-testid="guidelines-toggle" aria-expanded=move || shown().to_string()
            on:click=move |_| open.update(|o| *o = !*o)>"Guidelines (?)"</button>
        <Show when=shown>
            <Suspense fallback=|| view! { <aside class="guidelines-panel"><p class="muted">"Loading the guidelines…"</p></aside> }>
                {move || Suspend::new(async move {
                    match guidelines.await {
                        Ok(Some(g)) => view! { <GuidelinesBody guidelines=g project=name.get_value() open=open on_confirmed=on_confirmed /> }.into_any(),
                        Ok(None) => view! {
                            <aside class="guidelines-panel" data-testid="guidelines">
                                <p class="muted">"This project has no guidelines yet. Press ? to close."</p>
                            </aside>
                        }.into_any(),
                        Err(e) => view! { <aside class="guidelines-panel"><ErrorNote error=e /></aside> }.into_any(),
                    }
                })}
            </Suspense>
        </Show>
    }
    .into_any()
}

/// One version of the guidelines in the panel, with the confirm button while unconfirmed.
#[component]
fn GuidelinesBody(
    guidelines: GuidelinesView,
    project: String,
    open: RwSignal<bool>,
    on_confirmed: Callback<()>,
) -> AnyView {
    let version = guidelines.version;
    let byline = format!(
        "{}{}",
        guidelines
            .author
            .as_ref()
            .map(|a| format!("by {a}, "))
            .unwrap_or_default(),
        utc_minute(guidelines.created_at_ms)
    );
    let confirm = (!guidelines.confirmed).then(|| view! { <ConfirmBar project=project version=version open=open on_confirmed=on_confirmed /> });
    let close = guidelines.confirmed.then(|| {
        view! { <button class="link" data-testid="guidelines-close" on:click=move |_| open.set(false)>"Close (Esc)"</button> }
    });
    view! {
        <aside class="guidelines-panel" data-testid="guidelines" data-version=version.to_string() aria-label="Annotation guidelines">
            <header class="guidelines-head">
                <h2>{format!("Guidelines · version {version}")}</h2>
                <span class="muted">{byline}</span>
                {close}
            </header>
            {confirm}
            <div class="guidelines-body" inner_html=guidelines.html></div>
        </aside>
    }
    .into_any()
}

/// "I have read version N": confirms it, then hands over to the page (which loads the queue).
#[component]
fn ConfirmBar(
    project: String,
    version: i64,
    open: RwSignal<bool>,
    on_confirmed: Callback<()>,
) -> AnyView {
    let error = RwSignal::new(None::<ApiError>);
    let busy = RwSignal::new(false);
    let confirm = move |_| {
        let name = project.clone();
        busy.set(true);
        leptos::task::spawn_local(async move {
            let result = confirm_guidelines(name, version).await;
            busy.set(false);
            match result {
                Ok(()) => {
                    error.set(None);
                    open.set(false);
                    on_confirmed.run(());
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };
    // The button has the focus, so Enter confirms. Effects run only in the browser, once the
    // button works: `data-ready` says so (tests wait for it).
    let ready = RwSignal::new(false);
    Effect::new(move |_| {
        ready.set(true);
        request_animation_frame(|| {
            if let Some(el) = document()
                .get_element_by_id("confirm-guidelines")
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = el.focus();
            }
        })
    });
    view! {
        <div class="confirm-bar" role="status">
            <span>"Read the guidelines below; confirm them to get your items."</span>
            <button id="confirm-guidelines" data-testid="confirm-guidelines" data-ready=move || ready.get().to_string()
                disabled=move || busy.get() on:click=confirm>
                {format!("I have read version {version}")}
            </button>
            {move || error.get().map(|e| view! { <ErrorNote error=e /> })}
        </div>
    }
    .into_any()
}

/// The lead's guidelines editor on the project page: the current text, save as a new version,
/// and every version.
#[component]
pub fn GuidelinesSection(project: Signal<String>) -> AnyView {
    let save = ServerAction::<SaveGuidelines>::new();
    // Reloaded after a save that made a version, not after a refused one (which keeps the text
    // being edited).
    let saved = Memo::new(move |_| save.value().get().and_then(Result::ok));
    let editor = Resource::new(
        move || (project.get(), saved.get()),
        |(project, _)| lead_guidelines(project),
    );
    view! {
        <section data-testid="guidelines-editor">
            <h2>"Guidelines"</h2>
            <p class="muted">
                "Markdown (raw HTML shows as text). Each save is a new version; every annotator confirms it before their next item."
            </p>
            {move || match save.value().get() {
                Some(Ok(v)) => view! { <p class="ok" data-testid="guidelines-saved">{format!("Saved version {v}.")}</p> }.into_any(),
                Some(Err(e)) => view! { <ErrorNote error=e /> }.into_any(),
                None => ().into_any(),
            }}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match editor.await {
                        Ok(e) => view! { <GuidelinesForm editor=e project=project save=save /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
    .into_any()
}

#[component]
fn GuidelinesForm(
    editor: GuidelinesEditor,
    project: Signal<String>,
    save: ServerAction<SaveGuidelines>,
) -> AnyView {
    let next = editor.current.as_ref().map_or(1, |(v, _)| v + 1);
    let text = editor.current.map(|(_, t)| t).unwrap_or_default();
    let area = NodeRef::<leptos::html::Textarea>::new();
    // Set in the browser once the form works (the text is set on hydration): tests wait for it.
    let ready = RwSignal::new(false);
    Effect::new(move |_| ready.set(true));
    let save_now = move || {
        if let Some(el) = area.get_untracked() {
            save.dispatch(SaveGuidelines {
                project: project.get_untracked(),
                markdown: el.value(),
            });
        }
    };
    view! {
        <ActionForm action=save attr:class="guidelines-form">
            <input type="hidden" name="project" prop:value=move || project.get() />
            <textarea name="markdown" node_ref=area rows="14" aria-label="Guidelines (Markdown)" data-testid="guidelines-text"
                data-ready=move || ready.get().to_string()
                prop:value=text
                on:keydown=move |ev| if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) { ev.prevent_default(); save_now(); }
            ></textarea>
            <div class="toolbar">
                <button type="submit" disabled=move || save.pending().get()>{format!("Save as version {next}")}</button>
                <span class="muted">"Ctrl+Enter saves"</span>
            </div>
        </ActionForm>
        <VersionTable history=editor.history />
    }
    .into_any()
}

#[component]
fn VersionTable(history: Vec<GuidelinesVersion>) -> AnyView {
    if history.is_empty() {
        return view! { <p class="muted" data-testid="guidelines-versions">"No guidelines yet: annotators start without confirming any."</p> }
            .into_any();
    }
    view! {
        <table class="grid" data-testid="guidelines-versions">
            <thead><tr><th class="num">"Version"</th><th>"Author"</th><th>"Saved"</th><th class="num">"Size"</th><th class="num">"Confirmed by"</th></tr></thead>
            <tbody>
                {history.into_iter().map(|v| view! {
                    <tr data-version=v.version.to_string()>
                        <td class="num">{v.version}</td>
                        <td>{v.author.unwrap_or_else(|| "—".to_owned())}</td>
                        <td>{utc_minute(v.created_at_ms)}</td>
                        <td class="num">{format!("{} B", format_count(v.bytes))}</td>
                        <td class="num">{format_count(v.confirmations)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_minutes() {
        assert_eq!(super::utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(super::utc_minute(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(super::utc_minute(1_764_078_180_000), "2025-11-25 13:43 UTC");
    }
}
