//! The OS's random generator, for a request's nonce: eight bytes, or a unique stand-in where it fails.

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
