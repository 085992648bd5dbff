//! A top-level member of a document too deep (or otherwise too bad) to parse whole, so that an
//! error about the document can still name, e.g., its id.

use super::scan::{scan_string, skip_ws};
use super::{parse, Value};

/// The top-level member `key` of a document [`parse`] refused (as nested too deeply, say), when
/// the document is an object and that member's own value is valid JSON: so an error about the
/// document can still name, e.g., its id. The top level is walked without validating the other
/// members' values (linear, no recursion, never past the input).
pub fn shallow_member<'a>(input: &'a [u8], key: &str) -> Option<Value<'a>> {
    let mut i = skip_ws(input, 0);
    if input.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(input, i + 1);
    loop {
        if input.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = scan_string(input, i).ok()?;
        let name = Value {
            raw: &input[i..key_end],
        };
        i = skip_ws(input, key_end);
        if input.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(input, i + 1);
        let end = skip_unchecked(input, i)?;
        if name.eq_str(key) {
            return parse(&input[i..end]).ok();
        }
        i = skip_ws(input, end);
        if input.get(i) != Some(&b',') {
            return None;
        }
        i = skip_ws(input, i + 1);
    }
}

/// Just past the (unvalidated) value starting at `i`, by brackets and string quotes only;
/// `None` when the input ends first.
fn skip_unchecked(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' if depth == 0 => return Some(i),
            b'}' | b']' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return Some(i),
            _ => i += 1,
        }
    }
}
