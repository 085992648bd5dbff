//! Durable bookings in redb, behind the core's [`Store`] trait.
//!
//! Why redb rather than SQLite: it is pure Rust (no C toolchain, nothing to cross-build),
//! ACID with copy-on-write B-trees and a checksummed commit slot, so a crash at any instant
//! leaves the last committed transaction and nothing half-written, and a commit with
//! [`Durability::Immediate`] (its default) has been fsynced when `commit()` returns. The
//! booking data is three tiny key/value tables; SQL buys nothing here. A database shared by
//! several instances would be another `Store` implementation (e.g. over a SQL server), not a
//! change to the engine.
//!
//! Tables (one write transaction per group of bookings and cancellations, see `group.rs`):
//! - `bookings`: id → record (see [`encode`]);
//! - `nonces`: holder ‖ operation nonce → id (at-most-once: the same operation replays its
//!   booking);
//! - `held`: slot ‖ room → id of the active booking holding it;
//! - `meta`: `store-id` → the store's 16-byte id (see below).
//!
//! # A damaged or vanished store is refused at start
//!
//! [`RedbStore::open_checked`] serves a store only after checking it, and otherwise fails with
//! one sentence saying what is wrong and what to do:
//! - **Damaged** (garbage over a page, a truncated file, a record that does not decode): the
//!   file is read into memory (under the same `flock` redb takes, so a running server's file is
//!   "in use", never half-read) and checked there with redb's
//!   [`Database::check_integrity`] (every page checksum of the newest commit) plus a decode of
//!   every record, so the check itself never changes the file. redb panics on some damage (an
//!   assertion on a truncated file): those panics are caught ([`catch_quiet`]) and reported the
//!   same way. The way out: restore `bookings.redb` from a copy, or `redmark serve --repair`
//!   ([`repair`]), which lets redb roll the file back to its last intact commit.
//! - **Vanished**: `bookings.redb` missing or 0 bytes although the data folder has held a store.
//!   The marker of that is [`MARKER_FILE`] (`store-id`): written (atomically, fsynced) when a
//!   store is first created, holding the id also stored in the store's `meta` table. So a
//!   missing or empty store next to a `store-id` is refused, and so is a store whose id is not
//!   the folder's (another folder's file, or an empty one an older redmark created). A folder
//!   from before the marker existed (no `store-id`) adopts its store on the next start; there, a
//!   0-byte `bookings.redb` next to a key file (`sealing-keys`) is refused too, since redb never
//!   leaves a file it initialised empty. Deleting `store-id` is how an operator says "start
//!   afresh" or "adopt this file".
//!
//! The whole check runs at every start: reading and checking a floor's bookings takes
//! milliseconds (redb's own open reads the allocator state of the file anyway), and a check that
//! always runs cannot be fooled by a file changed behind a stamp.
//!
//! Not caught at start: damage to the newest commit's pages of a store that was not shut down
//! cleanly (after a crash or `kill -9`) — redb's crash recovery cannot tell such damage from a
//! torn last commit and rolls back to the previous one, as it is designed to.
//!
//! # Damage met while serving
//!
//! Every read decodes into [`StoreError::Corrupt`] rather than trusting bytes, and a panic
//! inside redb is caught: that request gets `-32603`, the error is logged, and the store is
//! marked broken — redb skips its own clean-up when unwinding, so its in-memory state can no
//! longer be trusted — so every later store request fails the same way (other methods still
//! work) until the operator restarts the server, which then refuses the damaged file as above.

use std::fs;
use std::io::{Read, Write as _};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use redb::backends::InMemoryBackend;
use redb::{Database, Durability, ReadableTable, StorageBackend, TableDefinition, TableHandle};
use redmark_core::booking::{
    Booking, BookingId, Commit, Day, Holder, NewBooking, RoomId, Slot, Status, Store, StoreError,
};
use redmark_core::seal::Nonce;

use super::{SharedStore, Write, Written};
use crate::host::panics::catch_quiet;

const BOOKINGS: TableDefinition<u32, &[u8]> = TableDefinition::new("bookings");
const NONCES: TableDefinition<&[u8], u32> = TableDefinition::new("nonces");
const HELD: TableDefinition<&[u8], u32> = TableDefinition::new("held");
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const STORE_ID: &str = "store-id";

const RECORD_V1: u8 = 1;

/// Name of the bookings database inside the data directory.
pub const STORE_FILE: &str = "bookings.redb";

/// The marker of a data folder that has held a store: its store id, one line of hex.
pub const MARKER_FILE: &str = "store-id";

/// A store id: 16 random bytes, in the store's `meta` table and in [`MARKER_FILE`].
pub(super) type StoreId = [u8; 16];

/// Bookings in a redb file; every change is durable before the call returns.
pub struct RedbStore {
    db: Database,
    /// redb panicked under a call: the file is damaged and redb's in-memory state may be
    /// inconsistent, so nothing more is read or written.
    broken: AtomicBool,
}

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

fn damaged(path: &Path, why: impl std::fmt::Display) -> OpenError {
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

impl RedbStore {
    /// Opens the store of the data folder `dir` after checking it (see the module doc): a
    /// damaged, vanished or foreign store is an error saying what to do. `key_file_existed`:
    /// whether the folder had a sealing-key file before this start (evidence of an earlier run
    /// in folders from before [`MARKER_FILE`]).
    pub fn open_checked(dir: &Path, key_file_existed: bool) -> Result<RedbStore, OpenError> {
        let path = dir.join(STORE_FILE);
        let marker = read_marker(dir)?;
        let len = match fs::metadata(&path) {
            Ok(m) => Some(m.len()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(OpenError(format!("cannot read {}: {e}", path.display()))),
        };
        let empty = match len {
            Some(0) => Some("empty (0 bytes)"),
            None => Some("missing"),
            Some(_) => None,
        };
        if let Some(state) = empty {
            if marker.is_some() {
                return Err(OpenError(format!(
                    "the booking store {} is {state}, but {} says this folder holds one: \
                     restore bookings.redb from a copy (or, to start with no bookings at all, \
                     delete {})",
                    path.display(),
                    dir.join(MARKER_FILE).display(),
                    dir.join(MARKER_FILE).display(),
                )));
            }
            if len == Some(0) && key_file_existed {
                return Err(OpenError(format!(
                    "the booking store {} is empty (0 bytes) next to the sealing keys of an \
                     earlier run: restore bookings.redb from a copy (or, to start with no \
                     bookings at all, delete the empty file)",
                    path.display()
                )));
            }
            return Self::create(dir, &path);
        }
        let copy = read_locked(&path)?;
        let found = check(copy).map_err(|why| damaged(&path, why))?;
        let db = open_db(&path)?;
        let id = settle_id(found, marker, dir)?;
        set_up_as(&db, &path, id)?;
        if marker.is_none() {
            write_marker(dir, &id)?;
        }
        Ok(RedbStore::new(db))
    }

    fn new(db: Database) -> RedbStore {
        RedbStore {
            db,
            broken: AtomicBool::new(false),
        }
    }

    /// A new store in `dir`: the database with its tables and id, then the marker.
    fn create(dir: &Path, path: &Path) -> Result<RedbStore, OpenError> {
        let id = new_id()?;
        let db = open_db(path)?;
        set_up_as(&db, path, id)?;
        write_marker(dir, &id)?;
        Ok(RedbStore::new(db))
    }

    /// Every booking, by id (for tools and tests).
    #[allow(dead_code)]
    pub fn all(&self) -> Result<Vec<Booking>, StoreError> {
        self.guarded("listing bookings", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            let mut v = Vec::new();
            for row in t.iter().map_err(fault)? {
                let (k, rec) = row.map_err(fault)?;
                v.push(decode(k.value(), rec.value())?);
            }
            Ok(v)
        })
    }

    /// Runs `f` on the database unless the store is broken; a panic in redb breaks it.
    fn guarded<T>(
        &self,
        what: &str,
        f: impl FnOnce(&Database) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.broken.load(Ordering::Acquire) {
            return Err(StoreError::Corrupt);
        }
        catch_quiet(|| f(&self.db)).unwrap_or_else(|p| {
            self.broken.store(true, Ordering::Release);
            tracing::error!(
                "booking store: redb panicked while {what} ({p}): bookings.redb is damaged; \
                 every booking request now fails until the server is stopped and the file is \
                 restored from a copy or repaired (`redmark serve --repair`)"
            );
            Err(StoreError::Corrupt)
        })
    }
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

/// Creates the tables (so read transactions never meet a missing one) and records `id`.
fn set_up_as(db: &Database, path: &Path, id: StoreId) -> Result<(), OpenError> {
    let _ = fs::set_permissions(path, fs::Permissions::from_mode(0o600));
    let fail = |e: String| OpenError(format!("cannot set up {}: {e}", path.display()));
    catch_quiet(|| -> Result<(), String> {
        // Set up by an earlier start: no write (and no fsync) needed.
        if set_up(db)? {
            return Ok(());
        }
        let tx = db.begin_write().map_err(text)?;
        {
            tx.open_table(BOOKINGS).map_err(text)?;
            tx.open_table(NONCES).map_err(text)?;
            tx.open_table(HELD).map_err(text)?;
            let mut meta = tx.open_table(META).map_err(text)?;
            let has = meta.get(STORE_ID).map_err(text)?.is_some();
            if !has {
                meta.insert(STORE_ID, &id[..]).map_err(text)?;
            }
        }
        tx.commit().map_err(text)
    })
    .map_err(|p| damaged(path, p))?
    .map_err(fail)
}

/// Whether every table exists and the store id is recorded.
fn set_up(db: &Database) -> Result<bool, String> {
    let tx = db.begin_read().map_err(text)?;
    fn has<T>(r: Result<T, redb::TableError>) -> Result<bool, String> {
        match r {
            Ok(_) => Ok(true),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }
    let tables =
        has(tx.open_table(BOOKINGS))? && has(tx.open_table(NONCES))? && has(tx.open_table(HELD))?;
    let id = match tx.open_table(META) {
        Ok(meta) => meta.get(STORE_ID).map_err(text)?.is_some(),
        Err(redb::TableError::TableDoesNotExist(_)) => false,
        Err(e) => return Err(e.to_string()),
    };
    Ok(tables && id)
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
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e)))) => {
            Err(OpenError(format!("cannot open {}: {e}", path.display())))
        }
        Ok(Err(e)) => Err(damaged(path, e)),
        Err(p) => Err(damaged(path, format_args!("redb stopped: {p}"))),
    }
}

/// The whole file, read while holding the lock redb takes (`flock`), so a file another server
/// holds is reported as in use rather than read half-written.
fn read_locked(path: &Path) -> Result<InMemoryBackend, OpenError> {
    let fail = |e: std::io::Error| OpenError(format!("cannot read {}: {e}", path.display()));
    let mut f = fs::File::open(path).map_err(fail)?;
    flock(&f, path)?;
    // Read a piece at a time into the copy: the file is held in memory once, not twice.
    let len = f.metadata().map_err(fail)?.len();
    let mem = InMemoryBackend::new();
    let copy_fail = |e: std::io::Error| OpenError(format!("cannot copy {}: {e}", path.display()));
    mem.set_len(len).map_err(copy_fail)?;
    let mut piece = vec![0u8; READ_PIECE];
    let mut at = 0u64;
    loop {
        let n = f.read(&mut piece).map_err(fail)?;
        if n == 0 {
            break;
        }
        if at + n as u64 > len {
            mem.set_len(at + n as u64).map_err(copy_fail)?;
        }
        mem.write(at, &piece[..n]).map_err(copy_fail)?;
        at += n as u64;
    }
    mem.set_len(at).map_err(copy_fail)?;
    Ok(mem)
}

/// Takes the exclusive `flock` redb takes on `f` (the store at `path`), without waiting: held
/// by another process, the store is in use.
fn flock(f: &fs::File, path: &Path) -> Result<(), OpenError> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor the caller owns; the lock goes with it.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(if e.kind() == std::io::ErrorKind::WouldBlock {
        in_use(path)
    } else {
        OpenError(format!("cannot lock {}: {e}", path.display()))
    })
}

/// redb's page cache while checking the in-memory copy.
const CHECK_CACHE: usize = 256 * 1024;

/// Bytes read at a time when copying the store for its check.
const READ_PIECE: usize = 256 * 1024;

/// Checks a copy of the store in memory: redb's checksums, then every record. Returns the
/// store id if it has one.
fn check(copy: InMemoryBackend) -> Result<Option<StoreId>, String> {
    catch_quiet(|| check_copy(copy)).unwrap_or_else(|p| Err(format!("redb stopped: {p}")))
}

fn check_copy(mem: InMemoryBackend) -> Result<Option<StoreId>, String> {
    // The copy is in memory already: redb caching its pages again would only double it.
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
    for def in [NONCES, HELD] {
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
    id_in(&tx)
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

/// A redb error as text.
fn text(e: impl Into<redb::Error>) -> String {
    e.into().to_string()
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
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
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

/// A redb error as a store error (logged): `Corrupt` when redb says the file is corrupted.
fn fault<E: Into<redb::Error>>(e: E) -> StoreError {
    let e = e.into();
    tracing::error!("booking store: {e}");
    match e {
        redb::Error::Corrupted(_) => StoreError::Corrupt,
        _ => StoreError::Io,
    }
}

/// A damaged record or a broken link between tables: logged, and `Corrupt` to the caller.
fn corrupt(why: std::fmt::Arguments<'_>) -> StoreError {
    tracing::error!("booking store: {why}: bookings.redb is damaged");
    StoreError::Corrupt
}

/// `held` key: year u16 BE, month, day, hour, then the room id.
fn held_key(room: &str, slot: Slot) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + room.len());
    k.extend_from_slice(&slot.day.year.to_be_bytes());
    k.extend_from_slice(&[slot.day.month, slot.day.day, slot.hour]);
    k.extend_from_slice(room.as_bytes());
    k
}

/// Record: version, status, year u16 LE, month, day, hour, attendees u16 LE, `holder[8]`,
/// `nonce[8]`, room length, room bytes.
fn encode(b: &Booking) -> Vec<u8> {
    let n = &b.new;
    let mut r = Vec::with_capacity(28 + n.room.len());
    r.push(RECORD_V1);
    r.push(match b.status {
        Status::Active => 0,
        Status::Cancelled => 1,
    });
    r.extend_from_slice(&n.slot.day.year.to_le_bytes());
    r.extend_from_slice(&[n.slot.day.month, n.slot.day.day, n.slot.hour]);
    r.extend_from_slice(&n.attendees.to_le_bytes());
    r.extend_from_slice(&n.holder);
    r.extend_from_slice(&n.nonce);
    r.push(n.room.len() as u8);
    r.extend_from_slice(n.room.as_bytes());
    r
}

fn decode(id: BookingId, r: &[u8]) -> Result<Booking, StoreError> {
    decode_quiet(id, r).ok_or_else(|| corrupt(format_args!("booking {id}: corrupt record")))
}

/// The booking in record `r`, or `None` if it does not decode.
fn decode_quiet(id: BookingId, r: &[u8]) -> Option<Booking> {
    if r.len() < 27 || r[0] != RECORD_V1 {
        return None;
    }
    let status = match r[1] {
        0 => Status::Active,
        1 => Status::Cancelled,
        _ => return None,
    };
    // A record's day and hour are checked like a client's (a real day, an hour below 24): a
    // damaged but decodable record must not reach `Slot`'s arithmetic or be compared as a slot.
    let day = Day {
        year: u16::from_le_bytes([r[2], r[3]]),
        month: r[4],
        day: r[5],
    };
    if Day::parse(&day.to_string()) != Some(day) || r[6] >= 24 {
        return None;
    }
    let slot = Slot { day, hour: r[6] };
    let attendees = u16::from_le_bytes([r[7], r[8]]);
    let mut holder = [0; 8];
    holder.copy_from_slice(&r[9..17]);
    let mut nonce = [0; 8];
    nonce.copy_from_slice(&r[17..25]);
    let len = r[25] as usize;
    let room = r
        .get(26..26 + len)
        .and_then(|b| std::str::from_utf8(b).ok())?;
    let room = RoomId::try_from(room).ok()?;
    Some(Booking {
        id,
        new: NewBooking {
            room,
            slot,
            attendees,
            holder,
            nonce,
        },
        status,
    })
}

fn load(
    t: &impl ReadableTable<u32, &'static [u8]>,
    id: BookingId,
) -> Result<Option<Booking>, StoreError> {
    match t.get(id).map_err(fault)? {
        Some(rec) => decode(id, rec.value()).map(Some),
        None => Ok(None),
    }
}

/// The three booking tables of one write transaction.
struct Tables<'t> {
    bookings: redb::Table<'t, u32, &'static [u8]>,
    nonces: redb::Table<'t, &'static [u8], u32>,
    held: redb::Table<'t, &'static [u8], u32>,
}

impl<'t> Tables<'t> {
    fn open(tx: &'t redb::WriteTransaction) -> Result<Self, StoreError> {
        Ok(Tables {
            bookings: tx.open_table(BOOKINGS).map_err(fault)?,
            nonces: tx.open_table(NONCES).map_err(fault)?,
            held: tx.open_table(HELD).map_err(fault)?,
        })
    }

    /// Books `new` unless its operation already booked or the slot is held. `Ok(Err(Full))`:
    /// this booking is refused and nothing changed; an outer error spoils the transaction.
    fn book(&mut self, new: &NewBooking) -> Result<Result<Commit, StoreError>, StoreError> {
        // One holder's operation: a nonce is only ever matched together with its holder.
        let operation = [&new.holder[..], &new.nonce[..]].concat();
        let prior = self
            .nonces
            .get(&operation[..])
            .map_err(fault)?
            .map(|g| g.value());
        if let Some(id) = prior {
            let b = load(&self.bookings, id)?.ok_or_else(|| {
                corrupt(format_args!("a nonce names booking {id}, which is missing"))
            })?;
            return Ok(Ok(Commit::Replayed(b)));
        }
        let key = held_key(&new.room, new.slot);
        let holder = self.held.get(&key[..]).map_err(fault)?.map(|g| g.value());
        if let Some(id) = holder {
            let b = load(&self.bookings, id)?.ok_or_else(|| {
                corrupt(format_args!(
                    "a slot is held by booking {id}, which is missing"
                ))
            })?;
            return Ok(Ok(Commit::Taken(b)));
        }
        let last = self
            .bookings
            .last()
            .map_err(fault)?
            .map_or(0, |(k, _)| k.value());
        let Some(id) = last.checked_add(1) else {
            return Ok(Err(StoreError::Full));
        };
        let b = Booking {
            id,
            new: new.clone(),
            status: Status::Active,
        };
        self.bookings.insert(id, &encode(&b)[..]).map_err(fault)?;
        self.nonces.insert(&operation[..], id).map_err(fault)?;
        self.held.insert(&key[..], id).map_err(fault)?;
        Ok(Ok(Commit::Created(b)))
    }

    /// Marks booking `id` of `holder` cancelled (idempotent) and frees its slot.
    fn cancel(&mut self, id: BookingId, holder: &Holder) -> Result<Option<Booking>, StoreError> {
        let Some(mut b) = load(&self.bookings, id)?.filter(|b| b.new.holder == *holder) else {
            return Ok(None);
        };
        if b.status == Status::Cancelled {
            return Ok(Some(b));
        }
        b.status = Status::Cancelled;
        self.bookings.insert(id, &encode(&b)[..]).map_err(fault)?;
        self.held
            .remove(&held_key(&b.new.room, b.new.slot)[..])
            .map_err(fault)?;
        Ok(Some(b))
    }
}

impl SharedStore for RedbStore {
    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a booking", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)
        })
    }

    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading an operation", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let nonces = tx.open_table(NONCES).map_err(fault)?;
            let operation = [&holder[..], &nonce[..]].concat();
            let Some(id) = nonces
                .get(&operation[..])
                .map_err(fault)?
                .map(|g| g.value())
            else {
                return Ok(None);
            };
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)?.map(Some).ok_or_else(|| {
                corrupt(format_args!("a nonce names booking {id}, which is missing"))
            })
        })
    }

    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        self.guarded("reading a slot", |db| {
            let tx = db.begin_read().map_err(fault)?;
            let held = tx.open_table(HELD).map_err(fault)?;
            let Some(id) = held
                .get(&held_key(room, slot)[..])
                .map_err(fault)?
                .map(|g| g.value())
            else {
                return Ok(None);
            };
            let t = tx.open_table(BOOKINGS).map_err(fault)?;
            load(&t, id)?.map(Some).ok_or_else(|| {
                corrupt(format_args!(
                    "a slot is held by booking {id}, which is missing"
                ))
            })
        })
    }

    /// One write transaction and one fsync for the whole group. A storage fault while deciding
    /// any write aborts the transaction: every write of the group then fails, none is made.
    fn write_group(&self, writes: &[Write]) -> Vec<Written> {
        let made = self.guarded("committing", |db| {
            let mut tx = db.begin_write().map_err(fault)?;
            tx.set_durability(Durability::Immediate);
            let mut out = Vec::with_capacity(writes.len());
            {
                let mut t = Tables::open(&tx)?;
                for w in writes {
                    out.push(match w {
                        Write::Book(new) => Written::Book(t.book(new)?),
                        Write::Cancel(id, h) => Written::Cancel(Ok(t.cancel(*id, h)?)),
                    });
                }
            }
            // Durable (fsynced) when commit returns: only then is any of them acknowledged.
            tx.commit().map_err(fault)?;
            Ok(out)
        });
        made.unwrap_or_else(|e| {
            writes
                .iter()
                .map(|w| match w {
                    Write::Book(_) => Written::Book(Err(e)),
                    Write::Cancel(..) => Written::Cancel(Err(e)),
                })
                .collect()
        })
    }
}

/// The store alone (tests, tools): each write its own transaction.
impl Store for RedbStore {
    fn commit(&mut self, new: &NewBooking) -> Result<Commit, StoreError> {
        match self.write_group(&[Write::Book(new.clone())]).pop() {
            Some(Written::Book(r)) => r,
            _ => Err(StoreError::Io),
        }
    }

    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        SharedStore::get(self, id)
    }

    fn made_by(&self, holder: &Holder, nonce: &Nonce) -> Result<Option<Booking>, StoreError> {
        SharedStore::made_by(self, holder, nonce)
    }

    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        SharedStore::occupant(self, room, slot)
    }

    fn cancel(&mut self, id: BookingId, holder: &Holder) -> Result<Option<Booking>, StoreError> {
        match self.write_group(&[Write::Cancel(id, *holder)]).pop() {
            Some(Written::Cancel(r)) => r,
            _ => Err(StoreError::Io),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(room: &str, hour: u8, nonce: u8) -> NewBooking {
        NewBooking {
            room: RoomId::try_from(room).unwrap(),
            slot: Slot {
                day: Day {
                    year: 2026,
                    month: 12,
                    day: 3,
                },
                hour,
            },
            attendees: 3,
            holder: [7; 8],
            nonce: [nonce; 8],
        }
    }

    /// A record with an impossible day or hour does not decode (it counts as damaged).
    #[test]
    fn records_with_impossible_days_or_hours_do_not_decode() {
        let good = Booking {
            id: 1,
            new: new("atrium", 23, 1),
            status: Status::Active,
        };
        let r = encode(&good);
        assert_eq!(decode_quiet(1, &r), Some(good));
        for (at, v) in [(4, 0), (4, 13), (5, 0), (5, 32), (6, 24), (6, 255)] {
            let mut bad = r.clone();
            bad[at] = v;
            assert_eq!(decode_quiet(1, &bad), None, "byte {at} = {v}");
        }
        // 2026-02-29 and 2026-04-31 do not exist; neither does year 1999 (outside 2000-2999).
        for (month, day) in [(2, 29), (4, 31)] {
            let mut bad = r.clone();
            bad[4] = month;
            bad[5] = day;
            assert_eq!(decode_quiet(1, &bad), None, "{month}-{day}");
        }
        let mut bad = r.clone();
        bad[2..4].copy_from_slice(&1999u16.to_le_bytes());
        assert_eq!(decode_quiet(1, &bad), None, "1999");
        assert!(decode(1, &bad).is_err());
    }

    #[test]
    fn commits_replays_takes_cancels_and_survives_reopen() {
        let dir = std::env::temp_dir().join(format!("redmark-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        {
            let mut s = RedbStore::open_checked(&dir, false).unwrap();
            let Commit::Created(a) = s.commit(&new("atrium", 9, 1)).unwrap() else {
                panic!()
            };
            assert_eq!(a.id, 1);
            assert_eq!(
                s.commit(&new("atrium", 9, 1)).unwrap(),
                Commit::Replayed(a.clone())
            );
            assert_eq!(
                s.commit(&new("atrium", 9, 2)).unwrap(),
                Commit::Taken(a.clone())
            );
            let Commit::Created(b) = s.commit(&new("nook", 9, 3)).unwrap() else {
                panic!()
            };
            assert_eq!(b.id, 2);
            let second = RedbStore::open_checked(&dir, false).err().unwrap();
            assert!(second.0.contains("in use"), "{second}");
            assert_eq!(s.cancel(1, &[0xee; 8]).unwrap(), None, "not theirs");
            assert_eq!(Store::get(&s, 1).unwrap().unwrap().status, Status::Active);
            let c = s.cancel(1, &a.new.holder).unwrap().unwrap();
            assert_eq!(c.status, Status::Cancelled);
            assert_eq!(Store::occupant(&s, "atrium", a.new.slot).unwrap(), None);
            assert_eq!(s.cancel(99, &a.new.holder).unwrap(), None);
        }
        let mut s = RedbStore::open_checked(&dir, false).unwrap();
        assert_eq!(
            Store::get(&s, 1).unwrap().unwrap().status,
            Status::Cancelled
        );
        assert_eq!(
            Store::occupant(&s, "nook", new("nook", 9, 3).slot)
                .unwrap()
                .unwrap()
                .id,
            2
        );
        let Commit::Created(d) = s.commit(&new("atrium", 9, 4)).unwrap() else {
            panic!()
        };
        assert_eq!(d.id, 3, "ids are never reused");
        assert_eq!(s.all().unwrap().len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A store held by one server is in use for another; a marker naming another store
    /// refuses it at start.
    #[test]
    fn a_held_store_is_in_use_and_a_foreign_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("redmark-held-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let s = RedbStore::open_checked(&dir, false).unwrap();
        let e = RedbStore::open_checked(&dir, false).err().unwrap();
        assert!(e.0.contains("in use"), "{e}");
        drop(s);
        drop(RedbStore::open_checked(&dir, false).unwrap());
        std::fs::write(
            dir.join(MARKER_FILE),
            format!("{}\n", hex::encode([9u8; 16])),
        )
        .unwrap();
        let e = RedbStore::open_checked(&dir, false).err().unwrap();
        assert!(
            e.0.contains("belongs to another data folder"),
            "at start: {e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
