//! Sealing keys and the ring that lets keys rotate without breaking forms in flight.

use core::fmt;
use heapless::Vec;
use zeroize::Zeroize;

use crate::limits::MAX_KEYS;

/// Shortest key accepted, in bytes.
pub const KEY_MIN: usize = 32;
/// Longest key accepted, in bytes.
pub const KEY_MAX: usize = 64;

/// Why a key or ring was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// Key shorter than [`KEY_MIN`] or longer than [`KEY_MAX`] bytes.
    Length,
    /// The ring already holds [`MAX_KEYS`] keys.
    RingFull,
    /// Another key in the ring has the same id.
    DuplicateId,
}

impl core::fmt::Display for KeyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            KeyError::Length => write!(f, "a key must be {KEY_MIN} to {KEY_MAX} bytes"),
            KeyError::RingFull => write!(f, "the key ring already holds {MAX_KEYS} keys"),
            KeyError::DuplicateId => f.write_str("another key in the ring has this id"),
        }
    }
}

impl core::error::Error for KeyError {}

/// One HMAC key with its id; wiped on drop (every clone too) and never printed.
#[derive(Clone)]
pub struct Key {
    id: u8,
    len: u8,
    bytes: [u8; KEY_MAX],
}

impl Key {
    /// A key with id `id` from `secret` (32 to 64 bytes).
    pub fn new(id: u8, secret: &[u8]) -> Result<Key, KeyError> {
        if !(KEY_MIN..=KEY_MAX).contains(&secret.len()) {
            return Err(KeyError::Length);
        }
        let mut bytes = [0; KEY_MAX];
        bytes[..secret.len()].copy_from_slice(secret);
        Ok(Key {
            id,
            len: secret.len() as u8,
            bytes,
        })
    }

    /// The key's id, carried in every token it seals.
    pub fn id(&self) -> u8 {
        self.id
    }

    pub(crate) fn secret(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key {{ id: {}, secret: <redacted> }}", self.id)
    }
}

/// The sealing key and up to [`MAX_KEYS`]` - 1` older keys still accepted for opening.
#[derive(Clone, Debug)]
pub struct KeyRing {
    keys: Vec<Key, MAX_KEYS>,
}

impl KeyRing {
    /// A ring that seals with `current`.
    pub fn new(current: Key) -> Self {
        let mut keys = Vec::new();
        let _ = keys.push(current); // capacity ≥ 1
        KeyRing { keys }
    }

    /// Adds a key that opens old tokens but seals nothing.
    pub fn retain(&mut self, old: Key) -> Result<(), KeyError> {
        if self.find(old.id()).is_some() {
            return Err(KeyError::DuplicateId);
        }
        self.keys.push(old).map_err(|_| KeyError::RingFull)
    }

    /// The key new tokens are sealed with.
    pub fn current(&self) -> Option<&Key> {
        self.keys.first()
    }

    /// The key with id `id`, if the ring holds it.
    pub fn find(&self, id: u8) -> Option<&Key> {
        self.keys.iter().find(|k| k.id == id)
    }

    /// A key for another job named by `label`: HMAC-SHA256 of `label` under the current key
    /// (so rotating the sealing key changes it); `None` for an empty ring.
    pub fn derive(&self, label: &[u8]) -> Option<[u8; 32]> {
        use hmac::{Hmac, Mac};
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(self.current()?.secret()).ok()?;
        mac.update(label);
        Some(mac.finalize().into_bytes().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_the_secret() {
        let k = Key::new(3, &[0xAB; 32]).unwrap();
        let shown = format!(
            "{k:?} {:?}",
            KeyRing::new(Key::new(1, &[0xAB; 32]).unwrap())
        );
        assert!(!shown.to_lowercase().contains("ab, ") && !shown.contains("171"));
        assert!(shown.contains("redacted"));
    }

    #[test]
    fn a_derived_key_follows_the_current_key_and_its_label() {
        let mut ring = KeyRing::new(Key::new(1, &[1; 32]).unwrap());
        let a = ring.derive(b"feed").unwrap();
        assert_ne!(a, ring.derive(b"uid").unwrap());
        assert_ne!(a, [1; 32]);
        // An old key kept for opening does not change it; a new current key does.
        ring.retain(Key::new(2, &[2; 32]).unwrap()).unwrap();
        assert_eq!(ring.derive(b"feed").unwrap(), a);
        let rotated = KeyRing::new(Key::new(3, &[3; 32]).unwrap());
        assert_ne!(rotated.derive(b"feed").unwrap(), a);
    }

    #[test]
    fn lengths_and_ring_limits() {
        assert_eq!(Key::new(0, &[1; 31]).unwrap_err(), KeyError::Length);
        assert_eq!(Key::new(0, &[1; 65]).unwrap_err(), KeyError::Length);
        let mut ring = KeyRing::new(Key::new(0, &[1; 32]).unwrap());
        assert_eq!(
            ring.retain(Key::new(0, &[2; 32]).unwrap()),
            Err(KeyError::DuplicateId)
        );
        for id in 1..MAX_KEYS as u8 {
            ring.retain(Key::new(id, &[2; 32]).unwrap()).unwrap();
        }
        assert_eq!(
            ring.retain(Key::new(99, &[2; 32]).unwrap()),
            Err(KeyError::RingFull)
        );
        assert_eq!(ring.current().unwrap().id(), 0);
    }
}
