//! The one engine every transport feeds: a `Mutex<Engine>` held only around `handle`.
//!
//! `handle` runs on tokio's blocking pool because a booking's durable commit (an fsync) happens
//! inside it; everything else it does takes microseconds.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use redmark_core::engine::{Note, ParamHeaders};
use redmark_core::limits::OUT;
use redmark_core::wire::lines::Line;
use redmark_core::{App, Context, Engine, Handled, Headers};

use super::keys::entropy;

/// An input the engine is asked about, owned so it can cross to the blocking pool.
pub enum Input {
    /// One framed line from a byte stream (blank lines are ignored, over-long ones get -32600).
    Line(Vec<u8>),
    /// A line longer than the framing limit.
    TooLong,
    /// One HTTP body with its MCP headers.
    Http {
        body: Vec<u8>,
        headers: OwnedHeaders,
    },
}

/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and every `Mcp-Param-*` as received.
#[derive(Default)]
pub struct OwnedHeaders {
    pub version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
    /// `(name after "Mcp-Param-", value)`.
    pub params: Vec<(String, String)>,
}

/// What came back: `bytes` holds the answer lines joined by `\n` (empty for a notification).
pub struct Output {
    pub bytes: Vec<u8>,
    pub handled: Handled,
}

/// The engine behind every transport.
pub struct Shared<A: App> {
    engine: Mutex<Engine<A>>,
}

impl<A: App + Send + 'static> Shared<A> {
    /// Shares `engine`.
    pub fn new(engine: Engine<A>) -> Arc<Self> {
        Arc::new(Shared {
            engine: Mutex::new(engine),
        })
    }

    /// Runs one input through the engine on the blocking pool.
    pub async fn handle(self: &Arc<Self>, input: Input, principal: Arc<[u8]>) -> Output {
        let me = Arc::clone(self);
        let task = tokio::task::spawn_blocking(move || me.handle_now(&input, &principal));
        match task.await {
            Ok(out) => out,
            Err(e) => {
                tracing::error!("engine task failed: {e}");
                Output {
                    bytes: Vec::new(),
                    handled: Handled {
                        len: 0,
                        status: 500,
                        responded: false,
                        note: None,
                    },
                }
            }
        }
    }

    fn handle_now(&self, input: &Input, principal: &[u8]) -> Output {
        let mut out = vec![0u8; OUT];
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let headers;
        let cx = Context {
            now,
            principal,
            entropy: entropy(),
            headers: match input {
                Input::Http { headers: h, .. } => {
                    headers = Headers {
                        version: h.version.as_deref(),
                        method: h.method.as_deref(),
                        name: h.name.as_deref(),
                    };
                    Some(headers)
                }
                _ => None,
            },
        };
        // A panic inside handle would poison the lock; the engine is still consistent (the
        // store's transactions are atomic), so keep serving.
        let mut engine = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        let handled = match input {
            Input::Line(l) => engine.handle_line(Line::Message(l), &cx, &mut out),
            Input::TooLong => engine.handle_line(Line::TooLong, &cx, &mut out),
            Input::Http { body, headers } => {
                let list: Vec<(&str, &str)> = headers
                    .params
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                engine.handle_http(body, &cx, ParamHeaders { list: &list }, &mut out)
            }
        };
        drop(engine);
        if let Some(note) = handled.note {
            log_note(note);
        }
        out.truncate(handled.len);
        Output {
            bytes: out,
            handled,
        }
    }
}

fn log_note(note: Note) {
    match note {
        Note::StateRejected(why) => tracing::info!("requestState rejected: {why:?}"),
        Note::Internal(why) => tracing::error!("tool fault: {why}"),
        other => tracing::warn!("engine: {other:?}"),
    }
}
