//! The claimpool server and command line, as a library so tests can run the real app.

pub mod cli;
pub mod demo;
pub mod http;
pub mod report_cmd;
