//! claimpool's application crate: pages and server functions (the domain logic is the `domain`
//! crate's; every read and write goes through the `commands` crate, which alone calls the store).
//!
//! Built twice: with `ssr` for the server (everything) and with `hydrate` for the browser
//! (pages, the shared model and the server-function client stubs).

pub mod api;
pub mod error;
pub mod ui;

/// The domain crate, under the name the app's modules have always used for it.
pub use domain;
/// Plain data shared by the store, the server functions and the pages (in the domain crate).
pub use domain::model;

#[cfg(feature = "ssr")]
pub mod auth;
#[cfg(feature = "ssr")]
pub mod csp;
#[cfg(feature = "ssr")]
pub use pipeline;
#[cfg(feature = "ssr")]
pub mod state;

pub use ui::{shell, App};

/// The browser entry point: hydrates the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // The lead's pages are lazy routes (ui/lazy_pages.rs): hydration waits for a lazy page's
    // module, which the synchronous `hydrate_body` cannot (leptos's `hydrate_lazy`, and then
    // the mark). `<body data-hydrated>` says that the whole page is live, the lazy part too: it
    // tells the browser tests (and anyone debugging a release build) that the wasm took over.
    use leptos::prelude::document;
    wasm_bindgen_futures::spawn_local(async {
        let Some(body) = document().body() else {
            return;
        };
        let owner = leptos::mount::hydrate_from_async(body.clone(), App).await;
        owner.forget();
        let _ = body.set_attribute("data-hydrated", "true");
    });
}
