//! Golden `tools/list` of the fixtures app and the `extend_meeting` panel: byte for byte what
//! they served before their tools were declared with the derives (the booking app's is
//! `golden/tools-list.response`). `REDMARK_BLESS=1` rewrites the files; review the diff.

mod common;
#[path = "../examples/extend_meeting.rs"]
#[allow(dead_code)]
mod extend_meeting;

use std::path::PathBuf;

use redmark_core::engine::{App, Config};
use redmark_core::fixtures::Fixtures;
use redmark_core::limits::OUT;
use redmark_core::seal::{Key, KeyRing};
use redmark_core::{Context, Engine};

const LIST: &[u8] = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// What `app` answers to `tools/list`.
fn listed<A: App>(app: A) -> String {
    let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
    let mut engine = Engine::new(app, keys, Config::default());
    let cx = Context {
        now: 1_790_000_000,
        principal: b"alice",
        entropy: [1; 8],
        access: redmark_core::Access::USER,
    };
    let mut out = vec![0u8; OUT];
    let h = engine.handle(LIST, &cx, &mut out);
    assert!(h.responded);
    let text = String::from_utf8(out[..h.len].to_vec()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    common::validate(Some("tools/list"), &v);
    text + "\n"
}

fn golden(name: &str, got: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden_lists")
        .join(name);
    if std::env::var_os("REDMARK_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(want, got, "{} differs", path.display());
}

#[test]
fn fixtures_tools_list_is_unchanged() {
    golden("fixtures.json", &listed(Fixtures));
}

#[test]
fn extend_meeting_tools_list_is_unchanged() {
    let panel = extend_meeting::Panel {
        room: "room-4",
        title: "Design review",
        ends: redmark_core::booking::TimeOfDay(600),
        next_starts: None,
    };
    // The example names no server: `#[app]` gives it the crate's name and version, shown here
    // as the other lists' so the file does not change with the version.
    let crate_info = concat!(
        r#""name":"redmark-core","version":""#,
        env!("CARGO_PKG_VERSION")
    );
    let listed = listed(panel).replace(crate_info, r#""name":"redmark","version":"test"#);
    golden("extend_meeting.json", &listed);
}
