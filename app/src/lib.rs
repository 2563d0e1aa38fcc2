//! claimpool's application crate: pages, server functions, storage and domain logic.
//!
//! Built twice: with `ssr` for the server (everything) and with `hydrate` for the browser
//! (pages, the shared model and the server-function client stubs).

pub mod api;
pub mod domain;
pub mod error;
pub mod model;
pub mod ui;

#[cfg(feature = "ssr")]
pub mod auth;
#[cfg(feature = "ssr")]
pub mod command;
#[cfg(feature = "ssr")]
pub mod csp;
#[cfg(feature = "ssr")]
pub mod pipeline;
#[cfg(feature = "ssr")]
pub mod state;
#[cfg(feature = "ssr")]
pub mod store;

#[cfg(all(test, feature = "ssr"))]
pub(crate) mod testdata;

pub use ui::{shell, App};

/// The browser entry point: hydrates the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
