//! What the door's buttons do, for whoever stands there without an account, as the principal
//! [`AT_THE_DOOR`]: "book now" (select) books the door's room for the hour under way (on the
//! floor's clock) straight into the store (the `book_room` tool refuses an hour that has
//! begun), only if no booking overlaps it; "extend 15 min" (right) and "end now" (left) act on
//! the booking under way through the core's own `extend_booking` and `end_booking` tools, only
//! on a walk-up booking (one made at the door: the tools find no other booking "yours");
//! "check in" (up) checks in the booking under way, whoever's, while its window is open
//! (presence at the door is the point), and [`release`] frees the door room's bookings nobody
//! checked in to. Each press is one call, only with a wall clock.

use redmark_core::booking::Commit;
use redmark_core::booking::MAX_RELEASED_A_RUN;
use redmark_core::booking::{
    self, minute_of, Actor, Booking, Minute, NewBooking, RoomId, Span, Store, Title,
};
use redmark_core::engine::{poll_once, Context};
use redmark_core::serve::Host;
use redmark_core::wire::lines::Line;
use sha2::{Digest, Sha256};

use super::face::DOOR_ROOM;
use crate::diag::{self, Piece::Num, Piece::Text};
use crate::{Panel, PanelHost, CHECK_IN_MINUTES, FLOOR};
use embedded_storage::nor_flash::MultiwriteNorFlash;

/// The principal of a booking made at the door.
pub const AT_THE_DOOR: &[u8] = b"panel:at-the-door";
/// The gamepad's buttons as the board reports presses: a bit each. Up: "check in".
pub const UP: u8 = 1 << 0;
/// Down (unused).
pub const DOWN: u8 = 1 << 1;
/// Left: "end now".
pub const LEFT: u8 = 1 << 2;
/// Right: "extend 15 min".
pub const RIGHT: u8 = 1 << 3;
/// Select: "book now".
pub const SELECT: u8 = 1 << 4;
/// What "extend" adds to a walk-up booking, minutes (on the floor's grid).
pub const EXTEND_MINUTES: u16 = 15;
/// The longest tools/call message the door sends, bytes.
const CALL_MAX: usize = 256;

/// The holder of the bookings made at the door (as the core derives it from a principal).
pub fn holder() -> [u8; 8] {
    let mut holder = [0; 8];
    holder.copy_from_slice(&Sha256::digest(AT_THE_DOOR)[..8]);
    holder
}

/// Acts on `pressed` (the buttons pressed since the last look) at wall time `wall`; `out` is
/// the engine's output buffer, lent for the tools' answers.
pub(crate) fn press<F: MultiwriteNorFlash>(
    pressed: u8,
    engine: &mut Panel<F>,
    host: &mut PanelHost,
    wall: Option<u64>,
    out: &mut [u8],
) {
    for (button, what) in [(SELECT, "book now"), (UP, "check in"), (RIGHT, "extend"), (LEFT, "end now")] {
        if pressed & button == 0 {
            continue;
        }
        let Some(minute) = wall.and_then(minute_of) else {
            diag::line(&[Text("door: "), Text(what), Text(" pressed with no time: nothing done")]);
            continue;
        };
        if button == SELECT {
            book_now(engine, host, minute);
        } else if button == UP {
            check_in(engine.app_mut().0.store_mut(), minute);
        } else {
            change(engine, host, minute, button == RIGHT, out);
        }
    }
}

/// "Book now": the hour under way, straight into the store; where a booking holds part of it,
/// the free time from the grid step under way to the next booking in that hour ([`free_part`]).
fn book_now<F: MultiwriteNorFlash>(engine: &mut Panel<F>, host: &mut PanelHost, minute: booking::Minute) {
    let Some(room) = FLOOR.rooms.get(DOOR_ROOM) else { return };
    let Ok(room_id) = RoomId::try_from(room.id) else { return };
    // The hour under way on the floor's clock (its offset is the same all through it).
    let local = booking::wall(FLOOR.zone, minute);
    let hour = (local % (24 * 60) / 60) as u8;
    let start = minute - local % 60;
    let span = Span { start, end: start + 60 };
    let mut new = NewBooking {
        room: room_id,
        span,
        title: Title::new(),
        attendees: 0,
        holder: holder(),
        nonce: host.entropy(),
    };
    let store = engine.app_mut().0.store_mut();
    let mut made = poll_once(store.commit(&new));
    if let (Some(Ok(Commit::Taken(_))), Some(free)) = (&made, free_part(store, minute, span)) {
        // Nothing was stored under the operation: the same one books the free part.
        new.span = free;
        made = poll_once(store.commit(&new));
    }
    let what = match made {
        Some(Ok(Commit::Created(b))) => {
            diag::line(&[Text("door: booked now, bk_"), Num(b.id.into()), Text(", hour "), Num(hour.into())]);
            // Booked by someone at the door: checked in (else it would be released at once,
            // its hour having begun before its window closed).
            if !matches!(poll_once(store.check_in(b.id, &Actor::holder(b.new.holder))), Some(Ok(Some(b))) if b.checked_in)
            {
                diag::text("door: the walk-up booking's check-in failed");
            }
            return;
        }
        Some(Ok(Commit::Taken(_))) => "door: book now pressed, the room is already held",
        _ => "door: book now failed: the store did not take it",
    };
    diag::text(what);
}

/// The door room's free time in `hour` from the grid step under way at `minute` to the next
/// booking, if no booking is under way then (the face says "free" or "free until").
fn free_part(store: &mut impl Store, minute: booking::Minute, hour: Span) -> Option<Span> {
    let room = FLOOR.rooms.get(DOOR_ROOM)?;
    let grid = booking::Minute::from(FLOOR.grid.max(1));
    let from = minute - booking::wall(FLOOR.zone, minute) % grid;
    // The flash store answers on the first poll.
    let next = poll_once(store.next_in_room(room.id, from))?.ok()?;
    let until = match next {
        Some(b) if b.new.span.start <= from => return None,
        Some(b) => b.new.span.start.min(hour.end),
        None => hour.end,
    };
    Span::new(from, until)
}

/// The door room's booking under way at `minute`, if any.
pub(crate) fn under_way(store: &mut impl Store, minute: booking::Minute) -> Option<Booking> {
    let room = FLOOR.rooms.get(DOOR_ROOM)?;
    // The flash store answers on the first poll.
    let b = poll_once(store.next_in_room(room.id, minute)).and_then(Result::ok).flatten()?;
    (b.new.span.start <= minute).then_some(b)
}

/// Whether `b`, under way at `minute`, waits for a check-in: not checked in, within
/// [`CHECK_IN_MINUTES`] of its start (the core's `check_in` window, less the minutes before
/// the start: the door checks in what is under way).
pub(crate) fn awaits_check_in(b: &Booking, minute: Minute) -> bool {
    let span = b.new.span;
    let closes = span.start.saturating_add(CHECK_IN_MINUTES.into()).min(span.end);
    !b.checked_in && span.start <= minute && minute < closes
}

/// "Check in": the door room's booking under way, whoever's, while its window is open (the
/// door's rule: whoever is at the door may say the meeting is on; being there is the point),
/// through the store's `check_in`, durable before the press is done.
fn check_in(store: &mut impl Store, minute: Minute) {
    let Some(b) = under_way(store, minute) else {
        diag::text("door: check in pressed, no booking under way: nothing done");
        return;
    };
    let what = if b.checked_in {
        " was already checked in"
    } else if !awaits_check_in(&b, minute) {
        " is past its check-in window: unchanged"
    } else {
        // For its holder (the flash log keeps no trail to say the door did it).
        match poll_once(store.check_in(b.id, &Actor::holder(b.new.holder))) {
            Some(Ok(Some(now))) if now.checked_in => " checked in",
            _ => " not checked in: the store did not take it",
        }
    };
    diag::line(&[Text("door: bk_"), Num(b.id.into()), Text(what)]);
}

/// Releases the door room's bookings whose check-in window passed by `minute` with nobody
/// checked in (at most [`MAX_RELEASED_A_RUN`] a call), each durable before the next. Only the
/// door's room: check-in is at its door, and the panel's other rooms have nobody to check in.
pub(crate) fn release<F: MultiwriteNorFlash>(engine: &mut Panel<F>, minute: Minute) {
    let Some(room) = FLOOR.rooms.get(DOOR_ROOM) else { return };
    let store = engine.app_mut().0.store_mut();
    for _ in 0..MAX_RELEASED_A_RUN {
        match store.release_due_in(room.id, minute, CHECK_IN_MINUTES) {
            Ok(Some(b)) => {
                diag::line(&[Text("door: released bk_"), Num(b.id.into()), Text(": nobody checked in")])
            }
            Ok(None) => return,
            Err(_) => {
                diag::text("door: release failed: the store did not take it");
                return;
            }
        }
    }
}

/// "Extend 15 min" (`extend`) or "end now" on the walk-up booking under way, through the core's
/// tool as [`AT_THE_DOOR`]: its rules (the floor's grid and longest booking, a free room for
/// the time added) are the desktop's.
fn change<F: MultiwriteNorFlash>(
    engine: &mut Panel<F>,
    host: &mut PanelHost,
    minute: booking::Minute,
    extend: bool,
    out: &mut [u8],
) {
    let what = if extend { "door: extend" } else { "door: end now" };
    let Some(b) = under_way(engine.app_mut().0.store_mut(), minute) else {
        diag::line(&[Text(what), Text(" pressed, no booking under way: nothing done")]);
        return;
    };
    if b.new.holder != holder() {
        diag::line(&[
            Text(what),
            Text(" pressed, bk_"),
            Num(b.id.into()),
            Text(" was not booked at the door: unchanged"),
        ]);
        return;
    }
    let mut call = Call::default();
    call.push(r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":""#);
    call.push(if extend { "extend_booking" } else { "end_booking" });
    call.push(r#"","arguments":{"booking_id":"bk_"#);
    call.push_num(b.id.into());
    if extend {
        call.push(r#"","minutes":"#);
        call.push_num(EXTEND_MINUTES.into());
        call.push("}");
    } else {
        call.push(r#""}"#);
    }
    call.push(META);
    call.push("}}");
    let cx = Context {
        now: host.now(),
        principal: AT_THE_DOOR,
        entropy: host.entropy(),
        access: redmark_core::Access::USER,
    };
    // As a line (the TCP transport's way in): the engine's message handler is not built twice.
    engine.app_mut().1 = true;
    let h = engine.handle_line(Line::Message(&call.buf[..call.len]), &cx, out);
    engine.app_mut().1 = false;
    let answer = out.get(..h.len).unwrap_or_default();
    let done = h.responded && contains(answer, br#""isError":false"#);
    let how = if done { " done, bk_" } else { " refused by the tool, bk_" };
    diag::line(&[Text(what), Text(how), Num(b.id.into())]);
}

/// The `_meta` of the door's calls: this protocol version, no client capabilities.
const META: &str = r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A tools/call message being written.
struct Call {
    buf: [u8; CALL_MAX],
    len: usize,
}

impl Default for Call {
    fn default() -> Call {
        Call { buf: [0; CALL_MAX], len: 0 }
    }
}

impl Call {
    /// Appends `s` (what does not fit is left out: the engine then answers a parse error).
    fn push(&mut self, s: &str) {
        let to = self.len + s.len();
        if let Some(at) = self.buf.get_mut(self.len..to) {
            at.copy_from_slice(s.as_bytes());
            self.len = to;
        }
    }

    /// Appends `n` in decimal.
    fn push_num(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        // ASCII digits.
        self.push(core::str::from_utf8(&digits[at..]).unwrap_or_default());
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
