//! A number field with fractions (`type: number`): a [`FieldShape`], so a firmware links float
//! parsing and printing only when one of its forms has one.

use core::fmt::{self, Write as _};

use crate::mrtr::{FieldShape, Reason};
use crate::wire::json::Value;
use crate::wire::write::Writer;

/// A form field of type `number`: its bounds and the value to prefill.
pub struct NumberField {
    /// Smallest allowed (`minimum`).
    pub min: Option<f64>,
    /// Largest allowed (`maximum`).
    pub max: Option<f64>,
    /// A value to prefill (`default`).
    pub default: Option<f64>,
}

/// Bytes a bound is printed into (finite values of a form's scale; longer ones are left out).
const NUMBER_TEXT: usize = 32;

/// A number's shortest text, in a fixed buffer.
struct NumberText {
    buf: [u8; NUMBER_TEXT],
    len: usize,
}

impl fmt::Write for NumberText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// `x` as JSON, if it is finite and short enough.
fn number_text(x: f64) -> Option<NumberText> {
    let mut t = NumberText {
        buf: [0; NUMBER_TEXT],
        len: 0,
    };
    (x.is_finite() && write!(t, "{x}").is_ok()).then_some(t)
}

impl FieldShape for NumberField {
    fn json_type(&self) -> &'static str {
        "number"
    }

    fn write_members(&self, w: &mut Writer<'_>) {
        for (k, v) in [
            ("minimum", self.min),
            ("maximum", self.max),
            ("default", self.default),
        ] {
            if let Some(t) = v.and_then(number_text) {
                w.key(k).raw(&t.buf[..t.len]);
            }
        }
    }

    fn check(&self, v: Value<'_>) -> Result<(), Reason> {
        let x = v.as_f64().ok_or(Reason::WrongType)?;
        if self.min.is_some_and(|m| x < m) {
            Err(Reason::BelowMinimum)
        } else if self.max.is_some_and(|m| x > m) {
            Err(Reason::AboveMaximum)
        } else {
            Ok(())
        }
    }

    fn problem(&self, reason: Reason, f: &mut dyn fmt::Write) -> fmt::Result {
        match (reason, self.min, self.max) {
            (Reason::BelowMinimum, Some(m), _) => write!(f, " is less than the minimum, {m}"),
            (Reason::AboveMaximum, _, Some(m)) => write!(f, " is more than the maximum, {m}"),
            _ => f.write_str(" is not a number"),
        }
    }
}

impl<'a> super::FieldValue<'a> for f64 {
    fn decode(v: Value<'a>) -> Option<Self> {
        v.as_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    const HALVES: NumberField = NumberField {
        min: Some(0.5),
        max: Some(10.0),
        default: Some(2.5),
    };

    #[test]
    fn writes_checks_and_says_why() {
        let mut buf = [0u8; 128];
        let mut w = Writer::new(&mut buf);
        w.begin_object();
        HALVES.write_members(&mut w);
        w.end_object();
        let n = w.finish().unwrap();
        assert_eq!(&buf[..n], br#"{"minimum":0.5,"maximum":10,"default":2.5}"#);
        let check = |s: &str| HALVES.check(parse(s.as_bytes()).unwrap());
        assert_eq!(check("2.25"), Ok(()));
        assert_eq!(check("0.25"), Err(Reason::BelowMinimum));
        assert_eq!(check("1e3"), Err(Reason::AboveMaximum));
        assert_eq!(check(r#""3""#), Err(Reason::WrongType));
        let mut said = std::string::String::new();
        HALVES.problem(Reason::BelowMinimum, &mut said).unwrap();
        assert_eq!(said, " is less than the minimum, 0.5");
    }
}
