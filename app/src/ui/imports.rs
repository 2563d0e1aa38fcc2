//! "Import data" and "Jobs" on the lead's project page: upload a corpus, claims, a run or
//! judgments (imported in the background with the command line's checks), follow each job's
//! progress, cancel it, and see what ran, who started it, how long it took and how it ended.

use crate::api::imports::{project_jobs, upload_import, CancelJob, JobRow};
use crate::ui::pool::ErrorList;
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;
use std::time::Duration;
use web_sys::wasm_bindgen::JsCast;

/// How often the page asks for the jobs' progress while one is unfinished.
const POLL: Duration = Duration::from_millis(700);

/// The upload form: the kind of file, its options, the file.
#[component]
pub fn ImportSection(project: Signal<String>, jobs_changed: RwSignal<u32>) -> AnyView {
    let kind = RwSignal::new("corpus".to_owned());
    let upload = Action::new_local(|data: &web_sys::FormData| upload_import(data.clone().into()));
    let on_submit = move |ev: web_sys::SubmitEvent| {
        ev.prevent_default();
        let Some(form) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlFormElement>().ok())
        else {
            return;
        };
        if let Ok(data) = web_sys::FormData::new_with_form(&form) {
            upload.dispatch_local(data);
        }
    };
    Effect::new(move |_| {
        if let Some(Ok(_)) = upload.value().get() {
            jobs_changed.update(|v| *v += 1);
        }
    });
    view! {
        <details class="card" data-testid="import-data">
            <summary>"Import data"</summary>
            <form class="form-grid" on:submit=on_submit>
                // The project comes first: the server checks the caller leads it before reading the file.
                <input type="hidden" name="project" prop:value=move || project.get() />
                <label for="import-kind">"What"</label>
                <select id="import-kind" name="kind" data-testid="import-kind"
                    on:change=move |ev| kind.set(event_target_value(&ev)) prop:value=move || kind.get()>
                    <option value="corpus">"corpus (SciFact or BEIR corpus.jsonl)"</option>
                    <option value="claims">"claims (SciFact claims.jsonl, evidence as citation labels)"</option>
                    <option value="run">"system run"</option>
                    <option value="judgments">"judgments (qrels with labels, or SciFact claims)"</option>
                </select>
                <KindFields kind=kind.into() />
                <label for="import-file">"File (plain or .gz)"</label>
                <input id="import-file" type="file" name="file" required />
                <span></span>
                <button type="submit" data-testid="import-submit" disabled=move || upload.pending().get()>
                    {move || if upload.pending().get() { "Uploading…" } else { "Upload and import" }}
                </button>
            </form>
            {move || upload.pending().get().then(|| view! { <progress data-testid="upload-progress"></progress> })}
            {move || upload.value().get().map(|result| match result {
                Ok(job) => view! {
                    <p class="ok" data-testid="import-queued">{format!("Uploaded; job {} imports the {} (see Jobs).", job.id, job.what)}</p>
                }.into_any(),
                Err(e) => view! { <ErrorList error=e /> }.into_any(),
            })}
        </details>
    }
    .into_any()
}

/// The options of the chosen kind.
#[component]
fn KindFields(kind: Signal<String>) -> AnyView {
    (move || match kind.get().as_str() {
        "corpus" => view! {
            <label for="import-format">"Format"</label>
            <select id="import-format" name="format">
                <option value="">"detect from the file"</option>
                <option value="scifact">"SciFact"</option>
                <option value="beir">"BEIR"</option>
            </select>
        }
        .into_any(),
        "run" => view! { <RunFields /> }.into_any(),
        "judgments" => view! { <JudgmentFields /> }.into_any(),
        _ => ().into_any(),
    })
    .into_any()
}

#[component]
fn RunFields() -> AnyView {
    view! {
        <label for="import-system">"System name"</label>
        <input id="import-system" name="system" placeholder="as the file names it, if it does" />
        <label for="import-role">"Role"</label>
        <select id="import-role" name="role">
            <option value="pooled">"pooled"</option>
            <option value="evaluation-only">"evaluation-only"</option>
        </select>
        <label for="import-run-format">"Format"</label>
        <select id="import-run-format" name="format">
            <option value="">"detect from the file"</option>
            {crate::model::RUN_FORMATS
                .iter()
                .map(|(name, title)| view! { <option value=*name>{*title}</option> })
                .collect_view()}
        </select>
        <label for="import-order">"label_probs order"</label>
        <input id="import-order" name="label_order" value="CONTRADICT,NEI,SUPPORT" />
        <label for="import-description">"Description"</label>
        <input id="import-description" name="description" />
    }
    .into_any()
}

#[component]
fn JudgmentFields() -> AnyView {
    view! {
        <label for="import-annotator">"Annotator (user name)"</label>
        <input id="import-annotator" name="annotator" required />
        <label for="import-stage">"Stage"</label>
        <select id="import-stage" name="stage">
            <option value="final">"final"</option>
            <option value="first">"first pass"</option>
            <option value="second">"second pass"</option>
        </select>
        <label for="import-judgments-format">"Format"</label>
        <select id="import-judgments-format" name="format">
            <option value="">"detect from the file name"</option>
            <option value="qrels-labels">"qrels with labels"</option>
            <option value="scifact">"SciFact claims"</option>
        </select>
    }
    .into_any()
}

/// The project's jobs (imports and generated runs), polled while one is unfinished; a job
/// that ends bumps `version`, so the counts and systems reload.
#[component]
pub fn JobsSection(
    project: Signal<String>,
    version: RwSignal<u32>,
    jobs_changed: RwSignal<u32>,
) -> AnyView {
    let cancel = ServerAction::<CancelJob>::new();
    let tick = RwSignal::new(0u32);
    let jobs = Resource::new(
        move || {
            (
                project.get(),
                tick.get(),
                jobs_changed.get(),
                cancel.version().get(),
            )
        },
        |(p, _, _, _)| project_jobs(p),
    );
    // Polled while a job is unfinished; a job that is done reloads the page's counts and tables.
    crate::ui::job_poll::follow_jobs(jobs, tick, version, POLL);
    view! {
        <section>
            <h2>"Jobs"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match jobs.await {
                        Ok(list) if list.is_empty() => view! { <p class="muted">"No job yet."</p> }.into_any(),
                        Ok(list) => view! { <JobTable list=list project=project cancel=cancel /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Transition>
            {move || cancel.value().get().and_then(Result::err).map(|e| view! { <ErrorNote error=e /> })}
        </section>
    }
    .into_any()
}

#[component]
fn JobTable(
    list: Vec<JobRow>,
    project: Signal<String>,
    cancel: ServerAction<CancelJob>,
) -> AnyView {
    view! {
        <table class="grid" data-testid="jobs">
            <thead><tr><th>"#"</th><th>"What"</th><th>"Started by"</th><th>"Status"</th><th>"Progress"</th><th class="num">"Took"</th><th>"Outcome"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
            <tbody>
                {list.into_iter().map(|job| view! { <JobLine job=job project=project cancel=cancel /> }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

#[component]
fn JobLine(job: JobRow, project: Signal<String>, cancel: ServerAction<CancelJob>) -> AnyView {
    let id = job.id;
    // Durations of ended jobs only: a running one's would differ between server and browser.
    let took = job
        .finished()
        .then(|| job.seconds(0))
        .flatten()
        .map(|s| format!("{s:.1} s"))
        .unwrap_or_default();
    let status = if job.cancelling {
        "cancelling".to_owned()
    } else {
        job.status.clone()
    };
    let progress = progress_text(&job);
    let (done, total) = (job.done, job.total.unwrap_or(0).max(1));
    let running = !job.finished();
    let outcome = match (&job.message, &job.outcome) {
        (Some(message), _) => view! { <Problems message=message.clone() /> }.into_any(),
        (None, Some(outcome)) => outcome.clone().into_any(),
        (None, None) => ().into_any(),
    };
    view! {
        <tr data-testid="job" data-status=job.status.clone()>
            <td>{id}</td>
            <td>{job.what.clone()}</td>
            <td>{job.started_by.clone().unwrap_or_default()}</td>
            <td class=format!("status-{status}")>{status.clone()}</td>
            <td>
                {running.then(|| view! { <progress max=total value=done></progress> })}
                " " {progress}
            </td>
            <td class="num">{took}</td>
            <td class="wrap">{outcome}</td>
            <td>
                {(running && !job.cancelling).then(|| view! {
                    <button class="secondary" data-testid="job-cancel" on:click=move |_| {
                        cancel.dispatch(CancelJob { project: project.get_untracked(), id });
                    }>"Cancel"</button>
                })}
            </td>
        </tr>
    }
    .into_any()
}

/// Why a job failed: its first line, then one problem per line (a rejected file's lines).
#[component]
fn Problems(message: String) -> AnyView {
    let mut lines = message.lines();
    let head = lines.next().unwrap_or_default().to_owned();
    let rest: Vec<String> = lines.map(|l| l.trim().to_owned()).collect();
    view! {
        <div data-testid="job-problems">
            <span>{head}</span>
            <ul>{rest.into_iter().map(|l| view! { <li><code>{l}</code></li> }).collect_view()}</ul>
        </div>
    }
    .into_any()
}

/// "1.2 MiB of 3.4 MiB" for imports, "120 of 300 claims" for generated runs.
fn progress_text(job: &JobRow) -> String {
    let Some(total) = job.total else {
        return String::new();
    };
    if job.unit == "bytes" {
        format!(
            "{} of {}",
            crate::domain::units::size_text(job.done.max(0) as u64),
            crate::domain::units::size_text(total.max(0) as u64)
        )
    } else {
        format!(
            "{} of {} {}",
            format_count(job.done),
            format_count(total),
            job.unit
        )
    }
}
