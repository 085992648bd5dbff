//! Typed questions: [`Question`] (what `#[derive(Question)]` implements), the answer types a
//! form field may have ([`FieldValue`]), and the round trip that reads an accepted answer
//! into the type ([`Reply::question`]).

use core::fmt;

#[cfg(feature = "stand-in")]
use super::stand_in::StandIn;
#[cfg(feature = "stand-in")]
use crate::engine::Done;
use crate::engine::{Call, CallError, Elicited, Reply, Round};
#[cfg(feature = "stand-in")]
use crate::mrtr::Answer;
use crate::mrtr::{self, Capability, Choice, Field, FieldKind, Form};
use crate::wire::json::{Chars, Kind, Value};

/// A form as one struct: its fields (the `requestedSchema`, the checks an answer must pass
/// and the red mark when it does not) and the decode of an accepted answer. Implemented by
/// `#[derive(Question)]`.
pub trait Question<'a>: Sized {
    /// The `inputRequests` / `inputResponses` key it is asked under.
    const KEY: &'static str;
    /// Its fields, in display order (a run-time choice field with no options yet).
    const FIELDS: &'static [Field<'static>];
    /// The tool argument that stands in for its answer (`#[question(stand_in = "room_id")]`):
    /// a client that cannot be asked (no form elicitation) gets an `isError` result naming
    /// the choices and this argument to call again with. `None`: such a client gets `-32021`.
    const STAND_IN: Option<&'static str> = None;
    /// Most options its run-time choice field ([`Pick`](super::Pick)) offers; 0 when it has
    /// none.
    const OFFERS: usize;
    /// What [`Reply::question_offering`] is handed: an [`Offer`](super::Offer) of as many
    /// options as its `Pick<N>` takes (`N`; 0 without one).
    type Offered<'o>: core::ops::Deref<Target = [Choice<'o>]>;
    /// Hands `f` its fields, `offer` the options of its run-time choice field.
    fn with_fields<R>(offer: &[Choice<'_>], f: impl FnOnce(&[Field<'_>]) -> R) -> R {
        let _ = offer;
        f(Self::FIELDS)
    }
    /// The answer's content as this type (it has already matched its fields, `offer` the
    /// options its run-time choice field offered).
    fn decode(content: Value<'a>, offer: &[Choice<'_>]) -> Option<Self>;
}

impl<'w, 'b> Reply<'w, 'b> {
    /// The round trip of question `Q`: `call`'s answer read into a `Q`, or the question asked
    /// (again) with `message` and `payload` sealed in the state. An answer that does not
    /// match the form is asked again with the red mark (which field, and why).
    pub fn question<'a, Q: Question<'a>>(
        self,
        call: &Call<'a>,
        message: &dyn fmt::Display,
        payload: &[u8],
    ) -> Result<Round<'w, 'b, Elicited<Q>>, CallError> {
        const {
            assert!(
                Q::OFFERS == 0,
                "this question offers options computed at run time: ask it with `question_offering`"
            )
        };
        self.round::<Q>(call, message, payload, &[])
    }

    /// [`Reply::question`] of a question with a run-time choice field ([`Pick`](super::Pick)),
    /// which offers `offer`: an `Offer<N>` of the `N` its `Pick<N>` takes (another `N` does
    /// not compile: a choice list over its bound).
    pub fn question_offering<'a, Q: Question<'a>>(
        self,
        call: &Call<'a>,
        message: &dyn fmt::Display,
        payload: &[u8],
        offer: &Q::Offered<'_>,
    ) -> Result<Round<'w, 'b, Elicited<Q>>, CallError> {
        self.round::<Q>(call, message, payload, offer)
    }

    fn round<'a, Q: Question<'a>>(
        self,
        call: &Call<'a>,
        message: &dyn fmt::Display,
        payload: &[u8],
        offer: &[Choice<'_>],
    ) -> Result<Round<'w, 'b, Elicited<Q>>, CallError> {
        let elicited = Q::with_fields(offer, |fields| {
            let question = mrtr::KeyedForm {
                key: Q::KEY,
                form: Form {
                    message,
                    fields,
                    mark: None,
                },
            };
            match Q::STAND_IN {
                #[cfg(feature = "stand-in")]
                Some(arg) if unaskable(call, &question) => {
                    Ok(Round::Sent(self.stand_in(call, message, fields, arg)))
                }
                _ => self.elicit(call, &question, payload),
            }
        })?;
        Ok(match elicited {
            Round::Answer(Elicited::Accepted(content), reply) => {
                let answer = Q::decode(content, offer).ok_or(CallError::Internal(
                    "an answer that matched its form does not decode",
                ))?;
                Round::Answer(Elicited::Accepted(answer), reply)
            }
            Round::Answer(Elicited::Declined, reply) => Round::Answer(Elicited::Declined, reply),
            Round::Answer(Elicited::Cancelled, reply) => Round::Answer(Elicited::Cancelled, reply),
            Round::Sent(done) => Round::Sent(done),
        })
    }

    /// An `isError` result the model reads instead of a form the client cannot show: the
    /// question, each field's choices and the argument `arg` to call the tool again with.
    #[cfg(feature = "stand-in")]
    fn stand_in(
        self,
        call: &Call<'_>,
        message: &dyn fmt::Display,
        fields: &[Field<'_>],
        arg: &'static str,
    ) -> Done {
        let tool = self.sealer.origin.name;
        self.fail(&StandIn {
            tool,
            message,
            fields,
            arg,
            args: call.args,
        })
    }

    /// [`Reply::confirm`], except that a client that cannot be asked (no form elicitation)
    /// is taken as a yes instead of refused with `-32021`: for a step the call itself already
    /// asks for by an exact name, on something only the caller owns (cancelling one of its
    /// own bookings), in a tool a host marks as destructive (hosts confirm those themselves).
    pub fn confirm_if_askable<'a>(
        self,
        call: &Call<'a>,
        yes: &str,
        message: &dyn fmt::Display,
        payload: &[u8],
    ) -> Result<Round<'w, 'b, bool>, CallError> {
        // An answer that came anyway (a client that declared the capability when asked) counts.
        if !Capability::Elicitation.declared(&call.caps) && call.response(CONFIRM).is_none() {
            return Ok(Round::Answer(true, self));
        }
        self.confirm(call, yes, message, payload)
    }

    /// A yes/no question (`confirm`, one checkbox titled `yes`, ticked to begin with): `true`
    /// once the user accepted with it ticked, `false` when they said no in any way.
    pub fn confirm<'a>(
        self,
        call: &Call<'a>,
        yes: &str,
        message: &dyn fmt::Display,
        payload: &[u8],
    ) -> Result<Round<'w, 'b, bool>, CallError> {
        let fields = [Field {
            name: CONFIRM,
            title: yes,
            description: None,
            required: true,
            kind: FieldKind::Boolean {
                default: Some(true),
            },
        }];
        let form = Form {
            message,
            fields: &fields,
            mark: None,
        };
        let question = mrtr::KeyedForm { key: CONFIRM, form };
        Ok(match self.elicit(call, &question, payload)? {
            Round::Answer(Elicited::Accepted(content), reply) => {
                let yes = content.get(CONFIRM).and_then(|v| v.as_bool());
                Round::Answer(yes == Some(true), reply)
            }
            Round::Answer(_, reply) => Round::Answer(false, reply),
            Round::Sent(done) => Round::Sent(done),
        })
    }
}

/// The key, and the one field, of [`Reply::confirm`]'s question.
const CONFIRM: &str = "confirm";

/// Whether `call` cannot answer `question`: its client declared no form elicitation and no
/// usable answer came with it.
#[cfg(feature = "stand-in")]
fn unaskable(call: &Call<'_>, question: &mrtr::KeyedForm<'_>) -> bool {
    !Capability::Elicitation.declared(&call.caps)
        && matches!(call.answer(question), Answer::Missing | Answer::Invalid(_))
}

/// A type a form field may have: `bool`, an integer, `f64`, [`Text`], a `#[derive(Choices)]` enum
/// (single select) or [`Picks`](super::Picks) of one (multi select), in an `Option` when not
/// required.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a form field",
    label = "a form cannot ask for this",
    note = "a form (MCP form elicitation) is a flat object of primitives: a field is `bool`, an integer, `f64`, `Text<'a>`, `Date`, a `#[derive(Choices)]` enum or `Picks<E>` of one, in an `Option` when not required"
)]
pub trait FieldValue<'a>: Sized {
    /// The value, if it is one of this type (the form's checks have already run).
    fn decode(v: Value<'a>) -> Option<Self>;
}

impl<'a> FieldValue<'a> for bool {
    fn decode(v: Value<'a>) -> Option<Self> {
        v.as_bool()
    }
}

macro_rules! integer_fields {
    ($($t:ty),*) => {$(
        impl<'a> FieldValue<'a> for $t {
            fn decode(v: Value<'a>) -> Option<Self> {
                v.as_i64().and_then(|i| <$t>::try_from(i).ok())
            }
        }
    )*};
}
integer_fields!(u8, u16, u32, u64, i8, i16, i32, i64);

/// A text answer, borrowed from the message as it came (decoded as it is read: no copy).
#[derive(Clone, Copy, Debug)]
pub struct Text<'a>(Value<'a>);

impl<'a> Text<'a> {
    /// Whether the text is `s`.
    pub fn eq_str(&self, s: &str) -> bool {
        self.0.eq_str(s)
    }

    /// The text when it has no escapes (borrowed), else decoded into `scratch`.
    pub fn as_str<'s>(&self, scratch: &'s mut [u8]) -> Option<&'s str>
    where
        'a: 's,
    {
        self.0.as_str(scratch)
    }

    /// Its characters, decoded.
    pub fn chars(&self) -> Chars<'a> {
        self.0.chars()
    }
}

impl PartialEq<&str> for Text<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.eq_str(other)
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.chars().try_for_each(|c| fmt::Write::write_char(f, c))
    }
}

impl<'a> FieldValue<'a> for Text<'a> {
    fn decode(v: Value<'a>) -> Option<Self> {
        (v.kind() == Kind::String).then_some(Text(v))
    }
}

/// A field's value: `None` when absent (an optional field).
#[doc(hidden)]
pub fn field<'a, T: FieldValue<'a>>(content: Value<'a>, name: &str) -> Option<Option<T>> {
    match content.get(name) {
        None => Some(None),
        Some(v) => T::decode(v).map(Some),
    }
}

impl<'a> FieldValue<'a> for crate::wire::format::Date {
    fn decode(v: Value<'a>) -> Option<Self> {
        let mut buf = [0u8; super::DATE_LEN];
        crate::wire::format::date(v.as_str(&mut buf)?)
    }
}
