//! The one way an app answers: [`Reply`] (complete, fail, ask), the [`Report`] a result's
//! content comes from, and the [`Done`] that proves it answered.

use core::fmt;

use super::error::CallError;
use crate::limits::MAX_PROGRESS;
use crate::mrtr::InputRequired;
use crate::seal::{self, Binding, KeyRing, Nonce, Origin, TOKEN_MAX};
use crate::wire::json::Value;
use crate::wire::meta::ClientCaps;
use crate::wire::write::Writer;

/// What a tool, prompt or resource handler returns: its answer, or an error the engine maps
/// to a JSON-RPC error.
pub type Replied = Result<Done, CallError>;

/// Proof that a tool answered (only a [`Reply`] makes one).
#[derive(Debug)]
pub struct Done(pub(crate) ResultKind);

/// Which kind of result a [`Reply`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResultKind {
    /// A complete result.
    Complete,
    /// A complete `ReadResourceResult` of the caller's own that is stale at once
    /// ([`Reply::private_contents`]).
    Private,
    /// An `InputRequiredResult`.
    InputRequired,
}

/// Progress a call reported, written by the engine as `notifications/progress` lines
/// ahead of the response.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProgressLog {
    pub steps: [(u32, Option<u32>); MAX_PROGRESS],
    pub len: usize,
}

/// The `progressToken` of the request and the progress its handler reported.
#[derive(Clone, Copy, Default)]
pub(crate) struct Progress<'a> {
    pub token: Option<Value<'a>>,
    pub log: ProgressLog,
}

/// A tool result's content, written straight into the response.
pub trait Report {
    /// The human-readable text (the result's text content block).
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result;
    /// Extra content blocks after the text one (images, resources, …).
    fn more_content(&self, _blocks: &mut Writer<'_>) {}
    /// Whether there is `structuredContent`.
    fn has_structured(&self) -> bool {
        false
    }
    /// Writes the `structuredContent` value.
    fn structured(&self, _w: &mut Writer<'_>) {}
}

impl Report for str {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str(self)
    }
}

/// Formatted text, as a tool's text result (`reply.fail(&Msg(format_args!(…)))`) or as a
/// form's message (it is `Display`), written without a buffer.
pub struct Msg<'a>(pub fmt::Arguments<'a>);

impl Report for Msg<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_fmt(self.0)
    }
}

impl fmt::Display for Msg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_fmt(self.0)
    }
}

/// What sealing needs, lent by the engine for one call.
pub(crate) struct Sealer<'a> {
    pub ring: &'a KeyRing,
    pub principal: &'a [u8],
    pub epoch: u32,
    /// The originating request, digested only when a state is opened or sealed.
    pub origin: Origin<'a>,
    /// Its digest, when opening the incoming state already computed it.
    pub digest: Option<[u8; 32]>,
    pub expires: u32,
    /// The operation's nonce: a re-asked question keeps the one its state came with.
    pub nonce: Nonce,
    pub caps: ClientCaps,
}

/// The one way a tool answers: complete, fail, or ask. The engine writes the envelope.
pub struct Reply<'w, 'b> {
    pub(crate) w: &'w mut Writer<'b>,
    pub(crate) id: Value<'w>,
    pub(crate) sealer: &'w Sealer<'w>,
    /// Where progress goes, when the request carried a `progressToken`.
    pub(crate) progress: Option<&'w mut ProgressLog>,
}

impl<'b> Reply<'_, 'b> {
    fn head(&mut self) {
        super::response::write_head(self.w, Some(self.id));
        self.w.key("result").begin_object();
    }

    /// Opens a complete result: the envelope and `"resultType":"complete"`.
    // Inlined: as a call it changes how LTO inlines every `result::<R>`, +4 KiB of panel flash.
    #[inline(always)]
    fn open_complete(&mut self) -> &mut Writer<'b> {
        self.head();
        self.w.key("resultType").string("complete");
        self.w
    }

    /// Reports progress (`notifications/progress`, sent before the response). A no-op when
    /// the request carried no `progressToken`, or after [`MAX_PROGRESS`] reports.
    pub fn progress(&mut self, progress: u32, total: Option<u32>) {
        if let Some(log) = self.progress.as_deref_mut() {
            if let Some(slot) = log.steps.get_mut(log.len) {
                *slot = (progress, total);
                log.len += 1;
            }
        }
    }

    /// Whether the client asked for progress (sent a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// A complete `CallToolResult` whose `content` blocks `blocks` writes into the open array
    /// (images, audio, embedded resources…).
    pub fn content(mut self, is_error: bool, blocks: impl FnOnce(&mut Writer<'_>)) -> Done {
        let w = self.open_complete();
        w.key("content").begin_array();
        blocks(w);
        w.end_array().key("isError").bool(is_error);
        Done(ResultKind::Complete)
    }

    /// A complete `GetPromptResult`: `messages` writes the message objects into the open array.
    pub fn prompt(
        mut self,
        description: Option<&str>,
        messages: impl FnOnce(&mut Writer<'_>),
    ) -> Done {
        let w = self.open_complete();
        if let Some(d) = description {
            w.key("description").string(d);
        }
        w.key("messages").begin_array();
        messages(w);
        w.end_array();
        Done(ResultKind::Complete)
    }

    /// A complete `ReadResourceResult`: `contents` writes the resource contents objects into
    /// the open array (the engine adds the caching hints).
    pub fn contents(mut self, contents: impl FnOnce(&mut Writer<'_>)) -> Done {
        let w = self.open_complete();
        w.key("contents").begin_array();
        contents(w);
        w.end_array();
        Done(ResultKind::Complete)
    }

    /// [`Reply::contents`] of a resource that differs by caller and changes as others act (a
    /// room's day): the engine answers it `ttlMs: 0`, `cacheScope: "private"`, so no cache
    /// serves it to another principal or after a change.
    pub fn private_contents(self, contents: impl FnOnce(&mut Writer<'_>)) -> Done {
        self.contents(contents);
        Done(ResultKind::Private)
    }

    /// A complete, successful result.
    pub fn complete<R: Report + ?Sized>(self, r: &R) -> Done {
        self.result(r, false)
    }

    /// A complete result with `isError: true`: the call ran and failed in a way the model can
    /// act on (bad day, taken slot, …).
    pub fn fail<R: Report + ?Sized>(self, r: &R) -> Done {
        self.result(r, true)
    }

    fn result<R: Report + ?Sized>(mut self, r: &R, is_error: bool) -> Done {
        let w = self.open_complete();
        w.key("content").begin_array();
        w.begin_object().key("type").string("text").key("text");
        w.string_with(|f| r.text(f)).end_object();
        r.more_content(w);
        w.end_array();
        if r.has_structured() {
            w.key("structuredContent");
            r.structured(w);
        }
        w.key("isError").bool(is_error);
        Done(ResultKind::Complete)
    }

    /// An `InputRequiredResult`: the requests and a sealed `requestState`. Refuses, sending
    /// nothing, if the client did not declare what a request needs.
    pub fn ask(mut self, ask: &InputRequired<'_>) -> Result<Done, CallError> {
        let s = self.sealer;
        if let Some((_, r)) = ask
            .requests
            .iter()
            .find(|(_, r)| !r.needs().declared(&s.caps))
        {
            return Err(CallError::MissingCapability(r.needs()));
        }
        let keys = ask.requests.iter().map(|(k, _)| k);
        if keys
            .clone()
            .enumerate()
            .any(|(i, k)| keys.clone().take(i).any(|o| o == k))
        {
            return Err(CallError::Internal("inputRequests keys must be unique"));
        }
        let bind = Binding {
            principal: s.principal,
            epoch: s.epoch,
            request: s.digest.unwrap_or_else(|| s.origin.digest()),
        };
        let mut token = [0u8; TOKEN_MAX];
        let token = seal::seal(s.ring, &bind, s.expires, s.nonce, ask.payload, &mut token)
            .map_err(|_| CallError::Internal("could not seal requestState"))?;
        self.head();
        let w = self.w;
        w.key("resultType").string("input_required");
        if !ask.requests.is_empty() {
            w.key("inputRequests").begin_object();
            for (key, req) in ask.requests {
                w.key(key);
                req.write(w);
            }
            w.end_object();
        }
        w.key("requestState").string(token);
        Ok(Done(ResultKind::InputRequired))
    }
}
