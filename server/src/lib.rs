//! The claimpool server and command line, as a library so tests can run the real app.

pub mod api_v1;
pub mod assessor_cmd;
pub mod cli;
pub mod db_cmd;
pub mod demo;
pub mod estimate_cmd;
pub mod eval_cmd;
pub mod gold_cmd;
pub mod http;
pub mod jobs;
pub mod openapi;
pub mod release_cmd;
pub mod release_diff_cmd;
pub mod release_http;
pub mod report_cmd;
pub mod security;
pub mod simulate_cmd;
pub mod token_cmd;
