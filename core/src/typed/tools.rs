//! A typed tool table: [`Tools`] (what `#[derive(Tools)]` implements on an app's tool
//! enum), one declaration per tool from which the `tools/list` row and the argument checks
//! both come, so they cannot drift.

use crate::engine::{Arg, ToolEntry};

/// An app's tools as an enum, one variant per tool, each declared once.
pub trait Tools: Copy + 'static {
    /// The tool table, in `tools/list` order (declaration order).
    const TOOLS: &'static [ToolEntry<Self>];
    /// The arguments the engine checks a call of this tool against.
    fn args(self) -> &'static [Arg];
    /// Whether the tool's schema lets other members through.
    fn open(self) -> bool;
}
