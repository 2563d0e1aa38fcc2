//! The lead's project pages: the list with counts, and one project's overview and claims.

use crate::api::projects::{
    claims_page, list_projects, project_overview, CreateProject, CLAIMS_PER_PAGE,
};
use crate::model::{ClaimRow, Page, ProjectSummary};
use crate::ui::widgets::{format_count, ErrorNote, Stat};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::{Form, A};
use leptos_router::hooks::{use_params_map, use_query_map};

#[component]
pub fn ProjectsPage() -> AnyView {
    let create = ServerAction::<CreateProject>::new();
    let projects = Resource::new(move || create.version().get(), |_| list_projects());
    view! {
        <Title text="Projects" />
        <main class="page">
            <h1>"Projects"</h1>
            <NewProject create=create />
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match projects.await {
                        Ok(list) if list.is_empty() => view! {
                            <p class="muted">"You lead no project yet: create one above, or ask a lead of one to add you."</p>
                        }.into_any(),
                        Ok(list) => view! { <ProjectTable list=list /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }.into_any()
}

/// The form that creates a project (its creator leads it), with a link to it once made.
#[component]
fn NewProject(create: ServerAction<CreateProject>) -> AnyView {
    view! {
        <ActionForm action=create attr:class="toolbar" attr:data-testid="new-project">
            <label>"New project " <input name="name" required maxlength="100" autocomplete="off" /></label>
            <label>"description " <input name="description" size="40" /></label>
            <button type="submit" disabled=move || create.pending().get()>"Create"</button>
        </ActionForm>
        {move || match create.value().get() {
            Some(Ok(name)) => view! {
                <p class="ok" data-testid="project-created">
                    "Created "<A href=format!("/lead/projects/{name}")>{name.clone()}</A>
                    ": add its members, then import its corpus, claims and runs on its page (Import data)."
                </p>
            }.into_any(),
            Some(Err(e)) => view! { <ErrorNote error=e /> }.into_any(),
            None => ().into_any(),
        }}
    }
    .into_any()
}

#[component]
fn ProjectTable(list: Vec<ProjectSummary>) -> AnyView {
    view! {
        <table class="grid" data-testid="projects">
            <thead>
                <tr>
                    <th>"Project"</th><th class="num">"Documents"</th><th class="num">"Claims"</th>
                    <th class="num">"Systems"</th><th class="num">"Predictions"</th>
                    <th class="num">"Pooled"</th><th class="num">"Final labels"</th>
                </tr>
            </thead>
            <tbody>
                {list.into_iter().map(|p| view! {
                    <tr>
                        <td><A href=format!("/lead/projects/{}", p.name)>{p.name.clone()}</A></td>
                        <td class="num">{format_count(p.documents)}</td>
                        <td class="num">{format_count(p.claims)}</td>
                        <td class="num">{format_count(p.systems)}</td>
                        <td class="num">{format_count(p.predictions)}</td>
                        <td class="num">{format_count(p.pooled)}</td>
                        <td class="num">{format_count(p.final_labels)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

#[component]
pub fn ProjectPage() -> AnyView {
    let params = use_params_map();
    let query = use_query_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let search = move || query.read().get("q").unwrap_or_default();
    let offset = move || {
        query
            .read()
            .get("offset")
            .and_then(|o| o.parse::<i64>().ok())
            .unwrap_or(0)
            .max(0)
    };
    // Bumped by uploads and pool builds, so the counts and tables reload.
    let version = RwSignal::new(0u32);
    // Bumped when an upload queues a job, so the jobs list reloads at once.
    let jobs_changed = RwSignal::new(0u32);
    let summary = Resource::new(
        move || (name(), version.get()),
        |(name, _)| project_overview(name),
    );
    let claims = Resource::new(
        move || (name(), search(), offset()),
        |(name, search, offset)| claims_page(name, search, offset),
    );
    view! {
        <Title text=name />
        <main class="page">
            <h1>{name}</h1>
            <nav class="subnav" aria-label="Project" data-testid="project-nav">
                <A href=move || format!("/lead/projects/{}/annotation", name())>"Annotation"</A>
                <A href=move || format!("/lead/projects/{}/report", crate::api::report::encode_path_segment(&name())) attr:data-testid="report-link">"Report: is the pool deep and wide enough?"</A>
                <A href=move || format!("/lead/projects/{}/releases", name())>"Releases: export the collection"</A>
                <A href=move || format!("/lead/projects/{}/webhooks", crate::api::report::encode_path_segment(&name())) attr:data-testid="webhooks-link">"Webhooks"</A>
            </nav>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match summary.await {
                        Ok(p) => view! {
                            <div class="stats" data-testid="project-counts">
                                <Stat label="documents" value=p.documents />
                                <Stat label="claims" value=p.claims />
                                <Stat label="systems" value=p.systems />
                                <Stat label="predictions" value=p.predictions />
                                <Stat label="pooled pairs" value=p.pooled />
                                <Stat label="final labels" value=p.final_labels />
                            </div>
                        }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
            <crate::ui::members::MembersSection project=Signal::derive(name) />
            <crate::ui::guidelines::GuidelinesSection project=Signal::derive(name) />
            <crate::ui::pool::SystemsSection project=Signal::derive(name) version=version />
            <crate::ui::imports::ImportSection project=Signal::derive(name) jobs_changed=jobs_changed />
            <crate::ui::imports::JobsSection project=Signal::derive(name) version=version jobs_changed=jobs_changed />
            <crate::ui::pipeline::GenerateRunSection project=Signal::derive(name) version=version />
            <crate::ui::pool::PoolSection project=Signal::derive(name) version=version />
            <section>
                <h2>"Claims"</h2>
                <Form method="GET" action="">
                    <input type="search" name="q" placeholder="Search claims by id or text" prop:value=search aria-label="Search claims" />
                    <button type="submit">"Search"</button>
                </Form>
                <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                    {move || Suspend::new(async move {
                        match claims.await {
                            Ok(page) => view! { <ClaimTable page=page search=search() project=name() /> }.into_any(),
                            Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                        }
                    })}
                </Suspense>
            </section>
        </main>
    }.into_any()
}

#[component]
fn ClaimTable(page: Page<ClaimRow>, search: String, project: String) -> AnyView {
    let first = if page.total == 0 { 0 } else { page.offset + 1 };
    let last = (page.offset + page.items.len() as i64).min(page.total);
    let prev = (page.offset > 0).then(|| (page.offset - CLAIMS_PER_PAGE).max(0));
    let next = (last < page.total).then_some(page.offset + CLAIMS_PER_PAGE);
    let pager = move |label: &'static str, to: Option<i64>| {
        let search = search.clone();
        to.map(|offset| {
            view! {
                <Form method="GET" action="">
                    <input type="hidden" name="q" value=search />
                    <input type="hidden" name="offset" value=offset.to_string() />
                    <button type="submit" class="link">{label}</button>
                </Form>
            }
        })
    };
    view! {
        <div class="pager">
            <span data-testid="claims-range">{format!("{first}–{last} of {}", format_count(page.total))}</span>
            {pager("← Previous", prev)}
            {pager("Next →", next)}
        </div>
        <table class="grid" data-testid="claims">
            <thead>
                <tr><th class="num">"Id"</th><th>"Claim"</th><th class="num">"Cited"</th><th class="num">"Pooled"</th><th class="num">"Evidence"</th></tr>
            </thead>
            <tbody>
                {page.items.into_iter().map(|c| view! {
                    <tr>
                        <td class="num"><A href=format!("/lead/projects/{}/claims/{}", project, c.claim_id)>{c.claim_id.clone()}</A></td>
                        <td>{c.text}</td>
                        <td class="num">{c.cited}</td>
                        <td class="num">{c.pooled}</td>
                        <td class="num">{c.evidence}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }.into_any()
}
