//! `redmark call` and `redmark tools`: the client side of the red mark (stub).

use std::process::ExitCode;

/// Options of `redmark call`.
#[derive(clap::Args)]
pub struct CallArgs {}

/// Options of `redmark tools`.
#[derive(clap::Args)]
pub struct ToolsArgs {}

/// Runs `redmark call`.
pub fn run_call(_args: CallArgs) -> ExitCode {
    eprintln!("redmark call: not built yet");
    ExitCode::FAILURE
}

/// Runs `redmark tools`.
pub fn run_tools(_args: ToolsArgs) -> ExitCode {
    eprintln!("redmark tools: not built yet");
    ExitCode::FAILURE
}
