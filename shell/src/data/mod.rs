//! The data folder, as `redmark serve`, `redmark call` and a folder's owner open it: its mode
//! checked, its sealing keys (`keys.rs`), its bookings store.

pub mod keys;

use std::path::Path;

use crate::store::redb::{self, STORE_FILE};

/// Opens the bookings store of the data directory `dir` (created mode 0700 if missing; refused
/// if other users may write to it, [`check_folder`]), checked first (see
/// [`crate::store::redb`]); with `repair`, redb's repair runs before and says what it did.
/// Shared by `redmark serve` and the in-process server of `redmark call`; open it before the
/// keys ([`open_keys`](crate::serve::open_keys)) so a refused store leaves no new key file
/// behind.
pub fn open_store(dir: &Path, repair: bool) -> Result<redb::RedbStore, String> {
    keys::ensure_dir(dir)?;
    check_folder(dir)?;
    if repair {
        eprintln!("redmark serve: {}", redb::repair(dir).map_err(|e| e.0)?);
    }
    let key_file = dir.join(keys::KEY_FILE).exists();
    let store = redb::RedbStore::open_checked(dir, key_file).map_err(|e| e.0)?;
    tracing::info!("bookings: {}", dir.join(STORE_FILE).display());
    Ok(store)
}

/// Refuses a data folder other users may write to: they could put a store, a lock or a socket
/// of their own in it, for this user's processes to serve or to trust as the folder's owner.
pub fn check_folder(dir: &Path) -> Result<(), String> {
    let loose = crate::platform::files::others_may_write(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    match loose {
        Some(mode) => Err(format!(
            "the data folder {p} has mode {mode:03o}: other users can write to it (and put a \
             store or socket of their own there); run `chmod 700 {p}`",
            p = dir.display()
        )),
        None => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_folder_others_may_write_to_is_refused_with_its_chmod() {
        let dir = std::env::temp_dir().join(format!("redmark-data-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        keys::ensure_dir(&dir).unwrap();
        assert!(check_folder(&dir).is_ok(), "created 0700");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).unwrap();
        let e = open_store(&dir, false).err().expect("refused");
        assert!(
            e.contains("mode 775") && e.contains(&format!("chmod 700 {}", dir.display())),
            "{e}"
        );
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(
            !dir.join(STORE_FILE).exists(),
            "refused before the store is opened"
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(check_folder(&dir).is_ok(), "others may read, not write");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
