//! Benchmark support: the generated data and the timed workloads of the benchmarks, kept out of
//! the libraries they measure (issue 37). Each module names the domain and pipeline crates only
//! by their public paths; the server's benchmarks (`server/benches/`) and tests call it, and the
//! domain and pipeline crates' unit tests that need a generator include its file
//! (`#[path]`, under `#[cfg(test)]`).
//!
//! - [`annotation`]: assignment and protocol replay at pool scale.
//! - [`formats`]: the run reader on a 10-million-line canonical run.
//! - [`index`]: BM25 indexing and retrieval on a corpus resampled from real abstracts
//!   (`cargo bench -p server --bench index`).
//! - [`metrics`]: the lead dashboard's metrics and bootstrap on generated runs.
//! - [`pool`]: pooling 4 systems × 2.5 million pairs.
//! - [`release`]: releasing and evaluating a generated project.
//! - [`report`]: a generated project for the report (`cargo bench -p server --bench report`, the
//!   report's randomized tests); [`report_timing`]: the report computed on it, timed.
//! - [`scifact`]: the trained scorer against BM25 on SciFact.
//! - [`machine`]: the process's peak memory.

pub mod annotation;
pub mod formats;
pub mod index;
pub mod machine;
pub mod metrics;
pub mod pool;
pub mod release;
pub mod report;
pub mod report_timing;
pub mod scifact;
