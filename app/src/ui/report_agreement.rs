//! The report's agreement section (issue 16): Cohen's κ of each pair of annotators,
//! Krippendorff's α over all of them, both by entry-depth band and by pooled system, each
//! pair of stages with its rationale agreement. Every figure shows its sample size; figures on
//! fewer than [`SMALL_N`] pairs are marked, undefined ones are a dash.

use crate::api::report::{csv_href, ReportView};
use crate::model::agreement::{AnnotatorPair, GroupAgreement, Reliability, StagePair};
use leptos::prelude::*;

/// Below this many pairs a figure is marked as resting on a small sample.
pub const SMALL_N: u64 = 20;

fn figure(x: Option<f64>, n: u64) -> String {
    match x {
        None => "–".to_owned(),
        Some(x) if n < SMALL_N => format!("{x:.3}†"),
        Some(x) => format!("{x:.3}"),
    }
}

fn caption(text: String, href: String) -> AnyView {
    view! {
        <div class="caption">
            <span>{text}</span>
            <a class="csv no-print" href=href download rel="external">"CSV"</a>
        </div>
    }
    .into_any()
}

fn annotator_row(p: AnnotatorPair) -> AnyView {
    view! {
        <tr>
            <td>{format!("{} – {}", p.a, p.b)}</td>
            <td class="num">{p.kappa.n}</td>
            <td class="num">{p.kappa.observed_agreement.map_or_else(|| "–".to_owned(), |x| format!("{:.1}", 100.0 * x))}</td>
            <td class="num">{figure(p.kappa.kappa, p.kappa.n)}</td>
        </tr>
    }
    .into_any()
}

fn group_row(name: String, g: GroupAgreement) -> AnyView {
    view! {
        <tr>
            <td>{name}</td>
            <td class="num">{g.first_vs_second.n}</td>
            <td class="num">{figure(g.first_vs_second.kappa, g.first_vs_second.n)}</td>
            <td class="num">{g.alpha.units}</td>
            <td class="num">{figure(g.alpha.alpha, g.alpha.units)}</td>
        </tr>
    }
    .into_any()
}

fn stage_row(s: StagePair) -> AnyView {
    let r = s.rationale;
    view! {
        <tr>
            <td>{format!("{} – {}", s.a, s.b)}</td>
            <td class="num">{s.kappa.n}</td>
            <td class="num">{figure(s.kappa.kappa, s.kappa.n)}</td>
            <td class="num">{figure(s.alpha.alpha, s.alpha.units)}</td>
            <td class="num">{r.pairs}</td>
            <td class="num">{format!("{} (n={})", figure(r.mean_f1, r.f1_pairs), r.f1_pairs)}</td>
            <td class="num">{figure(r.sentence_alpha.alpha, r.pairs)}</td>
        </tr>
    }
    .into_any()
}

fn group_table(testid: &'static str, first: &'static str, rows: Vec<AnyView>) -> AnyView {
    view! {
        <table class="grid compact" data-testid=testid>
            <thead><tr>
                <th>{first}</th><th class="num">"Pairs (both passes)"</th><th class="num">"κ"</th>
                <th class="num">"Pairs (α)"</th><th class="num">"α"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

fn pairs_table(r: &Reliability, href: String) -> AnyView {
    let rows: Vec<AnyView> = r
        .annotator_pairs
        .iter()
        .cloned()
        .map(annotator_row)
        .collect();
    view! {
        {caption("Cohen's κ of each pair of annotators (first and second passes)".into(), href)}
        <table class="grid compact" data-testid="agreement-annotators">
            <thead><tr>
                <th>"Annotators"</th><th class="num">"Pairs"</th><th class="num">"Agreement %"</th><th class="num">"κ"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

fn alpha_line(r: &Reliability, href: String) -> AnyView {
    let a = r.alpha;
    let text = format!(
        "Krippendorff's α (nominal) over all annotators' first- and second-pass labels: {} ({} pairs with two labels or more, {} labels).",
        a.alpha.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.3}")),
        a.units,
        a.values
    );
    view! {
        {caption(text, href)}
    }
    .into_any()
}

fn breakdowns(r: &Reliability, depth_href: String, system_href: String) -> AnyView {
    let bands: Vec<AnyView> = r
        .by_depth
        .iter()
        .map(|b| {
            let name = match b.to {
                Some(to) if to == b.from => to.to_string(),
                Some(to) => format!("{}–{to}", b.from),
                None => format!("outside the pool ({}+)", b.from),
            };
            group_row(name, b.agreement)
        })
        .collect();
    let systems: Vec<AnyView> = r
        .by_system
        .iter()
        .map(|s| group_row(s.system.clone(), s.agreement))
        .collect();
    view! {
        <div class="two-col">
            <div>
                {caption("By entry depth (the best rank a pooled system gives the pair)".into(), depth_href)}
                {group_table("agreement-by-depth", "Depth", bands)}
            </div>
            <div>
                {caption("On the pairs each pooled system contributed".into(), system_href)}
                {group_table("agreement-by-system", "System", systems)}
            </div>
        </div>
    }
    .into_any()
}

fn stages_table(r: &Reliability, href: String) -> AnyView {
    let rows: Vec<AnyView> = r.by_stage.iter().cloned().map(stage_row).collect();
    view! {
        {caption("By stage pair; rationales where both gave the same evidence label".into(), href)}
        <table class="grid compact" data-testid="agreement-by-stage">
            <thead><tr>
                <th>"Stages"</th><th class="num">"Pairs"</th><th class="num">"κ"</th><th class="num">"α"</th>
                <th class="num">"Same evidence"</th><th class="num">"Rationale F1"</th><th class="num">"Sentence α"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
pub fn AgreementSection(view: ReportView) -> AnyView {
    let r = view.agreement.reliability.clone();
    let pairs = pairs_table(&r, csv_href(&view, "agreement_annotators"));
    let alpha = alpha_line(&r, csv_href(&view, "agreement_alpha"));
    let groups = breakdowns(
        &r,
        csv_href(&view, "agreement_by_depth"),
        csv_href(&view, "agreement_by_system"),
    );
    let stages = stages_table(&r, csv_href(&view, "agreement_by_stage"));
    let legend = format!(
        "† fewer than {SMALL_N} pairs: an unstable figure. – undefined: no pair, or a single label throughout (chance agreement 1)."
    );
    view! {
        <section id="agreement">
            <h2>"Agreement"</h2>
            {pairs}
            {alpha}
            {groups}
            {stages}
            <p class="muted" data-testid="agreement-legend">{legend}</p>
        </section>
    }
    .into_any()
}
