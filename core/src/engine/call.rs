//! One call as the app sees it: [`Call`], its arguments, answers and state.

use super::access::Access;
use super::args::{Arg, ArgsInvalid};
use crate::mrtr::{Answer, InputResponses, KeyedForm};
use crate::seal::{Nonce, Opened};
use crate::wire::json::Value;
use crate::wire::meta::ClientCaps;

/// One `tools/call` as the tool sees it, after the engine has checked everything generic.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// `arguments` (an object) if sent.
    pub args: Option<Value<'a>>,
    /// Well-formed `inputResponses` (empty if absent).
    pub responses: InputResponses<'a>,
    /// The verified `requestState`, if one came back.
    pub state: Option<&'a Opened>,
    /// What the client declared for this request.
    pub caps: ClientCaps,
    /// Who is calling.
    pub principal: &'a [u8],
    /// The server's clock, seconds.
    pub now: u64,
    /// The caller's role and transport, as the host said ([`Context::access`](super::Context::access)).
    pub access: Access,
    /// The operation's nonce: the verified state's when one came back, else fresh for this
    /// call. Any state this call mints carries it on, so every round of one logical
    /// operation shares it; key at-most-once effects on it.
    pub nonce: Nonce,
    pub(crate) answers_need_state: bool,
}

impl<'a> Call<'a> {
    /// The answer to `q`, or [`Answer::Missing`] when it does not count (no valid state for a
    /// tool that needs one).
    pub fn answer<'f>(&self, q: &KeyedForm<'f>) -> Answer<'f, 'a> {
        if !self.answers_count() {
            return Answer::Missing;
        }
        q.answer(&self.responses)
    }

    /// Whether answers count: always, or only with a valid state for a tool that needs one.
    fn answers_count(&self) -> bool {
        !self.answers_need_state || self.state.is_some()
    }

    /// The raw response under `key` (sampling and roots results), or `None` when it does not
    /// count (absent, or no valid state for a tool that needs one).
    pub fn response(&self, key: &str) -> Option<Value<'a>> {
        if !self.answers_count() {
            return None;
        }
        self.responses.get(key)
    }

    /// The nonce that identifies this logical operation across rounds (see [`Call::nonce`]).
    pub fn operation(&self) -> Nonce {
        self.nonce
    }

    /// The state payload (empty without a state).
    pub fn payload(&self) -> &'a [u8] {
        self.state.map_or(&[], |s| &s.payload[..])
    }

    /// Checks `arguments` against the tool's declared fields (see [`ArgsInvalid`]); a tool
    /// answers an error with [`Reply::fail`](super::Reply::fail), so the model can correct its call.
    pub fn check_args(&self, args: &'static [Arg]) -> Result<(), ArgsInvalid<'a>> {
        super::args::check(args, self.args)
    }
}
