//! The command layer: one typed command per action, called alike by the command line
//! (`server/src/cli.rs`), the server functions (the app's `api/`), the HTTP API
//! (`server/src/api_v1.rs`) and the job worker (`server/src/jobs.rs`); and every read the server
//! functions and pages make, behind the proof of the caller's authority.
//!
//! A command parses its input once (from a form's or the command line's text, into domain
//! types) and runs only with a proof of the caller's authority ([`proof`]): [`Lead`] for a
//! project's lead actions, [`Admin`] for accounts, [`Creator`] for new projects. Proofs come
//! from the session or token checks ([`access`], [`login`]; the app's `auth` runs them on a
//! request), or, for the command line, from the [`Operator`] at the server's shell. Commands
//! call the store, which keeps only SQL.
//!
//! The app crate (pages and server functions) depends on this crate and not on the store: the
//! compiler makes every read and write of a request go through here. So does the server binary
//! (the command line, the HTTP API, the job worker), which names no store either. This crate
//! does not re-export the store; it names only the store's handle ([`Db`]), opening it
//! ([`db`]), and the data its functions return.

pub mod access;
pub mod account;
pub mod annotate;
pub mod assessor;
mod background;
pub mod backup;
pub mod db;
pub mod error;
pub mod export;
pub mod gold;
pub mod guidelines;
pub mod history;
pub mod import;
pub mod jobs;
pub mod login;
pub mod pool;
pub mod project;
pub mod proof;
pub mod release;
pub mod release_diff;
pub mod release_download;
pub mod report;
pub mod search;
pub mod sessions;
pub mod simulate;
pub mod sso;
pub mod tokens;
pub mod upkeep;
pub mod uploads;
pub mod webhooks;
pub mod work;
pub mod worker;

pub use error::{CommandError, CommandResult};
pub use proof::{Actor, Admin, Creator, Lead, Operator};
/// The database handle the server opens and every command takes.
pub use store::Db;
