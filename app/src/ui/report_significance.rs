//! The report's pairwise differences between systems (issue 17): each pair's F1 and AP
//! differences, marked `*` when significant after Holm's correction, with the corrected
//! p-values and a legend saying what a mark means.

use crate::model::significance::Significance;
use leptos::prelude::*;

fn difference(value: f64, significant: bool) -> String {
    format!("{value:+.3}{}", if significant { "*" } else { "" })
}

#[component]
pub fn SignificanceTable(significance: Significance, href: String) -> AnyView {
    if significance.pairs.is_empty() {
        return view! { <p class="muted">"Differences between systems appear once the project has two systems."</p> }
            .into_any();
    }
    let legend = significance.legend();
    let rows = significance
        .pairs
        .into_iter()
        .map(|p| {
            view! {
                <tr>
                    <td>{format!("{} − {}", p.a, p.b)}</td>
                    <td class="num" data-significant=p.f1_significant.to_string()>{difference(p.f1_difference, p.f1_significant)}</td>
                    <td class="num">{format!("{:.4}", p.f1_p_holm)}</td>
                    <td class="num" data-significant=p.average_precision_significant.to_string()>{difference(p.average_precision_difference, p.average_precision_significant)}</td>
                    <td class="num">{format!("{:.4}", p.average_precision_p_holm)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="caption">
            <span>"Differences between systems (row: first minus second)"</span>
            <a class="csv no-print" href=href download rel="external">"CSV"</a>
        </div>
        <table class="grid compact" data-testid="system-significance">
            <thead><tr>
                <th>"Systems"</th><th class="num">"ΔF1"</th><th class="num">"p (F1, Holm)"</th>
                <th class="num">"ΔAP"</th><th class="num">"p (AP, Holm)"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <p class="muted" data-testid="significance-legend">{legend}</p>
    }
    .into_any()
}
