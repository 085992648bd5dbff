//! The digest that identifies an originating request: method, tool and the salient arguments,
//! computed over parsed values so key order, whitespace and escapes do not matter.

use sha2::{Digest, Sha256};

use crate::wire::json::{Kind, Value};

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
        Kind::Number => match v.as_i64() {
            Some(i) => {
                h.update(b"i");
                h.update(i.to_be_bytes());
            }
            None => {
                h.update(b"d");
                h.update(v.as_f64().unwrap_or(f64::NAN).to_bits().to_be_bytes());
            }
        },
        Kind::String => string(h, v),
        Kind::Array => {
            h.update(b"a");
            v.items().for_each(|item| canonical(h, item));
            h.update(b"e");
        }
        Kind::Object => object(h, v, None),
    }
}

fn string(h: &mut Sha256, v: Value<'_>) {
    let len: usize = v.chars().map(char::len_utf8).sum();
    h.update(b"s");
    h.update((len as u32).to_be_bytes());
    let mut buf = [0u8; 4];
    v.chars()
        .for_each(|c| h.update(c.encode_utf8(&mut buf).as_bytes()));
}

/// Members in ascending key order (first occurrence of a duplicate key), filtered by `only`.
fn object(h: &mut Sha256, v: Value<'_>, only: Option<&[&str]>) {
    h.update(b"o");
    let mut last: Option<Value<'_>> = None;
    loop {
        let mut best: Option<(Value<'_>, Value<'_>)> = None;
        for (k, val) in v.members() {
            let after_last = last.is_none_or(|l| k.chars().cmp(l.chars()).is_gt());
            let smaller = best.is_none_or(|(b, _)| k.chars().cmp(b.chars()).is_lt());
            let wanted = only.is_none_or(|names| names.iter().any(|n| k.eq_str(n)));
            if after_last && smaller && wanted {
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
    fn values_and_salience_matter() {
        let a = d(r#"{"booking_id":"bk_1"}"#, None);
        assert_ne!(a, d(r#"{"booking_id":"bk_9"}"#, None));
        assert_ne!(d(r#"{"x":"1"}"#, None), d(r#"{"x":1}"#, None));
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
