//! Typed options: [`Choices`] (what `#[derive(Choices)]` implements on a unit enum), a
//! single-select field or argument; [`Picks`], a multi-select field of one ([`PicksField`]).

use core::fmt;

use crate::mrtr::{write_options, Choice, FieldShape, Reason};
use crate::wire::json::{Kind, Value};
use crate::wire::write::Writer;

/// A unit enum whose variants are the options of a single-select field or argument, each
/// with the value sent and the title shown. Implemented by `#[derive(Choices)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `#[derive(Choices)]` enum",
    label = "no options to offer",
    note = "a field or argument of an enum type offers its variants: add `#[derive(Choices)]` to a unit enum"
)]
pub trait Choices: Copy + 'static {
    /// The options, in declaration order.
    const OPTIONS: &'static [Choice<'static>];
    /// The variants, in the order of [`Choices::OPTIONS`].
    const ALL: &'static [Self];
    /// `"oneOf":[{"const":…,"title":…},…]`, for an argument's schema.
    const ONE_OF: &'static str;
    /// The value this variant is sent as.
    fn value(self) -> &'static str {
        Self::OPTIONS[self.index()].value
    }
    /// Its index in [`Choices::OPTIONS`].
    fn index(self) -> usize;
    /// The variant a JSON string names.
    fn named(v: Value<'_>) -> Option<Self> {
        let i = Self::OPTIONS.iter().position(|o| v.eq_str(o.value))?;
        Self::ALL.get(i).copied()
    }
}

/// Most options one [`Picks`] can hold (one bit each).
pub const MAX_PICKS: usize = 32;

/// Several options of `E` picked at once (a multi-select field), as a set.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Picks<E> {
    bits: u32,
    _of: core::marker::PhantomData<E>,
}

impl<E: Choices> Picks<E> {
    /// None picked.
    pub const fn none() -> Self {
        Picks {
            bits: 0,
            _of: core::marker::PhantomData,
        }
    }

    /// With `e` picked too.
    pub fn with(self, e: E) -> Self {
        const {
            assert!(
                E::OPTIONS.len() <= MAX_PICKS,
                "a multi-select offers at most 32 options"
            )
        };
        Picks {
            bits: self.bits | 1 << e.index(),
            ..self
        }
    }

    /// Whether `e` is picked.
    pub fn has(&self, e: E) -> bool {
        self.bits & 1 << e.index() != 0
    }

    /// How many are picked.
    pub fn len(&self) -> usize {
        self.bits.count_ones() as usize
    }

    /// Whether none is picked.
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The picked options, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = E> + '_ {
        E::ALL.iter().copied().filter(|e| self.has(*e))
    }

    /// The picks an array of option values names (`None` if one is not an option).
    pub fn named(v: Value<'_>) -> Option<Self> {
        const {
            assert!(
                E::OPTIONS.len() <= MAX_PICKS,
                "a multi-select offers at most 32 options"
            )
        };
        v.items()
            .try_fold(Self::none(), |p, i| Some(p.with(E::named(i)?)))
    }
}

impl<E: Choices + core::fmt::Debug> core::fmt::Debug for Picks<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<'a, E: Choices> super::FieldValue<'a> for Picks<E> {
    fn decode(v: Value<'a>) -> Option<Self> {
        Self::named(v)
    }
}

/// A multi-select field of [`Picks`]: the options, how many may be picked, the preselected
/// ones. A [`FieldShape`], so only a firmware whose forms have one links its code.
pub struct PicksField {
    /// The options.
    pub options: &'static [Choice<'static>],
    /// Fewest picks (`minItems`).
    pub min_items: Option<u32>,
    /// Most picks (`maxItems`).
    pub max_items: Option<u32>,
    /// The options preselected (`default`).
    pub default: &'static [&'static str],
}

impl FieldShape for PicksField {
    fn json_type(&self) -> &'static str {
        "array"
    }

    fn write_members(&self, w: &mut Writer<'_>) {
        for (k, v) in [("minItems", self.min_items), ("maxItems", self.max_items)] {
            if let Some(v) = v {
                w.key(k).int(v.into());
            }
        }
        w.key("items").begin_object().key("anyOf").begin_array();
        write_options(w, self.options);
        w.end_array().end_object();
        if !self.default.is_empty() {
            w.key("default").begin_array();
            self.default.iter().for_each(|d| {
                w.string(d);
            });
            w.end_array();
        }
    }

    fn check(&self, v: Value<'_>) -> Result<(), Reason> {
        if v.kind() != Kind::Array {
            return Err(Reason::WrongType);
        }
        let offered = |i: Value<'_>| self.options.iter().any(|o| i.eq_str(o.value));
        if !v.items().all(offered) {
            return Err(Reason::NotOffered);
        }
        let n = v.items().count() as u32;
        match (self.min_items, self.max_items) {
            (Some(m), _) if n < m => Err(Reason::TooFew),
            (_, Some(m)) if n > m => Err(Reason::TooMany),
            _ => Ok(()),
        }
    }

    fn problem(&self, reason: Reason, f: &mut dyn fmt::Write) -> fmt::Result {
        let (min, max) = (self.min_items.unwrap_or(0), self.max_items.unwrap_or(0));
        match reason {
            Reason::TooFew => write!(f, " picks fewer than {min}"),
            Reason::TooMany => write!(f, " picks more than {max}"),
            Reason::NotOffered => f.write_str(" picks an option not offered"),
            _ => f.write_str(" is not a list of the options offered"),
        }
    }
}
