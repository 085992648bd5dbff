//! A booking tool's arguments, read once [`Call::check_args`](crate::engine::Call::check_args) has passed them: straight from
//! the core's JSON view (strings decoded into the caller's buffers), so serde's deserialiser
//! is not linked into a panel.

use super::slot::{Day, Slot};
use crate::engine::Arg;
use crate::wire::json::Value;

/// Arguments the check passed but a tool cannot read: a declared argument sent twice (serde
/// refused that as a duplicate field, and so does this), or a string that does not fit its
/// buffer (not expected after the length check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Unreadable;

/// Finds each of `args` in a call's `arguments` (`None`: absent) in one walk, into the slot of
/// `found` at its index (one slot per declared argument), or [`Unreadable`] if one is sent
/// twice.
pub(super) fn find<'a>(
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

/// A string argument decoded (borrowed when it has no escapes, else into `buf`).
pub(super) fn text<'s>(
    v: Option<Value<'s>>,
    buf: &'s mut [u8],
) -> Result<Option<&'s str>, Unreadable> {
    v.map(|v| v.as_str(buf).ok_or(Unreadable)).transpose()
}

/// An integer argument as a `T`.
pub(super) fn int<T: TryFrom<i64>>(v: Option<Value<'_>>) -> Result<Option<T>, Unreadable> {
    v.map(|v| {
        v.as_i64()
            .and_then(|i| T::try_from(i).ok())
            .ok_or(Unreadable)
    })
    .transpose()
}

/// A required argument (the check has already reported one that is missing).
pub(super) fn required<T>(v: Result<Option<T>, Unreadable>) -> Result<T, Unreadable> {
    v?.ok_or(Unreadable)
}

/// The slot a `day` and `hour` argument name, if they name one.
pub(super) fn slot(day: &str, hour: i64) -> Option<Slot> {
    let day = Day::parse(day)?;
    let hour = u8::try_from(hour).ok().filter(|h| *h < 24)?;
    Some(Slot { day, hour })
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
        let day = text(day, &mut buf)?.map(str::to_owned);
        Ok((day, int(hour)?))
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
