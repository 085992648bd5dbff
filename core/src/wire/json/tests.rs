//! The JSON view's tests: validation, navigation, strings, depth.
use super::scan::*;
use super::shallow::shallow_member;
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
    let v =
        parse(br#" {"a": [1, -2.5e3, "x\"y"], "\u005fmeta": {"k": true}, "n": null} "#).unwrap();
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
