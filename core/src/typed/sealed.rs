//! Typed sealed state: [`Sealed`] (what `#[derive(Sealed)]` implements), a fixed-size
//! compact encoding of the state a tool keeps in `requestState`, read back only from a
//! verified state.

use core::ops::Deref;

use crate::engine::Call;
use crate::limits::MAX_STATE_PAYLOAD;

/// A value encoded in exactly [`Sealed::SIZE`] bytes (no heap), to be sealed in a
/// `requestState` and read back from the verified state of the next round.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sealed in a requestState",
    label = "no fixed-size encoding",
    note = "sealed state is made of integers, `bool`, `[u8; N]`, tuples of them and `#[derive(Sealed)]` types: fixed size, no heap"
)]
pub trait Sealed: Sized {
    /// Bytes of the encoding.
    const SIZE: usize;
    /// Writes the encoding into `out` (exactly [`Sealed::SIZE`] bytes).
    fn put(&self, out: &mut [u8]);
    /// Reads the encoding from `bytes` (exactly [`Sealed::SIZE`] bytes).
    fn take(bytes: &[u8]) -> Option<Self>;

    /// The encoding, as a payload for [`Reply::question`](crate::engine::Reply::question).
    fn seal(&self) -> SealedBytes {
        const { assert!(Self::SIZE <= MAX_STATE_PAYLOAD, "sealed state too large") };
        let mut s = SealedBytes {
            buf: [0; MAX_STATE_PAYLOAD],
            len: Self::SIZE,
        };
        self.put(&mut s.buf[..Self::SIZE]);
        s
    }

    /// The value `call`'s verified state carries (`None` without a state, or another one).
    fn unseal(call: &Call<'_>) -> Option<Self> {
        let p = call.payload();
        if p.len() == Self::SIZE {
            Self::take(p)
        } else {
            None
        }
    }
}

/// An encoded [`Sealed`] value (at most [`MAX_STATE_PAYLOAD`] bytes, on the stack).
#[derive(Clone, Copy, Debug)]
pub struct SealedBytes {
    buf: [u8; MAX_STATE_PAYLOAD],
    len: usize,
}

impl Deref for SealedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

macro_rules! sealed_ints {
    ($($t:ty),*) => {$(
        impl Sealed for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            fn put(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_be_bytes());
            }
            fn take(bytes: &[u8]) -> Option<Self> {
                Some(<$t>::from_be_bytes(bytes.try_into().ok()?))
            }
        }
    )*};
}
sealed_ints!(u8, u16, u32, u64, i8, i16, i32, i64);

/// Nothing: a part of a state that a build does not have (a panel's one building).
impl Sealed for () {
    const SIZE: usize = 0;
    fn put(&self, _: &mut [u8]) {}
    fn take(_: &[u8]) -> Option<Self> {
        Some(())
    }
}

impl Sealed for bool {
    const SIZE: usize = 1;
    fn put(&self, out: &mut [u8]) {
        out[0] = u8::from(*self);
    }
    fn take(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
}

impl<const N: usize> Sealed for [u8; N] {
    const SIZE: usize = N;
    fn put(&self, out: &mut [u8]) {
        out.copy_from_slice(self);
    }
    fn take(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok()
    }
}

/// Puts `v` at `*at` in `out` and moves `*at` past it.
/// A tuple of sealed values seals as its fields one after another (a quote of two times is
/// `(TimeOfDay, TimeOfDay)`, no struct of its own needed).
macro_rules! sealed_tuples {
    ($(($($t:ident),+)),*) => {$(
        impl<$($t: Sealed),+> Sealed for ($($t,)+) {
            const SIZE: usize = 0 $(+ $t::SIZE)+;
            #[allow(non_snake_case)] // each field is named after its type parameter
            fn put(&self, out: &mut [u8]) {
                let ($($t,)+) = self;
                let mut at = 0;
                $(put_at($t, out, &mut at);)+
            }
            fn take(bytes: &[u8]) -> Option<Self> {
                let mut at = 0;
                Some(($(take_at::<$t>(bytes, &mut at)?,)+))
            }
        }
    )*};
}
sealed_tuples!((A, B), (A, B, C), (A, B, C, D));

#[doc(hidden)]
pub fn put_at<T: Sealed>(v: &T, out: &mut [u8], at: &mut usize) {
    v.put(&mut out[*at..*at + T::SIZE]);
    *at += T::SIZE;
}

/// Takes a `T` at `*at` in `bytes` and moves `*at` past it.
#[doc(hidden)]
pub fn take_at<T: Sealed>(bytes: &[u8], at: &mut usize) -> Option<T> {
    let v = T::take(bytes.get(*at..*at + T::SIZE)?)?;
    *at += T::SIZE;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_big_endian() {
        let s = 0x1234u16.seal();
        assert_eq!(&*s, &[0x12, 0x34]);
        assert_eq!(u16::take(&s), Some(0x1234));
        assert_eq!(bool::take(&[2]), None);
        let mut at = 0;
        let mut out = [0u8; 3];
        put_at(&7u8, &mut out, &mut at);
        put_at(&-2i16, &mut out, &mut at);
        assert_eq!(out, [7, 0xff, 0xfe]);
        let mut at = 0;
        assert_eq!(take_at::<u8>(&out, &mut at), Some(7));
        assert_eq!(take_at::<i16>(&out, &mut at), Some(-2));
        assert_eq!(take_at::<u8>(&out, &mut at), None);
    }

    #[test]
    fn a_tuple_seals_its_fields_in_order() {
        let s = (0x0102u16, true, [9u8; 2]).seal();
        assert_eq!(&*s, &[1, 2, 1, 9, 9]);
        assert_eq!(
            <(u16, bool, [u8; 2])>::take(&s),
            Some((0x0102, true, [9, 9]))
        );
        assert_eq!(<(u16, bool)>::take(&[1, 2, 7]), None, "a bool is 0 or 1");
        assert_eq!(<(u8, u8)>::SIZE, 2);
    }
}
