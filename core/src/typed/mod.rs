//! Tools, forms and sealed state as Rust types, with no heap: what the derives of
//! `redmark-macros` implement (re-exported here with the default `derive` feature).
//!
//! - [`Args`]: a struct of a tool's arguments gives its `inputSchema` (a `&'static str`
//!   built at compile time), the checks the engine runs before the tool, the `Mcp-Param-*`
//!   mirroring (`#[arg(header = "Room")]`) and a zero-copy read ([`Call::read_args`]).
//! - [`Question`]: a struct of a form's fields gives its `requestedSchema`, the checks an
//!   answer must pass (and the red mark when it does not) and the decode of an accepted answer
//!   ([`Reply::question`] → [`Elicited`]); [`Choices`] enums are its selects.
//! - [`Sealed`]: a fixed-size encoding of the state a tool keeps in `requestState`, read back
//!   only from a verified state.
//! - [`app`]: an `impl App` whose `#[tool]` methods are the tools, one declaration each,
//!   gives the tool enum ([`Tools`]), the `tools/list` table and the dispatch that hands each
//!   tool its typed arguments.
//!
//! `core/examples/first_tool.rs` (the crate's front page) and
//! `core/examples/extend_meeting.rs` are written on it; `docs/writing-a-tool.md` walks
//! through it.
//!
//! [`Call::read_args`]: crate::engine::Call::read_args
//! [`Reply::question`]: crate::engine::Reply::question

mod args;
mod choices;
mod concat;
mod number;
mod offer;
mod question;
mod sealed;
#[cfg(feature = "stand-in")]
mod stand_in;
mod tools;

pub use crate::engine::{Elicited, Round};
pub use crate::wire::format::Date;
pub use args::{ArgValue, Args, BadArgs, Scratch, Unreadable, DATE_LEN, UNREADABLE};
pub use choices::{Choices, Picks, PicksField, MAX_PICKS};
pub use concat::Bound;
pub use number::NumberField;
pub use offer::{Offer, Pick};
pub use question::{FieldValue, Question, Text};
pub use sealed::{Sealed, SealedBytes};
pub use tools::{NoArgs, Tools};

#[cfg(feature = "derive")]
pub use redmark_macros::{app, Args, Choices, Question, Sealed};

/// What the derived code names; not an API.
#[doc(hidden)]
pub mod __private {
    pub use super::args::{find, optional, required, serde_read, text};
    pub use super::concat::{as_str, bound, decimal, decimal_len, join, total_len};
    pub use super::offer::pick;
    pub use super::question::field;
    pub use super::sealed::{put_at, take_at};
    pub use crate::engine::{App, Call, Replied, Reply, ServerInfo};
    pub use crate::engine::{Arg, ArgKind, ParamHeader, ToolEntry, ToolInfo};
    pub use crate::limits::{MAX_STR, UTF8_MAX};
    pub use crate::mrtr::{Choice, Field, FieldKind, TextFormat};
    pub use crate::wire::json::Value;
    pub use core::option::Option::{self, None, Some};
    pub use core::result::Result::{self, Err, Ok};
}

/// `Ok(reply.fail(…))` of a formatted message, for a tool's early return:
/// `return fail!(reply, "'{title}' can run until {limit} at most.")`.
#[macro_export]
macro_rules! fail {
    ($reply:expr, $($fmt:tt)+) => {
        ::core::result::Result::Ok($reply.fail(&$crate::engine::Msg(::core::format_args!($($fmt)+))))
    };
}

/// `Ok(reply.complete(…))` of a formatted message: `complete!(reply, "Extended until {to}.")`.
#[macro_export]
macro_rules! complete {
    ($reply:expr, $($fmt:tt)+) => {
        ::core::result::Result::Ok($reply.complete(&$crate::engine::Msg(::core::format_args!($($fmt)+))))
    };
}

/// The answer of a [`Round`] and the reply still to give, or (when the question went out)
/// `return Ok(done)`: `let (answer, reply) = answered!(reply.question::<Q>(…)?);`.
#[macro_export]
macro_rules! answered {
    ($round:expr) => {
        match $round {
            $crate::typed::Round::Answer(answer, reply) => (answer, reply),
            $crate::typed::Round::Sent(done) => return ::core::result::Result::Ok(done),
        }
    };
}
