//! `claimpool`: the server and the command line of claimpool. Everything, the async runtime
//! included, lives in the library (`server::main`): in a release build generic code is compiled
//! in each crate that instantiates it, and a `main` here re-instantiated the runtime, the CLI and
//! what they reach (92 s of the binary's 146 s on 2 cores; a few seconds now).

use std::process::ExitCode;

fn main() -> ExitCode {
    server::main()
}
