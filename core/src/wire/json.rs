//! A validating, zero-copy JSON view: [`parse`] checks a whole document once, then [`Value`]s
//! navigate it without allocating. serde-json-core cannot `deserialize_any`, so the envelope,
//! `_meta` and `inputResponses` (whose shapes vary) are read through this view. The booking
//! tools read their arguments from it too (`booking/read.rs`, smaller on the panel than a
//! serde derive); [`Call::args`](crate::engine::Call::args) still offers serde-json-core over
//! the spans it hands out, for other tools.
//!
//! Duplicate object keys are not rejected: every lookup takes the first occurrence.

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

/// The top-level member `key` of a document [`parse`] refused (as nested too deeply, say), when
/// the document is an object and that member's own value is valid JSON: so an error about the
/// document can still name, e.g., its id. The top level is walked without validating the other
/// members' values (linear, no recursion, never past the input).
#[cfg(feature = "depth-detail")]
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
#[cfg(feature = "depth-detail")]
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

fn hex4(b: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in b.get(..4)? {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The index of the first byte at or after `i` that a JSON string cannot hold as it is (`"`,
/// `\\` or a control byte below 0x20), or `b.len()`; eight bytes a step.
pub(super) fn plain_end(b: &[u8], i: usize) -> usize {
    super::swar::find(b, i, super::swar::special)
}

/// Skips the already-validated value starting at `i` without checking it again; returns the
/// index just past it (navigation is then linear in the bytes skipped).
fn skip(b: &[u8], i: usize) -> usize {
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
fn string_end(b: &[u8], open: usize) -> usize {
    let mut j = plain_end(b, open + 1);
    while b.get(j) == Some(&b'\\') {
        j = plain_end(b, j + 2);
    }
    j + 1
}

/// Validates the value starting at `i`; returns the index just past it.
fn scan(b: &[u8], i: usize, depth: usize) -> Result<usize, JsonError> {
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

fn scan_container(
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

fn scan_string(b: &[u8], open: usize) -> Result<usize, JsonError> {
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

fn scan_number(b: &[u8], start: usize) -> Result<usize, JsonError> {
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

fn literal(b: &[u8], i: usize, lit: &[u8]) -> Result<usize, JsonError> {
    if b.get(i..i + lit.len()) == Some(lit) {
        Ok(i + lit.len())
    } else {
        Err(JsonError::Syntax(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `plain_end` agrees with a byte-at-a-time scan wherever the special byte sits in or
    /// across a word, and from every start.
    #[test]
    fn plain_end_finds_the_first_special_byte() {
        let slow = |b: &[u8], i: usize| {
            (i..b.len())
                .find(|&j| matches!(b[j], b'"' | b'\\' | 0..=0x1F))
                .unwrap_or(b.len().max(i))
        };
        for special in [b'"', b'\\', 0, 0x1F, b'\n'] {
            for len in 0..24 {
                for at in 0..=len {
                    // Bytes around the special one that are near misses for each test.
                    let mut b: [u8; 24] =
                        core::array::from_fn(|k| [b' ', b'!', b'#', 0xFF, b']', 0x80][k % 6]);
                    if at < len {
                        b[at] = special;
                    }
                    for i in 0..=len {
                        assert_eq!(
                            plain_end(&b[..len], i),
                            slow(&b[..len], i),
                            "{special} {len} {at} {i}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn navigates_objects_arrays_and_escapes() {
        let v = parse(br#" {"a": [1, -2.5e3, "x\"y"], "\u005fmeta": {"k": true}, "n": null} "#)
            .unwrap();
        assert_eq!(v.kind(), Kind::Object);
        let a: heapless::Vec<_, 4> = v.get("a").unwrap().items().collect();
        assert_eq!(a[0].as_i64(), Some(1));
        assert_eq!(a[1].as_i64(), None);
        assert_eq!(a[1].as_f64(), Some(-2500.0));
        let mut s = [0u8; 8];
        assert_eq!(a[2].as_str(&mut s), Some("x\"y"));
        assert_eq!(
            v.get("_meta").unwrap().get("k").unwrap().as_bool(),
            Some(true)
        );
        assert!(v.get("n").unwrap().is_null());
        assert!(v.get("missing").is_none());
    }

    #[test]
    fn first_duplicate_wins() {
        let v = parse(br#"{"a":1,"a":2}"#).unwrap();
        assert_eq!(v.get("a").unwrap().as_i64(), Some(1));
        let [a] = v.pick(["a"]);
        assert_eq!(a.unwrap().as_i64(), Some(1));
    }

    #[test]
    fn pick_finds_what_get_finds() {
        for doc in [
            &br#"{"b":1,"a":{"x":2},"\u0062":3,"c":"s","a":4,"d":null}"#[..],
            br#"{"\u0061":5,"a":6,"d":[]}"#,
            br#"{}"#,
            br#"[1]"#,
            br#""a""#,
        ] {
            let v = parse(doc).unwrap();
            let keys = ["a", "b", "c", "d", "missing"];
            let picked = v.pick(keys);
            for (key, got) in keys.iter().zip(picked) {
                assert_eq!(got, v.get(key), "{key} in {:?}", core::str::from_utf8(doc));
            }
        }
        let v = parse(br#"{"\u0061":5,"a":6}"#).unwrap();
        assert_eq!(v.pick(["a"])[0].unwrap().as_i64(), Some(5));
    }

    #[test]
    fn surrogate_pairs_decode() {
        let v = parse(br#""\ud83d\ude00!""#).unwrap();
        let mut s = [0u8; 8];
        assert_eq!(v.as_str(&mut s), Some("\u{1F600}!"));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            &b"{"[..],
            b"{\"a\" 1}",
            b"[1,]",
            b"01",
            b"1.",
            b"\"\x01\"",
            b"\"\\x\"",
            b"tru",
            b"{} {}",
            b"",
            b"[1e]",
            b"{\"a\":1,}",
        ] {
            assert!(parse(bad).is_err(), "{:?}", core::str::from_utf8(bad));
        }
        assert_eq!(parse(b"\"\xff\""), Err(JsonError::Utf8));
    }

    #[test]
    fn depth_is_bounded() {
        let mut deep = [b'['; 64];
        deep[32..].fill(b']');
        assert_eq!(parse(&deep), Err(JsonError::TooDeep));
    }

    #[test]
    #[cfg(feature = "depth-detail")]
    fn a_shallow_member_is_found_past_deep_siblings() {
        let doc = br#" {"params":{"a":[[[["x\"]"]]]],"b":"}"}, "id" : "q-1", "more":[1]}"#;
        assert_eq!(shallow_member(doc, "id").unwrap().raw(), br#""q-1""#);
        assert_eq!(
            shallow_member(br#"{"id":7}"#, "id").unwrap().raw(),
            b"7",
            "last member"
        );
        for bad in [
            &br#"{"id":"unterminated}"#[..],
            br#"[{"id":1}]"#,
            br#"{"params":[[[[}"#,
            br#"{"id":tru}"#,
            b"",
        ] {
            assert!(shallow_member(bad, "id").is_none(), "{bad:?}");
        }
    }

    #[test]
    fn scalar_kinds_have_no_members() {
        let v = parse(b"42").unwrap();
        assert_eq!(v.members().count(), 0);
        assert_eq!(v.items().count(), 0);
        assert!(!v.eq_str("42"));
    }
}
