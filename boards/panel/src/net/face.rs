//! The door panel's face, with an 8×8 font (`font8x8`) straight into the screen's own memory (no
//! frame buffer in RAM), redrawn when what it shows changes (a booking from any client, the
//! address, the minute): the room's name; "Free" or "Busy" now and until when (to the minute, on
//! the floor's wall clock; no title: a panel's floor is private); the next booking today;
//! "check in?" while the booking under way waits for one, else the buttons a walk-up booking
//! under way answers to; the panel's address; that clock with its
//! offset from UTC, or "no time" without one.

use font8x8::legacy::BASIC_LEGACY;
use redmark_core::booking::{day_span, minute_of, wall, wall_clock, Booking, Floor, Minute, Store, Zone};
use redmark_core::engine::poll_once;

/// A gray-scale screen that keeps its own pixels: the panel writes windows of it.
pub trait Screen {
    /// Pixels across.
    const WIDTH: u8;
    /// Pixels down.
    const HEIGHT: u8;
    /// Starts drawing the window at (`x`, `y`), `w` × `h` pixels (`x` and `w` even); its pixels
    /// follow row by row through [`Screen::pixel`].
    fn window(&mut self, x: u8, y: u8, w: u8, h: u8);
    /// The window's next pixel, gray 0 (off) to 15.
    fn pixel(&mut self, gray: u8);
}

/// A board without a screen.
pub struct NoScreen;

impl Screen for NoScreen {
    const WIDTH: u8 = 0;
    const HEIGHT: u8 = 0;
    fn window(&mut self, _x: u8, _y: u8, _w: u8, _h: u8) {}
    fn pixel(&mut self, _gray: u8) {}
}

/// How often the face looks at the clock and the store, ms.
pub const LOOK_EVERY_MS: u64 = 250;
/// The door's room: this floor position's (the floor's first room).
pub const DOOR_ROOM: usize = 0;
/// Gray of the text.
const INK: u8 = 15;
/// Glyph size, pixels.
const GLYPH: u8 = 8;
/// Where the lines go: the room's name, the state (twice the size), until when, the next
/// booking, "check in?" or the buttons, the address, the clock.
const NAME_Y: u8 = 0;
const STATE_Y: u8 = 8;
const UNTIL_Y: u8 = 24;
const NEXT_Y: u8 = 32;
const BUTTONS_Y: u8 = 40;
const ADDRESS_Y: u8 = 48;
const CLOCK_Y: u8 = 56;
/// What the buttons do to a walk-up booking under way (left, right).
const BUTTONS: &[u8] = b"<end   +15 min>";
/// What the up button does while the booking under way waits for its check-in.
const CHECK_IN: &[u8] = b"^ check in?";

/// What the door's buttons do to the booking under way.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Door {
    /// Nothing (someone else's booking, checked in).
    Nothing,
    /// "Check in" (up): its check-in window is open.
    CheckIn,
    /// "End now" and "extend 15 min": a walk-up booking.
    WalkUp,
}

/// Whether the room is held now (times in minutes after the floor's midnight; 1440 and more:
/// midnight or later, shown as `24:00`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// No wall clock: what is under way is unknown.
    NoTime,
    /// Free now, until the next booking today (its start).
    Free(Option<u16>),
    /// Booked now, until the bookings back to back from now end; what the door's buttons do
    /// to the one under way.
    Busy(u16, Door),
}

/// What the face shows besides the clock.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Sign {
    state: State,
    /// The next booking today after the one under way (or the first ahead): start and end.
    next: Option<(u16, u16)>,
    /// The panel's IPv4 address.
    address: [u8; 4],
}

/// What is on the screen.
#[derive(Default)]
pub struct Face {
    shown: Option<Sign>,
    minute: Option<Minute>,
    next_ms: u64,
    looked: Option<Looked>,
}

/// The room's occupancy as last read: at which minute, after how many of the store's writes,
/// and what it was.
#[derive(Clone, Copy)]
struct Looked {
    at: Minute,
    writes: u32,
    state: State,
    next: Option<(u16, u16)>,
}

impl Face {
    /// Every [`LOOK_EVERY_MS`]: redraws what changed, from `store`, the wall clock `wall`
    /// (unix seconds; None: no time) and the panel's `address`. `writes` counts the store's
    /// writes (`FlashStore::writes`): the store is read again only when it or the minute
    /// changed (each read is a pass over its log on flash or the SD card).
    #[allow(clippy::too_many_arguments)]
    pub fn look<S: Screen>(
        &mut self,
        screen: &mut S,
        store: &mut impl Store,
        writes: u32,
        floor: Floor<'_>,
        now_ms: u64,
        wall: Option<u64>,
        address: [u8; 4],
    ) {
        if S::WIDTH == 0 || now_ms < self.next_ms {
            return;
        }
        self.next_ms = now_ms + LOOK_EVERY_MS;
        let Some(room) = floor.rooms.get(DOOR_ROOM) else { return };
        let minute = wall.and_then(minute_of);
        let (state, next) = match (minute, self.looked) {
            (None, _) => (State::NoTime, None),
            (Some(m), Some(l)) if l.at == m && l.writes == writes => (l.state, l.next),
            (Some(m), _) => {
                let (state, next) = occupancy(store, room.id, m, floor.zone);
                self.looked = Some(Looked { at: m, writes, state, next });
                (state, next)
            }
        };
        let sign = Sign { state, next, address };
        if self.shown != Some(sign) {
            blank(screen, 0, 0, S::WIDTH, S::HEIGHT);
            text(screen, NAME_Y, 1, room.name.as_bytes());
            let show_until = |screen: &mut S, at: u16| {
                let mut until = *b"until HH:MM";
                hh_mm(&mut until[6..11], at);
                text(screen, UNTIL_Y, 1, &until);
            };
            match state {
                State::NoTime => text(screen, STATE_Y, 2, b"no time"),
                State::Free(next) => {
                    text(screen, STATE_Y, 2, b"Free");
                    if let Some(at) = next {
                        show_until(screen, at);
                    }
                }
                State::Busy(at, door) => {
                    text(screen, STATE_Y, 2, b"Busy");
                    show_until(screen, at);
                    match door {
                        Door::CheckIn => text(screen, BUTTONS_Y, 1, CHECK_IN),
                        Door::WalkUp => text(screen, BUTTONS_Y, 1, BUTTONS),
                        Door::Nothing => {}
                    }
                }
            }
            if let Some((start, end)) = next {
                let mut line = *b"next HH:MM-HH:MM";
                hh_mm(&mut line[5..10], start);
                hh_mm(&mut line[11..16], end);
                text(screen, NEXT_Y, 1, &line);
            }
            let (mut line, mut len) = ([0u8; 15], 0);
            for (i, octet) in address.iter().enumerate() {
                if i > 0 {
                    line[len] = b'.';
                    len += 1;
                }
                let digits = [b'0' + octet / 100, b'0' + octet / 10 % 10, b'0' + octet % 10];
                let skip = if *octet >= 100 {
                    0
                } else if *octet >= 10 {
                    1
                } else {
                    2
                };
                line[len..len + 3 - skip].copy_from_slice(&digits[skip..]);
                len += 3 - skip;
            }
            text(screen, ADDRESS_Y, 1, &line[..len]);
            self.shown = Some(sign);
            self.minute = None;
        }
        if minute != self.minute {
            blank(screen, 0, CLOCK_Y, S::WIDTH, GLYPH);
            if let Some(m) = minute {
                text(screen, CLOCK_Y, 1, &clock(floor.zone, m));
            }
            self.minute = minute;
        }
    }
}

/// Minutes in a day.
const DAY: u16 = 24 * 60;

/// `HH:MM UTC` or `HH:MM UTC+02:00`: the wall clock at UTC minute `m` and its offset.
fn clock(zone: &dyn Zone, m: Minute) -> [u8; 15] {
    let mut clock = *b"HH:MM UTC      ";
    let (_, at) = wall_clock(zone, m);
    two_digits(&mut clock[0..2], (at.0 / 60).into());
    two_digits(&mut clock[3..5], (at.0 % 60).into());
    let offset = zone.offset(m);
    if zone.name() != "UTC" {
        clock[9] = if offset < 0 { b'-' } else { b'+' };
        two_digits(&mut clock[10..12], u64::from(offset.unsigned_abs() / 60));
        clock[12] = b':';
        two_digits(&mut clock[13..15], u64::from(offset.unsigned_abs() % 60));
    }
    clock
}

/// Whether `room` is held at minute `now`, and until when (through bookings back to back);
/// else until which booking today; and the next booking today after that (the floor's day,
/// times of day on its clock).
fn occupancy(
    store: &mut impl Store,
    room: &str,
    now: Minute,
    zone: &dyn Zone,
) -> (State, Option<(u16, u16)>) {
    // The flash store answers on the first poll.
    let mut next = |from: Minute| poll_once(store.next_in_room(room, from)).and_then(Result::ok).flatten();
    let (day, _) = wall_clock(zone, now);
    let midnight = day_span(zone, day).end;
    let of_today = |m: Minute| (wall(zone, m) - day.first_minute()).min(Minute::from(u16::MAX)) as u16;
    let today = |b: Option<Booking>| {
        b.filter(|b| b.new.span.start < midnight)
            .map(|b| (of_today(b.new.span.start), of_today(b.new.span.end)))
    };
    let Some(b) = next(now) else { return (State::Free(None), None) };
    if b.new.span.start > now {
        let ahead = today(Some(b));
        return (State::Free(ahead.map(|(start, _)| start)), ahead);
    }
    let door = if super::door::awaits_check_in(&b, now) {
        Door::CheckIn
    } else if b.new.holder == super::door::holder() {
        Door::WalkUp
    } else {
        Door::Nothing
    };
    let mut end = b.new.span.end;
    // Back to back bookings, as far as today goes (each step moves `end` on).
    while end < midnight {
        match next(end) {
            Some(b) if b.new.span.start == end => end = b.new.span.end,
            _ => break,
        }
    }
    (State::Busy(of_today(end), door), today(next(end)))
}

/// Writes minute of the day `at` as `HH:MM` into `into` (5 bytes).
fn hh_mm(into: &mut [u8], at: u16) {
    let at = at.min(DAY);
    two_digits(&mut into[0..2], (at / 60).into());
    into[2] = b':';
    two_digits(&mut into[3..5], (at % 60).into());
}

fn two_digits(at: &mut [u8], n: u64) {
    at[0] = b'0' + (n / 10 % 10) as u8;
    at[1] = b'0' + (n % 10) as u8;
}

/// Draws `line` from the left edge at row `y`, each glyph `scale` times its size, as far as the
/// screen is wide (non-ASCII bytes as their low 7 bits).
fn text<S: Screen>(screen: &mut S, y: u8, scale: u8, line: &[u8]) {
    let size = GLYPH * scale;
    for (i, &c) in line.iter().enumerate() {
        let x = i * usize::from(size);
        if x + usize::from(size) > usize::from(S::WIDTH) {
            return;
        }
        let glyph = BASIC_LEGACY[usize::from(c & 0x7F)];
        screen.window(x as u8, y, size, size);
        for row in 0..size {
            let bits = glyph[usize::from(row / scale)];
            for col in 0..size {
                screen.pixel(if bits >> (col / scale) & 1 == 1 { INK } else { 0 });
            }
        }
    }
}

fn blank<S: Screen>(screen: &mut S, x: u8, y: u8, w: u8, h: u8) {
    screen.window(x, y, w, h);
    for _ in 0..u16::from(w) * u16::from(h) {
        screen.pixel(0);
    }
}
