//! How the booking tools answer: results through one `dyn Report`, and plain texts as reports.

use crate::engine::{Done, Reply, Report};

/// A complete result through the one `dyn Report` instance of `Reply::complete` rather than
/// one per report type (each instance is 200-500 B of a panel's flash: 3.4 KiB in all).
pub(super) fn complete(reply: Reply<'_, '_>, r: &dyn Report) -> Done {
    reply.complete(r)
}

/// A failed result, as [`complete`] through `dyn Report`.
pub(super) fn fail(reply: Reply<'_, '_>, r: &dyn Report) -> Done {
    reply.fail(r)
}

/// A text as a [`Report`] that is `Sized`, so it too goes through `dyn Report`; and as `{}`
/// written with `write_str`, not `str`'s `Display` (which links `Formatter::pad`).
pub(super) struct Text<'a>(pub(super) &'a str);

impl Report for Text<'_> {
    fn text(&self, f: &mut dyn core::fmt::Write) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

impl core::fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}
