//! The byte keys of the store's indexes: a room's starts, a holder's starts, an operation.

use redmark_core::booking::{Holder, Minute};
use redmark_core::seal::Nonce;

/// [`ROOM_STARTS`](super::tables::ROOM_STARTS) key: room length, room id, start u32 BE (a room's bookings in start
/// order; `None` for a room id longer than any stored one).
pub(super) fn room_key(room: &str, start: Minute) -> Option<Vec<u8>> {
    let len = u8::try_from(room.len()).ok()?;
    let mut k = Vec::with_capacity(5 + room.len());
    k.push(len);
    k.extend_from_slice(room.as_bytes());
    k.extend_from_slice(&start.to_be_bytes());
    Some(k)
}

/// The start a [`room_key`] holds (`None`: not one, a damaged store).
pub(super) fn room_key_start(key: &[u8]) -> Option<Minute> {
    let start = key.get(key.len().checked_sub(4)?..)?;
    Some(Minute::from_be_bytes(start.try_into().ok()?))
}

/// The nonce index's key of a holder's operation: a nonce is only ever matched together with
/// its holder.
pub(super) fn operation_key(holder: &Holder, nonce: &Nonce) -> Vec<u8> {
    [&holder[..], &nonce[..]].concat()
}

/// [`HOLDER_STARTS`](super::tables::HOLDER_STARTS) key: holder, start u32 BE, room id (a holder's bookings in (start, room
/// id) order, room ids byte by byte).
pub(super) fn holder_key(holder: &Holder, start: Minute, room: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(12 + room.len());
    k.extend_from_slice(holder);
    k.extend_from_slice(&start.to_be_bytes());
    k.extend_from_slice(room.as_bytes());
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_key_gives_its_start_back() {
        let k = room_key("studio b", 29_000_123).unwrap();
        assert_eq!(room_key_start(&k), Some(29_000_123));
        assert_eq!(room_key_start(&k[..3]), None);
    }
}
