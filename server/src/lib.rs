//! The claimpool server and command line, as a library so tests can run the real app.

pub mod api_v1;
pub mod assessor_cmd;
pub mod assets;
pub mod cli;
pub mod db_cmd;
pub mod demo;
pub mod estimate_cmd;
pub mod eval_cmd;
pub mod gold_cmd;
pub mod health;
pub mod http;
pub mod jobs;
pub mod metrics;
pub mod openapi;
pub mod release_cmd;
pub mod release_diff_cmd;
pub mod release_http;
pub mod report_cmd;
pub mod security;
pub mod simulate_cmd;
pub mod sso_http;
pub mod token_cmd;
pub mod webhooks;

use clap::Parser;
use std::process::ExitCode;

/// The `claimpool` binary's entry point: logging, the command line, the async runtime.
pub fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=error,tower_sessions=warn".into()),
        )
        .with_writer(std::io::stderr);
    match args.log_format {
        cli::LogFormat::Text => logs.init(),
        cli::LogFormat::Json => logs.json().flatten_event(true).init(),
    }
    args.yield_cpu_unless_serving();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
