//! Multi Round-Trip Requests (SEP-2322) as plain data over [`wire`](crate::wire): the
//! questions a tool asks and the answers it gets.
//!
//! A tool declares each question once as a [`KeyedForm`] (a key and a [`Form`]); the same
//! declaration emits the `elicitation/create` request, validates the `accept`ed content
//! against exactly the schema that was sent, and reads the typed answer. Sending and
//! sealing are the engine's (`Reply::ask`, `Reply::elicit`).

mod form;
mod request;
mod responses;

pub(crate) use form::write_options;
pub use form::{Choice, Field, FieldKind, FieldShape, Form, Invalid, Reason, TextFormat};
pub use request::{Capability, InputRequest, InputRequired, KeyedForm};
pub use responses::{Answer, InputResponses, ResponsesError};
