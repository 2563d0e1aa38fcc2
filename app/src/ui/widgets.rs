//! Small pieces used by several pages.

use crate::error::ApiError;
use leptos::prelude::*;

#[component]
pub fn NotFound() -> AnyView {
    view! {
        <leptos_meta::Title text="Not found" />
        <main class="page narrow">
            <h1>"Not found"</h1>
            <p>"There is no page here. " <a href="/">"Go home"</a></p>
        </main>
    }
    .into_any()
}

/// An error from a server function, shown where the data would have been.
#[component]
pub fn ErrorNote(error: ApiError) -> AnyView {
    let text = match &error {
        ApiError::Unauthenticated => "Your session has ended: please log in again.".to_owned(),
        other => other.to_string(),
    };
    view! { <p class="error" role="alert">{text}</p> }.into_any()
}

/// Previous and Next for page `at` (0-based) of `pages`, in a navigation landmark named
/// `label`; `go` gets the page to show.
#[component]
pub fn Pager(at: usize, pages: usize, label: &'static str, go: Callback<usize>) -> AnyView {
    view! {
        <nav class="search-pages" aria-label=label>
            <button class="secondary" disabled={at == 0} on:click=move |_| go.run(at.saturating_sub(1))>"Previous"</button>
            <button class="secondary" disabled={at + 1 >= pages} on:click=move |_| go.run(at + 1)>"Next"</button>
        </nav>
    }
    .into_any()
}

/// A figure with its label, for count strips.
#[component]
pub fn Stat(label: &'static str, value: i64) -> AnyView {
    view! {
        <div class="stat">
            <span class="stat-value">{format_count(value)}</span>
            <span class="stat-label">{label}</span>
        </div>
    }
    .into_any()
}

pub use crate::domain::units::format_count;

#[cfg(test)]
mod tests {
    #[test]
    fn counts_get_thousands_separators() {
        assert_eq!(super::format_count(0), "0");
        assert_eq!(super::format_count(999), "999");
        assert_eq!(super::format_count(1000), "1,000");
        assert_eq!(super::format_count(1234567), "1,234,567");
        assert_eq!(super::format_count(-5183), "-5,183");
    }
}
