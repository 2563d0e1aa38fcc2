//! One item on screen: the claim, the abstract with numbered sentences, earlier annotations where
//! the protocol shows them, the discussion, and the form with its keys.

use super::keys::{self, Command, BINDINGS};
use super::paper::PaperLine;
use super::text::{claim_keys, highlight};
use crate::api::annotate::add_comment;
use crate::domain::annotation::{rule_text, Annotation, Specificity};
use crate::model::annotate::{CommentView, DraftForm, ItemView, OpinionView};
use leptos::prelude::*;
use web_sys::wasm_bindgen::JsCast;

/// The form's state for the item on screen.
#[derive(Clone, Copy)]
pub struct FormState {
    pub form: RwSignal<DraftForm>,
    /// The sentence under the keyboard cursor.
    pub cursor: RwSignal<usize>,
    /// When the item was shown (ms), for the time spent.
    pub started: StoredValue<f64>,
    pub flag_note: RwSignal<String>,
    pub error: RwSignal<Option<String>>,
}

impl FormState {
    pub fn new() -> FormState {
        FormState {
            form: RwSignal::new(DraftForm::default()),
            cursor: RwSignal::new(0),
            started: StoredValue::new(super::now_ms()),
            flag_note: RwSignal::new(String::new()),
            error: RwSignal::new(None),
        }
    }

    /// A blank form for the next item.
    pub fn reset(&self) {
        self.form.set(DraftForm::default());
        self.cursor.set(0);
        self.started.set_value(super::now_ms());
        self.flag_note.set(String::new());
        self.error.set(None);
    }
}

const SPECIFICITIES: [(&str, &str, &str); 4] = [
    ("matches", "matches", "m"),
    ("evidence_more_specific", "evidence more specific", "s"),
    ("evidence_more_general", "evidence more general", "g"),
    ("closely_related", "closely related", "r"),
];

fn toggle(list: &mut Vec<u32>, i: u32) {
    match list.binary_search(&i) {
        Ok(at) => {
            list.remove(at);
        }
        Err(at) => list.insert(at, i),
    }
}

pub(super) fn focus(id: &str) {
    if let Some(el) = document()
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// Scrolls the sentence under the cursor (0-based) into view, as little as needed: at a small
/// window or a large zoom the cursor would otherwise leave the screen.
fn reveal_sentence(i: usize) {
    #[cfg(feature = "hydrate")]
    if let Ok(Some(el)) =
        document().query_selector(&format!("[data-testid=\"sentence-{}\"]", i + 1))
    {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Nearest);
        el.scroll_into_view_with_scroll_into_view_options(&options);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = i;
}

fn blur_active() {
    if let Some(el) = document()
        .active_element()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.blur();
    }
}

/// The item with its form. `on_command` receives "undo", "skip" and "flag" (queue items only).
#[component]
pub fn ItemPanel(
    item: ItemView,
    state: FormState,
    on_submit: Callback<DraftForm>,
    on_command: Callback<&'static str>,
    flagging: RwSignal<bool>,
) -> AnyView {
    let stage = item.stage.clone();
    let first_pass = stage == "first";
    let in_queue = item.assignment_id.is_some();
    let n = item.sentences.len();

    // An item put back by an undo comes back with the answer it had; in confirm mode the form
    // starts from the first annotation, so agreeing is one key.
    if state.form.with_untracked(|f| *f == DraftForm::default()) {
        if let Some(undone) = item.undone.clone() {
            state.form.set(undone);
        } else if let Some(first) = item.first.as_ref() {
            state.form.set(DraftForm::from_opinion(first));
        }
    }
    // The first annotation the form started from, which another label drops (confirm mode).
    let first = StoredValue::new(item.first.clone());

    let try_submit = move || {
        let form = state.form.get_untracked();
        match Annotation::parse(&form.to_draft(), n) {
            Ok(_) => {
                state.error.set(None);
                on_submit.run(form);
            }
            // The message names what is wrong in words; the field's code name is for scripts.
            Err(e) => state.error.set(Some(e.to_string())),
        }
    };

    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        let key = ev.key();
        let in_field = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        if in_field {
            if key == "Escape" {
                blur_active();
                flagging.set(false);
            }
            return;
        }
        let Some(cmd) = keys::command(&key) else {
            return;
        };
        ev.prevent_default();
        match cmd {
            Command::NoEvidence if first_pass => state.form.update(|f| {
                let on = !f.no_evidence;
                *f = DraftForm {
                    no_evidence: on,
                    note: f.note.take(),
                    ..DraftForm::default()
                };
            }),
            Command::NoEvidence => {}
            Command::Label(label) => first
                .with_value(|first| state.form.update(|f| f.choose_label(label, first.as_ref()))),
            Command::Specificity(s) => state.form.update(|f| {
                f.no_evidence = false;
                f.specificity = Some(s.to_owned());
            }),
            Command::CursorDown => {
                state
                    .cursor
                    .update(|c| *c = (*c + 1).min(n.saturating_sub(1)));
                reveal_sentence(state.cursor.get_untracked());
            }
            Command::CursorUp => {
                state.cursor.update(|c| *c = c.saturating_sub(1));
                reveal_sentence(state.cursor.get_untracked());
            }
            Command::ToggleSentence => {
                let at = u32::try_from(state.cursor.get_untracked()).unwrap_or(0);
                state.form.update(|f| {
                    f.no_evidence = false;
                    toggle(&mut f.sentences, at);
                });
            }
            Command::Submit => try_submit(),
            Command::Undo if in_queue => on_command.run("undo"),
            Command::Skip if in_queue => on_command.run("skip"),
            Command::Flag if in_queue => {
                flagging.set(true);
                request_animation_frame(|| focus("flag-note"));
            }
            Command::EditRevisedClaim => focus("revised-claim"),
            Command::EditNote => focus("note"),
            Command::Undo
            | Command::Skip
            | Command::Flag
            | Command::Guidelines
            | Command::Search => {}
        }
    });
    on_cleanup(move || handle.remove());
    // Effects run only in the browser: the page says when its keys work (tests wait for it).
    let ready = RwSignal::new(false);
    Effect::new(move |_| {
        ready.set(true);
        // Keys pressed before the page could listen go to this item now.
        crate::ui::replay_early_keys();
    });

    let show_discussion = stage == "adjudication" || !item.opinions.is_empty();
    let (opinions, comments, entry_id) = (
        item.opinions.clone(),
        item.comments.clone(),
        item.pool_entry_id,
    );
    let flagged = item
        .flagged
        .then(|| item.flag_note.clone().unwrap_or_default());
    let (claim_id, doc_id) = (item.claim_id.clone(), item.doc_id.clone());
    view! {
        <div class="workbench" data-testid="item" data-ready=move || ready.get().to_string() data-stage=stage.clone() data-claim=claim_id data-doc=doc_id>
            <div class="work-main">
                <ItemText item=item state=state />
                <Show when=move || show_discussion>
                    <Opinions opinions=opinions.clone() />
                    <Discussion entry_id=entry_id comments=comments.clone() />
                </Show>
            </div>
            <aside class="work-side">
                <FormPanel state=state first_pass=first_pass first=first on_submit=Callback::new(move |()| try_submit()) />
                <QueueActions state=state in_queue=in_queue flagging=flagging on_command=on_command />
                {flagged.map(|note| view! { <p class="flagged">"Flagged: " {note}</p> })}
                <KeyList first_pass=first_pass in_queue=in_queue />
            </aside>
        </div>
    }
    .into_any()
}

/// The stage, the claim, the first annotation where the protocol shows it, a model's suggested
/// label when the lead turned suggestions on, and the abstract.
#[component]
fn ItemText(item: ItemView, state: FormState) -> AnyView {
    let stage_title = match item.stage.as_str() {
        "first" => "First pass".to_owned(),
        "second" if item.first.is_some() => "Second pass — confirm the first annotation".to_owned(),
        "second" => "Second pass — blind: label it yourself".to_owned(),
        "adjudication" => "Adjudication — the two passes disagree".to_owned(),
        other => other.to_owned(),
    };
    let first_marks: Vec<u32> = item
        .first
        .as_ref()
        .map(|f| f.sentences.clone())
        .unwrap_or_default();
    // At adjudication, each earlier pass's rationale is marked on its sentences.
    let pass_marks: Vec<PassMarks> = if item.stage == "adjudication" {
        item.opinions
            .iter()
            .filter(|o| o.stage != "adjudication" && !o.sentences.is_empty())
            .map(|o| PassMarks {
                tag: if o.stage == "first" { "1st" } else { "2nd" },
                who: format!("{} ({} pass, {})", o.annotator, o.stage, o.label),
                sentences: o.sentences.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
    view! {
        <p class="stage" data-testid="stage">{stage_title}</p>
        <p class="claim-text" data-testid="claim">{item.claim.clone()}</p>
        {item.first.clone().map(|f| view! { <FirstOpinion first=f /> })}
        {item.suggestion.clone().map(|l| view! { <p class="muted" data-testid="suggestion">"A model suggests: " {l}</p> }.into_any())}
        <article class="abstract">
            <h2 class="doc-title">{item.title.clone()} <span class="muted">" · doc " {item.doc_id.clone()}</span></h2>
            <PaperLine paper=item.paper.clone() />
            {(!pass_marks.is_empty()).then(|| view! {
                <p class="muted pass-legend" data-testid="pass-legend">"Rationales marked: "
                    {pass_marks.iter().map(|m| view! { <span class="pass-tag">{m.tag}</span> " " {m.who.clone()} " " }).collect_view()}
                </p>
            })}
            <Sentences claim=item.claim.clone() sentences=item.sentences.clone() first_marks=first_marks pass_marks=pass_marks state=state />
        </article>
    }
    .into_any()
}

/// The first annotation, shown in the second pass's confirm mode.
#[component]
fn FirstOpinion(first: OpinionView) -> AnyView {
    let sentences = (!first.sentences.is_empty()).then(|| {
        let list: Vec<String> = first
            .sentences
            .iter()
            .map(|s| (s + 1).to_string())
            .collect();
        format!(" · sentences {}", list.join(", "))
    });
    view! {
        <p class="first-opinion" data-testid="first-label">
            "First annotator: " <strong>{first.label.clone()}</strong>
            {first.specificity.clone().map(|s| format!(" · {}", s.replace('_', " ")))}
            {first.revised_claim.clone().map(|r| format!(" · revised: “{r}”"))}
            {sentences}
        </p>
    }
    .into_any()
}

/// One earlier pass's rationale, as adjudication marks it on the abstract.
#[derive(Clone)]
struct PassMarks {
    /// "1st" or "2nd".
    tag: &'static str,
    /// Who, at which pass, with what label (the tag's title).
    who: String,
    sentences: Vec<u32>,
}

/// The abstract's numbered sentences, the claim's words marked; a click toggles a rationale.
#[component]
fn Sentences(
    claim: String,
    sentences: Vec<String>,
    first_marks: Vec<u32>,
    pass_marks: Vec<PassMarks>,
    state: FormState,
) -> AnyView {
    let keys_of_claim = claim_keys(&claim);
    let rows = sentences
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let idx = u32::try_from(i).unwrap_or(u32::MAX);
            let pieces = highlight(&s, &keys_of_claim)
                .into_iter()
                .map(|(t, m)| if m { view! { <mark>{t}</mark> }.into_any() } else { t.into_any() })
                .collect_view();
            let marked_by_first = first_marks.contains(&idx);
            let tags = pass_marks
                .iter()
                .filter(|m| m.sentences.contains(&idx))
                .map(|m| view! { <span class="pass-tag" title=m.who.clone()>{m.tag}<span class="sr-only">{format!(" rationale of {}", m.who)}</span></span> })
                .collect_view();
            view! {
                <li
                    class:selected=move || state.form.with(|f| f.sentences.contains(&idx))
                    class:cursor=move || state.cursor.get() == i
                    class:first-mark=marked_by_first
                    aria-current=move || (state.cursor.get() == i).then_some("true")
                    data-testid=format!("sentence-{}", i + 1)
                    on:click=move |_| {
                        state.cursor.set(i);
                        state.form.update(|f| { f.no_evidence = false; toggle(&mut f.sentences, idx); });
                    }
                >
                    <span class="sn">{i + 1}</span>
                    <span>{pieces} {tags}</span>
                    {move || state.form.with(|f| f.sentences.contains(&idx)).then(|| view! { <span class="sr-only">" (rationale)"</span> })}
                </li>
            }
            .into_any()
        })
        .collect_view();
    view! { <ol class="sentences" data-testid="sentences">{rows}</ol> }.into_any()
}

/// Skip and flag (queue items only), with the flag's note box.
#[component]
fn QueueActions(
    state: FormState,
    in_queue: bool,
    flagging: RwSignal<bool>,
    on_command: Callback<&'static str>,
) -> AnyView {
    if !in_queue {
        return ().into_any();
    }
    let flag_box = move || {
        flagging.get().then(|| {
            view! {
                <div class="flag-box">
                    <label for="flag-note">"What needs attention? (Enter saves, Esc cancels)"</label>
                    <input id="flag-note" data-testid="flag-note"
                        prop:value=move || state.flag_note.get()
                        on:input=move |ev| state.flag_note.set(event_target_value(&ev))
                        on:keydown=move |ev| if ev.key() == "Enter" { ev.prevent_default(); flagging.set(false); on_command.run("flag"); }
                    />
                </div>
            }
        })
    };
    view! {
        <div class="queue-actions">
            <button class="link" on:click=move |_| on_command.run("skip") data-testid="skip">"Skip (.)"</button>
            <button class="link" on:click=move |_| { flagging.set(true); request_animation_frame(|| focus("flag-note")); }>"Flag (f)"</button>
        </div>
        {flag_box}
    }
    .into_any()
}

/// Label, specificity, revised claim, note; the FEVER rule and its warning; the submit button.
#[component]
fn FormPanel(
    state: FormState,
    first_pass: bool,
    first: StoredValue<Option<OpinionView>>,
    on_submit: Callback<()>,
) -> AnyView {
    let form = state.form;
    let warning = move || {
        let f = form.get();
        let label = crate::domain::label::Label::parse(f.label.as_deref()?).ok()?;
        let relation = Specificity::parse(f.specificity.as_deref()?).ok()?;
        crate::domain::annotation::check_fever(label, relation).map(|w| w.to_string())
    };
    let rule = move || {
        form.with(|f| {
            f.specificity
                .as_deref()
                .and_then(|s| Specificity::parse(s).ok())
        })
        .map(rule_text)
    };
    let needs_revision =
        move || form.with(|f| f.specificity.as_deref().is_some_and(|s| s != "matches"));
    let enter_submits = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" {
            ev.prevent_default();
            on_submit.run(());
        }
    };
    view! {
        <div class="form-panel" data-testid="form">
            <Show when=move || first_pass>
                <button
                    class="choice wide"
                    class:on=move || form.with(|f| f.no_evidence)
                    aria-pressed=move || form.with(|f| f.no_evidence).to_string()
                    data-testid="no-evidence"
                    on:click=move |_| form.update(|f| { let on = !f.no_evidence; *f = DraftForm { no_evidence: on, ..DraftForm::default() }; })
                >
                    <kbd>"0"</kbd> " clearly no evidence"
                </button>
            </Show>
            <fieldset disabled=move || form.with(|f| f.no_evidence)>
                <legend>"Label"</legend>
                {[("SUPPORT", "1"), ("CONTRADICT", "2"), ("NEI", "3")].into_iter().map(|(label, key)| view! {
                    <button
                        class="choice"
                        class:on=move || form.with(|f| f.label.as_deref() == Some(label))
                        aria-pressed=move || form.with(|f| f.label.as_deref() == Some(label)).to_string()
                        data-testid=format!("label-{label}")
                        on:click=move |_| first.with_value(|first| form.update(|f| f.choose_label(label, first.as_ref())))
                    ><kbd>{key}</kbd> " " {label}</button>
                }).collect_view()}
            </fieldset>
            <fieldset disabled=move || form.with(|f| f.no_evidence)>
                <legend>"Specificity of the evidence"</legend>
                {SPECIFICITIES.into_iter().map(|(value, shown, key)| view! {
                    <button
                        class="choice"
                        class:on=move || form.with(|f| f.specificity.as_deref() == Some(value))
                        aria-pressed=move || form.with(|f| f.specificity.as_deref() == Some(value)).to_string()
                        data-testid=format!("spec-{value}")
                        on:click=move |_| form.update(|f| f.specificity = Some(value.to_owned()))
                    ><kbd>{key}</kbd> " " {shown}</button>
                }).collect_view()}
                {move || rule().map(|r| view! { <p class="rule" data-testid="rule">{r}</p> })}
            </fieldset>
            <p class="muted" data-testid="rationale">
                "Rationale: "
                {move || form.with(|f| if f.sentences.is_empty() { "none selected".to_owned() } else {
                    format!("sentences {}", f.sentences.iter().map(|s| (s + 1).to_string()).collect::<Vec<_>>().join(", "))
                })}
            </p>
            <Show when=needs_revision>
                <label for="revised-claim">"Revised claim " <kbd>"e"</kbd></label>
                <input id="revised-claim" data-testid="revised-claim"
                    placeholder="the claim as specific as the evidence"
                    prop:value=move || form.with(|f| f.revised_claim.clone().unwrap_or_default())
                    on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.revised_claim = Some(v)); }
                    on:keydown=enter_submits
                />
            </Show>
            <label for="note">"Note " <kbd>"t"</kbd></label>
            <input id="note" data-testid="note"
                prop:value=move || form.with(|f| f.note.clone().unwrap_or_default())
                on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.note = Some(v)); }
                on:keydown=enter_submits
            />
            {move || warning().map(|w| view! { <p class="warning" role="alert" data-testid="fever-warning">{w}</p> })}
            {move || state.error.get().map(|e| view! { <p class="error" role="alert" data-testid="form-invalid">{e}</p> })}
            <button class="primary" data-testid="submit" on:click=move |_| on_submit.run(())>"Submit " <kbd>"Enter"</kbd></button>
        </div>
    }.into_any()
}

/// The keys, always on the page.
#[component]
fn KeyList(first_pass: bool, in_queue: bool) -> AnyView {
    view! {
        <details class="keys" open>
            <summary>"Keys"</summary>
            <dl data-testid="key-list">
                {BINDINGS.iter().filter(|(_, _, c)| (first_pass || *c != Command::NoEvidence)
                    && (in_queue || !matches!(c, Command::Undo | Command::Skip | Command::Flag | Command::Guidelines | Command::Search)))
                    .map(|(k, what, _)| view! { <dt><kbd>{*k}</kbd></dt><dd>{*what}</dd> }).collect_view()}
            </dl>
        </details>
    }.into_any()
}

/// Annotations side by side (adjudication, and the lead's view).
#[component]
pub fn Opinions(opinions: Vec<OpinionView>) -> AnyView {
    view! {
        <div class="opinions" data-testid="opinions">
            {opinions.into_iter().map(|o| view! {
                <div class="opinion card" class:mine=o.mine>
                    <h3>{o.stage.clone()} " · " {o.annotator.clone()} {o.mine.then_some(" (you)")}</h3>
                    <p><strong data-testid="opinion-label">{o.label.clone()}</strong>
                        {o.no_evidence.then_some(" — clearly no evidence")}</p>
                    {(!o.sentences.is_empty()).then(|| view! { <p>"Sentences " {o.sentences.iter().map(|s| (s + 1).to_string()).collect::<Vec<_>>().join(", ")}</p> })}
                    {o.specificity.clone().map(|s| view! { <p>"Specificity: " {s.replace('_', " ")}</p> })}
                    {o.revised_claim.clone().map(|r| view! { <p>"Revised claim: “" {r} "”"</p> })}
                    {o.note.clone().map(|n| view! { <p class="muted">"Note: " {n}</p> })}
                </div>
            }).collect_view()}
        </div>
    }.into_any()
}

/// The comment thread on a pair, with a box to add one.
#[component]
pub(super) fn Discussion(entry_id: i64, comments: Vec<CommentView>) -> AnyView {
    let list = RwSignal::new(comments);
    let body = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let send = move || {
        let text = body.get_untracked();
        leptos::task::spawn_local(async move {
            match add_comment(entry_id, text).await {
                Ok(all) => {
                    list.set(all);
                    body.set(String::new());
                    error.set(None);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <section class="discussion" data-testid="discussion">
            <h3>"Discussion"</h3>
            <ul class="comments">
                {move || list.get().into_iter().map(|c| view! {
                    <li data-testid="comment"><strong>{c.author}</strong> ": " {c.body}</li>
                }).collect_view()}
            </ul>
            <textarea id="comment" data-testid="comment-box" rows="2" placeholder="Write a comment (Ctrl+Enter posts)"
                prop:value=move || body.get()
                on:input=move |ev| body.set(event_target_value(&ev))
                on:keydown=move |ev| if ev.key() == "Enter" && ev.ctrl_key() { ev.prevent_default(); send(); }
            ></textarea>
            <button data-testid="comment-post" on:click=move |_| send()>"Post comment"</button>
            {move || error.get().map(|e| view! { <p class="error">{e}</p> })}
        </section>
    }.into_any()
}
