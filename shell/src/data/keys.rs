//! Sealing keys: `REDMARK_KEY` from the environment, or a key file in the data directory.
//!
//! The key file (`DIR/sealing-keys`, mode 0600) holds one key a line, `<id> <hex secret>`, the
//! current key first, older ones after it (kept for verifying `requestState` minted before a
//! rotation; at most [`MAX_KEYS`] in all). `redmark serve --rotate-key` adds a fresh current key
//! and keeps the previous ones. The file is replaced atomically (temp file, fsync, rename).
//!
//! The key file must not be readable by group or others: `redmark serve` refuses to start
//! (naming the `chmod 600` to run) rather than serve with a secret others can read.
//!
//! Key ids in the file follow rotation order (each new key takes the next free id after the
//! current one), so they never collide.
//!
//! `REDMARK_KEY` (hex, 32–64 bytes) overrides the file; its key id is the first byte of its
//! SHA-256, so instances sharing the variable agree. `REDMARK_OLD_KEYS` (comma-separated hex)
//! adds keys that verify but do not seal, each with the first byte of its SHA-256 as id too —
//! unless an earlier key in the list (the current one first) already has that id (1 in 256 per
//! key): then it takes the next free id, so the ring always loads. (Another instance holding
//! that key as its only key names it by its hash byte, so requestState it minted fails here as
//! if expired and the client asks again; a duplicate of an earlier key is dropped.)

use std::fs;
use std::io::Write;
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
        let old = std::env::var("REDMARK_OLD_KEYS").ok();
        return env_ring(&hexkey, old.as_deref());
    }
    let path = dir.join(KEY_FILE);
    let mut secrets = match fs::read_to_string(&path) {
        Ok(text) => {
            check_mode(&path)?;
            parse(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if secrets.is_empty() || rotate {
        secrets.truncate(MAX_KEYS - 1);
        let start = secrets.first().map_or(0, |s| s.id.wrapping_add(1));
        let id = free_id(start, &secrets);
        secrets.insert(
            0,
            Secret {
                id,
                bytes: random(32)?,
            },
        );
        save(&path, &secrets)?;
        tracing::info!(key_id = id, "new sealing key stored in {}", path.display());
    }
    ring(&secrets, path.display().to_string())
}

/// The ring of `REDMARK_KEY` (`current`) and `REDMARK_OLD_KEYS` (`old`).
fn env_ring(current: &str, old: Option<&str>) -> Result<Loaded, String> {
    let mut secrets = vec![env_secret("REDMARK_KEY", current)?];
    for h in old
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
    {
        let mut s = env_secret("REDMARK_OLD_KEYS", h)?;
        if secrets.iter().any(|x| x.bytes == s.bytes) {
            continue;
        }
        s.id = free_id(s.id, &secrets);
        secrets.push(s);
    }
    if secrets.len() > MAX_KEYS {
        return Err(format!(
            "REDMARK_KEY and REDMARK_OLD_KEYS hold {} keys; at most {MAX_KEYS}",
            secrets.len()
        ));
    }
    ring(&secrets, "REDMARK_KEY".into())
}

/// `want`, or the next id after it (wrapping) that none of `taken` has.
fn free_id(want: u8, taken: &[Secret]) -> u8 {
    let mut id = want;
    // At most MAX_KEYS ids are taken, so a free one is always near.
    while taken.iter().any(|s| s.id == id) {
        id = id.wrapping_add(1);
    }
    id
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
    let key = |s: &Secret| Key::new(s.id, &s.bytes).map_err(|e| format!("key {}: {e}", s.id));
    let (first, rest) = secrets.split_first().ok_or("no sealing key")?;
    let mut ring = KeyRing::new(key(first)?);
    for s in rest {
        ring.retain(key(s)?)
            .map_err(|e| format!("key {}: {e} (two keys with one id?)", s.id))?;
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
        if v.iter().any(|s: &Secret| s.id == id) {
            return Err(format!("line {}: a second key with id {id}", n + 1));
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
    let mut f = crate::platform::files::private_file()
        .write(true)
        .create_new(true)
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

/// Refuses a key file that group or others may read or write.
fn check_mode(path: &Path) -> Result<(), String> {
    let shared = crate::platform::files::shared_mode(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if let Some(mode) = shared {
        return Err(format!(
            "{p} has mode {mode:03o}: other users could read the sealing keys; run \
             `chmod 600 {p}` (and, if someone else may have read it, `redmark serve \
             --rotate-key`)",
            p = path.display()
        ));
    }
    Ok(())
}

fn random(n: usize) -> Result<Vec<u8>, String> {
    let mut b = vec![0; n];
    getrandom::fill(&mut b).map_err(|e| format!("no system randomness: {e}"))?;
    Ok(b)
}

/// Creates the data directory (mode 0700) if missing.
pub fn ensure_dir(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        crate::platform::files::create_private_dir(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    Ok(())
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
        let shared = crate::platform::files::shared_mode(&dir.join(KEY_FILE)).unwrap();
        assert_eq!(shared, None, "the key file is private");
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

    #[cfg(unix)]
    #[test]
    fn refuses_a_key_file_others_can_read() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("redmark-keys-mode-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        ensure_dir(&dir).unwrap();
        load(&dir, false).unwrap();
        let file = dir.join(KEY_FILE);
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
        let e = load(&dir, false).err().expect("refused");
        assert!(e.contains("mode 640") && e.contains("chmod 600"), "{e}");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(load(&dir, false).is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Two environment keys whose SHA-256 starts with the same byte still load, with
    /// different ids; the current key keeps its hash byte.
    #[test]
    fn environment_key_ids_never_collide() {
        let first = |k: &str| Sha256::digest(hex::decode(k).unwrap())[0];
        let current = "11".repeat(32);
        let mut colliding = Vec::new();
        for i in 0u32.. {
            let k = format!("{:08x}{}", i, "22".repeat(28));
            if first(&k) == first(&current) {
                colliding.push(k);
                if colliding.len() == 2 {
                    break;
                }
            }
        }
        let old = format!("{},{},{}", colliding[0], current, colliding[1]);
        let r = env_ring(&current, Some(&old)).unwrap();
        let id = r.ring.current().unwrap().id();
        assert_eq!(id, first(&current));
        for k in [id, id.wrapping_add(1), id.wrapping_add(2)] {
            assert!(r.ring.find(k).is_some(), "key id {k}: {}", r.source);
        }
        let five: Vec<String> = (0..4).map(|i| format!("{i:02x}").repeat(32)).collect();
        assert!(env_ring(&current, Some(&five.join(","))).is_err());
    }

    #[test]
    fn rotation_skips_ids_in_use() {
        let a = Secret {
            id: 0,
            bytes: vec![1; 32],
        };
        let b = Secret {
            id: 1,
            bytes: vec![2; 32],
        };
        assert_eq!(free_id(0, &[a, b]), 2);
        assert!(parse(&format!("3 {k}\n3 {k}\n", k = "ab".repeat(32))).is_err());
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
