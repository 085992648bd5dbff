//! The clean-close stamp of the bookings store: lets a start skip the whole-file check of a
//! store that has not changed since this program closed it cleanly.
//!
//! When a [`super::store::RedbStore`] closes cleanly (redb has written and fsynced its final
//! header), the file's modification time is set to a value of our own — the current second
//! with random nanoseconds, which no write by the kernel would produce — and [`STAMP_FILE`]
//! records that time with the file's size, inode and device, and the store's id. The next
//! start reads the stamp and deletes it before opening the store (so a crash while serving
//! leaves no stamp), and skips the check only if the file still has exactly that size, inode,
//! device and modification time. Any write to the file (damage, truncation, a copy over it, another
//! program) sets the time from the kernel's clock and so fails the match: such a file gets the
//! whole check, as does a store after a crash, a `kill -9` or a lost stamp.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::store::StoreId;

/// The stamp, next to the store: `size inode device mtime-seconds mtime-nanoseconds id`, the
/// id in hex.
pub const STAMP_FILE: &str = "store-clean";

/// A stamp that matched its store: the store is as its clean close left it, with this id.
pub struct Stamp {
    pinned: Pinned,
    /// The store's id at its clean close.
    pub id: StoreId,
}

impl Stamp {
    fn text(&self) -> String {
        format!("{} {}\n", self.pinned.text(), hex::encode(self.id))
    }

    fn parse(t: &str) -> Option<Stamp> {
        let (pinned, id) = t.trim_end().rsplit_once(' ')?;
        Some(Stamp {
            pinned: Pinned::parse(pinned)?,
            id: hex::decode(id).ok()?.try_into().ok()?,
        })
    }
}

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
            "{} {} {} {} {}",
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

/// Reads and deletes `dir`'s stamp; the stamp if `store` is unchanged since it was written.
pub fn take(dir: &Path, store: &Path) -> Option<Stamp> {
    let path = dir.join(STAMP_FILE);
    let text = fs::read_to_string(&path).ok()?;
    // Deleted even if it does not match: it can only match the close that wrote it.
    fs::remove_file(&path).ok()?;
    let stamp = Stamp::parse(&text)?;
    fs::metadata(store)
        .is_ok_and(|m| Pinned::of(&m) == stamp.pinned)
        .then_some(stamp)
}

/// Writes back the stamp [`take`] gave for `store`, which was held since (`held`: the file,
/// locked) and never opened: only if the file held and the file at `store` are still the one
/// it pinned, unchanged.
pub fn put_back(dir: &Path, store: &Path, held: &fs::File, stamp: &Stamp) {
    let same = |m: fs::Metadata| Pinned::of(&m) == stamp.pinned;
    if held.metadata().is_ok_and(same) && fs::metadata(store).is_ok_and(same) {
        write(dir, stamp);
    }
}

/// Writes `stamp` atomically (a temporary file renamed over the stamp).
fn write(dir: &Path, stamp: &Stamp) {
    let tmp = dir.join(format!("{STAMP_FILE}.tmp"));
    if fs::write(&tmp, stamp.text()).is_ok() {
        let _ = fs::rename(&tmp, dir.join(STAMP_FILE));
    }
}

/// Stamps `store` (just closed cleanly) as unchanged since; any failure leaves no stamp, so
/// the next start checks the whole file. `id` is the store's.
pub fn stamp(dir: &Path, store: &Path, id: &StoreId) {
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
    write(
        dir,
        &Stamp {
            pinned: Pinned::of(&m),
            id: *id,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder `redmark-NAME-PID` in the temporary folder, with a 3-byte "store".
    fn folder(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("redmark-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let store = dir.join("s");
        fs::write(&store, b"abc").unwrap();
        (dir, store)
    }

    #[test]
    fn a_stamp_matches_once_and_not_after_a_write() {
        let (dir, store) = folder("clean");
        assert!(take(&dir, &store).is_none(), "no stamp, no skip");
        stamp(&dir, &store, &[7; 16]);
        assert_eq!(take(&dir, &store).map(|s| s.id), Some([7; 16]));
        assert!(take(&dir, &store).is_none(), "a stamp is used once");
        stamp(&dir, &store, &[7; 16]);
        fs::write(&store, b"abd").unwrap();
        assert!(
            take(&dir, &store).is_none(),
            "same size, written after the stamp"
        );
        stamp(&dir, &store, &[7; 16]);
        fs::write(dir.join(STAMP_FILE), "3 1 2 3").unwrap();
        assert!(take(&dir, &store).is_none(), "a malformed stamp");
        stamp(&dir, &store, &[7; 16]);
        let old = fs::read_to_string(dir.join(STAMP_FILE)).unwrap();
        let without_id = old.trim_end().rsplit_once(' ').unwrap().0;
        fs::write(dir.join(STAMP_FILE), without_id).unwrap();
        assert!(take(&dir, &store).is_none(), "a stamp from before the id");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A stamp taken while the store was held goes back only onto the same, unchanged file.
    #[test]
    fn a_stamp_goes_back_only_onto_the_file_it_pinned() {
        let (dir, store) = folder("putback");
        stamp(&dir, &store, &[7; 16]);
        let s = take(&dir, &store).unwrap();
        let held = fs::File::open(&store).unwrap();
        put_back(&dir, &store, &held, &s);
        let back = take(&dir, &store).expect("put back, and it matches");
        assert_eq!(back.id, [7; 16]);
        fs::write(&store, b"abd").unwrap();
        put_back(&dir, &store, &held, &back);
        assert!(
            !dir.join(STAMP_FILE).exists(),
            "written since: not put back"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
