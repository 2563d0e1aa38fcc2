//! Domain logic: plain Rust, no Leptos, axum or sqlx types, unit-tested and benchmarked alone.
//!
//! `ids`, `label`, `account`, `units` and the form rules of `annotation` compile for the browser too (the
//! pages show and check them); the rest is server-only.

pub mod account;
pub mod ids;
pub mod label;
pub mod units;

pub mod annotation;
#[cfg(feature = "ssr")]
pub mod assessor;
#[cfg(feature = "ssr")]
pub mod formats;
#[cfg(feature = "ssr")]
pub mod gold_checks;
#[cfg(feature = "ssr")]
pub mod guidelines;
#[cfg(feature = "ssr")]
pub mod judging;
#[cfg(feature = "ssr")]
pub mod metrics;
#[cfg(feature = "ssr")]
pub mod pool;
#[cfg(feature = "ssr")]
pub mod release;
#[cfg(feature = "ssr")]
pub mod report;
