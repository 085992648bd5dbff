//! A bounded JSON writer over a lent buffer. Commas are placed automatically; overflow is
//! sticky, so emitters write straight through and check once with [`Writer::finish`].
//!
//! serde-json-core's serializer cannot splice in a raw JSON fragment (a tool's `inputSchema`)
//! or format text straight into an escaped string, which is why emission has its own writer.

use core::fmt;

use super::json::plain_end;

/// The lent buffer was too small for what was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Full;

impl core::fmt::Display for Full {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the output buffer is full")
    }
}

impl core::error::Error for Full {}

/// Writes JSON into a caller-lent byte buffer.
pub struct Writer<'b> {
    buf: &'b mut [u8],
    len: usize,
    full: bool,
    comma: bool,
}

impl<'b> Writer<'b> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Writer {
            buf,
            len: 0,
            full: false,
            comma: false,
        }
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a write has not fitted.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Forgets everything written (to replace a half-written answer with an error).
    pub fn reset(&mut self) {
        self.len = 0;
        self.full = false;
        self.comma = false;
    }

    /// The written length, or [`Full`] if anything did not fit.
    pub fn finish(&self) -> Result<usize, Full> {
        if self.full {
            Err(Full)
        } else {
            Ok(self.len)
        }
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    fn put(&mut self, bytes: &[u8]) {
        if self.full {
            return;
        }
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.full = true,
        }
    }

    fn sep(&mut self) {
        if self.comma {
            self.put(b",");
        }
    }

    /// Opens an object.
    pub fn begin_object(&mut self) -> &mut Self {
        self.sep();
        self.put(b"{");
        self.comma = false;
        self
    }

    /// Closes an object.
    pub fn end_object(&mut self) -> &mut Self {
        self.put(b"}");
        self.comma = true;
        self
    }

    /// Opens an array.
    pub fn begin_array(&mut self) -> &mut Self {
        self.sep();
        self.put(b"[");
        self.comma = false;
        self
    }

    /// Closes an array.
    pub fn end_array(&mut self) -> &mut Self {
        self.put(b"]");
        self.comma = true;
        self
    }

    /// Writes a member name; the next write is its value.
    pub fn key(&mut self, k: &str) -> &mut Self {
        self.sep();
        self.quoted(k, b"\":");
        self.comma = false;
        self
    }

    /// Writes a string value.
    pub fn string(&mut self, s: &str) -> &mut Self {
        self.sep();
        self.escaped(s);
        self.comma = true;
        self
    }

    /// Writes a string value formatted from `args`, escaped as it is produced.
    pub fn string_fmt(&mut self, args: fmt::Arguments<'_>) -> &mut Self {
        self.sep();
        self.put(b"\"");
        let _ = fmt::write(&mut Escape(self), args);
        self.put(b"\"");
        self.comma = true;
        self
    }

    /// Writes a string value produced by `f` into an escaping sink.
    pub fn string_with(&mut self, f: impl FnOnce(&mut dyn fmt::Write) -> fmt::Result) -> &mut Self {
        self.sep();
        self.put(b"\"");
        let _ = f(&mut Escape(self));
        self.put(b"\"");
        self.comma = true;
        self
    }

    /// Writes an integer value.
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.sep();
        self.put(itoa::Buffer::new().format(v).as_bytes());
        self.comma = true;
        self
    }

    /// Writes a boolean value.
    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.sep();
        self.put(if v { b"true" } else { b"false" });
        self.comma = true;
        self
    }

    /// Writes a value that is already valid JSON, byte for byte.
    pub fn raw(&mut self, json: &[u8]) -> &mut Self {
        self.sep();
        self.put(json);
        self.comma = true;
        self
    }

    fn escaped(&mut self, s: &str) {
        self.quoted(s, b"\"");
    }

    /// `"`, `s` escaped, then `close` (`"` or `":`). Most strings need no escaping: those go
    /// in with one bounds check and one copy.
    fn quoted(&mut self, s: &str, close: &[u8]) {
        let body = s.as_bytes();
        if plain_end(body, 0) < body.len() {
            self.put(b"\"");
            escape_into(self, s);
            self.put(close);
            return;
        }
        if self.full {
            return;
        }
        let end = self.len + 1 + body.len() + close.len();
        let Some(dst) = self.buf.get_mut(self.len..end) else {
            self.full = true;
            return;
        };
        let (open, rest) = dst.split_at_mut(1);
        let (mid, tail) = rest.split_at_mut(body.len());
        open[0] = b'"';
        mid.copy_from_slice(body);
        tail.copy_from_slice(close);
        self.len = end;
    }
}

fn escape_into(w: &mut Writer<'_>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let mut start = 0;
    loop {
        // Copy the run that needs no escaping as one slice, then escape the byte after it.
        let i = plain_end(bytes, start);
        w.put(&bytes[start..i]);
        let Some(&b) = bytes.get(i) else {
            return;
        };
        match b {
            b'"' => w.put(b"\\\""),
            b'\\' => w.put(b"\\\\"),
            b'\n' => w.put(b"\\n"),
            b'\r' => w.put(b"\\r"),
            b'\t' => w.put(b"\\t"),
            _ => w.put(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 15) as usize],
            ]),
        }
        start = i + 1;
    }
}

/// A `fmt::Write` sink that escapes into a JSON string body.
struct Escape<'w, 'b>(&'w mut Writer<'b>);

impl fmt::Write for Escape<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        escape_into(self.0, s);
        Ok(())
    }
}

/// An integer for `{}` in texts, written by `itoa` rather than `core::fmt`'s integer
/// formatting, so a panel links no integer `Display` (nor `pad_integral`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Num(pub i64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(itoa::Buffer::new().format(self.0))
    }
}

/// A non-negative integer zero-padded to at least `.1` digits (what `{:02}` writes), as [`Num`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct ZeroPadded(pub i64, pub usize);

impl fmt::Display for ZeroPadded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = itoa::Buffer::new();
        let digits = buf.format(self.0);
        for _ in digits.len()..self.1 {
            f.write_str("0")?;
        }
        f.write_str(digits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_and_escapes() {
        let mut buf = [0u8; 128];
        let mut w = Writer::new(&mut buf);
        w.begin_object().key("a").int(-3).key("b").begin_array();
        w.string("x\"\n\u{1}").bool(true).raw(b"null").end_array();
        w.key("c")
            .string_fmt(format_args!("{}-{}", 1, "\\"))
            .end_object();
        let n = w.finish().unwrap();
        assert_eq!(
            core::str::from_utf8(&buf[..n]).unwrap(),
            r#"{"a":-3,"b":["x\"\n\u0001",true,null],"c":"1-\\"}"#
        );
    }

    /// Every ASCII byte, alone and inside runs longer than a word, escapes as a byte-at-a-time
    /// reference escaper would.
    #[test]
    fn escapes_match_a_byte_at_a_time_reference() {
        fn reference(s: &str, out: &mut [u8]) -> usize {
            let mut n = 0;
            let mut put = |b: &[u8]| {
                out[n..n + b.len()].copy_from_slice(b);
                n += b.len();
            };
            put(b"\"");
            for &b in s.as_bytes() {
                match b {
                    b'"' => put(b"\\\""),
                    b'\\' => put(b"\\\\"),
                    b'\n' => put(b"\\n"),
                    b'\r' => put(b"\\r"),
                    b'\t' => put(b"\\t"),
                    0..=0x1F => put(&[
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        b"0123456789abcdef"[(b >> 4) as usize],
                        b"0123456789abcdef"[(b & 15) as usize],
                    ]),
                    _ => put(&[b]),
                }
            }
            put(b"\"");
            n
        }
        // Distinct letters, so a byte copied to the wrong place shows; every length the short
        // path takes (0 to 16) and either side of it; at every position an ASCII byte (the
        // special ones among them) or a 2- or 3-byte character; as a value and as a key.
        let ascii: [[u8; 1]; 128] = core::array::from_fn(|c| [c as u8]);
        let inserts = ascii
            .iter()
            .map(|c| &c[..])
            .chain(["é".as_bytes(), "€".as_bytes()]);
        for len in (0usize..=20).chain([40]) {
            for put in inserts.clone() {
                // `at == len`: nothing put in (an empty string too).
                for at in (0..(len + 1).saturating_sub(put.len())).chain([len]) {
                    let mut text: [u8; 40] = core::array::from_fn(|k| b'A' + k as u8);
                    if at < len {
                        text[at..at + put.len()].copy_from_slice(put);
                    }
                    let s = core::str::from_utf8(&text[..len]).unwrap();
                    let (mut a, mut b) = ([0u8; 512], [0u8; 512]);
                    let mut w = Writer::new(&mut a);
                    w.begin_object().key(s).string(s).end_object();
                    let n = w.finish().unwrap();
                    let m = reference(s, &mut b[1..]);
                    b[0] = b'{';
                    b[1 + m] = b':';
                    b.copy_within(1..1 + m, 2 + m);
                    b[2 + 2 * m] = b'}';
                    assert_eq!(&a[..n], &b[..3 + 2 * m], "{put:?} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn numbers_as_core_fmt_writes_them() {
        for v in [0, 7, -3, 42, i64::MAX, i64::MIN] {
            assert_eq!(Num(v).to_string(), format!("{v}"));
        }
        for (v, width) in [(0, 2), (9, 2), (23, 2), (2026, 4), (7, 4), (12345, 2)] {
            assert_eq!(ZeroPadded(v, width).to_string(), format!("{v:0width$}"));
        }
        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        w.begin_array().int(i64::MIN).int(0).int(-1).end_array();
        let n = w.finish().unwrap();
        assert_eq!(&buf[..n], b"[-9223372036854775808,0,-1]");
    }

    /// A key or string fits to the byte, escaped or not, and a byte less is [`Full`].
    #[test]
    fn quoted_text_fits_to_the_byte() {
        for (key, value, want) in [
            ("ab", "c", &br#"{"ab":"c"}"#[..]),
            ("a\"b", "c\n", br#"{"a\"b":"c\n"}"#),
            ("", "", br#"{"":""}"#),
        ] {
            for size in 0..=want.len() {
                let mut buf = [0u8; 16];
                let mut w = Writer::new(&mut buf[..size]);
                w.begin_object().key(key).string(value).end_object();
                match w.finish() {
                    Ok(n) => assert!(size == want.len() && &buf[..n] == want, "{size}"),
                    Err(Full) => assert!(size < want.len(), "{size}"),
                }
            }
        }
    }

    #[test]
    fn overflow_is_sticky() {
        let mut buf = [0u8; 4];
        let mut w = Writer::new(&mut buf);
        w.string("toolong").int(1);
        assert_eq!(w.finish(), Err(Full));
        w.reset();
        w.int(7);
        assert_eq!(w.finish(), Ok(1));
    }
}
