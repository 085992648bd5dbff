//! The round trip of one form question: [`Reply::elicit`] reads this call's answer or asks,
//! and where it leaves the call ([`Round`], the user's [`Elicited`]).

use super::{Call, CallError, Done, Reply};
use crate::mrtr::{Answer, Form, InputRequest, InputRequired, Invalid, KeyedForm};
use crate::wire::json::Value;

/// What the user did with a question: the three outcomes the spec keeps apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elicited<T> {
    /// Answered, with content that matches the form, read into `T`.
    Accepted(T),
    /// The user said no; nothing irreversible may happen.
    Declined,
    /// The user dismissed the operation; nothing irreversible may happen.
    Cancelled,
}

/// Where a question left the call: [`Reply::elicit`] (`T`: [`Elicited`] content),
/// `Reply::question` (an [`Elicited`] typed answer) or `Reply::confirm` (`bool`).
pub enum Round<'w, 'b, T> {
    /// The user's answer came back; the reply is still the tool's to give.
    Answer(T, Reply<'w, 'b>),
    /// Not (validly) answered yet: the question was sent, red mark and all (or, to a client
    /// that cannot be asked, a typed question's stand-in: the choices and the argument to give).
    Sent(Done),
}

impl<'w, 'b> Reply<'w, 'b> {
    /// The whole round trip for one question: reads `call`'s answer to `question` and, when
    /// there is none or it does not match the form, asks (again) with `payload` sealed in the
    /// state — a re-ask carries the red mark (what was wrong) in its message and the field's
    /// description. A tool only handles the three outcomes; it never writes the round trip.
    pub fn elicit<'a, 'f>(
        self,
        call: &Call<'a>,
        question: &KeyedForm<'f>,
        payload: &[u8],
    ) -> Result<Round<'w, 'b, Elicited<Value<'a>>>, CallError> {
        let answer = call.answer(question);
        Ok(match answer {
            Answer::Accepted(content) => Round::Answer(Elicited::Accepted(content), self),
            Answer::Declined => Round::Answer(Elicited::Declined, self),
            Answer::Cancelled => Round::Answer(Elicited::Cancelled, self),
            Answer::Missing | Answer::Invalid(_) => {
                let mark = match answer {
                    Answer::Invalid(mark) => mark,
                    _ => None,
                };
                Round::Sent(self.ask_again(question, mark, payload)?)
            }
        })
    }

    /// Asks `question`, with the red mark of the last answer when there is one.
    fn ask_again<'f, 'a>(
        self,
        question: &KeyedForm<'f>,
        mark: Option<Invalid<'f, 'a>>,
        payload: &[u8],
    ) -> Result<Done, CallError> {
        let form = Form {
            mark,
            ..question.form
        };
        self.ask(&InputRequired {
            requests: &[(question.key, InputRequest::Elicit(form))],
            payload,
        })
    }
}
