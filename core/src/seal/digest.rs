//! The digest that identifies an originating request: method, tool and the salient arguments,
//! computed over parsed values so key order, whitespace and escapes do not matter.

use sha2::{Digest, Sha256};

use crate::limits::MAX_DIGEST_MEMBERS;
use crate::wire::json::{Kind, Value};

/// The request a state is bound to: method, tool/prompt name or resource URI, arguments.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    /// The JSON-RPC method.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI (a JSON string).
    pub name: Value<'a>,
    /// The arguments, if any.
    pub args: Option<Value<'a>>,
    /// The arguments that matter (`None`: all of them).
    pub salient: Option<&'a [&'a str]>,
}

impl Origin<'_> {
    /// Its [`request_digest`].
    pub fn digest(&self) -> [u8; 32] {
        request_digest(self.method, self.name, self.args, self.salient)
    }
}

/// SHA-256 over (method, name, the salient top-level arguments, canonically encoded).
/// `salient: None` binds every argument.
pub fn request_digest(
    method: &str,
    name: Value<'_>,
    args: Option<Value<'_>>,
    salient: Option<&[&str]>,
) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"redmark/req/v1");
    h.update((method.len() as u32).to_be_bytes());
    h.update(method.as_bytes());
    canonical(&mut h, name);
    match args {
        Some(a) if a.kind() == Kind::Object => object(&mut h, a, salient),
        Some(other) => canonical(&mut h, other),
        None => h.update(b"-"),
    }
    h.finalize().into()
}

fn canonical(h: &mut Sha256, v: Value<'_>) {
    match v.kind() {
        Kind::Null => h.update(b"n"),
        Kind::Bool => h.update(if v.as_bool() == Some(true) {
            b"t"
        } else {
            b"f"
        }),
        Kind::Number => number(h, v.raw()),
        Kind::String => string(h, v),
        Kind::Array => {
            h.update(b"a");
            v.items().for_each(|item| canonical(h, item));
            h.update(b"e");
        }
        Kind::Object => object(h, v, None),
    }
}

/// A number by value, without floats (no soft-float code on a panel): sign, significant
/// digits and the decimal exponent, so `15`, `15.0`, `1.5e1` and `150E-1` hash alike.
fn number(h: &mut Sha256, raw: &[u8]) {
    let (negative, body) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    let mantissa_end = body
        .iter()
        .position(|b| matches!(b, b'e' | b'E'))
        .unwrap_or(body.len());
    let (mantissa, exp) = body.split_at(mantissa_end);
    let exp: i64 = exp.get(1..).map_or(0, |e| {
        let (sign, digits) = match e.split_first() {
            Some((b'-', d)) => (-1, d),
            Some((b'+', d)) => (1, d),
            _ => (1, e),
        };
        sign * digits
            .iter()
            .fold(0i64, |n, d| (n * 10 + i64::from(d - b'0')).min(1 << 40))
    });
    let point = mantissa
        .iter()
        .position(|b| *b == b'.')
        .unwrap_or(mantissa.len()) as i64;
    let digits = || mantissa.iter().copied().filter(u8::is_ascii_digit);
    let leading = digits().take_while(|d| *d == b'0').count();
    let last = digits()
        .enumerate()
        .filter(|(_, d)| *d != b'0')
        .map(|(i, _)| i + 1)
        .last();
    let Some(last) = last else {
        h.update(b"z");
        return;
    };
    h.update(if negative { b"-" } else { b"+" });
    // value = 0.d1d2… × 10^(point − leading + exp)
    h.update((point - leading as i64 + exp).to_be_bytes());
    h.update(((last - leading) as u32).to_be_bytes());
    digits()
        .skip(leading)
        .take(last - leading)
        .for_each(|d| h.update([d]));
}

fn string(h: &mut Sha256, v: Value<'_>) {
    if let Some(plain) = v.plain_bytes() {
        text(h, plain);
        return;
    }
    h.update(b"s");
    let len: usize = v.chars().map(char::len_utf8).sum();
    h.update((len as u32).to_be_bytes());
    let mut buf = [0u8; 4];
    v.chars()
        .for_each(|c| h.update(c.encode_utf8(&mut buf).as_bytes()));
}

/// A string's decoded UTF-8, as [`string`] hashes it.
fn text(h: &mut Sha256, utf8: &[u8]) {
    h.update(b"s");
    h.update((utf8.len() as u32).to_be_bytes());
    h.update(utf8);
}

/// Past [`MAX_DIGEST_MEMBERS`] members: the exact bytes are bound instead of sorting.
fn raw(h: &mut Sha256, v: Value<'_>) {
    h.update(b"r");
    h.update((v.raw().len() as u32).to_be_bytes());
    h.update(v.raw());
}

/// Members in ascending key order (first occurrence of a duplicate key), filtered by `only`:
/// a walk per member hashed, each finding the smallest key after the last (no buffer for the
/// members: an object may have up to [`MAX_DIGEST_MEMBERS`]).
fn object(h: &mut Sha256, v: Value<'_>, only: Option<&[&str]>) {
    if v.members().nth(MAX_DIGEST_MEMBERS).is_some() {
        raw(h, v);
        return;
    }
    h.update(b"o");
    let mut last: Option<Value<'_>> = None;
    loop {
        let mut best: Option<(Value<'_>, Value<'_>)> = None;
        for (k, val) in v.members() {
            // Each test only if the ones before it passed; the name lookup, the dearest, last.
            let after_last = || last.is_none_or(|l| k.cmp_str(&l).is_gt());
            let smaller = || best.is_none_or(|(b, _)| k.cmp_str(&b).is_lt());
            let wanted = || only.is_none_or(|names| names.iter().any(|n| k.eq_str(n)));
            if after_last() && smaller() && wanted() {
                best = Some((k, val));
            }
        }
        let Some((k, val)) = best else { break };
        string(h, k);
        canonical(h, val);
        last = Some(k);
    }
    h.update(b"e");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    fn d(args: &str, salient: Option<&[&str]>) -> [u8; 32] {
        let name = parse(br#""book_room""#).unwrap();
        request_digest(
            "tools/call",
            name,
            Some(parse(args.as_bytes()).unwrap()),
            salient,
        )
    }

    #[test]
    fn order_whitespace_and_escapes_do_not_matter() {
        let a = d(
            r#"{"day":"2026-09-17","hour":9,"room_hint":"the big room"}"#,
            None,
        );
        let b = d(
            r#"{ "room_hint" : "the big \u0072oom", "hour": 9, "day":"2026-09-17" }"#,
            None,
        );
        assert_eq!(a, b);
    }

    #[test]
    fn large_objects_are_bound_by_their_bytes() {
        let members = |n: usize, sep: &str| {
            let body: Vec<String> = (0..n).map(|i| format!(r#""k{i}":{i}"#)).collect();
            format!("{{{}}}", body.join(sep))
        };
        let small = members(MAX_DIGEST_MEMBERS, ",");
        assert_eq!(d(&small, None), d(&members(MAX_DIGEST_MEMBERS, ", "), None));
        let big = members(2000, ",");
        assert_ne!(
            d(&big, None),
            d(&members(2000, ", "), None),
            "bytes, not values"
        );
        assert_eq!(d(&big, None), d(&big, None));
    }

    /// The digest of the seed's ask, pinned: a state sealed before an upgrade still opens after
    /// it only if the bytes hashed do not change.
    #[test]
    fn the_seed_asks_digest_is_pinned() {
        let salient: &[&str] = &["day", "hour", "room_hint", "room_id", "attendees"];
        let args = r#"{"day":"2026-09-17","hour":9,"room_hint":"the big room"}"#;
        let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let want = "c706c90a8f8172c91dd4477f796eaffde2a77095054d6b73a0057de810297c29";
        assert_eq!(hex(d(args, Some(salient))), want);
        let mut h = Sha256::new();
        h.update(b"redmark/req/v1");
        h.update(10u32.to_be_bytes());
        h.update(b"tools/call");
        canonical(&mut h, parse(br#""book_room""#).unwrap());
        object(&mut h, parse(args.as_bytes()).unwrap(), Some(salient));
        assert_eq!(hex(h.finalize().into()), want);
    }

    #[test]
    fn numbers_hash_by_value() {
        let n = |x: &str| d(&format!(r#"{{"x":{x}}}"#), None);
        for same in ["15", "15.0", "1.5e1", "150E-1", "0.150e+2", "15.000"] {
            assert_eq!(n("15"), n(same), "{same}");
        }
        for zero in ["0", "-0", "0.0", "0e5", "-0.000E-3"] {
            assert_eq!(n("0"), n(zero), "{zero}");
        }
        assert_eq!(n("-2.50"), n("-25e-1"));
        assert_ne!(n("9"), n("90"));
    }

    #[test]
    fn values_and_salience_matter() {
        let a = d(r#"{"booking_id":"bk_1"}"#, None);
        assert_ne!(a, d(r#"{"booking_id":"bk_9"}"#, None));
        assert_ne!(d(r#"{"x":"1"}"#, None), d(r#"{"x":1}"#, None));
        assert_ne!(d(r#"{"x":1}"#, None), d(r#"{"x":-1}"#, None));
        assert_ne!(d(r#"{"x":1.5}"#, None), d(r#"{"x":15}"#, None));
        assert_ne!(d(r#"{"x":0.15}"#, None), d(r#"{"x":0.015}"#, None));
        let only: &[&str] = &["booking_id"];
        assert_eq!(
            d(r#"{"booking_id":"bk_1","note":"a"}"#, Some(only)),
            d(r#"{"booking_id":"bk_1"}"#, Some(only))
        );
        assert_ne!(
            d(r#"{"a":{"b":[1,2]}}"#, None),
            d(r#"{"a":{"b":[2,1]}}"#, None)
        );
    }
}
