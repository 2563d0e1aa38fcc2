//! The paper behind an abstract: its byline (authors, venue, year) and links out (DOI, PubMed,
//! ...), shown under the title wherever an abstract is read.

use crate::model::paper::PaperMeta;
use leptos::prelude::*;

/// Nothing when the corpus line tells nothing of its paper.
#[component]
pub fn PaperLine(paper: PaperMeta) -> AnyView {
    if paper.is_empty() {
        return ().into_any();
    }
    let byline = paper.byline();
    let lead = byline.is_some();
    let links = paper
        .links
        .iter()
        .enumerate()
        .map(|(i, link)| {
            let sep = (lead || i > 0).then_some(" · ");
            view! {
                {sep}
                <a href=link.href() target="_blank" rel="noopener noreferrer">{link.text()}</a>
            }
        })
        .collect_view();
    view! {
        <p class="paper-meta" data-testid="paper-meta">{byline}{links}</p>
    }
    .into_any()
}
