//! The floor as an MCP App, served by the host: the document (`shell/web/app-floor.html` with
//! the booking page's stylesheet and scripts inlined) put into the answer of its `resources/read`.
//!
//! The core declares the `ui://` resource, lists it, and answers its read with every check a
//! read gets (version, headers, principal, the id), writing a slot
//! ([`APP_BODY_SLOT`]) where the document goes.
//! The document is larger than the engine's answer buffer ([`OUT`](redmark_core::limits::OUT)),
//! so the host, which every transport's messages pass through (stdio, TCP, HTTP, the 2025-11-25
//! bridge, the folder relay), puts it there: no engine buffer grows for one resource, and no
//! transport serves the app on its own.

use std::sync::OnceLock;

use redmark_core::booking::mcp_app::{APP_BODY_SLOT, APP_URI};

/// The most the app's document may be, in bytes (held by a test; its answer is this, escaped
/// as a JSON string, plus the envelope).
pub const MAX_APP_BYTES: usize = 96 * 1024;

/// The document's template and the files it inlines, by the name its `redmark:include`
/// comments give.
const TEMPLATE: &str = include_str!("../../web/app-floor.html");
const INCLUDES: &[(&str, &str)] = &[
    ("style.css", include_str!("../../web/style.css")),
    ("time.js", include_str!("../../web/time.js")),
    ("form.js", include_str!("../../web/form.js")),
    ("floor.js", include_str!("../../web/floor.js")),
    ("app-floor.js", include_str!("../../web/app-floor.js")),
];

/// The app's HTML document, assembled once.
pub fn document() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = TEMPLATE.to_owned();
        for (name, text) in INCLUDES {
            let text = if name.ends_with(".js") {
                one_module(text)
            } else {
                (*text).to_owned()
            };
            doc = doc.replace(&format!("/* redmark:include {name} */"), &text);
        }
        doc
    })
}

/// A page module as part of the app's one module: its imports dropped (what they name is
/// inlined before it) and its `export`s plain declarations.
fn one_module(js: &str) -> String {
    js.lines()
        .filter(|l| !l.starts_with("import "))
        .map(|l| l.strip_prefix("export ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The document as a JSON string, quotes and all, made once.
fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| serde_json::Value::from(document()).to_string())
}

/// Puts the document into `answer` when it is the answer to a `resources/read` of the app
/// (`request`: the message's bytes); any other answer is left as it is. Returns whether it did.
pub fn fill(request: Option<&[u8]>, answer: &mut Vec<u8>) -> bool {
    let Some(at) = memchr::memmem::find(answer, APP_BODY_SLOT.as_bytes()) else {
        return false;
    };
    // The slot as a whole JSON string: its quotes around it.
    let (from, to) = (at.wrapping_sub(1), at + APP_BODY_SLOT.len());
    let quoted = answer.get(from) == Some(&b'"') && answer.get(to) == Some(&b'"');
    if !quoted || !reads_the_app(request) {
        return false;
    }
    answer.splice(from..=to, document_json().bytes());
    true
}

/// Whether `request` is one `resources/read` of [`APP_URI`].
fn reads_the_app(request: Option<&[u8]>) -> bool {
    let Some(Ok(v)) = request.map(serde_json::from_slice::<serde_json::Value>) else {
        return false;
    };
    v["method"] == "resources/read" && v["params"]["uri"] == APP_URI
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_include_is_filled_and_nothing_is_imported() {
        let doc = document();
        assert!(!doc.contains("redmark:include"), "an include left unfilled");
        for line in doc.lines() {
            assert!(
                !line.starts_with("import ") && !line.starts_with("export "),
                "{line}"
            );
        }
        assert_eq!(
            doc.matches("</script").count(),
            1,
            "one script, closed once"
        );
        assert!(doc.contains("class FloorView") && doc.contains("function hhmm"));
        assert!(doc.contains("ui/initialize"));
    }

    #[test]
    fn the_document_fits_its_bound() {
        assert!(
            document().len() <= MAX_APP_BYTES,
            "{} bytes",
            document().len()
        );
    }

    #[test]
    fn no_network_at_run_time() {
        let doc = document();
        for fetches in [
            "fetch(",
            "XMLHttpRequest",
            "WebSocket",
            "src=\"http",
            "href=\"http",
        ] {
            assert!(!doc.contains(fetches), "{fetches}");
        }
    }

    fn read(uri: &str) -> Vec<u8> {
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
        )
        .into_bytes()
    }

    fn slot_answer() -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"contents":[{{"uri":"{APP_URI}","text":"{APP_BODY_SLOT}"}}]}}}}"#)
            .into_bytes()
    }

    #[test]
    fn the_read_of_the_app_gets_the_document() {
        let mut answer = slot_answer();
        assert!(fill(Some(&read(APP_URI)), &mut answer));
        let v: serde_json::Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(v["result"]["contents"][0]["text"], document());
        assert_eq!(v["id"], 3);
    }

    #[test]
    fn any_other_message_keeps_its_answer() {
        let mut answer = slot_answer();
        assert!(!fill(Some(&read("ui://redmark/other")), &mut answer));
        assert!(!fill(None, &mut answer));
        let call = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"uri":"ui://redmark/floor"}}"#;
        assert!(!fill(Some(call), &mut answer));
        assert_eq!(answer, slot_answer());
        // The slot inside a longer string (a title, a hint echoed) is not the slot.
        let echoed = format!(r#"{{"result":{{"text":"a {APP_BODY_SLOT}"}}}}"#);
        let mut answer = echoed.clone().into_bytes();
        assert!(!fill(Some(&read(APP_URI)), &mut answer));
        assert_eq!(answer, echoed.into_bytes());
    }
}
