//! Sealing keys: `REDMARK_KEY` from the environment, or a key file in the data directory.
//!
//! The key file (`DIR/sealing-keys`, mode 0600) holds one key a line, `<id> <hex secret>`, the
//! current key first, older ones after it (kept for verifying `requestState` minted before a
//! rotation; at most [`MAX_KEYS`] in all). `redmark serve --rotate-key` adds a fresh current key
//! and keeps the previous ones. The file is replaced atomically (temp file, fsync, rename).
//!
//! `REDMARK_KEY` (hex, 32–64 bytes) overrides the file; its key id is the first byte of its
//! SHA-256, so instances sharing the variable agree. `REDMARK_OLD_KEYS` (comma-separated hex)
//! adds keys that verify but do not seal.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use redmark_core::limits::MAX_KEYS;
use redmark_core::seal::{Key, KeyRing};
use sha2::{Digest, Sha256};

/// Name of the key file inside the data directory.
pub const KEY_FILE: &str = "sealing-keys";

/// A key as held before it goes into the ring.
struct Secret {
    id: u8,
    bytes: Vec<u8>,
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.bytes.iter_mut().for_each(|b| *b = 0);
    }
}

/// Where the ring came from (for the log; never the secret).
pub struct Loaded {
    /// The ring.
    pub ring: KeyRing,
    /// A description: "REDMARK_KEY" or the file, and the key ids.
    pub source: String,
}

/// Builds the key ring: from the environment if `REDMARK_KEY` is set, else from `dir`'s key
/// file (created with a random key on first start; rotated first if `rotate`).
pub fn load(dir: &Path, rotate: bool) -> Result<Loaded, String> {
    if let Ok(hexkey) = std::env::var("REDMARK_KEY") {
        if rotate {
            return Err(
                "--rotate-key rotates the key file; with REDMARK_KEY set, rotate by \
                        moving the old value to REDMARK_OLD_KEYS and setting a new one"
                    .into(),
            );
        }
        let mut secrets = vec![env_secret("REDMARK_KEY", &hexkey)?];
        if let Ok(old) = std::env::var("REDMARK_OLD_KEYS") {
            for h in old.split(',').map(str::trim).filter(|h| !h.is_empty()) {
                secrets.push(env_secret("REDMARK_OLD_KEYS", h)?);
            }
        }
        return ring(&secrets, "REDMARK_KEY".into());
    }
    let path = dir.join(KEY_FILE);
    let mut secrets = match fs::read_to_string(&path) {
        Ok(text) => {
            check_mode(&path);
            parse(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if secrets.is_empty() || rotate {
        let id = secrets.first().map_or(0, |s| s.id.wrapping_add(1));
        secrets.insert(
            0,
            Secret {
                id,
                bytes: random(32)?,
            },
        );
        secrets.truncate(MAX_KEYS);
        save(&path, &secrets)?;
        tracing::info!(key_id = id, "new sealing key stored in {}", path.display());
    }
    ring(&secrets, path.display().to_string())
}

fn env_secret(var: &str, hexkey: &str) -> Result<Secret, String> {
    let bytes = hex::decode(hexkey.trim()).map_err(|_| format!("{var} is not hex"))?;
    if !(32..=64).contains(&bytes.len()) {
        return Err(format!(
            "{var} must be 32 to 64 bytes (64 to 128 hex digits)"
        ));
    }
    let id = Sha256::digest(&bytes)[0];
    Ok(Secret { id, bytes })
}

fn ring(secrets: &[Secret], source: String) -> Result<Loaded, String> {
    let key = |s: &Secret| Key::new(s.id, &s.bytes).map_err(|e| format!("key {}: {e:?}", s.id));
    let (first, rest) = secrets.split_first().ok_or("no sealing key")?;
    let mut ring = KeyRing::new(key(first)?);
    for s in rest {
        ring.retain(key(s)?)
            .map_err(|e| format!("key {}: {e:?} (two keys with one id?)", s.id))?;
    }
    let ids: Vec<String> = secrets.iter().map(|s| s.id.to_string()).collect();
    Ok(Loaded {
        ring,
        source: format!("{source} (key ids {}, first seals)", ids.join(", ")),
    })
}

fn parse(text: &str) -> Result<Vec<Secret>, String> {
    let mut v = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || {
            format!(
                "line {}: expected `<id 0-255> <hex secret of 32-64 bytes>`",
                n + 1
            )
        };
        let (id, hexkey) = line.split_once(' ').ok_or_else(bad)?;
        let id: u8 = id.parse().map_err(|_| bad())?;
        let bytes = hex::decode(hexkey.trim()).map_err(|_| bad())?;
        if !(32..=64).contains(&bytes.len()) {
            return Err(bad());
        }
        v.push(Secret { id, bytes });
    }
    if v.len() > MAX_KEYS {
        v.truncate(MAX_KEYS);
    }
    Ok(v)
}

fn save(path: &Path, secrets: &[Secret]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let _ = fs::remove_file(&tmp);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(fail)?;
    let mut text =
        String::from("# redmark sealing keys: <id> <hex>; the first seals, all verify\n");
    for s in secrets {
        text.push_str(&format!("{} {}\n", s.id, hex::encode(&s.bytes)));
    }
    f.write_all(text.as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    drop(f);
    fs::rename(&tmp, path).map_err(fail)?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

fn check_mode(path: &Path) {
    if let Ok(m) = fs::metadata(path) {
        if m.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "{} is readable by others; run chmod 600 on it",
                path.display()
            );
        }
    }
}

fn random(n: usize) -> Result<Vec<u8>, String> {
    let mut b = vec![0; n];
    getrandom::fill(&mut b).map_err(|e| format!("no system randomness: {e}"))?;
    Ok(b)
}

/// Creates the data directory (mode 0700) if missing.
pub fn ensure_dir(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Eight fresh random bytes for a request's nonce.
pub fn entropy() -> [u8; 8] {
    let mut b = [0; 8];
    if getrandom::fill(&mut b).is_err() {
        // Never seen on Linux; a nonce only has to be unique, so fall back to time + counter.
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let x = (t as u64) ^ N.fetch_add(1, Ordering::Relaxed).rotate_left(48);
        b = x.to_le_bytes();
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_rotates_and_keeps_old_keys() {
        let dir = std::env::temp_dir().join(format!("redmark-keys-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        ensure_dir(&dir).unwrap();
        let a = load(&dir, false).unwrap();
        let mode = fs::metadata(dir.join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(a.ring.current().unwrap().id(), 0);
        let again = load(&dir, false).unwrap();
        assert_eq!(again.ring.current().unwrap().id(), 0);
        for _ in 0..5 {
            load(&dir, true).unwrap();
        }
        let r = load(&dir, false).unwrap();
        assert_eq!(r.ring.current().unwrap().id(), 5);
        assert!(
            r.ring.find(2).is_some() && r.ring.find(1).is_none(),
            "keeps the newest {MAX_KEYS}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(parse("0 abcd\n").is_err());
        assert!(parse("x 00\n").is_err());
        assert_eq!(
            parse(&format!("# c\n\n7 {}", "ab".repeat(32))).unwrap()[0].id,
            7
        );
    }
}
