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

/// How many bytes `v` takes in decimal (a `-` included).
#[doc(hidden)]
pub const fn decimal_len(v: i64) -> usize {
    let mut n = if v < 0 { 2 } else { 1 };
    let mut rest = v.unsigned_abs() / 10;
    while rest > 0 {
        n += 1;
        rest /= 10;
    }
    n
}

/// `v` in decimal, in `N` bytes (`N` must be [`decimal_len`] of it).
#[doc(hidden)]
pub const fn decimal<const N: usize>(v: i64) -> [u8; N] {
    let mut out = [b'-'; N];
    let mut rest = v.unsigned_abs();
    let mut at = N;
    loop {
        at -= 1;
        out[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    assert!(at == (v < 0) as usize, "digits of another length");
    out
}

/// An integer a derive's attribute names by a constant (`max_len = MAX_ROOM_HINT`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer: a bound in `#[arg]` or `#[field]` is an integer constant",
    label = "not an integer",
    note = "name a constant of an integer type (`const MAX_ROOM_HINT: usize = 64;`), or write the number"
)]
pub trait Bound: Copy {}

macro_rules! bounds {
    ($($t:ty),*) => {$( impl Bound for $t {} )*};
}
bounds!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// `v`, checked to be an integer (cast by the caller).
#[doc(hidden)]
pub const fn bound<T: Bound>(v: T) -> T {
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const PIECES: &[&str] = &["{\"a\":", "[1,2]", "}"];
    const BYTES: [u8; total_len(PIECES)] = join(PIECES);
    const JOINED: &str = as_str(&BYTES);

    const DIGITS: [u8; decimal_len(-1204)] = decimal(-1204);

    #[test]
    fn writes_decimals_at_compile_time() {
        assert_eq!(as_str(&DIGITS), "-1204");
        for v in [0, 7, 10, 64, 99_999, i64::MIN + 1, i64::MAX] {
            assert_eq!(decimal_len(v), v.to_string().len(), "{v}");
        }
    }

    #[test]
    fn joins_at_compile_time() {
        assert_eq!(JOINED, "{\"a\":[1,2]}");
    }
}
