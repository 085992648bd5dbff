//! What the door's buttons do, for whoever stands there without an account: "book now" (the
//! select button) books the door's room for the hour under way (on the floor's clock), as the principal
//! [`AT_THE_DOOR`], straight into the store (the `book_room` tool refuses an hour that has
//! begun); only with a wall clock, only if no booking overlaps that hour, one booking per press.

use redmark_core::booking::Commit;
use redmark_core::booking::{self, minute_of, NewBooking, RoomId, Span, Store, Title};
use redmark_core::engine::poll_once;
use redmark_core::serve::Host;
use sha2::{Digest, Sha256};

use super::face::DOOR_ROOM;
use crate::diag::{self, Piece::Num, Piece::Text};
use crate::{Panel, PanelHost, FLOOR};
use embedded_storage::nor_flash::NorFlash;

/// The principal of a booking made at the door.
pub const AT_THE_DOOR: &[u8] = b"panel:at-the-door";
/// The gamepad's buttons as the board reports presses: a bit each.
pub const UP: u8 = 1 << 0;
/// Down.
pub const DOWN: u8 = 1 << 1;
/// Left.
pub const LEFT: u8 = 1 << 2;
/// Right.
pub const RIGHT: u8 = 1 << 3;
/// Select: "book now".
pub const SELECT: u8 = 1 << 4;

/// Acts on `pressed` (the buttons pressed since the last look) at wall time `wall`.
pub(crate) fn press<F: NorFlash>(
    pressed: u8,
    engine: &mut Panel<F>,
    host: &mut PanelHost,
    wall: Option<u64>,
) {
    if pressed & SELECT == 0 {
        return;
    }
    let Some(minute) = wall.and_then(minute_of) else {
        diag::text("door: book now pressed with no time: nothing booked");
        return;
    };
    let Some(room) = FLOOR.rooms.get(DOOR_ROOM) else { return };
    let Ok(room_id) = RoomId::try_from(room.id) else { return };
    let mut holder = [0; 8];
    holder.copy_from_slice(&Sha256::digest(AT_THE_DOOR)[..8]);
    // The hour under way on the floor's clock (its offset is the same all through it).
    let local = booking::wall(FLOOR.zone, minute);
    let hour = (local % (24 * 60) / 60) as u8;
    let start = minute - local % 60;
    let span = Span { start, end: start + 60 };
    let new =
        NewBooking { room: room_id, span, title: Title::new(), attendees: 0, holder, nonce: host.entropy() };
    let what = match poll_once(engine.app_mut().0.store_mut().commit(&new)) {
        Some(Ok(Commit::Created(b))) => {
            diag::line(&[Text("door: booked now, bk_"), Num(b.id.into()), Text(", hour "), Num(hour.into())]);
            return;
        }
        Some(Ok(Commit::Taken(_))) => "door: book now pressed, the room is already held",
        _ => "door: book now failed: the store did not take it",
    };
    diag::text(what);
}
