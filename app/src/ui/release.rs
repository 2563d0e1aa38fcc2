//! The lead's releases page of a project: whether the collection is complete, making a
//! release, and the releases so far with their downloads.

use crate::api::release::{download_path, releases_overview, CreateRelease, ReleaseRow};
use crate::api::release_diff::diff_path;
use crate::ui::widgets::{format_count, ErrorNote, Stat};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

#[component]
pub fn ReleasesPage() -> AnyView {
    let params = use_params_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let create = ServerAction::<CreateRelease>::new();
    // Bumped by each release made, so the list reloads.
    let version = RwSignal::new(0u32);
    Effect::new(move |_| {
        if let Some(Ok(_)) = create.value().get() {
            version.update(|v| *v += 1);
        }
    });
    let overview = Resource::new(
        move || (name(), version.get()),
        |(name, _)| releases_overview(name),
    );
    let unjudged = RwSignal::new(false);
    let model_qrels = RwSignal::new(false);
    view! {
        <Title text=move || format!("Releases of {}", name()) />
        <main class="page">
            <p><A href=move || format!("/lead/projects/{}", name())>{move || format!("← {}", name())}</A></p>
            <h1>"Releases"</h1>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match overview.await {
                        Ok(v) => {
                            let incomplete = v.unjudged > 0;
                            let with_models = v.model_assessors > 0;
                            // The same counts, in the same words, as the annotation page's.
                            let pooled_final = (v.pooled - v.unjudged).max(0);
                            let outside = (v.final_labels - pooled_final).max(0);
                            view! {
                                <div class="stats" data-testid="release-state">
                                    <Stat label="pooled pairs" value=v.pooled />
                                    <Stat label="pooled pairs with a final label" value=pooled_final />
                                    <Stat label="pooled pairs without one" value=v.unjudged />
                                    <Stat label="final labels outside the pool" value=outside />
                                </div>
                                {if incomplete {
                                    view! {
                                        <p class="warning" data-testid="release-incomplete">{format!(
                                            "The collection is not complete: {} pooled pairs have no final label yet. \
                                             A release now is partial: it says so in its manifest.", format_count(v.unjudged)
                                        )}</p>
                                    }.into_any()
                                } else if v.pooled == 0 {
                                    view! { <p class="muted" data-testid="release-no-pool">"No pool yet: a release now holds only the final labels imported (citation evidence and imported judgments)."</p> }.into_any()
                                } else {
                                    view! { <p class="ok" data-testid="release-complete">"Every pooled pair has a final label."</p> }.into_any()
                                }}
                                <div class="toolbar">
                                    <label>
                                        <input type="checkbox" data-testid="release-unjudged" prop:checked=move || unjudged.get()
                                            on:change=move |ev| unjudged.set(event_target_checked(&ev)) />
                                        " include unjudged pooled pairs in qrels.txt (relevance -1)"
                                    </label>
                                    <Show when=move || with_models>
                                        <label title="The labels of the project's model assessors (systems' predictions), apart from the people's">
                                            <input type="checkbox" data-testid="release-model-qrels" prop:checked=move || model_qrels.get()
                                                on:change=move |ev| model_qrels.set(event_target_checked(&ev)) />
                                            " add qrels-model.txt (model assessors' labels)"
                                        </label>
                                    </Show>
                                    <button data-testid="release-create" disabled=move || create.pending().get() on:click=move |_| {
                                        // The button says "partial" when the collection is: pressing it is the lead's consent.
                                        create.dispatch(CreateRelease {
                                            project: name(),
                                            partial: incomplete,
                                            unjudged: unjudged.get_untracked(),
                                            model_qrels: with_models && model_qrels.get_untracked(),
                                        });
                                    }>{move || if create.pending().get() { "Releasing…" } else if incomplete { "Create partial release" } else { "Create release" }}</button>
                                </div>
                                <ReleaseTable project=name() releases=v.releases />
                            }.into_any()
                        }
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
            {move || create.value().get().map(|r| match r {
                Ok(c) if c.new => view! {
                    <p class="ok" data-testid="release-result">{format!(
                        "Release {} recorded (state of {}); archive SHA-256 {}.", c.release.number, c.release.date, c.release.sha256
                    )}</p>
                }.into_any(),
                Ok(c) => view! {
                    <p class="ok" data-testid="release-result">{format!(
                        "Nothing changed since release {}: no new release was made.", c.release.number
                    )}</p>
                }.into_any(),
                Err(e) => view! { <ErrorNote error=e /> }.into_any(),
            })}
        </main>
    }.into_any()
}

#[component]
fn ReleaseTable(project: String, releases: Vec<ReleaseRow>) -> AnyView {
    if releases.is_empty() {
        return view! { <p class="muted">"No release yet."</p> }.into_any();
    }
    view! {
        <table class="grid" data-testid="releases">
            <thead>
                <tr>
                    <th class="num">"Release"</th><th>"State of"</th><th>"Recorded"</th>
                    <th class="num">"Claims"</th><th class="num">"Evidence pairs"</th>
                    <th class="num">"Final labels"</th><th class="num">"Unjudged"</th>
                    <th class="num">"Runs"</th><th>"SHA-256 of the archive"</th><th>"Download"</th><th>"Changes"</th>
                </tr>
            </thead>
            <tbody>
                {releases.iter().enumerate().map(|(i, r)| {
                    let r = r.clone();
                    let href = download_path(&project, r.number);
                    // Releases are listed latest first: the one before is the next row.
                    let compare = releases.get(i + 1).map(|before| {
                        let path = diff_path(&project, before.number, r.number);
                        view! { <A href=path>{format!("diff with {}", before.number)}</A> }
                    });
                    let notes = match (r.partial, r.qrels_unjudged) {
                        (true, true) => " (partial; qrels with -1)",
                        (true, false) => " (partial)",
                        (false, true) => " (qrels with -1)",
                        (false, false) => "",
                    };
                    view! {
                        <tr>
                            <td class="num">{r.number}{notes}</td>
                            <td>{r.date}</td>
                            <td>{r.recorded}</td>
                            <td class="num">{format_count(r.claims as i64)}</td>
                            <td class="num">{format_count(r.evidence_pairs as i64)}</td>
                            <td class="num">{format_count(r.judged_pairs as i64)}</td>
                            <td class="num">{format_count(r.unjudged_pooled_pairs as i64)}</td>
                            <td class="num">{r.runs}</td>
                            <td><code class="hash">{r.sha256}</code></td>
                            <td><a href=href rel="external" download>{format!(".tar.gz ({} KB)", format_count((r.archive_bytes + 1023) / 1024))}</a></td>
                            <td>{compare}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
