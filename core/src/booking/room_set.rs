//! A set of a building's rooms by index ([`Mask`]): one `u32` on a panel, a fixed bitset of
//! `MAX_ROOMS` bits on a desktop's site; both through [`RoomBits`], so a panel's code is as it was.

use crate::limits::MAX_ROOMS;

/// A set of rooms of one building, by index.
#[cfg(not(feature = "campus"))]
pub type Mask = u32;
#[cfg(not(feature = "campus"))]
const _: () = assert!(MAX_ROOMS <= Mask::BITS as usize);

/// A set of rooms of one building, by index.
#[cfg(feature = "campus")]
pub type Mask = RoomSet;

/// What the booking tools ask of a room set.
pub trait RoomBits: Copy + PartialEq {
    /// No room.
    const NONE: Self;
    /// Every index.
    const ALL: Self;
    /// Whether room `i` is in the set.
    fn has(&self, i: usize) -> bool;
    /// The set with room `i` added.
    fn with(self, i: usize) -> Self;
    /// The rooms in both sets.
    fn and(self, other: Self) -> Self;
    /// How many rooms.
    fn count(&self) -> u32;
    /// The set of its lowest room only (empty stays empty).
    fn lowest(self) -> Self;
    /// Whether no room is in it.
    fn is_none(&self) -> bool {
        *self == Self::NONE
    }
}

impl RoomBits for u32 {
    const NONE: Self = 0;
    const ALL: Self = u32::MAX;
    #[inline]
    fn has(&self, i: usize) -> bool {
        self & 1 << i != 0
    }
    #[inline]
    fn with(self, i: usize) -> Self {
        self | 1 << i
    }
    #[inline]
    fn and(self, other: Self) -> Self {
        self & other
    }
    #[inline]
    fn count(&self) -> u32 {
        self.count_ones()
    }
    #[inline]
    fn lowest(self) -> Self {
        self & self.wrapping_neg()
    }
}

/// A fixed set of up to [`MAX_ROOMS`] rooms (a word per 32).
#[cfg(feature = "campus")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoomSet([u32; MAX_ROOMS / 32]);

#[cfg(feature = "campus")]
const _: () = assert!(MAX_ROOMS.is_multiple_of(32));

#[cfg(feature = "campus")]
impl RoomBits for RoomSet {
    const NONE: Self = RoomSet([0; MAX_ROOMS / 32]);
    const ALL: Self = RoomSet([u32::MAX; MAX_ROOMS / 32]);
    fn has(&self, i: usize) -> bool {
        self.0.get(i / 32).is_some_and(|w| w.has(i % 32))
    }
    fn with(mut self, i: usize) -> Self {
        if let Some(w) = self.0.get_mut(i / 32) {
            *w = w.with(i % 32);
        }
        self
    }
    fn and(mut self, other: Self) -> Self {
        self.0.iter_mut().zip(other.0).for_each(|(a, b)| *a &= b);
        self
    }
    fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    fn lowest(self) -> Self {
        let mut out = Self::NONE;
        if let Some((i, w)) = self.0.iter().enumerate().find(|(_, w)| **w != 0) {
            out.0[i] = w.lowest();
        }
        out
    }
}

#[cfg(all(test, feature = "campus"))]
mod tests {
    use super::*;

    #[test]
    fn a_room_set_holds_every_index_of_a_building() {
        let s = RoomSet::NONE.with(0).with(33).with(MAX_ROOMS - 1);
        assert!(s.has(0) && s.has(33) && s.has(MAX_ROOMS - 1));
        assert!(
            !s.has(1) && !s.has(32) && !s.has(MAX_ROOMS),
            "out of range is absent"
        );
        assert_eq!(s.count(), 3);
        assert_eq!(s.lowest(), RoomSet::NONE.with(0));
        assert_eq!(
            RoomSet::NONE.with(40).with(70).lowest(),
            RoomSet::NONE.with(40)
        );
        assert_eq!(
            s.and(RoomSet::NONE.with(33).with(5)),
            RoomSet::NONE.with(33)
        );
        assert_eq!(RoomSet::ALL.count() as usize, MAX_ROOMS);
        assert!(RoomSet::NONE.is_none() && RoomSet::NONE.lowest().is_none());
        assert_eq!(
            RoomSet::NONE.with(MAX_ROOMS),
            RoomSet::NONE,
            "past the end: ignored"
        );
    }
}
