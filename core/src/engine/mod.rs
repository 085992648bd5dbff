//! The engine: one call per message, sans-IO. Reads the envelope and `_meta`, checks what is
//! generic (version, headers, params, `requestState`), dispatches, and writes the answer.

mod access;
mod app;
mod args;
mod call;
mod dispatch;
mod elicit;
mod error;
mod handled;
mod headers;
mod http;
mod invocation;
#[cfg(feature = "resources")]
pub mod listen;
mod lists;
mod method;
mod reply;
mod response;
mod versions;

pub use crate::limits::MAX_PROGRESS;
pub use access::{Access, Via};
pub use app::{
    App, CompletionRef, CompletionRequest, Completions, ParamHeader, PromptArg, PromptInfo,
    ResourceInfo, ServerInfo, TemplateInfo, ToolEntry, ToolInfo,
};
pub(crate) use args::check_with;
pub use args::{Arg, ArgKind, ArgsInvalid};
pub use call::Call;
pub use elicit::{Elicited, Round};
pub use error::{CallError, RpcError};
pub use handled::{Handled, Note};
pub use http::HttpHeaders;
pub use reply::{Done, Msg, Replied, Reply, Report};
pub use versions::SUPPORTED_VERSIONS;

use core::future::Future;

use crate::limits::MIN_OUT;
use crate::seal::KeyRing;
use crate::wire::envelope::{self, EnvelopeError};
use crate::wire::json::Value;
use crate::wire::lines::Line;
use crate::wire::meta::KEY_SERVER_INFO;
use crate::wire::write::Writer;
use http::Sent;
use response::write_error;

/// Settings fixed for the engine's life.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// How long a sealed `requestState` stays valid, seconds.
    pub state_ttl_s: u32,
    /// The clock's epoch: a boot counter on a panel (state from before a reset then fails);
    /// 0 for a wall clock.
    pub epoch: u32,
    /// `ttlMs` on cacheable results (`server/discover`, `tools/list`).
    pub list_ttl_ms: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            state_ttl_s: 300,
            epoch: 0,
            list_ttl_ms: 300_000,
        }
    }
}

/// Everything about one message that is not in its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The server's clock, seconds (wall clock on a desktop, since boot on a panel). The
    /// booking tools take a value before 2020 as an unset clock and refuse no slot as past.
    pub now: u64,
    /// The authenticated principal (opaque bytes).
    pub principal: &'a [u8],
    /// Fresh random bytes from the caller, used as the nonce of any state minted.
    pub entropy: [u8; 8],
    /// What the host vouches for besides the principal: its role and transport (never read
    /// from the message).
    pub access: Access,
}

/// The protocol engine, hosting one [`App`]: one call per message, sans-IO.
///
/// # Calling contract
///
/// A transport owns every socket, clock and random source, and calls the engine once per
/// message it receives, passing:
///
/// - **the message**: the bytes of one JSON-RPC message (at most
///   [`MAX_MESSAGE`](crate::limits::MAX_MESSAGE)). A byte stream frames lines with
///   [`Lines`](crate::wire::lines::Lines) and hands each [`Line`] to
///   [`Engine::handle_line`]; HTTP hands the body to [`Engine::handle_http`] with its
///   [`HttpHeaders`] (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`);
///   anything else uses [`Engine::handle`];
/// - **a [`Context`]**: the server's clock, the authenticated principal and 8 fresh random
///   bytes;
/// - **an output buffer** of at least [`MIN_OUT`] bytes ([`OUT`](crate::limits::OUT)
///   recommended), lent for the call.
///
/// What comes back is a [`Handled`], and the transport must act on it:
///
/// - `responded`: send `out[..len]`. It holds one or more messages separated by `\n`
///   (progress notifications first, the response last, no trailing newline); a stream
///   writes each as a line, HTTP as the body or as SSE events. When `responded` is false
///   nothing is sent: the message was a notification (or the buffer was smaller than
///   [`MIN_OUT`], with `note` saying so).
/// - `status`: the HTTP status to answer with (202 for a notification); other transports
///   ignore it.
/// - `note`: log it when present. It says what the wire does not (why a `requestState` was
///   refused, a server fault); never send it to the client.
///
/// The engine keeps nothing of a message after the call (bookings live in the app's
/// store): what a multi-round request needs next time travels sealed in `requestState`. The engine never blocks or allocates; a host that catches a
/// panic in it answers with [`fault_answer`].
///
/// # Example
///
/// Serving one `tools/list`:
///
/// ```
/// use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
/// use redmark_core::engine::{Config, Context, Engine, ServerInfo};
/// use redmark_core::limits::OUT;
/// use redmark_core::seal::{Key, KeyRing};
///
/// # fn main() -> Result<(), redmark_core::seal::KeyError> {
/// let info = ServerInfo { name: "door-panel", version: "1.0.0", instructions: None };
/// let app = BookingApp::new(DEFAULT_FLOOR, MemStore::<8>::new(), info);
/// let key = Key::new(1, b"an example key of 32 bytes or so")?;
/// let mut engine = Engine::new(app, KeyRing::new(key), Config::default());
///
/// let message = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// let cx = Context {
///     now: 1_800_000_000,           // the server's clock, seconds
///     principal: b"alice",          // who the transport authenticated
///     entropy: [4, 2, 4, 2, 4, 2, 4, 2], // fresh random bytes for this message
///     access: redmark_core::Access::USER,
/// };
/// let mut out = [0u8; OUT];
/// let handled = engine.handle(message, &cx, &mut out);
///
/// assert!(handled.responded);
/// assert_eq!(handled.note, None);
/// let answer = core::str::from_utf8(&out[..handled.len]).unwrap();
/// assert!(answer.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"#));
/// assert!(answer.contains(r#""name":"book_room""#));
/// // A transport now writes `answer` as one line (or one HTTP body) and logs any note.
/// # Ok(())
/// # }
/// ```
pub struct Engine<A: App> {
    app: A,
    keys: KeyRing,
    config: Config,
}

impl<A: App> Engine<A> {
    /// An engine hosting `app`, sealing with `keys`.
    pub fn new(app: A, keys: KeyRing, config: Config) -> Self {
        Engine { app, keys, config }
    }

    /// The hosted app.
    pub fn app(&self) -> &A {
        &self.app
    }

    /// The hosted app, mutably.
    pub fn app_mut(&mut self) -> &mut A {
        &mut self.app
    }

    /// Handles one message and writes the answer into `out` (at least [`MIN_OUT`] bytes).
    /// No header is checked: this is for transports without headers (see
    /// [`Engine::handle_http`]). The handling is polled once: this is for an app whose tools
    /// (and resource reads) are ready on the first poll (the booking app over a synchronous
    /// [`Store`](crate::booking::Store), the fixtures, tools that await nothing). A tool that
    /// is still waiting then (it awaits a store across a network, a sensor, a timer) gets its
    /// call answered `-32603` with [`Note::Internal`], and nothing it would have done after the
    /// await is done: drive such an app with [`Engine::handling`].
    pub fn handle(&mut self, input: &[u8], cx: &Context<'_>, out: &mut [u8]) -> Handled {
        let handling = self.handle_message(input, cx, (), &mut *out);
        poll_once(handling).unwrap_or_else(|| waited(Some(input), out))
    }

    /// [`Engine::handle`] for a Streamable HTTP request: `headers` are checked against the
    /// body — version, method and name present and equal, and every tool argument the tool
    /// declares in [`ToolInfo::param_headers`] mirrored by its `Mcp-Param-*` header
    /// (SEP-2243: missing, undecodable or different → `-32020`). A notification is checked
    /// the same way.
    pub fn handle_http(
        &mut self,
        input: &[u8],
        cx: &Context<'_>,
        headers: &HttpHeaders<'_>,
        out: &mut [u8],
    ) -> Handled {
        let handling = self.handle_message(input, cx, headers, &mut *out);
        poll_once(handling).unwrap_or_else(|| waited(Some(input), out))
    }

    /// Handles one message as a future that finishes with the [`Handled`] once the app's tool
    /// (or resource read) has: the host awaits it on its executor, and a tool may await its own I/O (its store, a
    /// sensor, a timer) meanwhile, woken by that I/O's waker. The message is parsed and run
    /// once, however long the tool waits. The future is all the state a waiting message keeps:
    /// about 2 KiB for the booking app on a 64-bit host, at most
    /// [`MAX_HANDLING`](crate::limits::MAX_HANDLING) (a test holds it there).
    pub async fn handling(
        &mut self,
        message: Message<'_>,
        cx: &Context<'_>,
        out: &mut [u8],
    ) -> Handled {
        match message {
            Message::Plain(m) => self.handle_message(m, cx, (), out).await,
            Message::Http(m, headers) => self.handle_message(m, cx, headers, out).await,
            Message::Line(line) => self.line_handling(line, cx, out).await,
        }
    }

    /// [`Engine::handling`] of one framed line: a blank one is ignored, an over-long one
    /// refused.
    async fn line_handling(&mut self, line: Line<'_>, cx: &Context<'_>, out: &mut [u8]) -> Handled {
        match line {
            Line::Message(m) if m.iter().all(u8::is_ascii_whitespace) => Handled {
                len: 0,
                status: 202,
                responded: false,
                note: None,
                listening: false,
            },
            Line::Message(m) => self.handle_message(m, cx, (), out).await,
            Line::TooLong => error_answer(None, &RpcError::Envelope(EnvelopeError::TooLarge), out),
        }
    }

    /// Handles one message, checking its HTTP headers if it came with any.
    async fn handle_message<'h>(
        &mut self,
        input: &[u8],
        cx: &Context<'_>,
        sent: impl Sent<'h>,
        out: &mut [u8],
    ) -> Handled {
        if out.len() < MIN_OUT {
            return Handled {
                len: 0,
                status: 500,
                responded: false,
                note: Some(Note::OutputTooSmall),
                listening: false,
            };
        }
        let mut w = Writer::new(&mut *out);
        let mut note = None;
        let mut progress = reply::Progress::default();
        let outcome =
            match dispatch::dispatch(self, input, cx, sent, &mut w, &mut note, &mut progress) {
                dispatch::Dispatched::Done(outcome) => outcome,
                dispatch::Dispatched::Waits(id, waits) => {
                    let (w, note, progress) = (&mut w, &mut note, &mut progress);
                    dispatch::run(self, id, &waits, cx, w, note, progress).await
                }
            };
        let (id, status) = match outcome {
            dispatch::Outcome::Notification => {
                return Handled {
                    len: 0,
                    status: 202,
                    responded: false,
                    note,
                    listening: false,
                };
            }
            #[cfg(feature = "resources")]
            dispatch::Outcome::Listening(id) => match w.finish() {
                Ok(len) => {
                    return Handled {
                        len,
                        status: 200,
                        responded: true,
                        note,
                        listening: true,
                    }
                }
                // An acknowledgement echoes every URI: long ones may not fit a small buffer.
                Err(_) => {
                    note = Some(Note::ResponseTooLarge);
                    (Some(id), RpcError::ResponseTooLarge)
                }
            },
            dispatch::Outcome::Result(id) => {
                w.key("_meta")
                    .begin_object()
                    .key(KEY_SERVER_INFO)
                    .begin_object();
                let info = self.app.info();
                w.key("name")
                    .string(info.name)
                    .key("version")
                    .string(info.version);
                w.end_object().end_object().end_object().end_object();
                match w.finish() {
                    Ok(len) => {
                        let len = with_progress(out, len, &progress);
                        return Handled {
                            len,
                            status: 200,
                            responded: true,
                            note,
                            listening: false,
                        };
                    }
                    Err(_) => {
                        note = Some(Note::ResponseTooLarge);
                        (Some(id), RpcError::ResponseTooLarge)
                    }
                }
            }
            dispatch::Outcome::Error(id, e) => (id, e),
        };
        w.reset();
        write_error(&mut w, id, &status);
        // MIN_OUT always fits an error with an id of at most MAX_ID bytes.
        let len = w.finish().unwrap_or(0);
        Handled {
            len,
            status: status.http_status(),
            responded: true,
            note,
            listening: false,
        }
    }
}

impl<A: App> Engine<A> {
    /// Handles one framed line from a byte-stream transport: a message, or an over-long line
    /// that gets a `-32600` error without id. Blank lines are ignored.
    pub fn handle_line(&mut self, line: Line<'_>, cx: &Context<'_>, out: &mut [u8]) -> Handled {
        let input = match line {
            Line::Message(m) => Some(m),
            Line::TooLong => None,
        };
        let handling = self.line_handling(line, cx, &mut *out);
        poll_once(handling).unwrap_or_else(|| waited(input, out))
    }
}

/// One message for [`Engine::handling`], as its transport framed it.
#[derive(Clone, Copy, Debug)]
pub enum Message<'i> {
    /// The bytes of one message, no headers (see [`Engine::handle`]).
    Plain(&'i [u8]),
    /// One framed line of a byte stream (see [`Engine::handle_line`]).
    Line(Line<'i>),
    /// One Streamable HTTP body and its headers (see [`Engine::handle_http`]).
    Http(&'i [u8], &'i HttpHeaders<'i>),
}

/// Polls `f` once: its output, or `None` if it is still waiting. How a synchronous host reads
/// a synchronous store outside the engine (a panel's button booking through its flash store).
pub fn poll_once<F: Future>(f: F) -> Option<F::Output> {
    let f = core::pin::pin!(f);
    let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    match f.poll(&mut cx) {
        core::task::Poll::Ready(h) => Some(h),
        core::task::Poll::Pending => None,
    }
}

/// The answer of a synchronous `handle*` whose app's tool was still waiting (`-32603`).
fn waited(input: Option<&[u8]>, out: &mut [u8]) -> Handled {
    let mut h = fault_answer(input, out);
    h.note = Some(Note::Internal(
        "the app's tool was still waiting when polled once: drive it with Engine::handling",
    ));
    h
}

/// The answer a host gives when handling `input` failed outside the engine's own answers (it
/// caught a panic): a `-32603` error carrying the request's id (none if it cannot be read, or
/// `input` is `None` for an over-long line). A notification gets no answer (status 500, not
/// responded). Writes into `out` (at least [`MIN_OUT`] bytes).
pub fn fault_answer(input: Option<&[u8]>, out: &mut [u8]) -> Handled {
    let id = match input.map(envelope::read) {
        Some(Ok(env)) if env.id.is_none() => {
            return Handled {
                len: 0,
                status: 500,
                responded: false,
                note: None,
                listening: false,
            }
        }
        Some(Ok(env)) => env.id,
        Some(Err((_, id))) => id,
        None => None,
    };
    error_answer(id, &RpcError::Internal("the host caught a panic"), out)
}

/// `e` as the whole answer to the request with `id`, written into `out`.
fn error_answer(id: Option<Value<'_>>, e: &RpcError<'_>, out: &mut [u8]) -> Handled {
    let mut w = Writer::new(out);
    write_error(&mut w, id, e);
    match w.finish() {
        Ok(len) => Handled {
            len,
            status: e.http_status(),
            responded: true,
            note: None,
            listening: false,
        },
        Err(_) => Handled {
            len: 0,
            status: 500,
            responded: false,
            note: Some(Note::OutputTooSmall),
            listening: false,
        },
    }
}

/// Puts the `notifications/progress` lines a handler reported ahead of the response in
/// `out[..len]`, each followed by `\n`; returns the new length. Lines that do not fit are
/// dropped (progress is advisory; the response always stays whole).
fn with_progress(out: &mut [u8], len: usize, progress: &reply::Progress<'_>) -> usize {
    let Some(token) = progress.token else {
        return len;
    };
    let mut end = len;
    for &(done, total) in &progress.log.steps[..progress.log.len] {
        let Some(rest) = out.get_mut(end..) else {
            break;
        };
        let mut w = Writer::new(rest);
        w.begin_object().key("jsonrpc").string("2.0");
        w.key("method")
            .string("notifications/progress")
            .key("params")
            .begin_object();
        w.key("progressToken")
            .raw(token.raw())
            .key("progress")
            .int(done.into());
        if let Some(t) = total {
            w.key("total").int(t.into());
        }
        w.end_object().end_object();
        match w.finish() {
            Ok(n) if end + n < out.len() => {
                out[end + n] = b'\n';
                end += n + 1;
            }
            _ => break,
        }
    }
    // The notifications were appended after the response; rotate so it comes last.
    out[..end].rotate_left(len);
    end
}
