//! A validating, zero-copy JSON view: [`parse`] checks a whole document once, then [`Value`]s
//! navigate it without allocating. serde-json-core cannot `deserialize_any`, so the envelope,
//! `_meta` and `inputResponses` (whose shapes vary) are read through this view. The booking
//! tools read their arguments from it too (`booking/read.rs`, smaller on the panel than a
//! serde derive); a tool whose arguments are `#[args(serde)]` has serde-json-core read the
//! span it hands out.
//!
//! Duplicate object keys are not rejected: every lookup takes the first occurrence.

mod scan;
pub mod shallow;

pub(in crate::wire) use scan::plain_end;
pub use scan::JsonError;
use scan::{hex4, scan, skip, skip_ws};
/// The JSON type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `{…}`
    Object,
    /// `[…]`
    Array,
    /// `"…"`
    String,
    /// a number
    Number,
    /// `true` or `false`
    Bool,
    /// `null`
    Null,
}

/// One well-formed JSON value, borrowed from a validated document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value<'a> {
    raw: &'a [u8],
}

/// Validates `input` as exactly one JSON value (surrounding whitespace allowed).
pub fn parse(input: &[u8]) -> Result<Value<'_>, JsonError> {
    core::str::from_utf8(input).map_err(|_| JsonError::Utf8)?;
    let start = skip_ws(input, 0);
    let end = scan(input, start, 0)?;
    if skip_ws(input, end) != input.len() {
        return Err(JsonError::Syntax(end));
    }
    Ok(Value {
        raw: &input[start..end],
    })
}

impl<'a> Value<'a> {
    /// The value's exact bytes as they stand in the document.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The JSON type of the value.
    pub fn kind(&self) -> Kind {
        match self.raw.first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't') | Some(b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// The first member named `key`, if this is an object that has one.
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.members().find(|(k, _)| k.eq_str(key)).map(|(_, v)| v)
    }

    /// The first member named by each of `keys` (distinct), found in one walk of the object:
    /// what [`Value::get`] finds for each, without walking the object once per key.
    #[inline(always)]
    pub fn pick<const N: usize>(&self, keys: [&str; N]) -> [Option<Value<'a>>; N] {
        let mut found = [None; N];
        self.pick_into(&keys, &mut found);
        found
    }

    /// [`Value::pick`]'s walk, one copy for every `N` (the panel's flash is counted).
    fn pick_into(&self, keys: &[&str], found: &mut [Option<Value<'a>>]) {
        let mut left = keys.len();
        for (k, v) in self.members() {
            let Some(at) = keys.iter().position(|key| k.eq_str(key)) else {
                continue;
            };
            if let Some(slot @ None) = found.get_mut(at) {
                *slot = Some(v);
                left -= 1;
                if left == 0 {
                    return;
                }
            }
        }
    }

    /// The members of an object (nothing for other kinds), in document order.
    pub fn members(&self) -> Members<'a> {
        let pos = if self.kind() == Kind::Object {
            1
        } else {
            self.raw.len()
        };
        Members { raw: self.raw, pos }
    }

    /// The items of an array (nothing for other kinds), in document order.
    pub fn items(&self) -> Items<'a> {
        let pos = if self.kind() == Kind::Array {
            1
        } else {
            self.raw.len()
        };
        Items { raw: self.raw, pos }
    }

    /// The string's content, still escaped as in the document (without the quotes).
    pub fn str_escaped(&self) -> Option<&'a [u8]> {
        match self.kind() {
            Kind::String => Some(&self.raw[1..self.raw.len() - 1]),
            _ => None,
        }
    }

    /// The string's content when it has no escapes (borrowed, no copy).
    pub fn as_plain_str(&self) -> Option<&'a str> {
        core::str::from_utf8(self.plain_bytes()?).ok()
    }

    /// [`Value::as_plain_str`]'s bytes, without checking UTF-8 again (the document was).
    pub(crate) fn plain_bytes(&self) -> Option<&'a [u8]> {
        self.str_escaped().filter(|body| !body.contains(&b'\\'))
    }

    /// The decoded string, borrowed when it has no escapes, else unescaped into `scratch`.
    /// `None` if this is not a string or the decoded text does not fit `scratch`.
    pub fn as_str<'s>(&self, scratch: &'s mut [u8]) -> Option<&'s str>
    where
        'a: 's,
    {
        if let Some(s) = self.as_plain_str() {
            return Some(s);
        }
        let n = unescape(self.str_escaped()?, scratch)?;
        core::str::from_utf8(&scratch[..n]).ok()
    }

    /// Whether this is a string whose decoded content equals `s`.
    pub fn eq_str(&self, s: &str) -> bool {
        match self.str_escaped() {
            Some(body) if !body.contains(&b'\\') => body == s.as_bytes(),
            Some(body) => Chars::new(body).eq(s.chars()),
            None => false,
        }
    }

    /// Orders two strings by their decoded characters (UTF-8 byte order when neither has
    /// escapes, which is the same order).
    pub fn cmp_str(&self, other: &Value<'_>) -> core::cmp::Ordering {
        match (self.plain_bytes(), other.plain_bytes()) {
            (Some(a), Some(b)) => a.cmp(b),
            _ => self.chars().cmp(other.chars()),
        }
    }

    /// The decoded characters of a string (nothing for other kinds).
    pub fn chars(&self) -> Chars<'a> {
        Chars::new(self.str_escaped().unwrap_or(b""))
    }

    /// The value as an integer, if it is a number written without fraction or exponent.
    pub fn as_i64(&self) -> Option<i64> {
        if self.kind() != Kind::Number || self.raw.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
            return None;
        }
        core::str::from_utf8(self.raw).ok()?.parse().ok()
    }

    /// The value as a float, if it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        if self.kind() != Kind::Number {
            return None;
        }
        core::str::from_utf8(self.raw).ok()?.parse().ok()
    }

    /// The value as a boolean, if it is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self.raw {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.raw == b"null"
    }
}

/// Iterator over an object's members as (key, value).
pub struct Members<'a> {
    raw: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = (Value<'a>, Value<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        let k0 = skip_ws(self.raw, self.pos);
        if k0 >= self.raw.len() || self.raw[k0] != b'"' {
            self.pos = self.raw.len();
            return None;
        }
        let k1 = skip(self.raw, k0);
        let colon = skip_ws(self.raw, k1);
        let v0 = skip_ws(self.raw, colon + 1);
        let v1 = skip(self.raw, v0);
        self.pos = skip_ws(self.raw, v1) + 1; // past ',' or '}'
        Some((
            Value {
                raw: &self.raw[k0..k1],
            },
            Value {
                raw: &self.raw[v0..v1],
            },
        ))
    }
}

/// Iterator over an array's items.
pub struct Items<'a> {
    raw: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;
    fn next(&mut self) -> Option<Self::Item> {
        let v0 = skip_ws(self.raw, self.pos);
        if v0 >= self.raw.len() || self.raw[v0] == b']' {
            self.pos = self.raw.len();
            return None;
        }
        let v1 = skip(self.raw, v0);
        self.pos = skip_ws(self.raw, v1) + 1;
        Some(Value {
            raw: &self.raw[v0..v1],
        })
    }
}

/// Decoded characters of an escaped JSON string body (already validated).
pub struct Chars<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Chars<'a> {
    fn new(body: &'a [u8]) -> Self {
        Chars { body, pos: 0 }
    }
}

impl Iterator for Chars<'_> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        let b = *self.body.get(self.pos)?;
        if b != b'\\' {
            // Validated UTF-8: decode one scalar from the lead byte.
            let len = utf8_len(b);
            let s = core::str::from_utf8(self.body.get(self.pos..self.pos + len)?).ok()?;
            self.pos += len;
            return s.chars().next();
        }
        let e = *self.body.get(self.pos + 1)?;
        self.pos += 2;
        Some(match e {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let hi = hex4(self.body.get(self.pos..self.pos + 4)?)?;
                self.pos += 4;
                if (0xD800..0xDC00).contains(&hi)
                    && self.body.get(self.pos..self.pos + 2) == Some(b"\\u")
                {
                    if let Some(lo) = self.body.get(self.pos + 2..self.pos + 6).and_then(hex4) {
                        if (0xDC00..0xE000).contains(&lo) {
                            self.pos += 6;
                            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            return Some(char::from_u32(c).unwrap_or('\u{FFFD}'));
                        }
                    }
                }
                char::from_u32(hi).unwrap_or('\u{FFFD}')
            }
            other => other as char, // '"', '\\', '/'
        })
    }
}

/// Unescapes a validated string body into `out`; `None` if it does not fit.
pub fn unescape(body: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    for c in Chars::new(body) {
        let len = c.len_utf8();
        let dst = out.get_mut(n..n + len)?;
        c.encode_utf8(dst);
        n += len;
    }
    Some(n)
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests;
