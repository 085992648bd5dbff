//! Options computed at run time: an [`Offer`] of at most `N` (the rooms that fit, today's
//! dishes) for a question's [`Pick`] field, and the pick read back as an index into it.

use core::ops::Deref;

use heapless::Vec;

use crate::mrtr::Choice;
use crate::wire::json::Value;

/// The options a question's [`Pick<N>`] field offers this time, at most `N`, in display
/// order (each a value sent back and a title shown).
pub struct Offer<'o, const N: usize>(Vec<Choice<'o>, N>);

impl<'o, const N: usize> Offer<'o, N> {
    /// No options yet.
    pub const fn new() -> Self {
        Offer(Vec::new())
    }

    /// Adds an option; `Err` with it when `N` are offered already.
    pub fn push(&mut self, choice: Choice<'o>) -> Result<(), Choice<'o>> {
        self.0.push(choice)
    }

    /// The option `pick` names.
    pub fn get(&self, pick: Pick<N>) -> Option<&Choice<'o>> {
        self.0.get(pick.0)
    }
}

impl<const N: usize> Default for Offer<'_, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'o, const N: usize> Deref for Offer<'o, N> {
    type Target = [Choice<'o>];
    fn deref(&self) -> &[Choice<'o>] {
        &self.0
    }
}

/// The first `N` options of an iterator (the rest are not offered).
impl<'o, const N: usize> FromIterator<Choice<'o>> for Offer<'o, N> {
    fn from_iter<I: IntoIterator<Item = Choice<'o>>>(iter: I) -> Self {
        Offer(iter.into_iter().take(N).collect())
    }
}

/// The answer to a run-time choice field of at most `N` options: which of the [`Offer`] the
/// user picked, by its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick<const N: usize>(usize);

impl<const N: usize> Pick<N> {
    /// Its index in the [`Offer`] (below `N`).
    pub fn index(self) -> usize {
        self.0
    }
}

/// The pick of field `name` in `content` (`None` when absent, `Some(None)` when not offered).
#[doc(hidden)]
pub fn pick<const N: usize>(
    content: Value<'_>,
    name: &str,
    offer: &[Choice<'_>],
) -> Option<Option<Pick<N>>> {
    match content.get(name) {
        None => Some(None),
        Some(v) => offer
            .iter()
            .take(N)
            .position(|c| v.eq_str(c.value))
            .map(|i| Some(Pick(i))),
    }
}
