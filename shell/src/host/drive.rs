//! One message driven to its answer: the engine's handling is awaited on the connection's
//! task, each poll guarded so a panic is answered rather than propagated. A tool that awaits
//! its store (or anything else) is woken by it; the message is parsed and run once, however
//! long it waits.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::task::Poll;
use std::time::{SystemTime, UNIX_EPOCH};

use redmark_core::engine::Message;
use redmark_core::wire::lines::Line;
use redmark_core::{Access, App, Context, Engine, Handled, HttpHeaders};

use super::entropy::next_entropy;
use super::inject::inject_panic;
use super::msg::Msg;

/// The clock, entropy, principal and access of one message.
pub struct Cx<'p> {
    pub now: u64,
    pub entropy: [u8; 8],
    pub principal: &'p [u8],
    /// The caller's role and transport, read from its seated principal.
    pub access: Access,
}

impl<'p> Cx<'p> {
    /// Now, fresh entropy, and the principal `seated` names with its role and transport
    /// (`auth::role::unseat`: the one place the engine's `Access` is made).
    pub fn new(seated: &'p [u8]) -> Self {
        let (access, principal) = crate::auth::role::unseat(seated);
        Cx {
            now: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            entropy: next_entropy(),
            principal,
            access,
        }
    }
}

/// The engine's handling of a message panicked (answered `-32603` by the caller).
pub struct Panicked;

/// Handles `msg` on `engine` to its end.
pub async fn drive<A: App>(
    engine: &mut Engine<A>,
    msg: Msg<'_>,
    cx: &Cx<'_>,
    out: &mut [u8],
) -> Result<Handled, Panicked> {
    let context = Context {
        now: cx.now,
        principal: cx.principal,
        entropy: cx.entropy,
        access: cx.access,
    };
    let params: Vec<(&str, &str)>;
    let headers;
    let message = match msg {
        Msg::Line(l) => Message::Line(Line::Message(l)),
        Msg::TooLong => Message::Line(Line::TooLong),
        Msg::Http { body, headers: h } => {
            params = h
                .params
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            headers = HttpHeaders {
                version: h.version.as_deref(),
                method: h.method.as_deref(),
                name: h.name.as_deref(),
                params: &params,
            };
            Message::Http(body, &headers)
        }
    };
    guarded(msg, engine.handling(message, &context, out)).await
}

/// `handling`, each poll guarded: a panic ends it with [`Panicked`] (see the module doc of
/// `host` for why the engine stays usable). The panic hook has logged where it happened.
async fn guarded<F: Future<Output = Handled>>(
    msg: Msg<'_>,
    handling: F,
) -> Result<Handled, Panicked> {
    let mut handling = pin!(handling);
    let mut first = true;
    std::future::poll_fn(|cx| {
        let polled = panic::catch_unwind(AssertUnwindSafe(|| {
            if std::mem::take(&mut first) {
                inject_panic(msg);
            }
            handling.as_mut().poll(cx)
        }));
        match polled {
            Ok(Poll::Ready(h)) => Poll::Ready(Ok(h)),
            Ok(Poll::Pending) => Poll::Pending,
            // Never polled again: it ends here.
            Err(_) => Poll::Ready(Err(Panicked)),
        }
    })
    .await
}
