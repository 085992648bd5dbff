//! The clean-close stamp of the bookings store: lets a start skip the whole-file check of a
//! store that has not changed since this program closed it cleanly.
//!
//! When a [`super::store::RedbStore`] closes cleanly (redb has written and fsynced its final
//! header), the file's modification time is set to a value of our own — the current second
//! with random nanoseconds, which no write by the kernel would produce — and [`STAMP_FILE`]
//! records that time with the file's size, inode and device. The next start reads the stamp
//! and deletes it before opening the store (so a crash while serving leaves no stamp), and
//! skips the check only if the file still has exactly that size, inode, device and
//! modification time. Any write to the file (damage, truncation, a copy over it, another
//! program) sets the time from the kernel's clock and so fails the match: such a file gets the
//! whole check, as does a store after a crash, a `kill -9` or a lost stamp.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The stamp, next to the store: `size inode device mtime-seconds mtime-nanoseconds`.
pub const STAMP_FILE: &str = "store-clean";

/// What the stamp pins of the store file.
#[derive(Debug, PartialEq, Eq)]
struct Pinned {
    len: u64,
    ino: u64,
    dev: u64,
    secs: i64,
    nanos: i64,
}

impl Pinned {
    fn of(m: &fs::Metadata) -> Pinned {
        Pinned {
            len: m.len(),
            ino: m.ino(),
            dev: m.dev(),
            secs: m.mtime(),
            nanos: m.mtime_nsec(),
        }
    }

    fn text(&self) -> String {
        format!(
            "{} {} {} {} {}\n",
            self.len, self.ino, self.dev, self.secs, self.nanos
        )
    }

    fn parse(t: &str) -> Option<Pinned> {
        let mut it = t.split_ascii_whitespace();
        let p = Pinned {
            len: it.next()?.parse().ok()?,
            ino: it.next()?.parse().ok()?,
            dev: it.next()?.parse().ok()?,
            secs: it.next()?.parse().ok()?,
            nanos: it.next()?.parse().ok()?,
        };
        it.next().is_none().then_some(p)
    }
}

/// Reads and deletes `dir`'s stamp; whether `store` is unchanged since it was written.
pub fn take(dir: &Path, store: &Path) -> bool {
    let path = dir.join(STAMP_FILE);
    let Ok(text) = fs::read_to_string(&path) else {
        return false;
    };
    // Deleted even if it does not match: it can only match the close that wrote it.
    if fs::remove_file(&path).is_err() {
        return false;
    }
    let Some(stamp) = Pinned::parse(&text) else {
        return false;
    };
    fs::metadata(store).is_ok_and(|m| Pinned::of(&m) == stamp)
}

/// Stamps `store` (just closed cleanly) as unchanged since; any failure leaves no stamp, so
/// the next start checks the whole file.
pub fn stamp(dir: &Path, store: &Path) {
    let path = dir.join(STAMP_FILE);
    let _ = fs::remove_file(&path);
    let mut nanos = [0u8; 4];
    if getrandom::fill(&mut nanos).is_err() {
        return;
    }
    let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) else {
        return;
    };
    let ns = u32::from_le_bytes(nanos) % 1_000_000_000;
    let at = UNIX_EPOCH + Duration::new(now.as_secs(), ns);
    let set = fs::File::options()
        .write(true)
        .open(store)
        .and_then(|f| f.set_modified(at).and_then(|()| f.metadata()));
    let Ok(m) = set else {
        return;
    };
    let tmp = dir.join(format!("{STAMP_FILE}.tmp"));
    if fs::write(&tmp, Pinned::of(&m).text()).is_ok() {
        let _ = fs::rename(&tmp, &path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_matches_once_and_not_after_a_write() {
        let dir = std::env::temp_dir().join(format!("redmark-clean-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let store = dir.join("s");
        fs::write(&store, b"abc").unwrap();
        assert!(!take(&dir, &store), "no stamp, no skip");
        stamp(&dir, &store);
        assert!(take(&dir, &store));
        assert!(!take(&dir, &store), "a stamp is used once");
        stamp(&dir, &store);
        fs::write(&store, b"abd").unwrap();
        assert!(!take(&dir, &store), "same size, written after the stamp");
        stamp(&dir, &store);
        fs::write(dir.join(STAMP_FILE), "3 1 2 3").unwrap();
        assert!(!take(&dir, &store), "a malformed stamp");
        fs::remove_dir_all(&dir).unwrap();
    }
}
