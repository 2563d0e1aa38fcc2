//! The server's integration tests, as one test binary. Each test binary links the whole
//! application: as 24 binaries they took 8 GB of `target/` and 24 links of ~370 MB each, which
//! made a CI machine with little free disk fail while linking. Each module below was one of them;
//! `cargo test -p server --test it <module>::` runs one.

mod common;
mod support;

mod accounts;
mod annotate;
mod api;
mod assessor;
mod auth;
mod authz;
mod cli;
mod cli_pipeline;
mod commands;
mod crash;
mod db;
mod demo;
mod eval;
mod fuzz_imports;
mod give_way;
mod guidelines;
mod import_jobs;
mod operations;
mod page_titles;
mod pipeline_jobs;
mod pool;
mod pool_sample;
mod release;
mod release_diff;
mod release_web;
mod report;
mod run_import;
mod serving;
mod simulate_cal;
mod uploads;
