//! `redmark`: serve the booking floor over stdio, TCP and Streamable HTTP, or call a tool.

use std::process::ExitCode;

use redmark::{backup, check, client, serve};

use clap::{Parser, Subcommand};

/// redmark — MCP 2026-07-28 room booking that asks when it must (MRTR form elicitation).
#[derive(Parser)]
#[command(name = "redmark", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the booking tools (stdio by default; --tcp and --http combine).
    Serve(serve::ServeArgs),
    /// Call a tool and answer its questions (the MRTR loop).
    Call(client::CallArgs),
    /// List a server's tools with their input schemas.
    Tools(client::ToolsArgs),
    /// Copy a data folder's bookings to a file, while a server serves them or not.
    Backup(backup::BackupArgs),
    /// Check a data folder's bookings store in full (a start does so only after a crash).
    Check(check::CheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Call(args) => client::run_call(args),
        Command::Tools(args) => client::run_tools(args),
        Command::Backup(args) => backup::run(args),
        Command::Check(args) => check::run(args),
    }
}
