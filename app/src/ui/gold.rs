//! The lead's gold page (`/lead/projects/NAME/gold`, issue 16): how the project uses gold
//! (one check among every N items; the qualification), its gold items, every annotator's
//! accuracy on gold with label confusion, rationale F1 and drift, and the qualification's
//! candidates with their scores and an admit button.

use crate::api::gold::{add_gold, admit_candidate, load_gold, set_gold, set_reannotation};
use crate::api::report::encode_path_segment;
use crate::error::ApiError;
use crate::model::gold::{AnnotatorGold, Candidate, GoldFigures, GoldOverview, LABELS};
use crate::ui::charts::{LinePlot, MatrixTable, Point, Series};
use crate::ui::widgets::{ErrorNote, Stat};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".to_owned(), |s| format!("{:.1} %", s * 100.0))
}

fn f3(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:.3}"))
}

/// What a lead's action said: done, or the error.
type Outcome = RwSignal<Option<Result<String, ApiError>>>;

#[component]
pub fn GoldPage() -> AnyView {
    let params = use_params_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let version = RwSignal::new(0u32);
    let outcome: Outcome = RwSignal::new(None);
    let gold = Resource::new(move || (name(), version.get()), |(name, _)| load_gold(name));
    let project = Signal::derive(name);
    view! {
        <Title text=move || format!("Gold · {}", name()) />
        <main class="page" data-testid="gold-page">
            <p><A href=move || format!("/lead/projects/{}/annotation", encode_path_segment(&name()))>"← annotation"</A></p>
            <h1>"Gold checks and qualification"</h1>
            <p class="muted">"Gold items are pairs whose label is known: the claims' citation evidence, or pairs the pool already decided (test–retest). They reach annotators like any other item; their answers are kept apart and never become labels or reach a release."</p>
            {move || outcome.get().map(|o| match o {
                Ok(text) => view! { <p class="ok" role="status" data-testid="gold-outcome">{text}</p> }.into_any(),
                Err(e) => view! { <div data-testid="gold-error"><ErrorNote error=e /></div> }.into_any(),
            })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match gold.await {
                        Ok(o) => view! { <GoldBody o=o project=project version=version outcome=outcome /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
    .into_any()
}

#[component]
fn GoldBody(
    o: GoldOverview,
    project: Signal<String>,
    version: RwSignal<u32>,
    outcome: Outcome,
) -> AnyView {
    let candidates = o.candidates.clone();
    let annotators = o.annotators.clone();
    let window = o.drift_window;
    view! {
        <SettingsForm o=o.clone() project=project version=version outcome=outcome />
        <Reannotation on=o.reannotate project=project version=version outcome=outcome />
        <ItemsForm o=o project=project version=version outcome=outcome />
        <Candidates candidates=candidates project=project version=version outcome=outcome />
        <Annotators annotators=annotators window=window />
    }
    .into_any()
}

#[component]
fn SettingsForm(
    o: GoldOverview,
    project: Signal<String>,
    version: RwSignal<u32>,
    outcome: Outcome,
) -> AnyView {
    let every = RwSignal::new(o.every.map(|n| n.to_string()).unwrap_or_default());
    let training = RwSignal::new(o.training.to_string());
    let graded = RwSignal::new(o.graded.to_string());
    let pass = RwSignal::new(format!("{:.0}%", o.pass * 100.0));
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let args = (
            project.get_untracked(),
            every.get_untracked(),
            training.get_untracked(),
            graded.get_untracked(),
            pass.get_untracked(),
        );
        leptos::task::spawn_local(async move {
            let r = set_gold(args.0, args.1, args.2, args.3, args.4).await;
            if r.is_ok() {
                version.update(|v| *v += 1);
            }
            outcome.set(Some(r.map(|()| "Gold settings saved.".to_owned())));
        });
    };
    let now = match (o.every, o.graded) {
        (None, 0) => "No gold checks, no qualification.".to_owned(),
        (every, graded) => format!(
            "{} {}",
            every.map_or_else(
                || "No gold checks.".to_owned(),
                |n| format!("One gold check among every {n} items.")
            ),
            if graded == 0 {
                "No qualification.".to_owned()
            } else {
                format!(
                    "Qualification: {} training items with the reference shown, then {graded} graded, pass at {:.0} %.",
                    o.training,
                    o.pass * 100.0
                )
            }
        ),
    };
    view! {
        <section data-testid="gold-settings">
            <h2>"Settings"</h2>
            <p data-testid="gold-now">{now}</p>
            <form class="toolbar" on:submit=save>
                <label for="gold-every">"One check in every "</label>
                <input id="gold-every" name="every" inputmode="numeric" size="5" placeholder="off"
                    prop:value=move || every.get() on:input=move |ev| every.set(event_target_value(&ev)) />
                <label for="gold-training">" items · Qualification: training "</label>
                <input id="gold-training" name="training" inputmode="numeric" size="4"
                    prop:value=move || training.get() on:input=move |ev| training.set(event_target_value(&ev)) />
                <label for="gold-graded">" graded "</label>
                <input id="gold-graded" name="graded" inputmode="numeric" size="4"
                    prop:value=move || graded.get() on:input=move |ev| graded.set(event_target_value(&ev)) />
                <label for="gold-pass">" pass at "</label>
                <input id="gold-pass" name="pass" size="6"
                    prop:value=move || pass.get() on:input=move |ev| pass.set(event_target_value(&ev)) />
                <button type="submit" data-testid="gold-save">"Save"</button>
            </form>
        </section>
    }
    .into_any()
}

#[component]
fn Reannotation(
    on: bool,
    project: Signal<String>,
    version: RwSignal<u32>,
    outcome: Outcome,
) -> AnyView {
    let toggle = move |_| {
        let p = project.get_untracked();
        leptos::task::spawn_local(async move {
            let r = set_reannotation(p, if on { "off" } else { "on" }.to_owned()).await;
            if r.is_ok() {
                version.update(|v| *v += 1);
            }
            outcome.set(Some(r.map(|()| {
                if on {
                    "Re-annotation off: disagreements go to adjudication.".to_owned()
                } else {
                    "Re-annotation on: disagreements go to a fresh annotator first.".to_owned()
                }
            })));
        });
    };
    view! {
        <section data-testid="reannotation">
            <h2>"Re-annotation"</h2>
            <p>
                {if on {
                    "On: a disagreement goes to a fresh annotator (one who gave neither label, and sees neither) before adjudication; agreeing with either label makes it final, a third label sends it to adjudication."
                } else {
                    "Off: disagreements go straight to adjudication by one of the two annotators."
                }}
                " "
                <button class="link" on:click=toggle data-testid="reannotation-toggle">
                    {if on { "Turn off" } else { "Turn on" }}
                </button>
            </p>
        </section>
    }
    .into_any()
}

#[component]
fn ItemsForm(
    o: GoldOverview,
    project: Signal<String>,
    version: RwSignal<u32>,
    outcome: Outcome,
) -> AnyView {
    let source = RwSignal::new("citation".to_owned());
    let count = RwSignal::new(String::new());
    let seed = RwSignal::new("0".to_owned());
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let args = (
            project.get_untracked(),
            source.get_untracked(),
            count.get_untracked(),
            seed.get_untracked(),
        );
        leptos::task::spawn_local(async move {
            let r = add_gold(args.0, args.1.clone(), args.2, args.3).await;
            if r.is_ok() {
                version.update(|v| *v += 1);
            }
            outcome.set(Some(
                r.map(|n| format!("Added {n} gold items from {}.", args.1)),
            ));
        });
    };
    let total = i64::try_from(o.items_citation + o.items_final).unwrap_or(i64::MAX);
    let citation = i64::try_from(o.items_citation).unwrap_or(i64::MAX);
    let fin = i64::try_from(o.items_final).unwrap_or(i64::MAX);
    view! {
        <section data-testid="gold-items">
            <h2>"Gold items"</h2>
            <div class="stats">
                <Stat label="gold items" value=total />
                <Stat label="from citations" value=citation />
                <Stat label="from final labels" value=fin />
            </div>
            <p class="muted">{format!(
                "{} citation pairs and {} decided pool pairs could still be added.",
                o.available_citation, o.available_final
            )}</p>
            <form class="toolbar" on:submit=add>
                <label for="gold-source">"Add from "</label>
                <select id="gold-source" name="source" on:change=move |ev| source.set(event_target_value(&ev))>
                    <option value="citation" selected=true>"citation evidence"</option>
                    <option value="final">"final labels (test–retest)"</option>
                </select>
                <label for="gold-count">" how many "</label>
                <input id="gold-count" name="count" inputmode="numeric" size="6" placeholder="all"
                    prop:value=move || count.get() on:input=move |ev| count.set(event_target_value(&ev)) />
                <label for="gold-seed">" seed "</label>
                <input id="gold-seed" name="seed" inputmode="numeric" size="6"
                    prop:value=move || seed.get() on:input=move |ev| seed.set(event_target_value(&ev)) />
                <button type="submit" data-testid="gold-add">"Add"</button>
            </form>
        </section>
    }
    .into_any()
}

#[component]
fn Candidates(
    candidates: Vec<Candidate>,
    project: Signal<String>,
    version: RwSignal<u32>,
    outcome: Outcome,
) -> AnyView {
    if candidates.is_empty() {
        return ().into_any();
    }
    let rows = candidates
        .into_iter()
        .map(|c| {
            let user = c.username.clone();
            let admit = move |_| {
                let (p, u) = (project.get_untracked(), user.clone());
                leptos::task::spawn_local(async move {
                    let r = admit_candidate(p, u.clone()).await;
                    if r.is_ok() {
                        version.update(|v| *v += 1);
                    }
                    outcome.set(Some(r.map(|()| format!("Admitted {u}."))));
                });
            };
            let action = if c.standing == "admitted" {
                c.admitted_by
                    .as_ref()
                    .map(|by| format!("admitted by {by}"))
                    .unwrap_or_else(|| "passed".to_owned())
                    .into_any()
            } else {
                view! { <button class="link" on:click=admit data-testid="admit">"Admit"</button> }
                    .into_any()
            };
            view! {
                <tr data-testid="candidate" data-user=c.username.clone() data-standing=c.standing.clone()>
                    <td>{c.username.clone()}</td>
                    <td class="num">{c.training_done}</td>
                    <td class="num">{c.graded_done}</td>
                    <td class="num">{c.correct}</td>
                    <td>{c.standing.clone()}</td>
                    <td>{action}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section data-testid="gold-candidates">
            <h2>"Qualification candidates"</h2>
            <table class="dense">
                <thead><tr><th>"annotator"</th><th class="num">"training"</th><th class="num">"graded"</th><th class="num">"correct"</th><th>"standing"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
    .into_any()
}

fn figures_cells(f: &GoldFigures) -> AnyView {
    view! {
        <td class="num">{f.answered}</td>
        <td class="num" data-testid="gold-accuracy">{percent(f.accuracy)}</td>
        <td class="num">{f3(f.rationale.f1)}</td>
    }
    .into_any()
}

#[component]
fn Annotators(annotators: Vec<AnnotatorGold>, window: u32) -> AnyView {
    if annotators.is_empty() {
        return view! { <section><h2>"Annotators on gold"</h2><p class="muted" data-testid="gold-none">"No gold answer yet."</p></section> }.into_any();
    }
    let series: Vec<Series> = annotators
        .iter()
        .filter(|a| !a.drift.is_empty())
        .map(|a| Series {
            name: a.username.clone(),
            points: a
                .drift
                .iter()
                .enumerate()
                .map(|(i, d)| Point {
                    x: (i + 1) as f64,
                    y: d.accuracy * 100.0,
                    sd: None,
                })
                .collect(),
        })
        .collect();
    let rows = annotators
        .iter()
        .map(|a| {
            view! {
                <tr data-testid="gold-annotator" data-user=a.username.clone()>
                    <td>{a.username.clone()}</td>
                    {figures_cells(&a.checks)}
                    {figures_cells(&a.graded)}
                </tr>
            }
        })
        .collect_view();
    let matrices = annotators
        .iter()
        .filter(|a| a.checks.answered > 0)
        .map(|a| {
            let values: Vec<Vec<Option<f64>>> = a
                .checks
                .confusion
                .iter()
                .map(|row| row.iter().map(|v| Some(*v as f64)).collect())
                .collect();
            view! {
                <MatrixTable
                    caption=format!("{}: gold checks, reference × answer", a.username)
                    corner="reference \\ answer".to_owned()
                    rows=LABELS.iter().map(|l| l.to_string()).collect()
                    columns=LABELS.iter().map(|l| l.to_string()).collect()
                    values=values
                    format=|v| format!("{v:.0}")
                    testid=format!("gold-confusion-{}", a.username)
                />
            }
        })
        .collect_view();
    view! {
        <section data-testid="gold-annotators">
            <h2>"Annotators on gold"</h2>
            <table class="dense">
                <thead>
                    <tr><td></td><th colspan="3">"gold checks"</th><th colspan="3">"qualification (graded)"</th></tr>
                    <tr><th>"annotator"</th><th class="num">"answered"</th><th class="num">"accuracy"</th><th class="num">"rationale F1"</th><th class="num">"answered"</th><th class="num">"accuracy"</th><th class="num">"rationale F1"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <LinePlot
                title="Accuracy on gold checks over time".to_owned()
                x_label=format!("window of {window} checks, in time order")
                y_label="accuracy (%)".to_owned()
                series=series
                y_from_zero=true
                x_integer=true
                testid="gold-drift"
                empty=format!("Drift shows once an annotator has answered more than {window} gold checks.")
            />
            <div class="matrices">{matrices}</div>
        </section>
    }
    .into_any()
}
