//! The round trip of one form question: [`Reply::elicit`] reads this call's answer or asks.

use super::{Call, CallError, Done, Reply};
use crate::mrtr::{Answer, Ask, Form, InputRequest, Invalid, Question};
use crate::wire::json::Value;

/// Where a [`Reply::elicit`] left the call.
pub enum Elicited<'a, 'w, 'b> {
    /// Answered with content that matches the form; the reply is still the tool's to give.
    Accepted(Value<'a>, Reply<'w, 'b>),
    /// The user said no; nothing irreversible may happen.
    Declined(Reply<'w, 'b>),
    /// The user dismissed the operation; nothing irreversible may happen.
    Cancelled(Reply<'w, 'b>),
    /// Not (validly) answered yet: the question went out as an `InputRequiredResult`.
    Asked(Done),
}

impl<'w, 'b> Reply<'w, 'b> {
    /// The whole round trip for one question: reads `call`'s answer to `question` and, when
    /// there is none or it does not match the form, asks (again) with `payload` sealed in the
    /// state — a re-ask carries the red mark (what was wrong) in its message and the field's
    /// description. A tool only handles the three outcomes; it never writes the round trip.
    pub fn elicit<'a, 'f>(
        self,
        call: &Call<'a>,
        question: &Question<'f>,
        payload: &[u8],
    ) -> Result<Elicited<'a, 'w, 'b>, CallError> {
        let answer = call.answer(question);
        Ok(match answer {
            Answer::Accepted(content) => Elicited::Accepted(content, self),
            Answer::Declined => Elicited::Declined(self),
            Answer::Cancelled => Elicited::Cancelled(self),
            Answer::Missing | Answer::Invalid(_) => {
                let mark = match answer {
                    Answer::Invalid(mark) => mark,
                    _ => None,
                };
                Elicited::Asked(self.ask_again(question, mark, payload)?)
            }
        })
    }

    /// Asks `question`, with the red mark of the last answer when there is one.
    fn ask_again<'f, 'a>(
        self,
        question: &Question<'f>,
        mark: Option<Invalid<'f, 'a>>,
        payload: &[u8],
    ) -> Result<Done, CallError> {
        let form = Form {
            mark,
            ..question.form
        };
        self.ask(&Ask {
            requests: &[(question.key, InputRequest::Elicit(form))],
            payload,
        })
    }
}
