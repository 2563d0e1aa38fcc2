//! The lead's comparison of two releases of a project (`/lead/projects/NAME/releases/diff?a=A&b=B`):
//! each system's scores under both with the difference and its bootstrap interval, and the
//! pairs whose label changed, that were added or withdrawn. Without `a` and `b` it compares
//! the latest release with the one before. The form is a plain GET form: Tab moves between
//! the fields, Enter compares.

use crate::api::release::releases_overview;
use crate::api::release_diff::compare_releases;
use crate::api::report::encode_path_segment;
use crate::domain::label::Label;
use crate::model::release_diff::{
    DiffScores, LabelChange, PairLabel, ReleaseDiff, ScoreDifference, SystemDiff,
    DEFAULT_DIFF_SAMPLES, DEFAULT_DIFF_SEED,
};
use crate::ui::widgets::{ErrorNote, Stat};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::{Form, A};
use leptos_router::hooks::{use_params_map, use_query_map};

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

fn label_class(label: Label) -> &'static str {
    match label {
        Label::Support => "label support",
        Label::Contradict => "label contradict",
        Label::Nei => "label nei",
    }
}

#[component]
pub fn ReleaseDiffPage() -> AnyView {
    let params = use_params_map();
    let query = use_query_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let number = move |key: &str| {
        query
            .read()
            .get(key)
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let a = move || number("a").and_then(|v| u32::try_from(v).ok());
    let b = move || number("b").and_then(|v| u32::try_from(v).ok());
    let samples = move || number("samples").and_then(|v| u32::try_from(v).ok());
    let seed = move || number("seed");
    let releases = Resource::new(name, releases_overview);
    let diff = Resource::new(
        move || (name(), a(), b(), samples(), seed()),
        move |(name, a, b, samples, seed)| async move {
            // Without both numbers: the latest release against the one before.
            let (a, b) = match (a, b) {
                (Some(a), Some(b)) => (a, b),
                _ => {
                    let list = releases_overview(name.clone()).await?.releases;
                    match (list.get(1), list.first()) {
                        (Some(before), Some(latest)) => (before.number, latest.number),
                        _ => return Ok(None),
                    }
                }
            };
            compare_releases(name, a, b, samples, seed).await.map(Some)
        },
    );
    view! {
        <Title text=move || format!("Release diff · {}", name()) />
        <main class="page">
            <p><A href=move || format!("/lead/projects/{}/releases", encode_path_segment(&name()))>{move || format!("← releases of {}", name())}</A></p>
            <h1>"Compare releases"</h1>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let numbers: Vec<u32> = match releases.await {
                        Ok(v) => v.releases.iter().map(|r| r.number).collect(),
                        Err(e) => return view! { <ErrorNote error=e /> }.into_any(),
                    };
                    let shown = match diff.await {
                        Ok(Some(d)) => Some((d.a, d.b)),
                        _ => None,
                    };
                    view! { <DiffForm numbers=numbers shown=shown samples=samples() seed=seed() /> }.into_any()
                })}
            </Suspense>
            <Suspense fallback=|| view! { <p class="muted">"Comparing…"</p> }>
                {move || Suspend::new(async move {
                    match diff.await {
                        Ok(Some(d)) => view! { <DiffBody diff=d /> }.into_any(),
                        Ok(None) => view! { <p class="muted" data-testid="diff-needs-two">"A comparison needs two releases; make another on the releases page."</p> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
    .into_any()
}

/// Choose A and B (and the bootstrap); a GET form, so the comparison has its own address.
#[component]
fn DiffForm(
    numbers: Vec<u32>,
    shown: Option<(u32, u32)>,
    samples: Option<u32>,
    seed: Option<u64>,
) -> AnyView {
    let select = move |field: &'static str, title: &'static str, chosen: Option<u32>| {
        let options = numbers
            .iter()
            .map(|&n| {
                view! { <option value=n.to_string() selected=chosen == Some(n)>{format!("release {n}")}</option> }
            })
            .collect_view();
        view! { <label>{title}" "<select name=field data-testid=format!("diff-{field}")>{options}</select></label> }
    };
    let (a, b) = shown.unzip();
    view! {
        <Form method="GET" action="">
            <div class="toolbar">
                {select("a", "A (earlier)", a)}
                {select("b", "B (later)", b)}
                <label>"Bootstrap resamples "<input type="number" name="samples" min="2" max="10000" value=samples.unwrap_or(DEFAULT_DIFF_SAMPLES).to_string() /></label>
                <label>"Seed "<input type="number" name="seed" min="0" value=seed.unwrap_or(DEFAULT_DIFF_SEED).to_string() /></label>
                <button type="submit" data-testid="diff-compare">"Compare"</button>
            </div>
        </Form>
    }
    .into_any()
}

#[component]
fn DiffBody(diff: ReleaseDiff) -> AnyView {
    let ReleaseDiff {
        a,
        b,
        claims_a,
        claims_b,
        changed,
        added,
        withdrawn,
        systems,
        bootstrap,
        claims_only_in_a,
        claims_only_in_b,
        ..
    } = diff;
    let only = |ids: &[crate::domain::ids::ClaimId], release: u32| {
        (!ids.is_empty()).then(|| {
            let list: Vec<&str> = ids.iter().map(|c| c.as_str()).collect();
            view! { <p class="muted">{format!("Claims only in release {release}: {}", list.join(", "))}</p> }
        })
    };
    view! {
        <div class="stats" data-testid="diff-counts">
            <Stat label="labels changed" value=changed.len() as i64 />
            <Stat label="pairs added" value=added.len() as i64 />
            <Stat label="pairs withdrawn" value=withdrawn.len() as i64 />
            <Stat label="claims in A" value=claims_a as i64 />
            <Stat label="claims in B" value=claims_b as i64 />
        </div>
        {only(&claims_only_in_a, a)}
        {only(&claims_only_in_b, b)}
        <h2>"Systems"</h2>
        <p class="muted">{format!(
            "Precision, recall and F1 of each system's published run against each release; Δ is release {b} minus release {a}, \
             with its paired bootstrap 95% interval over the claims of either release ({} resamples, seed {}).",
            bootstrap.samples, bootstrap.seed
        )}</p>
        <SystemsTable a=a b=b systems=systems />
        <h2>{format!("Label changed ({})", changed.len())}</h2>
        <ChangedTable changed=changed a=a b=b />
        <h2>{format!("Added in release {b} ({})", added.len())}</h2>
        <PairsTable pairs=added testid="diff-added" />
        <h2>{format!("Withdrawn since release {a} ({})", withdrawn.len())}</h2>
        <PairsTable pairs=withdrawn testid="diff-withdrawn" />
    }
    .into_any()
}

fn score_cells(s: Option<DiffScores>) -> AnyView {
    match s {
        Some(s) => view! {
            <td class="num">{f3(s.precision)}</td>
            <td class="num">{f3(s.recall)}</td>
            <td class="num">{f3(s.f1)}</td>
        }
        .into_any(),
        None => view! { <td class="num muted">"–"</td><td class="num muted">"–"</td><td class="num muted">"–"</td> }
            .into_any(),
    }
}

fn difference_cell(d: Option<ScoreDifference>) -> AnyView {
    match d {
        Some(d) => view! {
            <td class="num" title="paired bootstrap 95% interval">
                {signed(d.value)}" "<span class="muted">{format!("[{}, {}]", signed(d.low), signed(d.high))}</span>
            </td>
        }
        .into_any(),
        None => view! { <td class="num muted">"–"</td> }.into_any(),
    }
}

#[component]
fn SystemsTable(a: u32, b: u32, systems: Vec<SystemDiff>) -> AnyView {
    if systems.is_empty() {
        return view! { <p class="muted">"Neither release publishes a system's run."</p> }
            .into_any();
    }
    let rows = systems
        .into_iter()
        .map(|s| {
            let d = s.difference;
            let name = s.system.clone();
            view! {
                <tr data-system=name>
                    <td>{s.system}</td>
                    {score_cells(s.under_a)}
                    {score_cells(s.under_b)}
                    {difference_cell(d.map(|d| d.precision))}
                    {difference_cell(d.map(|d| d.recall))}
                    {difference_cell(d.map(|d| d.f1))}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="grid compact" data-testid="diff-systems">
            <thead>
                <tr>
                    <th>"System"</th>
                    <th class="num">{format!("P {a}")}</th><th class="num">{format!("R {a}")}</th><th class="num">{format!("F1 {a}")}</th>
                    <th class="num">{format!("P {b}")}</th><th class="num">{format!("R {b}")}</th><th class="num">{format!("F1 {b}")}</th>
                    <th class="num">"ΔP"</th><th class="num">"ΔR"</th><th class="num">"ΔF1"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
fn ChangedTable(changed: Vec<LabelChange>, a: u32, b: u32) -> AnyView {
    if changed.is_empty() {
        return view! { <p class="muted">"None."</p> }.into_any();
    }
    let rows = changed
        .into_iter()
        .map(|c| {
            view! {
                <tr>
                    <td>{c.claim.to_string()}</td>
                    <td>{c.doc.to_string()}</td>
                    <td class=label_class(c.old)>{c.old.as_str()}</td>
                    <td class=label_class(c.new)>{c.new.as_str()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="grid compact" data-testid="diff-changed">
            <thead><tr><th>"Claim"</th><th>"Doc"</th><th>{format!("Release {a}")}</th><th>{format!("Release {b}")}</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
fn PairsTable(pairs: Vec<PairLabel>, testid: &'static str) -> AnyView {
    if pairs.is_empty() {
        return view! { <p class="muted">"None."</p> }.into_any();
    }
    let rows = pairs
        .into_iter()
        .map(|p| {
            view! {
                <tr>
                    <td>{p.claim.to_string()}</td>
                    <td>{p.doc.to_string()}</td>
                    <td class=label_class(p.label)>{p.label.as_str()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="grid compact" data-testid=testid>
            <thead><tr><th>"Claim"</th><th>"Doc"</th><th>"Label"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}
