//! Helpers shared by the integration tests (and, through `#[path]`, by the benches): the
//! `claimpool` binary run as a user runs it, the throwaway PostgreSQL cluster (the `testdata`
//! crate's, which the store's own tests share), and a report snapshot written as the
//! application's rows.

pub mod cli;
pub mod serve;
pub use testdata::postgres;
pub mod snapshot_db;
