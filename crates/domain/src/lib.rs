//! claimpool's domain: plain Rust, no Leptos, axum or sqlx types, unit-tested and benchmarked
//! alone.
//!
//! Its own crate, so that it compiles beside the heavy dependencies (tantivy, candle, sqlx) rather
//! than inside the app crate after them, and so that the compiler keeps it pure: it cannot name
//! the store, the pages or the server. `model` (the plain data the server functions and pages
//! exchange), `ids`, `label`, `account`, `units` and the form rules of `annotation` compile for the
//! browser too (the pages show and check them); the rest needs the `server` feature.

// The benchmarks' generators (crates/benchdata) name this crate `domain`; its unit tests include
// some of them.
#[cfg(test)]
extern crate self as domain;

pub mod model;

pub mod account;
pub mod field;
pub mod hex;
pub mod ids;
pub mod label;
pub mod sso;
pub mod units;
pub mod webhooks;

pub mod annotation;
#[cfg(feature = "server")]
pub mod assessor;
#[cfg(feature = "server")]
pub mod formats;
#[cfg(feature = "server")]
pub mod gold_checks;
#[cfg(feature = "server")]
pub mod guidelines;
#[cfg(feature = "server")]
pub mod judging;
#[cfg(feature = "server")]
pub mod metrics;
#[cfg(feature = "server")]
pub mod pool;
#[cfg(feature = "server")]
pub mod release;
#[cfg(feature = "server")]
pub mod report;
