//! "Generate a run" on the lead's project page: choose a retriever, k and a scorer the server
//! offers, start a job on the server, follow its progress, and see the new system when done.

use crate::api::pipeline::{
    pipeline_jobs, pipeline_options, CancelPipelineJob, JobView, PipelineChoices, StartPipeline,
};
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;
use std::time::Duration;

/// How often the page asks for the jobs' progress while one runs.
const POLL: Duration = Duration::from_millis(1000);

#[component]
pub fn GenerateRunSection(project: Signal<String>, version: RwSignal<u32>) -> AnyView {
    let options = Resource::new(move || project.get(), pipeline_options);
    let start = ServerAction::<StartPipeline>::new();
    let cancel = ServerAction::<CancelPipelineJob>::new();
    // Bumped by the poll timer while a job is unfinished, and when a job is started.
    let tick = RwSignal::new(0u32);
    let jobs = Resource::new(
        move || {
            (
                project.get(),
                tick.get(),
                start.version().get(),
                cancel.version().get(),
            )
        },
        |(p, _, _, _)| pipeline_jobs(p),
    );
    // Polled while a job is unfinished; a job that is done reloads the systems table.
    crate::ui::job_poll::follow_jobs(jobs, tick, version, POLL);
    view! {
        <section data-testid="generate-run">
            <h2>"Generate a run"</h2>
            <p class="muted">"Runs the pipeline on the server over this project's corpus and claims, and imports the result as a new system."</p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match options.await {
                        Ok(choices) => view! { <StartForm project=project choices=choices start=start /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
            {move || start.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e /> })}
            {move || cancel.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e /> })}
            <Transition fallback=|| ()>
                {move || jobs.get().map(|r| match r {
                    Ok(list) if list.is_empty() => ().into_any(),
                    Ok(list) => view! { <JobTable list=list project=project cancel=cancel /> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                })}
            </Transition>
        </section>
    }.into_any()
}

#[component]
fn StartForm(
    project: Signal<String>,
    choices: PipelineChoices,
    start: ServerAction<StartPipeline>,
) -> AnyView {
    let retriever = RwSignal::new("bm25".to_owned());
    let k = RwSignal::new(50u32);
    let scorer = RwSignal::new("bm25".to_owned());
    let model = RwSignal::new(choices.models.first().cloned().unwrap_or_default());
    let command = RwSignal::new(choices.commands.first().cloned().unwrap_or_default());
    let system = RwSignal::new(String::new());
    let role = RwSignal::new("pooled".to_owned());
    let (models, commands) = (choices.models.clone(), choices.commands.clone());
    let has_models = !models.is_empty();
    let has_commands = !commands.is_empty();
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        start.dispatch(StartPipeline {
            project: project.get_untracked(),
            retriever: retriever.get_untracked(),
            k: k.get_untracked(),
            scorer: scorer.get_untracked(),
            model: model.get_untracked(),
            command: command.get_untracked(),
            system: system.get_untracked(),
            role: role.get_untracked(),
        });
    };
    view! {
        <form class="form-grid card" on:submit=on_submit data-testid="generate-form">
            <label for="gen-retriever">"Retriever"</label>
            <select id="gen-retriever" on:change=move |ev| retriever.set(event_target_value(&ev)) prop:value=move || retriever.get()>
                <option value="bm25">"BM25 (title + abstract)"</option>
                {choices.hybrid.then(|| view! { <option value="hybrid">"hybrid: BM25 top 200 + MiniLM, reciprocal-rank fusion"</option> })}
            </select>
            <label for="gen-k">"Abstracts per claim (k)"</label>
            <input id="gen-k" type="number" min="1" max="1000" prop:value=move || k.get().to_string()
                on:input=move |ev| k.set(event_target_value(&ev).parse().unwrap_or(50)) />
            <label for="gen-scorer">"Scorer"</label>
            <select id="gen-scorer" on:change=move |ev| scorer.set(event_target_value(&ev)) prop:value=move || scorer.get()>
                <option value="bm25">"BM25, calibrated probability of evidence"</option>
                {has_models.then(|| view! { <option value="trained">"trained model"</option> })}
                {has_commands.then(|| view! { <option value="external">"external command"</option> })}
            </select>
            <Show when=move || scorer.get() == "trained">
                <label for="gen-model">"Model"</label>
                <select id="gen-model" on:change=move |ev| model.set(event_target_value(&ev)) prop:value=move || model.get()>
                    {models.clone().into_iter().map(|m| view! { <option value=m.clone()>{m.clone()}</option> }).collect_view()}
                </select>
            </Show>
            <Show when=move || scorer.get() == "external">
                <label for="gen-command">"Command"</label>
                <select id="gen-command" on:change=move |ev| command.set(event_target_value(&ev)) prop:value=move || command.get()>
                    {commands.clone().into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
                </select>
            </Show>
            <label for="gen-system">"Name of the new system"</label>
            <input id="gen-system" required placeholder="e.g. bm25-k50" prop:value=move || system.get()
                on:input=move |ev| system.set(event_target_value(&ev)) />
            <label for="gen-role">"Role"</label>
            <select id="gen-role" on:change=move |ev| role.set(event_target_value(&ev)) prop:value=move || role.get()>
                <option value="pooled">"pooled"</option>
                <option value="evaluation-only">"evaluation-only"</option>
            </select>
            <span></span>
            <button type="submit" disabled=move || start.pending().get()>"Start"</button>
            <p class="muted span-all">"External commands and model files are set up by the server's administrator (claimpool serve --pipeline-command NAME=CMD, --pipeline-model NAME=FILE, --embedder-dir DIR)."</p>
        </form>
    }.into_any()
}

#[component]
fn JobTable(
    list: Vec<JobView>,
    project: Signal<String>,
    cancel: ServerAction<CancelPipelineJob>,
) -> AnyView {
    view! {
        <table class="grid" data-testid="pipeline-jobs">
            <thead><tr><th>"Job"</th><th>"System"</th><th>"Run"</th><th>"Progress"</th><th>"Status"</th></tr></thead>
            <tbody>
                {list.into_iter().map(|job| view! { <JobRow job=job project=project cancel=cancel /> }).collect_view()}
            </tbody>
        </table>
    }.into_any()
}

#[component]
fn JobRow(
    job: JobView,
    project: Signal<String>,
    cancel: ServerAction<CancelPipelineJob>,
) -> AnyView {
    let total = job.total.unwrap_or(0);
    let progress = match job.total {
        Some(total) => format!(
            "{} / {} claims",
            format_count(job.done),
            format_count(total)
        ),
        None => "—".to_owned(),
    };
    let status = match (job.status.as_str(), job.imported, job.cancelling) {
        ("done", Some(rows), _) => {
            format!("done: {} predictions imported", format_count(rows as i64))
        }
        (_, _, true) => "cancelling…".to_owned(),
        (status, _, _) => status.to_owned(),
    };
    let id = job.id;
    let can_cancel = !job.finished() && !job.cancelling;
    let note = job.message.map(|m| {
        if job.status == "failed" {
            view! { <pre class="error" role="alert">{m}</pre> }.into_any()
        } else {
            view! { <p class="muted">{m}</p> }.into_any()
        }
    });
    view! {
        <tr data-testid="pipeline-job" data-status=job.status.clone()>
            <td class="num">{job.id}</td>
            <td>{job.system}</td>
            <td>{job.description}</td>
            <td>
                <progress max=total.max(1).to_string() value=job.done.to_string()></progress>
                " " {progress}
            </td>
            <td>
                {status}
                {can_cancel.then(|| view! {
                    " "
                    <button type="button" class="secondary" data-testid="cancel-job"
                        disabled=move || cancel.pending().get()
                        on:click=move |_| {
                            cancel.dispatch(CancelPipelineJob { project: project.get_untracked(), id });
                        }>
                        "Cancel"
                    </button>
                })}
                {note}
            </td>
        </tr>
    }.into_any()
}
