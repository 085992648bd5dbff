//! `redmark check`: the full check of a data folder's redb store, which a start makes only
//! where redb says the last shutdown was not clean.

use std::path::PathBuf;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Reads every page of DIR/bookings.redb's newest commit against redb's checksums and decodes
every booking and every link between the tables, on a copy in memory, so the check changes
nothing. A start does this only where redb says the last shutdown was not clean (a crash or
kill -9); otherwise it reads what it serves, and damage met then is a -32603 error for that
request and a line in the log. Run redmark check when the disk or the file is suspect, and
after putting a copy back (before starting the server). Stop the server first: a store a
server holds is \"in use\".

Exit status 0 when the store passes, with a line on stdout saying so and then what the file
holds: each table's entries, its pages and how full its leaves are, and how much of the file
is pages in use (the rest is free pages redb reuses); 1 and one line on stderr saying what is
wrong and what to do (restore a copy, or redmark serve --repair) when it does not.";

/// Options of `redmark check`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct CheckArgs {
    /// The data folder whose bookings to check [default: the platform's data directory, e.g.
    /// ~/.local/share/redmark]
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
}

/// Runs `redmark check`: what it checked and what the file holds on stdout if the store passes,
/// else the reason on stderr.
pub fn run(args: CheckArgs) -> ExitCode {
    let checked = crate::serve::data_dir(args.data.as_deref())
        .and_then(|dir| crate::store::redb::check_store(&dir).map_err(|e| e.0));
    match checked {
        Ok(said) => {
            println!("redmark check: {said}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("redmark check: {e}");
            ExitCode::FAILURE
        }
    }
}
