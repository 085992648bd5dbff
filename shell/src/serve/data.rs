//! The data folder's bookings store, opened as `redmark serve` and `redmark call` open it.

use std::path::Path;

use super::keys;
use crate::store::redb::{self, STORE_FILE};

/// Opens the bookings store of the data directory `dir` (created mode 0700 if missing),
/// checked first (see [`crate::store::redb`]); with `repair`, redb's repair runs before and says what it
/// did. Shared by `redmark serve` and the in-process server of `redmark call`; open it before
/// the keys ([`open_keys`](super::open_keys)) so a refused store leaves no new key file behind.
pub fn open_store(dir: &Path, repair: bool) -> Result<redb::RedbStore, String> {
    keys::ensure_dir(dir)?;
    if repair {
        eprintln!("redmark serve: {}", redb::repair(dir).map_err(|e| e.0)?);
    }
    let key_file = dir.join(keys::KEY_FILE).exists();
    let store = redb::RedbStore::open_checked(dir, key_file).map_err(|e| e.0)?;
    tracing::info!("bookings: {}", dir.join(STORE_FILE).display());
    Ok(store)
}
