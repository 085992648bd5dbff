//! Input requests: what a tool asks the client for, and a form question under its key.

use super::form::Form;
use super::responses::{Answer, InputResponses};
use crate::wire::meta::ClientCaps;
use crate::wire::write::Writer;

/// A client capability an input request depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// Form-mode elicitation.
    Elicitation,
    /// `sampling/createMessage` (deprecated in 2026-07-28, still valid).
    Sampling,
    /// `roots/list` (deprecated in 2026-07-28, still valid).
    Roots,
}

impl Capability {
    /// The ClientCapabilities member name.
    pub fn name(self) -> &'static str {
        match self {
            Capability::Elicitation => "elicitation",
            Capability::Sampling => "sampling",
            Capability::Roots => "roots",
        }
    }

    /// Whether the client declared it for this request.
    pub fn declared(self, caps: &ClientCaps) -> bool {
        match self {
            Capability::Elicitation => caps.elicitation_form,
            Capability::Sampling => caps.sampling,
            Capability::Roots => caps.roots,
        }
    }
}

/// One entry of `inputRequests`.
#[derive(Clone, Copy)]
pub enum InputRequest<'f> {
    /// `elicitation/create` in form mode.
    Elicit(Form<'f>),
    /// `sampling/createMessage` with one user text message.
    Sample {
        /// The user message.
        prompt: &'f str,
        /// `maxTokens`.
        max_tokens: u32,
    },
    /// `roots/list`.
    Roots,
}

impl InputRequest<'_> {
    /// The capability the client must have declared for this request to be sent.
    pub fn needs(&self) -> Capability {
        match self {
            InputRequest::Elicit(_) => Capability::Elicitation,
            InputRequest::Sample { .. } => Capability::Sampling,
            InputRequest::Roots => Capability::Roots,
        }
    }

    /// Writes `{"method": …, "params": …}`.
    pub fn write(&self, w: &mut Writer<'_>) {
        w.begin_object();
        match self {
            InputRequest::Elicit(form) => {
                w.key("method").string("elicitation/create").key("params");
                form.write_params(w);
            }
            InputRequest::Sample { prompt, max_tokens } => {
                w.key("method")
                    .string("sampling/createMessage")
                    .key("params")
                    .begin_object();
                w.key("messages")
                    .begin_array()
                    .begin_object()
                    .key("role")
                    .string("user");
                w.key("content").begin_object().key("type").string("text");
                w.key("text")
                    .string(prompt)
                    .end_object()
                    .end_object()
                    .end_array();
                w.key("maxTokens").int((*max_tokens).into()).end_object();
            }
            InputRequest::Roots => {
                w.key("method")
                    .string("roots/list")
                    .key("params")
                    .begin_object()
                    .end_object();
            }
        }
        w.end_object();
    }
}

/// An `InputRequiredResult` a tool wants sent: the requests, and what the retry must bring
/// back sealed in `requestState`.
#[derive(Clone, Copy)]
pub struct InputRequired<'f> {
    /// The input requests, keyed by stable, unique ids.
    pub requests: &'f [(&'f str, InputRequest<'f>)],
    /// The tool's payload for the next round (at most `MAX_STATE_PAYLOAD` bytes).
    pub payload: &'f [u8],
}

/// A form-mode question under a stable key: the request that asks it, and its answer
/// validated against exactly that form (the engine's `Reply::elicit` runs the round trip).
#[derive(Clone, Copy)]
pub struct KeyedForm<'f> {
    /// The `inputRequests` / `inputResponses` key.
    pub key: &'f str,
    /// The form.
    pub form: Form<'f>,
}

impl<'f> KeyedForm<'f> {
    /// This question's answer among `responses`, validated against its own form.
    pub fn answer<'a>(&self, responses: &InputResponses<'a>) -> Answer<'f, 'a> {
        let Some(v) = responses.get(self.key) else {
            return Answer::Missing;
        };
        match Answer::from_result(v) {
            Answer::Accepted(c) => match self.form.validate(c) {
                Ok(()) => Answer::Accepted(c),
                Err(e) => Answer::Invalid(Some(e)),
            },
            other => other,
        }
    }

    /// The input request that asks it.
    pub fn request(&self) -> (&'f str, InputRequest<'f>) {
        (self.key, InputRequest::Elicit(self.form))
    }
}
