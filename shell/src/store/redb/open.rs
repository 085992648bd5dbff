//! Opening a data folder's redb store: the checks that refuse a damaged, vanished or foreign
//! store with one sentence, the folder's marker, `redmark check` and `--repair`.

use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use redb::{Database, ReadableTable, ReadableTableMetadata, TableHandle};

use super::errors::text;
use super::migrate::{Rebuilt, INDEX_TIERS};
use super::overlay::Overlay;
use super::tables::{decode_quiet, StoreId, BOOKINGS, INDEXES, META, OLD_HELD, STORE_ID};
use super::usage::usage;
use crate::fault::panics::catch_quiet;

/// Name of the bookings database inside the data directory.
pub const STORE_FILE: &str = "bookings.redb";

/// The marker of a data folder that has held a store: its store id, one line of hex.
pub const MARKER_FILE: &str = "store-id";

/// Why the store could not be opened.
#[derive(Debug)]
pub struct OpenError(pub String);

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What to do about a damaged store, appended to every "damaged" message.
const RESTORE: &str = "restore it from a copy, or run `redmark serve --repair` to let redb \
                       roll it back to its last intact commit (a booking or cancellation made \
                       just before the damage may be lost)";

/// One line, without the build machine's paths (redb's assertions span lines and name them).
fn damaged(path: &Path, why: impl std::fmt::Display) -> OpenError {
    let why = crate::fault::tidy::one_line(&why.to_string());
    OpenError(format!(
        "the booking store {} is damaged ({why}); {RESTORE}",
        path.display()
    ))
}

fn in_use(path: &Path) -> OpenError {
    OpenError(format!(
        "{} is in use by another redmark process (one server per --data directory)",
        path.display()
    ))
}

/// Opens the store of the data folder `dir` after the checks of the module doc of [`super`]:
/// a damaged, vanished or foreign store is an error saying what to do. The full check
/// ([`check_store`]) runs first only where redb says the last shutdown was not clean.
/// `key_file_existed`: whether the folder had a sealing-key file before this start (evidence
/// of an earlier run in folders from before [`MARKER_FILE`]).
pub fn open_checked(dir: &Path, key_file_existed: bool) -> Result<Database, OpenError> {
    let path = dir.join(STORE_FILE);
    let marker = read_marker(dir)?;
    if !present(dir, &path, marker, key_file_existed)? {
        return create(dir, &path);
    }
    let db = match open_if_clean(&path)? {
        Some(db) => db,
        None => {
            // The full check on a copy, then redb's own recovery of the file.
            check(read_locked(&path)?, false).map_err(|why| damaged(&path, why))?;
            open_db(&path)?
        }
    };
    let found = catch_quiet(|| id_in(&db.begin_read().map_err(text)?))
        .unwrap_or_else(|p| Err(format!("redb stopped: {p}")))
        .map_err(|why| damaged(&path, why))?;
    let id = settle_id(found, marker, dir)?;
    set_up_as(&db, &path, id)?;
    if marker.is_none() {
        write_marker(dir, &id)?;
    }
    Ok(db)
}

/// `redmark check`: the full check of `dir`'s store (redb's checksums of its newest commit and
/// every record), whatever its last shutdown, without changing the file; says what it checked.
pub fn check_store(dir: &Path) -> Result<String, OpenError> {
    let path = dir.join(STORE_FILE);
    let marker = read_marker(dir)?;
    if !present(dir, &path, marker, false)? {
        return Err(OpenError(format!(
            "no booking store at {}: nothing to check",
            path.display()
        )));
    }
    let seen = check(read_locked(&path)?, true).map_err(|why| damaged(&path, why))?;
    if marker.is_some() {
        settle_id(seen.id, marker, dir)?;
    }
    Ok(format!(
        "{} passed redb's integrity check and every record decodes ({} bookings)\n{}",
        path.display(),
        seen.bookings,
        seen.usage
    ))
}

/// Whether `path` holds a store to open (`false`: missing or 0 bytes where none was, so a new
/// one is made); a vanished store (see [`MARKER_FILE`]) is an error.
fn present(
    dir: &Path,
    path: &Path,
    marker: Option<StoreId>,
    key_file_existed: bool,
) -> Result<bool, OpenError> {
    let len = match fs::metadata(path) {
        Ok(m) => Some(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(OpenError(format!("cannot read {}: {e}", path.display()))),
    };
    let state = match len {
        Some(0) => "empty (0 bytes)",
        None => "missing",
        Some(_) => return Ok(true),
    };
    if marker.is_some() {
        return Err(OpenError(format!(
            "the booking store {} is {state}, but {} says this folder holds one: restore \
             bookings.redb from a copy (or, to start with no bookings at all, delete {})",
            path.display(),
            dir.join(MARKER_FILE).display(),
            dir.join(MARKER_FILE).display(),
        )));
    }
    if len == Some(0) && key_file_existed {
        return Err(OpenError(format!(
            "the booking store {} is empty (0 bytes) next to the sealing keys of an earlier \
             run: restore bookings.redb from a copy (or, to start with no bookings at all, \
             delete the empty file)",
            path.display()
        )));
    }
    Ok(false)
}

/// A new store in `dir`: the database with its tables and id, then the marker.
fn create(dir: &Path, path: &Path) -> Result<Database, OpenError> {
    let id = new_id()?;
    let db = open_db(path)?;
    set_up_as(&db, path, id)?;
    write_marker(dir, &id)?;
    Ok(db)
}

/// The id a store found with id `found` serves under, next to the folder's `marker`: a new one
/// for a new store, an error for a store that is not the folder's.
fn settle_id(
    found: Option<StoreId>,
    marker: Option<StoreId>,
    dir: &Path,
) -> Result<StoreId, OpenError> {
    match (found, marker) {
        (Some(a), Some(b)) if a == b => Ok(a),
        (found, Some(_)) => {
            let whose = if found.is_some() {
                "belongs to another data folder"
            } else {
                "was not created here (it has no store id; an older redmark may have made it \
                 after the store vanished)"
            };
            Err(OpenError(format!(
                "the booking store {} {whose}, so it is not the store {} names: put this \
                 folder's bookings.redb back (or, to adopt this file, delete {})",
                dir.join(STORE_FILE).display(),
                dir.join(MARKER_FILE).display(),
                dir.join(MARKER_FILE).display(),
            )))
        }
        (Some(a), None) => Ok(a),
        (None, None) => new_id(),
    }
}

/// Creates the tables (so read transactions never meet a missing one), rebuilds the indexes
/// of a file an earlier release wrote or touched (`migrate.rs`, in the same transaction) and
/// records `id`.
fn set_up_as(db: &Database, path: &Path, id: StoreId) -> Result<(), OpenError> {
    let _ = crate::platform::files::make_private(path);
    let fail = |e: String| OpenError(format!("cannot set up {}: {e}", path.display()));
    catch_quiet(|| -> Result<(), String> {
        // Set up by an earlier start: no write (and no fsync) needed.
        if set_up(db)? {
            return Ok(());
        }
        let began = std::time::Instant::now();
        let tx = db.begin_write().map_err(text)?;
        let rebuilt = {
            tx.open_table(BOOKINGS).map_err(text)?;
            let rebuilt = super::migrate::rebuild(&tx)?;
            for index in INDEXES {
                tx.open_table(index).map_err(text)?;
            }
            let mut meta = tx.open_table(META).map_err(text)?;
            let has = meta.get(STORE_ID).map_err(text)?.is_some();
            if !has {
                meta.insert(STORE_ID, &id[..]).map_err(text)?;
            }
            rebuilt
        };
        tx.commit().map_err(text)?;
        let took = began.elapsed();
        match rebuilt {
            Some(Rebuilt::BeforeSpans(n)) => tracing::info!(
                "booking store: converted to spans ({n} active bookings indexed by start) in \
                 {took:?}"
            ),
            Some(Rebuilt::WithoutTiers(n)) if n > 0 => tracing::info!(
                "booking store: every index rebuilt from the bookings ({n} active) in \
                 {took:?}: the file was last set up by a release without the index tiers"
            ),
            _ => {}
        }
        Ok(())
    })
    .map_err(|p| damaged(path, p))?
    .map_err(fail)
}

/// Whether every table exists, `held` is the empty tripwire (`migrate.rs`), and `meta` has the
/// store id and [`INDEX_TIERS`]: a few reads, whatever the store holds.
fn set_up(db: &Database) -> Result<bool, String> {
    let tx = db.begin_read().map_err(text)?;
    fn has<T>(r: Result<T, redb::TableError>) -> Result<bool, String> {
        match r {
            Ok(_) => Ok(true),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }
    let mut tables = has(tx.open_table(BOOKINGS))?;
    for index in INDEXES {
        tables = tables && has(tx.open_table(index))?;
    }
    let tripwire = match tx.open_table(OLD_HELD) {
        Ok(held) => held.is_empty().map_err(text)?,
        Err(redb::TableError::TableDoesNotExist(_)) => false,
        Err(e) => return Err(e.to_string()),
    };
    let meta = match tx.open_table(META) {
        Ok(meta) => {
            meta.get(STORE_ID).map_err(text)?.is_some()
                && meta.get(INDEX_TIERS).map_err(text)?.is_some()
        }
        Err(redb::TableError::TableDoesNotExist(_)) => false,
        Err(e) => return Err(e.to_string()),
    };
    Ok(tables && tripwire && meta)
}

/// `--repair`: runs redb's integrity check and repair on `dir`'s store (in place), and says
/// what it did. The normal checked open follows it.
pub fn repair(dir: &Path) -> Result<String, OpenError> {
    let path = dir.join(STORE_FILE);
    match fs::metadata(&path) {
        Ok(m) if m.len() > 0 => {}
        _ => {
            return Err(OpenError(format!(
                "--repair: {} is missing or empty, so there is nothing to repair; restore it \
                 from a copy",
                path.display()
            )))
        }
    }
    let cannot = |why: String| {
        OpenError(format!(
            "--repair: {} cannot be repaired ({why}); restore it from a copy",
            path.display()
        ))
    };
    let recovered = std::sync::Arc::new(AtomicBool::new(false));
    let r = std::sync::Arc::clone(&recovered);
    let outcome = catch_quiet(|| {
        let mut db = Database::builder()
            .set_repair_callback(move |_| r.store(true, Ordering::Relaxed))
            .open(&path)?;
        db.check_integrity()
    })
    .map_err(|p| cannot(format!("redb stopped: {p}")))?;
    match outcome {
        Ok(true) if !recovered.load(Ordering::Relaxed) => Ok(format!(
            "--repair: {} passed redb's integrity check; nothing to repair",
            path.display()
        )),
        Ok(_) => Ok(format!(
            "--repair: {} failed redb's integrity check and redb repaired it, rolling back to \
             its last intact commit (a booking or cancellation made just before the damage may \
             be lost)",
            path.display()
        )),
        Err(redb::DatabaseError::DatabaseAlreadyOpen) => Err(in_use(&path)),
        Err(e) => Err(cannot(e.to_string())),
    }
}

/// redb's open of `path` where redb says the last shutdown was clean; `None` where it says
/// not (its open would repair the file: it calls the repair callback, which declines, before
/// writing anything but the header).
fn open_if_clean(path: &Path) -> Result<Option<Database>, OpenError> {
    let open = catch_quiet(|| {
        Database::builder()
            .set_repair_callback(|session| session.abort())
            .create(path)
    });
    match open {
        Ok(Err(redb::DatabaseError::RepairAborted)) => Ok(None),
        open => opened(path, open).map(Some),
    }
}

/// Opens the database file itself (creating it if missing or empty), catching redb's panics.
fn open_db(path: &Path) -> Result<Database, OpenError> {
    opened(path, catch_quiet(|| Database::create(path)))
}

/// redb's open of `path` (its panics caught) as the sentence said at start.
fn opened(
    path: &Path,
    open: Result<Result<Database, redb::DatabaseError>, String>,
) -> Result<Database, OpenError> {
    match open {
        Ok(Ok(db)) => Ok(db),
        Ok(Err(redb::DatabaseError::DatabaseAlreadyOpen)) => Err(in_use(path)),
        // redb's answer to a header that is not redb's (its magic number).
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e))))
            if e.kind() == std::io::ErrorKind::InvalidData =>
        {
            Err(damaged(path, "its header is not a redb header"))
        }
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e)))) => {
            Err(OpenError(format!("cannot open {}: {e}", path.display())))
        }
        Ok(Err(e)) => Err(damaged(path, e)),
        Err(p) => Err(damaged(path, format_args!("redb stopped: {p}"))),
    }
}

/// The store file under an [`Overlay`], opened while holding the lock redb takes
/// ([`crate::platform::lock`]), so a file another server holds is reported as in use rather
/// than read half-written. The lock is held until the overlay is dropped.
fn read_locked(path: &Path) -> Result<Overlay, OpenError> {
    let fail = |e: std::io::Error| OpenError(format!("cannot read {}: {e}", path.display()));
    let f = fs::File::open(path).map_err(fail)?;
    match crate::platform::lock::try_lock_exclusive(&f) {
        Ok(true) => Overlay::new(f).map_err(fail),
        Ok(false) => Err(in_use(path)),
        Err(e) => Err(OpenError(format!("cannot lock {}: {e}", path.display()))),
    }
}

/// redb's page cache while checking the in-memory copy.
const CHECK_CACHE: usize = 256 * 1024;

/// What a check of the store saw.
struct Seen {
    /// The store id in its `meta` table, if any.
    id: Option<StoreId>,
    /// Bookings decoded.
    bookings: u64,
    /// What the file holds, table by table ([`usage`]): only for `redmark check`.
    usage: String,
}

/// Checks a copy of the store in memory (redb writes only into the copy): redb's checksums,
/// then every record. Returns what it saw, or why the store is damaged.
fn check(copy: Overlay, with_usage: bool) -> Result<Seen, String> {
    catch_quiet(|| check_copy(copy, with_usage))
        .unwrap_or_else(|p| Err(format!("redb stopped: {p}")))
}

fn check_copy(mem: Overlay, with_usage: bool) -> Result<Seen, String> {
    // The file's length as read into the copy, for `usage`.
    let file_bytes = redb::StorageBackend::len(&mem).map_err(|e| e.to_string())?;
    // A small cache: the check reads each page about once.
    let mut db = Database::builder()
        .set_cache_size(CHECK_CACHE)
        .create_with_backend(mem)
        .map_err(|e| e.to_string())?;
    match db.check_integrity() {
        Ok(true) => {}
        Ok(false) => return Err("its newest commit fails redb's checksums".into()),
        Err(e) => return Err(e.to_string()),
    }
    let tx = db.begin_read().map_err(text)?;
    fn missing<T>(r: Result<T, redb::TableError>) -> Result<Option<T>, String> {
        match r {
            Ok(t) => Ok(Some(t)),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(x) => Err(x.to_string()),
        }
    }
    let mut ids = std::collections::BTreeSet::new();
    if let Some(t) = missing(tx.open_table(BOOKINGS))? {
        for row in t.iter().map_err(text)? {
            let (k, v) = row.map_err(text)?;
            decode_quiet(k.value(), v.value())
                .ok_or_else(|| format!("booking {} does not decode", k.value()))?;
            ids.insert(k.value());
        }
    }
    for def in INDEXES.into_iter().chain([OLD_HELD]) {
        if let Some(t) = missing(tx.open_table(def))? {
            for row in t.iter().map_err(text)? {
                let (_, v) = row.map_err(text)?;
                if !ids.contains(&v.value()) {
                    return Err(format!(
                        "table {} names booking {}, which is not stored",
                        def.name(),
                        v.value()
                    ));
                }
            }
        }
    }
    let id = id_in(&tx)?;
    drop(tx);
    Ok(Seen {
        id,
        bookings: ids.len() as u64,
        usage: if with_usage {
            usage(&db, file_bytes)?
        } else {
            String::new()
        },
    })
}

/// The store id in the `meta` table as `tx` sees it, if any.
fn id_in(tx: &redb::ReadTransaction) -> Result<Option<StoreId>, String> {
    let meta = match tx.open_table(META) {
        Ok(t) => t,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(x) => return Err(x.to_string()),
    };
    match meta.get(STORE_ID).map_err(text)? {
        None => Ok(None),
        Some(v) => StoreId::try_from(v.value())
            .map(Some)
            .map_err(|_| "its store id is not 16 bytes".to_string()),
    }
}

fn new_id() -> Result<StoreId, OpenError> {
    let mut id = [0; 16];
    getrandom::fill(&mut id)
        .map_err(|e| OpenError(format!("no randomness for a store id: {e}")))?;
    Ok(id)
}

/// The folder's store id from [`MARKER_FILE`], if it has one.
fn read_marker(dir: &Path) -> Result<Option<StoreId>, OpenError> {
    let path = dir.join(MARKER_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OpenError(format!("cannot read {}: {e}", path.display()))),
    };
    hex::decode(text.trim())
        .ok()
        .and_then(|b| StoreId::try_from(&b[..]).ok())
        .map(Some)
        .ok_or_else(|| {
            OpenError(format!(
                "{} is not a store id (32 hex digits); restore it from a copy, or delete it to \
                 adopt {} as this folder's store",
                path.display(),
                dir.join(STORE_FILE).display()
            ))
        })
}

/// Writes [`MARKER_FILE`] atomically (temp file, fsync, rename, fsync of the folder).
fn write_marker(dir: &Path, id: &StoreId) -> Result<(), OpenError> {
    let path = dir.join(MARKER_FILE);
    let tmp = dir.join(format!("{MARKER_FILE}.tmp"));
    let fail = |e: std::io::Error| OpenError(format!("cannot write {}: {e}", path.display()));
    let _ = fs::remove_file(&tmp);
    let mut f = crate::platform::files::private_file()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(fail)?;
    f.write_all(format!("{}\n", hex::encode(id)).as_bytes())
        .map_err(fail)?;
    f.sync_all().map_err(fail)?;
    drop(f);
    fs::rename(&tmp, &path).map_err(fail)?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tidy_tests {
    use super::*;

    /// A refusal is one line without the build machine's paths, whatever redb's panic said.
    #[test]
    fn a_damaged_refusal_is_one_line_without_build_paths() {
        let why = "redb stopped: assertion `left == right` failed\n  left: 3\n right: 4 at \
                   /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/redb-2.6.0/src/a.rs:9";
        let e = damaged(Path::new("/data/bookings.redb"), why).0;
        assert!(!e.contains('\n'), "{e}");
        assert!(!e.contains(".cargo"), "{e}");
        assert!(
            e.contains("redb-2.6.0/src/a.rs:9") && e.contains("/data/bookings.redb"),
            "{e}"
        );
    }
}
