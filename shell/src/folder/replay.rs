//! A 2025-11-25 client's session across a handover: its session lives in the owner's memory,
//! so the relay keeps the client's `initialize` and `notifications/initialized` lines and sends
//! them first to the next owner (or puts them back in front of its own stdin when it takes the
//! store over), and drops that owner's answer to the replayed `initialize`, which the client
//! already has (`transport/skip_answer.rs`). A call in flight at the handover still gets the relay's error.

use serde_json::{Map, Value};

/// The lines that open a client's 2025-11-25 session, as it sent them.
#[derive(Default)]
pub struct Hello {
    initialize: Option<(Vec<u8>, String)>,
    initialized: Option<Vec<u8>>,
}

/// What to send a new owner first, and the id of the answer to drop.
pub struct Replay {
    /// The lines, each with its `\n`.
    pub lines: Vec<u8>,
    /// JSON text of the replayed `initialize`'s id.
    pub answer_id: String,
}

impl Hello {
    /// Notes a client line (with its `\n`) going to the owner (read as the owner's 2025-11-25
    /// session reads it, only if it names `initialize` or `initialized`).
    pub fn note(&mut self, line: &[u8]) {
        if !line
            .windows(b"initialize".len())
            .any(|w| w == b"initialize")
        {
            return;
        }
        let Ok(msg) = serde_json::from_slice::<Map<String, Value>>(line) else {
            return;
        };
        match msg.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                let id = msg
                    .get("id")
                    .map_or_else(|| "null".to_owned(), Value::to_string);
                self.initialize = Some((line.to_vec(), id));
                self.initialized = None;
            }
            Some("notifications/initialized") if self.initialize.is_some() => {
                self.initialized = Some(line.to_vec());
            }
            _ => {}
        }
    }

    /// Whether the client opened a 2025-11-25 session.
    pub fn opened(&self) -> bool {
        self.initialize.is_some()
    }

    /// The session's opening for a new owner, if the client opened one.
    pub fn replay(&self) -> Option<Replay> {
        let (init, id) = self.initialize.as_ref()?;
        let mut lines = init.clone();
        if let Some(done) = &self.initialized {
            lines.extend_from_slice(done);
        }
        Some(Replay {
            lines,
            answer_id: id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(h: &mut Hello, line: &str) {
        h.note(format!("{line}\n").as_bytes());
    }

    #[test]
    fn the_session_opening_is_kept_for_the_next_owner() {
        let mut h = Hello::default();
        assert!(
            h.replay().is_none(),
            "a 2026-07-28 client has nothing to replay"
        );
        note(
            &mut h,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert!(h.replay().is_none());
        note(
            &mut h,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
        );
        note(
            &mut h,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        note(&mut h, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let r = h.replay().unwrap();
        assert_eq!(r.answer_id, "0");
        let lines: Vec<&str> = std::str::from_utf8(&r.lines).unwrap().lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("initialize") && lines[1].contains("initialized"));
    }
}
