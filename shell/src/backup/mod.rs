//! `redmark backup`: a consistent copy of a data folder's redb store, taken while a server
//! serves it.
//!
//! A serving process holds the store's file lock, so no other process can open the file. The
//! backup asks that process (the folder's owner) instead, on the data folder's socket
//! (`DIR/redmark.sock`, where the owner serves its own user's processes): its first line is
//! `redmark backup 1` (`folder/backup.rs`), which no MCP client sends (it is not JSON). The owner copies every table as one
//! read transaction sees it into a new redb file (unlinked in the data folder as soon as it is
//! made, so nothing is left behind), and sends `ok LEN BOOKINGS NEWEST` and the file's LEN bytes,
//! or `error WHY`. Writers go on meanwhile: every booking acknowledged before the request
//! arrived is in the copy. The client writes the bytes to a private temporary file beside OUT,
//! fsyncs it, opens it with redb to check it holds what the owner said, and renames it to OUT.
//! When no process holds the store, the client opens it itself (with the checks a server
//! starts with) and copies it the same way.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::folder::{reach_blocking, Reached, REACH_WAIT};
use crate::platform::files::private_file;
use crate::store::redb::{summary, STORE_FILE};
use crate::store::Snapshot;

#[cfg(unix)]
mod ask;

const AFTER_HELP: &str = "\
While `redmark serve` holds DIR's store, the copy is made by that server (through
DIR/redmark.sock, the same user only) from one read transaction: every booking acknowledged
before the backup began is in it, and serving goes on. Without a server, redmark backup opens
the store itself (checking it as a server would at start) and copies it. OUT is written to a
private temporary file beside it, fsynced, checked by opening it, then renamed over OUT.

Restore: stop the server, copy OUT to DIR/bookings.redb (mode 0600), start the server. A copy
carries its folder's store id: in another folder, delete that folder's store-id first so it
adopts the copy (docs/operators.md, \"Backup and restore\"). Bookings in PostgreSQL are copied
with pg_dump instead.";

/// Options of `redmark backup`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct BackupArgs {
    /// The data folder whose bookings to copy [default: the platform's data directory, e.g.
    /// ~/.local/share/redmark]
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Where to write the copy (a redb file; an existing one is replaced)
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
}

/// Runs `redmark backup`: one line on stdout saying what was copied, or the reason on stderr.
pub fn run(args: BackupArgs) -> ExitCode {
    let done = crate::serve::data_dir(args.data.as_deref()).and_then(|dir| {
        let (copied, from) = backup(&dir, &args.out)?;
        Ok((dir, copied, from))
    });
    match done {
        Ok((dir, copied, from)) => {
            let newest = copied
                .newest
                .map_or_else(String::new, |id| format!(", the newest bk_{id}"));
            println!(
                "redmark backup: {} bookings{newest} copied from {} {} to {}",
                copied.bookings,
                match from {
                    From::Server => "the server serving",
                    From::Store => "the store of",
                },
                dir.display(),
                args.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("redmark backup: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Who made the copy.
enum From {
    /// The process serving the folder, through its socket.
    #[cfg_attr(not(unix), allow(dead_code))]
    Server,
    /// This process, with the store opened.
    Store,
}

/// Copies the store of `dir` to `out` (see the module doc).
fn backup(dir: &Path, out: &Path) -> Result<(Snapshot, From), String> {
    let store = dir.join(STORE_FILE);
    if !store.exists() {
        return Err(format!(
            "no booking store at {}: nothing to copy (bookings kept in PostgreSQL are copied \
             with pg_dump: docs/operators.md)",
            store.display()
        ));
    }
    if same_file(out, &store) {
        return Err(format!(
            "{} is the store itself: name another file",
            out.display()
        ));
    }
    let name = out
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", out.display()))?;
    let tmp = out.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let file = private_file()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let made = copy_into(dir, file, &tmp).and_then(|got| {
        std::fs::rename(&tmp, out)
            .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), out.display()))?;
        sync_dir(out);
        Ok(got)
    });
    if made.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    made
}

/// Makes the copy into `file` (at `tmp`), durable and checked.
fn copy_into(dir: &Path, file: File, tmp: &Path) -> Result<(Snapshot, From), String> {
    let sync = file
        .try_clone()
        .map_err(|e| format!("cannot use {}: {e}", tmp.display()))?;
    let (said, from) = match reach_blocking(dir, REACH_WAIT)? {
        Reached::Owner(store) => (store.snapshot(file)?, From::Store),
        #[cfg(unix)]
        Reached::Relay(conn) => (ask::ask(conn, file)?, From::Server),
        #[cfg(not(unix))]
        Reached::Relay(never) => match never {},
    };
    let seen = summary(tmp).map_err(|e| format!("the copy does not open ({e})"))?;
    if seen != said {
        return Err(format!(
            "the copy holds {} bookings, but {} were copied",
            seen.bookings, said.bookings
        ));
    }
    // After the check's open and close, which write the file's header.
    sync.sync_all()
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    Ok((said, from))
}

/// Whether `a` and `b` name one file (both exist and are the same).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Makes a rename in `path`'s folder durable (where folders can be opened).
fn sync_dir(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
