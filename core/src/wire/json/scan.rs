//! Checking a JSON document once and finding where each value ends: the validating scan
//! [`super::parse`] runs, and the skips [`super::Value`] navigates with afterwards.

use crate::limits::MAX_DEPTH;

/// Why a document is not acceptable JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonError {
    /// Not well-formed JSON (byte offset of the problem).
    Syntax(usize),
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Not valid UTF-8.
    Utf8,
}

impl core::fmt::Display for JsonError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            JsonError::Syntax(at) => write!(f, "not well-formed JSON at byte {at}"),
            JsonError::TooDeep => write!(f, "JSON nested deeper than {MAX_DEPTH} levels"),
            JsonError::Utf8 => f.write_str("not valid UTF-8"),
        }
    }
}

impl core::error::Error for JsonError {}

pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The index of the first byte at or after `i` that a JSON string cannot hold as it is (`"`,
/// `\\` or a control byte below 0x20), or `b.len()`; eight bytes a step.
pub(in crate::wire) fn plain_end(b: &[u8], i: usize) -> usize {
    crate::wire::swar::find(b, i, crate::wire::swar::special)
}

/// Skips the already-validated value starting at `i` without checking it again; returns the
/// index just past it (navigation is then linear in the bytes skipped).
pub(super) fn skip(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => return string_end(b, i).min(b.len()),
        Some(b'{' | b'[') => {}
        // A scalar ends at the next delimiter.
        _ => {
            let mut j = i;
            while j < b.len()
                && !matches!(
                    b[j],
                    b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\n' | b'\r'
                )
            {
                j += 1;
            }
            return j;
        }
    }
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => j = string_end(b, j),
            b'{' | b'[' => {
                depth += 1;
                j += 1;
            }
            b'}' | b']' => {
                // Inside the value depth is at least 1; it reaches 0 at its own close.
                depth = depth.saturating_sub(1);
                j += 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => j += 1,
        }
    }
    b.len()
}

/// Just past the validated string opening at `open` (no control bytes in it, so it ends at
/// the first `"` that is not escaped).
pub(super) fn string_end(b: &[u8], open: usize) -> usize {
    let mut j = plain_end(b, open + 1);
    while b.get(j) == Some(&b'\\') {
        j = plain_end(b, j + 2);
    }
    j + 1
}

/// Validates the value starting at `i`; returns the index just past it.
pub(super) fn scan(b: &[u8], i: usize, depth: usize) -> Result<usize, JsonError> {
    let err = Err(JsonError::Syntax(i));
    match b.get(i) {
        Some(b'{') => scan_container(b, i, depth, b'}', true),
        Some(b'[') => scan_container(b, i, depth, b']', false),
        Some(b'"') => scan_string(b, i),
        Some(b't') => literal(b, i, b"true"),
        Some(b'f') => literal(b, i, b"false"),
        Some(b'n') => literal(b, i, b"null"),
        Some(b'-' | b'0'..=b'9') => scan_number(b, i),
        _ => err,
    }
}

pub(super) fn scan_container(
    b: &[u8],
    open: usize,
    depth: usize,
    close: u8,
    object: bool,
) -> Result<usize, JsonError> {
    if depth >= MAX_DEPTH {
        return Err(JsonError::TooDeep);
    }
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&close) {
        return Ok(i + 1);
    }
    loop {
        if object {
            if b.get(i) != Some(&b'"') {
                return Err(JsonError::Syntax(i));
            }
            i = skip_ws(b, scan_string(b, i)?);
            if b.get(i) != Some(&b':') {
                return Err(JsonError::Syntax(i));
            }
            i = skip_ws(b, i + 1);
        }
        i = skip_ws(b, scan(b, i, depth + 1)?);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(c) if *c == close => return Ok(i + 1),
            _ => return Err(JsonError::Syntax(i)),
        }
    }
}

pub(super) fn scan_string(b: &[u8], open: usize) -> Result<usize, JsonError> {
    let mut i = open + 1;
    loop {
        match b.get(i) {
            None => return Err(JsonError::Syntax(i)),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => match b.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') if b.get(i + 2..i + 6).and_then(hex4).is_some() => i += 6,
                _ => return Err(JsonError::Syntax(i)),
            },
            Some(c) if *c < 0x20 => return Err(JsonError::Syntax(i)),
            Some(_) => i = plain_end(b, i + 1),
        }
    }
}

pub(super) fn scan_number(b: &[u8], start: usize) -> Result<usize, JsonError> {
    let digits = |mut i: usize| {
        let s = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i, i > s)
    };
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i).0,
        _ => return Err(JsonError::Syntax(i)),
    }
    if b.get(i) == Some(&b'.') {
        let (j, any) = digits(i + 1);
        if !any {
            return Err(JsonError::Syntax(j));
        }
        i = j;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let (j, any) = digits(i);
        if !any {
            return Err(JsonError::Syntax(j));
        }
        i = j;
    }
    Ok(i)
}

pub(super) fn literal(b: &[u8], i: usize, lit: &[u8]) -> Result<usize, JsonError> {
    if b.get(i..i + lit.len()) == Some(lit) {
        Ok(i + lit.len())
    } else {
        Err(JsonError::Syntax(i))
    }
}

pub(super) fn hex4(b: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in b.get(..4)? {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}
