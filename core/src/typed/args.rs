//! Typed tool arguments: [`Args`] (what `#[derive(Args)]` implements), the scalar types an
//! argument may have ([`ArgValue`]), and the zero-copy read of a call's `arguments` (or
//! serde-json-core's, under `#[args(serde)]`).

use core::fmt;

use crate::engine::{check_with, Arg, ArgsInvalid, Call, ParamHeader, Report};
use crate::wire::format::{self, Date};
use crate::wire::json::Value;

/// A tool's arguments as one struct: its `inputSchema`, the checks the engine runs on a call
/// before the tool (the [`Arg`] table), the `Mcp-Param-*` mirroring, and a typed read.
/// Implemented by `#[derive(Args)]`; the schema is a `&'static str` built at compile time.
pub trait Args<'s>: Sized {
    /// The JSON Schema of the arguments, as `tools/list` serves it.
    const SCHEMA: &'static str;
    /// The arguments as the engine checks them, in declaration order.
    const ARGS: &'static [Arg];
    /// The argument names, in declaration order (a tool's salient arguments).
    const NAMES: &'static [&'static str];
    /// The arguments mirrored into `Mcp-Param-*` headers (`x-mcp-header` in the schema).
    const HEADERS: &'static [ParamHeader];
    /// Whether the schema lets other members through (no `additionalProperties: false`).
    const OPEN: bool;
    /// Bytes of scratch the string arguments need at most when they hold escapes.
    const SCRATCH: usize;
    /// Reads checked `arguments` (absent = `{}`): each argument's value, strings borrowed from
    /// the message or, with escapes, decoded into `scratch`. A declared argument sent twice
    /// is [`Unreadable`].
    fn read(sent: Option<Value<'s>>, scratch: &mut Scratch<'s>) -> Result<Self, Unreadable>;

    /// Checks `sent` against [`Args::ARGS`] (the engine's messages), then [`Args::read`]s it.
    fn check_and_read(
        sent: Option<Value<'s>>,
        scratch: &mut Scratch<'s>,
    ) -> Result<Self, BadArgs<'s>> {
        check_with(Self::ARGS, sent, Self::OPEN).map_err(BadArgs::Invalid)?;
        Self::read(sent, scratch).map_err(|_| BadArgs::Unreadable)
    }
}

/// Arguments the check passed but a tool cannot read: a declared argument sent twice, or a
/// string that does not fit the scratch (not expected after the length check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unreadable;

/// The message a tool answers [`Unreadable`] arguments with.
pub const UNREADABLE: &str = "Invalid arguments: see the tool's inputSchema.";

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(UNREADABLE)
    }
}

/// Why [`Call::read_args`] refused a call's arguments; a tool answers it with
/// [`Reply::fail`](crate::engine::Reply::fail), so the model can correct its call.
#[derive(Clone, Copy, Debug)]
pub enum BadArgs<'a> {
    /// They do not match the declared arguments (unknown, missing, wrong type, out of range).
    Invalid(ArgsInvalid<'a>),
    /// They match but cannot be read (see [`Unreadable`]).
    Unreadable,
}

impl fmt::Display for BadArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadArgs::Invalid(e) => fmt::Display::fmt(e, f),
            BadArgs::Unreadable => f.write_str(UNREADABLE),
        }
    }
}

impl Report for BadArgs<'_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_fmt(format_args!("{self}"))
    }
}

impl<'a> Call<'a> {
    /// Checks `arguments` against `T`'s declaration and reads them into a `T`: strings
    /// borrowed from the message, or decoded into `scratch` when they hold escapes (give it
    /// `T::SCRATCH` bytes).
    pub fn read_args<'s, T: Args<'s>>(&self, scratch: &'s mut [u8]) -> Result<T, BadArgs<'s>>
    where
        'a: 's,
    {
        T::check_and_read(self.args, &mut Scratch::new(scratch))
    }
}

/// Where string arguments with escapes are decoded, each into the next free bytes.
pub struct Scratch<'s>(&'s mut [u8]);

impl<'s> Scratch<'s> {
    /// Scratch over `buf`.
    pub fn new(buf: &'s mut [u8]) -> Self {
        Scratch(buf)
    }

    /// A string value: borrowed when it has no escapes, else decoded into the next `room`
    /// bytes (what the argument may take; the rest when it is more than is left).
    pub fn text(&mut self, v: Value<'s>, room: usize) -> Option<&'s str> {
        let buf = core::mem::take(&mut self.0);
        let (mine, rest) = buf.split_at_mut(room.min(buf.len()));
        self.0 = rest;
        v.as_str(mine)
    }
}

/// A type a tool argument may have: a string, an integer, a boolean, a date, or a
/// `#[derive(Choices)]` enum (and any of those in an `Option` when not required).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument",
    label = "not a scalar argument type",
    note = "an argument is `&str`, an integer (u8 to i64), `bool`, `Date`, or a `#[derive(Choices)]` enum, in an `Option` when not required"
)]
pub trait ArgValue<'s>: Sized {
    /// The value, if it is one of this type (the check has already run).
    fn read(v: Value<'s>, scratch: &mut Scratch<'s>) -> Option<Self>;
}

impl<'s> ArgValue<'s> for &'s str {
    fn read(v: Value<'s>, scratch: &mut Scratch<'s>) -> Option<Self> {
        scratch.text(v, usize::MAX)
    }
}

impl<'s> ArgValue<'s> for bool {
    fn read(v: Value<'s>, _: &mut Scratch<'s>) -> Option<Self> {
        v.as_bool()
    }
}

impl<'s> ArgValue<'s> for Date {
    fn read(v: Value<'s>, _: &mut Scratch<'s>) -> Option<Self> {
        let mut buf = [0u8; DATE_LEN];
        format::date(v.as_str(&mut buf)?)
    }
}

/// Bytes of a `YYYY-MM-DD` date.
pub const DATE_LEN: usize = 10;

macro_rules! integer_args {
    ($($t:ty),*) => {$(
        impl<'s> ArgValue<'s> for $t {
            fn read(v: Value<'s>, _: &mut Scratch<'s>) -> Option<Self> {
                v.as_i64().and_then(|i| <$t>::try_from(i).ok())
            }
        }
    )*};
}
integer_args!(u8, u16, u32, u64, i8, i16, i32, i64);

/// Finds each of `args` in `sent` in one walk, into the slot of `found` at its index, or
/// [`Unreadable`] if one is sent twice.
#[doc(hidden)]
pub fn find<'a>(
    sent: Option<Value<'a>>,
    args: &[Arg],
    found: &mut [Option<Value<'a>>],
) -> Result<(), Unreadable> {
    for (k, v) in sent.iter().flat_map(|s| s.members()) {
        let slot = args
            .iter()
            .position(|a| k.eq_str(a.name))
            .and_then(|i| found.get_mut(i));
        match slot {
            Some(Some(_)) => return Err(Unreadable),
            Some(slot) => *slot = Some(v),
            None => {}
        }
    }
    Ok(())
}

/// A required argument's value.
#[doc(hidden)]
pub fn required<'s, T: ArgValue<'s>>(
    v: Option<Value<'s>>,
    scratch: &mut Scratch<'s>,
) -> Result<T, Unreadable> {
    v.and_then(|v| T::read(v, scratch)).ok_or(Unreadable)
}

/// A string argument's value (`None`: not sent), decoded into at most `room` bytes of
/// `scratch` when it holds escapes.
#[doc(hidden)]
pub fn text<'s>(
    v: Option<Value<'s>>,
    scratch: &mut Scratch<'s>,
    room: usize,
) -> Result<Option<&'s str>, Unreadable> {
    v.map(|v| scratch.text(v, room).ok_or(Unreadable))
        .transpose()
}

/// An optional argument's value (`None`: not sent).
#[doc(hidden)]
pub fn optional<'s, T: ArgValue<'s>>(
    v: Option<Value<'s>>,
    scratch: &mut Scratch<'s>,
) -> Result<Option<T>, Unreadable> {
    v.map(|v| T::read(v, scratch).ok_or(Unreadable)).transpose()
}

/// `#[args(serde)]`'s read: the checked `arguments` (absent = `{}`) deserialized with
/// serde-json-core, no heap; a string with escapes is decoded into `scratch` (so it reaches an
/// owned `heapless::String<N>`, not a borrowed `&str`).
#[doc(hidden)]
pub fn serde_read<'s, T: serde::Deserialize<'s>>(
    sent: Option<Value<'s>>,
    scratch: &mut Scratch<'s>,
) -> Result<T, Unreadable> {
    let raw = sent.map_or(&b"{}"[..], |v| v.raw());
    serde_json_core::from_slice_escaped(raw, scratch.0)
        .map(|(t, _)| t)
        .map_err(|_| Unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ArgKind;
    use crate::wire::json::parse;

    const ARGS: &[Arg] = &[
        Arg {
            name: "day",
            required: true,
            kind: ArgKind::Text(None, None),
        },
        Arg {
            name: "hour",
            required: true,
            kind: ArgKind::Integer(0, 23),
        },
    ];

    fn read(json: &str) -> Result<(Option<std::string::String>, Option<u8>), Unreadable> {
        let v = parse(json.as_bytes()).unwrap();
        let mut found = [None; ARGS.len()];
        find(Some(v), ARGS, &mut found)?;
        let [day, hour] = found;
        let mut buf = [0u8; 4];
        let mut scratch = Scratch::new(&mut buf);
        let day = text(day, &mut scratch, 4)?;
        Ok((day.map(str::to_owned), optional(hour, &mut scratch)?))
    }

    #[test]
    fn reads_decodes_and_refuses_duplicates() {
        assert_eq!(
            read(r#"{"day":"ab","hour":9}"#),
            Ok((Some("ab".into()), Some(9)))
        );
        // Escapes are decoded into the scratch; a plain string is borrowed whatever its length.
        assert_eq!(read(r#"{"day":"\u00e9"}"#), Ok((Some("é".into()), None)));
        assert_eq!(
            read(r#"{"day":"abcdefgh"}"#),
            Ok((Some("abcdefgh".into()), None))
        );
        assert_eq!(read(r#"{"day":"\u00e9\u00e9\u00e9"}"#), Err(Unreadable));
        assert_eq!(read(r#"{"hour":9,"hour":10}"#), Err(Unreadable));
        assert_eq!(read(r#"{"hour":300}"#), Err(Unreadable));
        assert_eq!(read(r#"{"other":1,"other":2}"#), Ok((None, None)));
        let mut buf = [0u8; 0];
        assert_eq!(
            required::<u8>(None, &mut Scratch::new(&mut buf)),
            Err(Unreadable)
        );
    }

    #[test]
    fn scratch_hands_out_consecutive_pieces() {
        let v = parse(br#"["\u00e9", "\u00e8x", "plain"]"#).unwrap();
        let mut buf = [0u8; 7];
        let mut s = Scratch::new(&mut buf);
        let items: std::vec::Vec<_> = v.items().map(|i| s.text(i, 3)).collect();
        assert_eq!(items, [Some("é"), Some("èx"), Some("plain")]);
        let mut s = Scratch::new(&mut buf);
        assert_eq!(s.text(v.items().next().unwrap(), 1), None, "no room");
    }
}
