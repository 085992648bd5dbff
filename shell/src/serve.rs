//! `redmark serve`: the transports (stub until the shell lands).

use std::process::ExitCode;

/// Options of `redmark serve`.
#[derive(clap::Args)]
pub struct ServeArgs {}

/// Runs the server.
pub fn run(_args: ServeArgs) -> ExitCode {
    eprintln!("redmark serve: not built yet");
    ExitCode::FAILURE
}
