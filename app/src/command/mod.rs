//! The command layer: one typed command per action, called alike by the command line
//! (`server/src/cli.rs`), the server functions (`api/`), the HTTP API (`server/src/api_v1.rs`)
//! and the job worker (`server/src/jobs.rs`).
//!
//! A command parses its input once (from a form's or the command line's text, into domain
//! types) and runs only with a proof of the caller's authority ([`proof`]): [`Lead`] for a
//! project's lead actions, [`Admin`] for accounts, [`Creator`] for new projects. Proofs come
//! from the session or token checks of [`crate::auth`], or, for the command line, from the
//! [`Operator`] at the server's shell. Commands call the store, which keeps only SQL.

pub mod account;
pub mod assessor;
pub mod gold;
pub mod import;
pub mod pool;
pub mod project;
pub mod proof;
pub mod release;
pub mod release_diff;
pub mod report;
pub mod simulate;

pub use proof::{Actor, Admin, Creator, Lead, Operator};
