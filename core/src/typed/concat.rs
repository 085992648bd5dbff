//! Compile-time string concatenation for the derived schemas: pieces the derive writes and
//! pieces other types declare (a [`Choices`](super::Choices) enum's options), joined into one
//! `&'static str` in a constant.

/// The total length of `pieces`.
#[doc(hidden)]
pub const fn total_len(pieces: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < pieces.len() {
        n += pieces[i].len();
        i += 1;
    }
    n
}

/// `pieces` joined into `N` bytes (`N` must be [`total_len`] of them).
#[doc(hidden)]
pub const fn join<const N: usize>(pieces: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < pieces.len() {
        let b = pieces[i].as_bytes();
        let mut j = 0;
        while j < b.len() {
            out[at] = b[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(at == N, "pieces of another length");
    out
}

/// Bytes joined from `&str` pieces, as a `&str` again.
#[doc(hidden)]
pub const fn as_str(bytes: &'static [u8]) -> &'static str {
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("pieces of UTF-8 join into UTF-8"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PIECES: &[&str] = &["{\"a\":", "[1,2]", "}"];
    const BYTES: [u8; total_len(PIECES)] = join(PIECES);
    const JOINED: &str = as_str(&BYTES);

    #[test]
    fn joins_at_compile_time() {
        assert_eq!(JOINED, "{\"a\":[1,2]}");
    }
}
