//! Helpers shared by the integration tests (and, through `#[path]`, by the benches and the store's
//! own tests): the `claimpool` binary run as a user runs it, a throwaway PostgreSQL cluster, and a
//! report snapshot written as the application's rows.

pub mod cli;
pub mod postgres;
pub mod snapshot_db;
