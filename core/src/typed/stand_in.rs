//! A question's stand-in: the `isError` text a model reads when its client cannot show forms.

use core::fmt;

use crate::engine::Report;
use crate::mrtr::{Field, FieldKind};
use crate::wire::json::Value;

/// What a client without form elicitation is told instead of being asked: the question, each
/// field's choices (value and title), and that the model should ask its user, then call the
/// tool again with `arg` set to the pick and the call's other arguments (named) as they were.
pub(super) struct StandIn<'q, 'f> {
    /// The tool's name (a JSON string).
    pub tool: Value<'q>,
    pub message: &'q dyn fmt::Display,
    pub fields: &'q [Field<'f>],
    /// The argument that takes the answer.
    pub arg: &'static str,
    /// The call's arguments: the names of all but `arg` are listed.
    pub args: Option<Value<'q>>,
}

impl Report for StandIn<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let arg = self.arg;
        writeln!(f, "{}", self.message)?;
        for field in self.fields {
            let FieldKind::Choice { options, .. } = field.kind else {
                writeln!(f, "({arg}: the user's answer to \"{}\")", field.title)?;
                continue;
            };
            writeln!(
                f,
                "Choices for {}, as {arg} and what the user sees:",
                field.title
            )?;
            for o in options {
                writeln!(f, "- \"{}\": {}", o.value, o.title)?;
            }
        }
        f.write_str(
            "This client cannot show the question as a form, so nothing was done yet. Ask the \
             user which one they mean (do not choose for them), then call ",
        )?;
        self.tool.chars().try_for_each(|c| f.write_char(c))?;
        write!(
            f,
            " again with {arg} set to their pick and the other arguments as before"
        )?;
        self.others(f)?;
        f.write_char('.')
    }
}

impl StandIn<'_, '_> {
    /// The names of the call's other arguments, in parentheses (none: nothing). Names only:
    /// the model has its values, and a message echoes no more than `MAX_ECHO` of a client's
    /// text (an `#[app]` tool's arguments are checked first: each name is one it declares).
    fn others(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        let members = self.args.iter().flat_map(|a| a.members());
        let mut names = members.map(|(k, _)| k).filter(|k| !k.eq_str(self.arg));
        let Some(first) = names.next() else {
            return Ok(());
        };
        f.write_str(" (")?;
        for (i, name) in core::iter::once(first).chain(names).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            name.chars().try_for_each(|c| f.write_char(c))?;
        }
        f.write_char(')')
    }
}
