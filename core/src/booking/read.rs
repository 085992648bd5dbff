//! A booking tool's arguments, read once [`Call::check_args`](crate::engine::Call::check_args) has passed them: straight from
//! the core's JSON view (strings decoded into the caller's buffers), so serde's deserialiser
//! is not linked into a panel.

use crate::engine::Arg;
use crate::wire::json::Value;

/// Declared arguments whose duplicates [`Sent::new`] finds (one bit each of a `u32`; the
/// booking tools declare at most five).
const MAX_DECLARED: usize = 32;

/// Arguments the check passed but a tool cannot read: a declared argument sent twice (serde
/// refused that as a duplicate field, and so does this), or a string that does not fit its
/// buffer (not expected after the length check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Unreadable;

/// The `arguments` of a call whose declared arguments each occur at most once.
#[derive(Clone, Copy)]
pub(super) struct Sent<'a>(Option<Value<'a>>);

impl<'a> Sent<'a> {
    /// A call's `arguments` (`None`: absent), or [`Unreadable`] if one of `args` is sent twice.
    pub(super) fn new(sent: Option<Value<'a>>, args: &[Arg]) -> Result<Self, Unreadable> {
        // One bit per declared argument seen.
        let mut seen = 0u32;
        for (k, _) in sent.iter().flat_map(|s| s.members()) {
            if let Some(i) = args
                .iter()
                .take(MAX_DECLARED)
                .position(|a| k.eq_str(a.name))
            {
                if seen & 1 << i != 0 {
                    return Err(Unreadable);
                }
                seen |= 1 << i;
            }
        }
        Ok(Sent(sent))
    }

    /// The argument `name`, if sent.
    fn get(&self, name: &str) -> Option<Value<'a>> {
        self.0.and_then(|s| s.get(name))
    }

    /// The string argument `name` decoded (borrowed when it has no escapes, else into `buf`).
    pub(super) fn text<'s>(
        &self,
        name: &str,
        buf: &'s mut [u8],
    ) -> Result<Option<&'s str>, Unreadable>
    where
        'a: 's,
    {
        self.get(name)
            .map(|v| v.as_str(buf).ok_or(Unreadable))
            .transpose()
    }

    /// The integer argument `name`, if sent, as a `T`.
    pub(super) fn int<T: TryFrom<i64>>(&self, name: &str) -> Result<Option<T>, Unreadable> {
        self.get(name)
            .map(|v| {
                v.as_i64()
                    .and_then(|i| T::try_from(i).ok())
                    .ok_or(Unreadable)
            })
            .transpose()
    }
}

/// A required argument (the check has already reported one that is missing).
pub(super) fn required<T>(v: Result<Option<T>, Unreadable>) -> Result<T, Unreadable> {
    v?.ok_or(Unreadable)
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
        let sent = Sent::new(Some(v), ARGS)?;
        let mut buf = [0u8; 4];
        let day = sent.text("day", &mut buf)?.map(str::to_owned);
        Ok((day, sent.int("hour")?))
    }

    #[test]
    fn reads_decodes_and_refuses_duplicates() {
        assert_eq!(
            read(r#"{"day":"ab","hour":9}"#),
            Ok((Some("ab".into()), Some(9)))
        );
        // Escapes are decoded into the buffer; a plain string is borrowed whatever its length.
        assert_eq!(read(r#"{"day":"\u00e9"}"#), Ok((Some("é".into()), None)));
        assert_eq!(
            read(r#"{"day":"abcdefgh"}"#),
            Ok((Some("abcdefgh".into()), None))
        );
        assert_eq!(read(r#"{"day":"\u00e9\u00e9\u00e9"}"#), Err(Unreadable));
        assert_eq!(read(r#"{"hour":9,"hour":10}"#), Err(Unreadable));
        assert_eq!(read(r#"{"hour":300}"#), Err(Unreadable));
        assert_eq!(read(r#"{"other":1,"other":2}"#), Ok((None, None)));
        assert_eq!(required::<u8>(Ok(None)), Err(Unreadable));
    }
}
