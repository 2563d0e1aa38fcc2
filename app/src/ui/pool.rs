//! The lead's project tools: systems, pool preview and build, pool statistics,
//! and one claim's pairs.

use crate::api::pool::{get_claim, list_systems, pool_stats, preview_pool, BuildPool};
use crate::error::ApiError;
use crate::model::{ClaimDetail, PoolStatsView, PreviewStep, SystemRow};
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

/// An error as a list when it holds one problem per line (rejected imports).
#[component]
pub fn ErrorList(error: ApiError) -> AnyView {
    let text = error.to_string();
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default().to_owned();
    let rest: Vec<String> = lines.map(|l| l.trim().to_owned()).collect();
    view! {
        <div class="error-box" role="alert" data-testid="error-list">
            <p class="error">{head}</p>
            <ul>{rest.into_iter().map(|l| view! { <li><code>{l}</code></li> }).collect_view()}</ul>
        </div>
    }
    .into_any()
}

#[component]
pub fn SystemsSection(project: Signal<String>, version: RwSignal<u32>) -> AnyView {
    let systems = Resource::new(
        move || (project.get(), version.get()),
        |(p, _)| list_systems(p),
    );
    view! {
        <section>
            <h2>"Systems"</h2>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match systems.await {
                        Ok(list) if list.is_empty() => view! { <p class="muted">"No system yet: import a run (Import data below) or generate one."</p> }.into_any(),
                        Ok(list) => view! { <SystemTable list=list /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }.into_any()
}

#[component]
fn SystemTable(list: Vec<SystemRow>) -> AnyView {
    view! {
        <table class="grid" data-testid="systems">
            <thead><tr><th>"System"</th><th>"Role"</th><th>"Scores"</th><th class="num">"Predictions"</th><th>"Description"</th></tr></thead>
            <tbody>
                {list.into_iter().map(|s| view! {
                    <tr>
                        <td>{s.name}</td>
                        <td>{s.role}</td>
                        <td title="scores: confidences from probabilities or scores; order: labels and an order only">{s.scoring}</td>
                        <td class="num">{format_count(s.predictions)}</td>
                        <td>{s.description}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }.into_any()
}

#[component]
pub fn PoolSection(project: Signal<String>, version: RwSignal<u32>) -> AnyView {
    let stats = Resource::new(
        move || (project.get(), version.get()),
        |(p, _)| pool_stats(p),
    );
    let strategy = RwSignal::new("confidence".to_owned());
    let depth = RwSignal::new(50u32);
    let preview = Action::new(move |(strategy, depths): &(String, Vec<u32>)| {
        preview_pool(project.get_untracked(), strategy.clone(), depths.clone())
    });
    let build = ServerAction::<BuildPool>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = build.value().get() {
            version.update(|v| *v += 1);
        }
    });
    let depths = move || {
        let d = depth.get().max(1);
        vec![d, d + 25, d + 50, d + 100, d + 200]
    };
    view! {
        <section>
            <h2>"Pool"</h2>
            <div class="toolbar">
                <label>"Strategy "
                    <select on:change=move |ev| strategy.set(event_target_value(&ev)) prop:value=move || strategy.get()>
                        <option value="confidence">"confidence (SciFact-Open: each system's top d over all claims)"</option>
                        <option value="per-claim">"per-claim (TREC: each system's top d per claim)"</option>
                    </select>
                </label>
                <label>"Depth d "
                    <input type="number" min="1" data-testid="pool-depth" prop:value=move || depth.get().to_string()
                        on:input=move |ev| depth.set(event_target_value(&ev).parse().unwrap_or(1)) />
                </label>
                <button class="secondary" on:click=move |_| { preview.dispatch((strategy.get(), depths())); }>"Preview"</button>
                <button data-testid="pool-build" on:click=move |_| {
                    build.dispatch(BuildPool { project: project.get(), strategy: strategy.get(), depth: depth.get() });
                }>"Build / grow"</button>
            </div>
            {move || preview.value().get().map(|r| match r {
                Ok(steps) => view! { <PreviewTable steps=steps /> }.into_any(),
                Err(e) => view! { <ErrorNote error=e /> }.into_any(),
            })}
            {move || build.value().get().map(|r| match r {
                Ok(b) => view! {
                    <p class="ok" data-testid="build-result">{format!(
                        "Pool at depth {} ({}): {} pairs; this step added {}, of which {} need annotation.",
                        b.depth, b.strategy, format_count(b.pool_size as i64), format_count(b.added as i64), format_count(b.to_annotate as i64)
                    )}</p>
                }.into_any(),
                Err(e) => view! { <ErrorNote error=e /> }.into_any(),
            })}
            <crate::ui::sample::SampleControl project=project version=version />
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match stats.await {
                        Ok(Some(s)) => view! { <StatsTables stats=s /> }.into_any(),
                        Ok(None) => view! { <p class="muted">"No pool yet: preview depths, then build."</p> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }.into_any()
}

#[component]
fn PreviewTable(steps: Vec<PreviewStep>) -> AnyView {
    view! {
        <table class="grid compact" data-testid="preview">
            <thead><tr><th class="num">"Depth"</th><th class="num">"Pool size after it"</th><th class="num">"Pairs it adds"</th><th class="num">"Of them to annotate"</th></tr></thead>
            <tbody>
                {steps.into_iter().map(|s| view! {
                    <tr>
                        <td class="num">{s.depth}</td>
                        <td class="num">{format_count(s.pool_size as i64)}</td>
                        <td class="num">{format_count(s.added as i64)}</td>
                        <td class="num">{format_count(s.to_annotate as i64)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }.into_any()
}

fn percent(p: Option<f64>) -> String {
    p.map(|p| format!("{p:.1}")).unwrap_or_else(|| "–".into())
}

#[component]
fn StatsTables(stats: PoolStatsView) -> AnyView {
    view! {
        <p data-testid="pool-summary">{format!(
            "{} pairs pooled ({} strategy, depth {}); {} judged, {} evidence.",
            format_count(stats.pool_size as i64), stats.strategy, stats.depth, format_count(stats.judged as i64), format_count(stats.evidence as i64)
        )}</p>
        <div class="two-col">
            <table class="grid compact" data-testid="by-system-count">
                <caption>"Pairs by the number of systems that pooled them"</caption>
                <thead><tr><th class="num">"Systems"</th><th class="num">"Pooled"</th><th class="num">"Judged"</th><th class="num">"Evidence"</th><th class="num">"% evidence"</th></tr></thead>
                <tbody>
                    {stats.by_system_count.into_iter().map(|(n, pooled, judged, evidence, pct)| view! {
                        <tr><td class="num">{n}</td><td class="num">{pooled}</td><td class="num">{judged}</td><td class="num">{evidence}</td><td class="num">{percent(pct)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <table class="grid compact" data-testid="per-system">
                <caption>"Each pooled system's contribution"</caption>
                <thead><tr><th>"System"</th><th class="num">"Pooled"</th><th class="num">"Unique"</th></tr></thead>
                <tbody>
                    {stats.per_system.into_iter().map(|(s, pooled, unique)| view! {
                        <tr><td>{s}</td><td class="num">{pooled}</td><td class="num">{unique}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        <table class="grid compact" data-testid="prior-evidence">
            <caption>{format!("Prior (citation) evidence: {} pairs, {} in the pool", stats.prior_total, stats.prior_in_pool)}</caption>
            <thead><tr><th>"System"</th><th>"Role"</th><th class="num">"Retrieved"</th><th class="num">{format!("In top {}", stats.top_k)}</th><th class="num">{format!("In top {}", stats.depth)}</th></tr></thead>
            <tbody>
                {stats.prior.into_iter().map(|(s, role, retrieved, top_k, top_d)| view! {
                    <tr><td>{s}</td><td>{role}</td><td class="num">{retrieved}</td><td class="num">{top_k}</td><td class="num">{top_d}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
    }.into_any()
}

#[component]
pub fn ClaimPage() -> AnyView {
    let params = use_params_map();
    let project = move || params.read().get("name").unwrap_or_default();
    let claim = move || params.read().get("claim").unwrap_or_default();
    let detail = Resource::new(move || (project(), claim()), |(p, c)| get_claim(p, c));
    view! {
        <Title text=move || format!("Claim {}", claim()) />
        <main class="page">
            <p><A href=move || format!("/lead/projects/{}", project())>{move || format!("← {}", project())}</A></p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match detail.await {
                        Ok(d) => view! { <ClaimView detail=d project=project() /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }.into_any()
}

#[component]
fn ClaimView(detail: ClaimDetail, project: String) -> AnyView {
    // Model assessors' labels (issue 16): a column only when some pair has one.
    let with_models = detail.pairs.iter().any(|p| !p.model_labels.is_empty());
    // A pair the lead finds by search is their next first pass: the annotation page serves it.
    let work = format!(
        "/work/{}",
        crate::api::report::encode_path_segment(&project)
    );
    let judged = RwSignal::new(false);
    let on_judged = Callback::new(move |_| judged.set(true));
    view! {
        <h1>{format!("Claim {}", detail.claim_id)}</h1>
        <p class="claim-text" data-testid="claim-text">{detail.text.clone()}</p>
        <crate::ui::annotate::SearchPanel project=project claim_id=detail.claim_id.clone() claim=detail.text on_judged=on_judged />
        <Show when=move || judged.get()>
            <p class="ok" role="status" data-testid="found-judge-link">"Added to the pool as your find. "
                <A href=work.clone()>"Judge it now on your annotation page"</A>" (your current item)."</p>
        </Show>
        <table class="grid" data-testid="claim-pairs">
            <thead><tr><th>"Document"</th><th>"Title"</th><th class="num">"Entry depth"</th><th>"Found by (rank)"</th><th>"Status"</th>
                {with_models.then(|| view! { <th title="Labels of model assessors (systems' predictions, or an administrator's command), never final">"Model labels"</th> })}
                <th>"Specificity / revised claim"</th></tr></thead>
            <tbody>
                {detail.pairs.into_iter().map(|p| {
                    let status = match (&p.final_label, &p.provenance) {
                        (Some(l), Some(prov)) => format!("{l} ({prov})"),
                        (Some(l), None) => l.clone(),
                        _ if p.entry_depth.is_some() => "to annotate".to_owned(),
                        _ => "not judged".to_owned(),
                    };
                    let class = match p.final_label.as_deref() {
                        Some("SUPPORT") => "label support",
                        Some("CONTRADICT") => "label contradict",
                        Some(_) => "label nei",
                        None => "label open",
                    };
                    let ranks = p.model_ranks.iter().map(|(s, r)| format!("{s} {r}")).collect::<Vec<_>>().join(", ");
                    let models = p.model_labels.iter().map(|(a, l)| format!("{a}: {l}")).collect::<Vec<_>>().join(", ");
                    view! {
                        <tr>
                            <td class="num">{p.doc_id}{if p.cited { " (cited)" } else { "" }}</td>
                            <td>{p.title}</td>
                            <td class="num">{p.entry_depth.map(|d| d.to_string()).unwrap_or_else(|| "–".into())}</td>
                            <td>{ranks}</td>
                            <td><span class=class>{status}</span></td>
                            {with_models.then(|| view! { <td data-testid="pair-model-labels">{models}</td> })}
                            <td data-testid="pair-specificity">{p.specificity.map(|s| s.replace('_', " ")).unwrap_or_default()}
                                {p.revised_claim.map(|r| format!(" — “{r}”"))}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }.into_any()
}
