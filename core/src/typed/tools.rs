//! A typed tool table: [`Tools`], what `#[app]` implements on the tool enum it writes from an
//! app's `#[tool]` methods, one declaration per tool from which the `tools/list` row, the
//! argument checks and the dispatch all come, so they cannot drift.

use crate::engine::ToolEntry;

/// An app's tools as an enum, one variant per tool, each declared once.
pub trait Tools: Copy + 'static {
    /// The tool table, in `tools/list` order (declaration order).
    const TOOLS: &'static [ToolEntry<Self>];
}

/// The arguments of a tool that takes none: an open schema (`{"type":"object","properties":{}}`),
/// so whatever a call sends is let through and ignored.
#[derive(redmark_macros::Args)]
#[args(open)]
pub struct NoArgs;
