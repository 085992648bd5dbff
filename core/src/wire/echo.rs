//! Echoing client values into messages, cut to [`MAX_ECHO`] characters.

use core::fmt::{self, Write};

use super::json::{Kind, Value};
use crate::limits::MAX_ECHO;

/// Writes a string's decoded characters, or any other value's JSON text, cut to
/// [`MAX_ECHO`] characters ("…" marks a cut).
pub fn echo(f: &mut dyn Write, v: &Value<'_>) -> fmt::Result {
    match v.kind() {
        Kind::String => cut(f, v.chars()),
        _ => cut(f, core::str::from_utf8(v.raw()).unwrap_or("").chars()),
    }
}

fn cut(f: &mut dyn Write, mut chars: impl Iterator<Item = char>) -> fmt::Result {
    chars
        .by_ref()
        .take(MAX_ECHO)
        .try_for_each(|c| f.write_char(c))?;
    if chars.next().is_some() {
        f.write_char('…')?;
    }
    Ok(())
}

/// Writes a value as a message quotes it: a string in single quotes, anything else as JSON.
pub fn quoted(f: &mut dyn Write, v: &Value<'_>) -> fmt::Result {
    if v.kind() == Kind::String {
        f.write_char('\'')?;
        echo(f, v)?;
        f.write_char('\'')
    } else {
        echo(f, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    fn show(s: &str) -> String {
        let mut out = String::new();
        quoted(&mut out, &parse(s.as_bytes()).unwrap()).unwrap();
        out
    }

    #[test]
    fn cuts_and_quotes() {
        assert_eq!(show(r#""moon""#), "'moon'");
        assert_eq!(show(r#""\u00e9t\u00e9""#), "'été'");
        assert_eq!(show("[1, 2]"), "[1, 2]");
        let long = format!("\"{}\"", "x".repeat(100));
        assert_eq!(show(&long), format!("'{}…'", "x".repeat(MAX_ECHO)));
        let long = format!("[{}1]", "1,".repeat(50));
        assert_eq!(show(&long).chars().count(), MAX_ECHO + 1);
    }
}
