//! The lead's dashboard (`/lead/projects/:name/report`): is the pool deep and wide enough?
//! Pool-depth and system-count curves, leave-one-out, systems, evidence, annotation and
//! agreement, each plot and table with its CSV download. Every number comes from the server's
//! report (`api::report`); this page only lays them out.

use crate::api::report::{
    csv_href, encode_path_segment, load_report, ReportView, DEFAULT_BOOTSTRAP, DEFAULT_SEED, LABELS,
};
use crate::api::sample::{report_survey, SurveyView};
use crate::error::ApiError;
use crate::ui::charts::{BarChart, LinePlot, MatrixTable, Point, Series};
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::{Form, A};
use leptos_router::hooks::{use_params_map, use_query_map};

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |x| format!("{x:.1}"))
}

fn pm(mean: f64, sd: f64) -> String {
    format!("{mean:.3} ± {sd:.3}")
}

fn whole(x: f64) -> String {
    format!("{x:.0}")
}

fn count(n: u64) -> String {
    format_count(i64::try_from(n).unwrap_or(i64::MAX))
}

#[component]
pub fn ReportPage() -> AnyView {
    let params = use_params_map();
    let query = use_query_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let number = move |key: &str| {
        query
            .read()
            .get(key)
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let step = move || number("step").and_then(|v| u32::try_from(v).ok());
    let bootstrap = move || number("bootstrap").and_then(|v| u32::try_from(v).ok());
    let seed = move || number("seed");
    let report = Resource::new(
        move || (name(), step(), bootstrap(), seed()),
        |(name, step, bootstrap, seed)| load_report(name, step, bootstrap, seed),
    );
    // The sample's estimates, for the inclusion table and the section beyond the depth.
    let survey = Resource::new(name, report_survey);
    view! {
        <Title text=move || format!("Report · {}", name()) />
        <main class="page report">
            <p class="no-print"><A href=move || format!("/lead/projects/{}", encode_path_segment(&name()))>{move || format!("← {}", name())}</A></p>
            <h1>{move || format!("Report: {}", name())}</h1>
            <Form method="GET" action="">
                <div class="toolbar no-print">
                    <label>"Depth step "<input type="number" name="step" min="1" placeholder="auto" title="Empty: chosen from the pool's depth" prop:value=move || step().map(|s| s.to_string()).unwrap_or_default() /></label>
                    <label>"Bootstrap resamples "<input type="number" name="bootstrap" min="2" max="10000" prop:value=move || bootstrap().unwrap_or(DEFAULT_BOOTSTRAP).to_string() /></label>
                    <label>"Seed "<input type="number" name="seed" min="0" prop:value=move || seed().unwrap_or(DEFAULT_SEED).to_string() /></label>
                    <button type="submit">"Recompute"</button>
                </div>
            </Form>
            <Suspense fallback=|| view! { <p class="muted">"Computing the report…"</p> }>
                {move || Suspend::new(async move {
                    match report.await {
                        Ok(view) => view! { <ReportBody view=view survey=survey /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
            <crate::ui::report_judging::JudgingSection project=Signal::derive(name) />
            <crate::ui::sample::SurveySection survey=survey />
        </main>
    }.into_any()
}

/// A figure or table heading with its CSV download.
#[component]
fn Caption(text: String, href: String) -> AnyView {
    view! {
        <div class="caption">
            <span>{text}</span>
            <a class="csv no-print" href=href download rel="external">"CSV"</a>
        </div>
    }
    .into_any()
}

/// The sample's estimates behind the report.
type SurveyResource = Resource<Result<SurveyView, ApiError>>;

#[component]
fn ReportBody(view: ReportView, survey: SurveyResource) -> AnyView {
    let summary = match (&view.strategy, view.depth) {
        (Some(strategy), depth) if depth > 0 => format!(
            "Pool at depth {depth} ({strategy} strategy): {} pairs, {} judged before annotation, {} to annotate ({} final). Evidence: {} pairs ({} citation, {} discovered by the pool).",
            count(view.progress.pool_pairs),
            count(view.progress.prior_judged),
            count(view.progress.to_annotate),
            count(view.progress.finalized),
            count(view.evidence.total),
            count(view.evidence.citation),
            count(view.evidence.discovered),
        ),
        _ => format!(
            "No pool yet: build one on the project page. Citation evidence: {} pairs.",
            count(view.evidence.citation)
        ),
    };
    let options = format!(
        "Depth step {}, {} bootstrap resamples, seed {}.",
        view.step, view.bootstrap_samples, view.seed
    );
    let pending = (!view.not_yet_pooled.is_empty()).then(|| {
        view! {
            <p class="warn" data-testid="not-yet-pooled">{format!(
                "Not in the pool until it is grown: {} (counted as evaluation-only here).",
                view.not_yet_pooled.join(", ")
            )}</p>
        }
    });
    view! {
        <p data-testid="report-summary">{summary}" "<span class="muted">{options}</span></p>
        {pending}
        <nav class="toc no-print" aria-label="Sections">
            <a href="#depth">"Pool depth"</a>
            <a href="#count">"System count"</a>
            <a href="#inclusion">"Inclusion"</a>
            <a href="#systems">"Systems"</a>
            <a href="#evidence">"Evidence"</a>
            <a href="#annotation">"Annotation"</a>
            <a href="#agreement">"Agreement"</a>
        </nav>
        <DepthSection view=view.clone() />
        <CountSection view=view.clone() />
        <InclusionSection view=view.clone() survey=survey />
        <SystemsSection view=view.clone() />
        <EvidenceSection view=view.clone() />
        <AnnotationSection view=view.clone() />
        <crate::ui::report_agreement::AgreementSection view=view />
    }
    .into_any()
}

#[component]
fn DepthSection(view: ReportView) -> AnyView {
    if view.depth_curve.is_empty() {
        return view! {
            <section id="depth"><h2>"Pool depth"</h2><p class="muted">"No pool yet."</p></section>
        }
        .into_any();
    }
    let href = csv_href(&view, "depth_curve");
    let curve = &view.depth_curve;
    let evidence = vec![Series {
        name: "evidence discovered".into(),
        points: curve
            .iter()
            .map(|p| Point {
                x: f64::from(p.depth),
                y: p.evidence as f64,
                sd: None,
            })
            .collect(),
    }];
    let per_system = |pick: &dyn Fn(&crate::api::report::DepthScoresView) -> Option<f64>| {
        view.systems
            .iter()
            .enumerate()
            .map(|(s, (name, _))| Series {
                name: name.clone(),
                points: curve
                    .iter()
                    .filter_map(|p| {
                        let y = p.scores.get(s).and_then(pick)?;
                        Some(Point {
                            x: f64::from(p.depth),
                            y,
                            sd: None,
                        })
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let f1 = per_system(&|s| Some(s.f1));
    let ap = per_system(&|s| Some(s.average_precision));
    let f1_change = per_system(&|s| s.f1_change_pct);
    let ap_change = per_system(&|s| s.average_precision_change_pct);
    let has_change = curve.len() > 1;
    let one_depth = format!(
        "One depth so far ({}): the curve appears once the pool spans two depths; grow the pool or choose a depth step below {}.",
        view.depth, view.step
    );
    let change_note = format!(
        "The change from one depth to the next appears from three depths on; there are {} now (depth step {}).",
        curve.len(),
        view.step
    );
    // Before any pooled pair has a final label, every depth has discovered nothing: say so rather
    // than draw a flat line at zero.
    let nothing_final = view.progress.finalized == 0;
    let evidence = if nothing_final { Vec::new() } else { evidence };
    let evidence_note = if nothing_final {
        format!(
            "Nothing to plot yet: no pooled pair has a final label. The evidence discovered at each depth, from {} to {}, appears here as annotators finish pairs.",
            view.step.min(view.depth),
            view.depth
        )
    } else {
        one_depth.clone()
    };
    let header = view
        .systems
        .iter()
        .map(|(n, _)| view! { <th class="num">{format!("F1 {n}")}</th><th class="num">{format!("AP {n}")}</th> })
        .collect_view();
    let rows = curve
        .iter()
        .map(|p| {
            let scores = p
                .scores
                .iter()
                .map(|s| view! { <td class="num">{f3(s.f1)}</td><td class="num">{f3(s.average_precision)}</td> })
                .collect_view();
            view! {
                <tr>
                    <td class="num">{p.depth}</td>
                    <td class="num">{count(p.pool_size)}</td>
                    <td class="num">{count(p.judged)}</td>
                    <td class="num">{count(p.evidence)}</td>
                    {scores}
                </tr>
            }
        })
        .collect_view();
    view! {
        <section id="depth">
            <h2>"Pool depth"</h2>
            <p class="muted">"Would a deeper pool find much more evidence, or change the systems' scores? Evidence discovered: pooled pairs judged SUPPORT or CONTRADICT that were not citation evidence; scores against citation evidence plus the evidence discovered at each depth (SciFact-Open Fig. 5, 10b, 12)."</p>
            <div class="plots">
                <figure>
                    <Caption text="Evidence discovered by pool depth".into() href=href.clone() />
                    <LinePlot title="Evidence discovered by pool depth".into() x_label="depth".into() y_label="evidence pairs".into() series=evidence y_from_zero=true y_integer=true testid="plot-depth-evidence" empty=evidence_note />
                </figure>
                <figure>
                    <Caption text="F1 by pool depth".into() href=href.clone() />
                    <LinePlot title="F1 by pool depth".into() x_label="depth".into() y_label="F1".into() series=f1 y_from_zero=true testid="plot-depth-f1" empty=one_depth.clone() />
                </figure>
                <figure>
                    <Caption text="Average precision by pool depth".into() href=href.clone() />
                    <LinePlot title="Average precision by pool depth".into() x_label="depth".into() y_label="AP".into() series=ap y_from_zero=true testid="plot-depth-ap" empty=one_depth.clone() />
                </figure>
                {has_change.then(|| view! {
                    <figure>
                        <Caption text="|Change| of F1 from the previous depth, %".into() href=href.clone() />
                        <LinePlot title="Absolute change of F1 from the previous depth, percent".into() x_label="depth".into() y_label="|ΔF1| %".into() series=f1_change y_from_zero=true testid="plot-depth-f1-change" empty=change_note.clone() />
                    </figure>
                    <figure>
                        <Caption text="|Change| of AP from the previous depth, %".into() href=href.clone() />
                        <LinePlot title="Absolute change of AP from the previous depth, percent".into() x_label="depth".into() y_label="|ΔAP| %".into() series=ap_change y_from_zero=true testid="plot-depth-ap-change" empty=change_note />
                    </figure>
                })}
            </div>
            <details>
                <summary>"Depth curve as a table"</summary>
                <div class="scroll">
                    <table class="grid compact" data-testid="depth-table">
                        <thead><tr><th class="num">"Depth"</th><th class="num">"Pool"</th><th class="num">"Judged"</th><th class="num">"Evidence"</th>{header}</tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </details>
        </section>
    }
    .into_any()
}

#[component]
fn CountSection(view: ReportView) -> AnyView {
    if view.count_curve.is_empty() {
        return view! {
            <section id="count"><h2>"System count"</h2><p class="muted">"No pooled system in the pool yet."</p></section>
        }
        .into_any();
    }
    let href = csv_href(&view, "system_count_curve");
    let curve = &view.count_curve;
    let orderings = curve.first().map_or_else(String::new, |p| {
        if p.exact {
            format!(
                "averaged over all {} orderings of the pooled systems",
                p.orderings
            )
        } else {
            format!(
                "averaged over {} sampled orderings of the pooled systems",
                p.orderings
            )
        }
    });
    let evidence = vec![Series {
        name: "evidence discovered".into(),
        points: curve
            .iter()
            .map(|p| Point {
                x: p.count as f64,
                y: p.evidence.mean,
                sd: Some(p.evidence.sd),
            })
            .collect(),
    }];
    let f1: Vec<Series> = view
        .systems
        .iter()
        .enumerate()
        .map(|(s, (name, _))| Series {
            name: name.clone(),
            points: curve
                .iter()
                .filter_map(|p| {
                    let m = p.f1.get(s)?;
                    Some(Point {
                        x: p.count as f64,
                        y: m.mean,
                        sd: Some(m.sd),
                    })
                })
                .collect(),
        })
        .collect();
    let one_system = "One pooled system so far: the curve appears once the pool is built from two or more systems (import another run with the pooled role, then grow the pool).".to_owned();
    let nothing_final = view.progress.finalized == 0;
    let evidence = if nothing_final { Vec::new() } else { evidence };
    let evidence_note = if nothing_final {
        "Nothing to plot yet: no pooled pair has a final label. The evidence each number of pooled systems would have found appears here as annotators finish pairs.".to_owned()
    } else {
        one_system.clone()
    };
    let header = view
        .systems
        .iter()
        .map(|(n, _)| view! { <th class="num">{format!("F1 {n}")}</th> })
        .collect_view();
    let rows = curve
        .iter()
        .map(|p| {
            let f1 =
                p.f1.iter()
                    .map(|m| view! { <td class="num">{pm(m.mean, m.sd)}</td> })
                    .collect_view();
            view! {
                <tr>
                    <td class="num">{p.count}</td>
                    <td class="num">{format!("{:.1} ± {:.1}", p.evidence.mean, p.evidence.sd)}</td>
                    {f1}
                </tr>
            }
        })
        .collect_view();
    view! {
        <section id="count">
            <h2>"System count"</h2>
            <p class="muted">{format!("Would another system find much more evidence, or change the scores? The pool at the current depth built by the first k pooled systems, {orderings}; error bars: ± one standard deviation (SciFact-Open Fig. 6, 11).")}</p>
            <div class="plots">
                <figure>
                    <Caption text="Evidence discovered by number of pooled systems".into() href=href.clone() />
                    <LinePlot title="Evidence discovered by number of pooled systems, mean and standard deviation over orderings".into() x_label="systems".into() y_label="evidence pairs".into() series=evidence y_from_zero=true y_integer=true x_integer=true testid="plot-count-evidence" empty=evidence_note />
                </figure>
                <figure>
                    <Caption text="F1 by number of pooled systems".into() href=href />
                    <LinePlot title="F1 by number of pooled systems, mean and standard deviation over orderings".into() x_label="systems".into() y_label="F1".into() series=f1 y_from_zero=true x_integer=true testid="plot-count-f1" empty=one_system />
                </figure>
            </div>
            <details>
                <summary>"System-count curve as a table"</summary>
                <div class="scroll">
                    <table class="grid compact" data-testid="count-table">
                        <thead><tr><th class="num">"Systems"</th><th class="num">"Evidence"</th>{header}</tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </details>
        </section>
    }
    .into_any()
}

#[component]
fn InclusionSection(view: ReportView, survey: SurveyResource) -> AnyView {
    let href = csv_href(&view, "inclusion");
    let inclusion = view.inclusion.clone();
    let table = move |estimated: Vec<(String, String)>| {
        let rows = inclusion
            .iter()
            .map(|r| {
                let f1 = estimated
                    .iter()
                    .find(|(system, _)| *system == r.system)
                    .map_or_else(|| "–".to_owned(), |(_, text)| text.clone());
                view! {
                    <tr>
                        <td>{r.system.clone()}</td>
                        <td class="num">{f3(r.included_f1)}</td>
                        <td class="num">{f3(r.excluded_f1)}</td>
                        <td class="num">{pct(r.change_pct)}</td>
                        <td class="num">{count(r.unique_evidence)}</td>
                        <td class="num">{f1}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <table class="grid compact" data-testid="inclusion">
                <thead><tr><th>"System"</th><th class="num">"F1 included"</th><th class="num">"F1 left out"</th><th class="num">"Change %"</th><th class="num">"Unique evidence"</th><th class="num" title="Evidence retrieval F1 (labels not matched) estimated from the pool's judged random sample beyond the depth, with its 95% interval">"F1 estimated [95%]"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }
        .into_any()
    };
    let fallback = table.clone();
    view! {
        <section id="inclusion">
            <h2>"System inclusion"</h2>
            <p class="muted">"Each pooled system's F1 when the evidence only its own pool contribution found is left out (treated as NEI), against the F1 with it included (SciFact-Open Table 6): the fair comparison for a system that did not build the pool. The last column estimates each system's F1 beyond the qrels, from the judged random sample (see below; – without one)."</p>
            <Caption text="Leave one system out".into() href=href />
            <Suspense fallback=move || fallback(Vec::new())>
                {move || {
                    let table = table.clone();
                    Suspend::new(async move { table(crate::ui::sample::estimated_f1(survey.await)) })
                }}
            </Suspense>
        </section>
    }
    .into_any()
}

#[component]
fn SystemsSection(view: ReportView) -> AnyView {
    let scores_href = csv_href(&view, "system_scores");
    let confusion_href = csv_href(&view, "system_confusion");
    let overlap_href = csv_href(&view, "system_overlap");
    let significance_href = csv_href(&view, "system_significance");
    let significance = view.significance.clone();
    let rows = view
        .scores
        .iter()
        .map(|s| {
            view! {
                <tr>
                    <td>{s.system.clone()}</td>
                    <td>{s.role.clone()}</td>
                    <td class="num">{pm(s.precision, s.precision_sd)}</td>
                    <td class="num">{pm(s.recall, s.recall_sd)}</td>
                    <td class="num">{pm(s.f1, s.f1_sd)}</td>
                    <td class="num">{pm(s.average_precision, s.average_precision_sd)}</td>
                </tr>
            }
        })
        .collect_view();
    let labels: Vec<String> = LABELS.iter().map(|l| (*l).to_owned()).collect();
    let matrices = view
        .scores
        .iter()
        .filter_map(|s| {
            let m = s.confusion?;
            Some(view! {
                <MatrixTable
                    caption=s.system.clone()
                    corner="gold \\ predicted".into()
                    rows=labels.clone()
                    columns=labels.clone()
                    values=m.iter().map(|row| row.iter().map(|&c| Some(c as f64)).collect()).collect()
                    format=whole
                    testid=format!("confusion-{}", s.system)
                />
            })
        })
        .collect_view();
    let names: Vec<String> = view.systems.iter().map(|(n, _)| n.clone()).collect();
    let overlap = |pick: fn(&crate::api::report::OverlapRow) -> f64| -> Vec<Vec<Option<f64>>> {
        names
            .iter()
            .map(|a| {
                names
                    .iter()
                    .map(|b| {
                        view.overlap
                            .iter()
                            .find(|o| {
                                (&o.system_a == a && &o.system_b == b)
                                    || (&o.system_a == b && &o.system_b == a)
                            })
                            .map(pick)
                    })
                    .collect()
            })
            .collect()
    };
    let citation = overlap(|o| o.citation);
    let non_citation = overlap(|o| o.non_citation);
    let has_overlap = !view.overlap.is_empty();
    view! {
        <section id="systems">
            <h2>"Systems"</h2>
            <p class="muted">{format!("Every system against citation evidence plus the evidence discovered at depth {}, every other pair NEI; ± the standard deviation over {} bootstrap resamples of the claims (SciFact-Open Table 5).", view.depth, view.bootstrap_samples)}</p>
            <Caption text="Scores".into() href=scores_href />
            <table class="grid compact" data-testid="system-scores">
                <thead><tr><th>"System"</th><th>"Role"</th><th class="num">"Precision"</th><th class="num">"Recall"</th><th class="num">"F1"</th><th class="num">"AP"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <crate::ui::report_significance::SignificanceTable significance=significance href=significance_href />
            <Caption text="Confusion on judged pairs: gold label (rows) against the system's label (SciFact-Open Fig. 9)".into() href=confusion_href />
            <div class="matrices">{matrices}</div>
            {has_overlap.then(|| view! {
                <Caption text="Jaccard overlap of the evidence pairs each pair of systems predicts (SciFact-Open Fig. 4)".into() href=overlap_href />
                <div class="matrices">
                    <MatrixTable caption="Pairs that are citation evidence".into() corner="system \\ system".into() rows=names.clone() columns=names.clone() values=citation format=f3 testid="overlap-citation".into() />
                    <MatrixTable caption="Pairs that are not citation evidence".into() corner="system \\ system".into() rows=names.clone() columns=names.clone() values=non_citation format=f3 testid="overlap-other".into() />
                </div>
            })}
        </section>
    }
    .into_any()
}

#[component]
fn EvidenceSection(view: ReportView) -> AnyView {
    let e = &view.evidence;
    let project = encode_path_segment(&view.project);
    let bars: Vec<(String, f64)> = e
        .claims_by_count
        .iter()
        .map(|(pairs, claims, _)| (pairs.to_string(), *claims as f64))
        .collect();
    let shares: Vec<f64> = e.claims_by_count.iter().map(|(_, _, s)| *s).collect();
    let histogram = e
        .claims_by_count
        .iter()
        .map(|&(pairs, claims, share)| {
            view! {
                <tr>
                    <td class="num">{pairs}</td>
                    <td class="num">{count(claims)}</td>
                    <td class="num">{format!("{:.1}", 100.0 * share)}</td>
                </tr>
            }
        })
        .collect_view();
    let conflicting = e
        .conflicting_claims
        .iter()
        .map(|c| {
            let href = format!("/lead/projects/{project}/claims/{}", encode_path_segment(c));
            let text = format!("claim {c}");
            view! { <li><A href=href>{text}</A></li> }
        })
        .collect_view();
    let specificity = e
        .specificity
        .iter()
        .map(|(_, label, n)| view! { <tr><td>{label.clone()}</td><td class="num">{count(*n)}</td></tr> })
        .collect_view();
    let no_conflict = e.conflicting_claims.is_empty();
    view! {
        <section id="evidence">
            <h2>"Evidence"</h2>
            <p>{format!("{} evidence pairs at the current depth: {} citation, {} discovered by the pool.", count(e.total), count(e.citation), count(e.discovered))}</p>
            <div class="plots">
                <figure>
                    <Caption text="Claims by number of evidence pairs (SciFact-Open Fig. 3, 8)".into() href=csv_href(&view, "evidence_per_claim") />
                    <BarChart title="Claims by number of evidence pairs, with the cumulative share of claims".into() x_label="evidence pairs".into() y_label="claims".into() bars=bars share_line=("cumulative share".to_owned(), shares) testid="plot-evidence-per-claim" />
                </figure>
            </div>
            <details>
                <summary>"Claims by number of evidence pairs as a table"</summary>
                <table class="grid compact" data-testid="evidence-table">
                    <thead><tr><th class="num">"Evidence pairs"</th><th class="num">"Claims"</th><th class="num">"Cumulative %"</th></tr></thead>
                    <tbody>{histogram}</tbody>
                </table>
            </details>
            <div class="two-col">
                <div>
                    <Caption text=format!("Claims with conflicting evidence (SUPPORT and CONTRADICT): {}", e.conflicting_claims.len()) href=csv_href(&view, "conflicting_claims") />
                    {if no_conflict {
                        view! { <p class="muted">"None."</p> }.into_any()
                    } else {
                        view! { <ul class="claim-links" data-testid="conflicting-claims">{conflicting}</ul> }.into_any()
                    }}
                </div>
                <div>
                    <Caption text="Specificity relations noted (SciFact-Open Table 4a)".into() href=csv_href(&view, "specificity") />
                    <table class="grid compact" data-testid="specificity">
                        <thead><tr><th>"Relation"</th><th class="num">"Pairs"</th></tr></thead>
                        <tbody>{specificity}</tbody>
                    </table>
                </div>
            </div>
        </section>
    }
    .into_any()
}

#[component]
fn AnnotationSection(view: ReportView) -> AnyView {
    let project = encode_path_segment(&view.project);
    let p = &view.progress;
    let stages = p
        .stages
        .iter()
        .map(|(stage, pairs, records)| {
            view! { <tr><td>{stage.clone()}</td><td class="num">{count(*pairs)}</td><td class="num">{count(*records)}</td></tr> }
        })
        .collect_view();
    let annotators = view
        .annotators
        .iter()
        .map(|a| {
            view! {
                <tr>
                    <td>{a.annotator.clone()}</td>
                    <td class="num">{count(a.items)}</td>
                    <td class="num">{count(a.timed_items)}</td>
                    <td class="num">{a.median_seconds.map_or_else(|| "–".to_owned(), |s| format!("{s:.1}"))}</td>
                    <td class="num">{a.items_per_hour.map_or_else(|| "–".to_owned(), |s| format!("{s:.1}"))}</td>
                </tr>
            }
        })
        .collect_view();
    let a = &view.agreement;
    let mode = if a.confirm_mode {
        "Confirm mode: the second annotator saw the first label, so this is a confirmation rate, not independent agreement."
    } else {
        "Blind mode: the second annotator did not see the first label."
    };
    let labels: Vec<String> = LABELS.iter().map(|l| (*l).to_owned()).collect();
    let passes = match &a.passes {
        Some(pass) => view! {
            <p data-testid="agreement-summary">{format!(
                "{} pairs labelled in both passes: Cohen's κ {}, {:.1}% agreement ({:.1}% expected by chance).",
                count(pass.pairs),
                pass.kappa.map_or_else(|| "undefined (one label throughout)".to_owned(), f3),
                pass.percent_agreement,
                100.0 * pass.expected_agreement
            )}</p>
            <Caption text="First pass (rows) against second pass".into() href=csv_href(&view, "agreement_confusion") />
            <MatrixTable caption="".into() corner="first \\ second".into() rows=labels.clone() columns=labels values=pass.confusion.iter().map(|row| row.iter().map(|&c| Some(c as f64)).collect()).collect() format=whole testid="agreement-confusion".into() />
        }
        .into_any(),
        None => view! { <p class="muted" data-testid="agreement-summary">"No pair has both passes yet."</p> }.into_any(),
    };
    let awaiting = a
        .awaiting
        .iter()
        .map(|(claim, doc, first, second)| {
            let href = format!(
                "/lead/projects/{project}/claims/{}",
                encode_path_segment(claim)
            );
            let claim = claim.clone();
            view! {
                <tr>
                    <td class="num"><A href=href>{claim}</A></td>
                    <td class="num">{doc.clone()}</td>
                    <td>{first.clone()}</td>
                    <td>{second.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section id="annotation">
            <h2>"Annotation"</h2>
            <div class="two-col">
                <div>
                    <Caption text=format!("Progress: {} of {} pairs to annotate are final", count(p.finalized), count(p.to_annotate)) href=csv_href(&view, "annotation_progress") />
                    <table class="grid compact" data-testid="progress">
                        <thead><tr><th>"Stage"</th><th class="num">"Pairs"</th><th class="num">"Labels given"</th></tr></thead>
                        <tbody>{stages}</tbody>
                    </table>
                </div>
                <div>
                    <Caption text="Annotators".into() href=csv_href(&view, "annotators") />
                    <table class="grid compact" data-testid="annotators">
                        <thead><tr><th>"Annotator"</th><th class="num">"Items"</th><th class="num">"Timed"</th><th class="num">"Median s/item"</th><th class="num">"Items/hour"</th></tr></thead>
                        <tbody>{annotators}</tbody>
                    </table>
                </div>
            </div>
            <h3>"Agreement of the two passes"</h3>
            <Caption text=mode.to_owned() href=csv_href(&view, "agreement") />
            {passes}
            <Caption text=format!("Disagreements awaiting adjudication: {}", a.awaiting.len()) href=csv_href(&view, "awaiting_adjudication") />
            <table class="grid compact" data-testid="awaiting">
                <thead><tr><th class="num">"Claim"</th><th class="num">"Document"</th><th>"First"</th><th>"Second"</th></tr></thead>
                <tbody>{awaiting}</tbody>
            </table>
        </section>
    }
    .into_any()
}
