//! The records of the flash log: their bytes (see the crate docs' table), their CRC, and a
//! booking as a record holds it.

use redmark_core::booking::{Booking, BookingId, Day, Holder, NewBooking, RoomId, Span, Status, Title};
use redmark_core::limits::{MAX_ROOM_ID, MAX_TITLE};
use redmark_core::seal::Nonce;

/// Bytes per slot (one record).
pub const SLOT: usize = 64;
pub(crate) const MAGIC: [u8; 4] = *b"RMKP";
/// A booking of a whole hour, as the panels before spans wrote it (read, never written).
pub(crate) const KIND_HOUR_BOOKING: u8 = 1;
pub(crate) const KIND_BOOT: u8 = 2;
pub(crate) const KIND_BOOKING: u8 = 3;
pub(crate) const KIND_TITLE: u8 = 4;
/// Where a booking record keeps the room, and a title record the title.
pub(crate) const ROOM_AT: usize = 32;
pub(crate) const TITLE_AT: usize = 8;
const _: () = assert!(ROOM_AT + MAX_ROOM_ID + 4 + 4 <= SLOT && TITLE_AT + MAX_TITLE + 4 <= SLOT);

pub(crate) type Rec = [u8; SLOT];

/// CRC-32 (IEEE) of each 4-bit value: a 64-byte table, a quarter of the bitwise loop's steps
/// (every query checks the records it reads on flash).
const CRC_NIBBLE: [u32; 16] = {
    let mut t = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 4 {
            c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// CRC-32 (IEEE), a nibble at a time.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        c = (c >> 4) ^ CRC_NIBBLE[(c & 15) as usize];
        c = (c >> 4) ^ CRC_NIBBLE[(c & 15) as usize];
    }
    !c
}

fn seal(r: &mut Rec) {
    let c = crc32(&r[..SLOT - 4]);
    r[SLOT - 4..].copy_from_slice(&c.to_le_bytes());
}

pub(crate) fn intact(r: &Rec) -> bool {
    crc32(&r[..SLOT - 4]).to_le_bytes() == r[SLOT - 4..]
}

pub(crate) fn u32_at(r: &Rec, at: usize) -> u32 {
    u32::from_le_bytes([r[at], r[at + 1], r[at + 2], r[at + 3]])
}

fn u16_at(r: &Rec, at: usize) -> u16 {
    u16::from_le_bytes([r[at], r[at + 1]])
}

fn eight(r: &Rec, at: usize) -> [u8; 8] {
    let mut b = [0; 8];
    b.copy_from_slice(&r[at..at + 8]);
    b
}

/// A header's byte 16 in a page whose superseded records are killed (see the crate docs);
/// 0 in the pages of the images before, which left them intact.
const KILLS: u8 = 1;
/// Where a header says whether its page's superseded records are killed.
const KILLS_AT: usize = 16;

pub(crate) fn header(seq: u32, next_id: u32, epoch: u32) -> Rec {
    let mut r = [0; SLOT];
    r[..4].copy_from_slice(&MAGIC);
    r[4..8].copy_from_slice(&seq.to_le_bytes());
    r[8..12].copy_from_slice(&next_id.to_le_bytes());
    r[12..16].copy_from_slice(&epoch.to_le_bytes());
    r[KILLS_AT] = KILLS;
    seal(&mut r);
    r
}

/// Whether header `h` was written by an image that kills superseded records.
pub(crate) fn kills(h: &Rec) -> bool {
    h[KILLS_AT] == KILLS
}

/// What a killed record's first word is programmed to (from any value: NOR only clears
/// bits): kind 0, which no record has, and a CRC that no longer matches.
pub(crate) const KILLED: [u8; 4] = [0; 4];

/// Whether `r` is an intact booking record (kind 3 or 1); the cheap kind test first.
pub(crate) fn is_booking(r: &Rec) -> bool {
    matches!(r[0], KIND_BOOKING | KIND_HOUR_BOOKING) && intact(r)
}

pub(crate) fn boot_record(epoch: u32) -> Rec {
    let mut r = [0; SLOT];
    r[0] = KIND_BOOT;
    r[4..8].copy_from_slice(&epoch.to_le_bytes());
    seal(&mut r);
    r
}

/// Bit 7 of a booking record's status byte (0 active, 1 cancelled, 2 released): its holder
/// checked in. An image before check-in wrote neither and reads neither.
const CHECKED_IN: u8 = 0x80;

/// A booking as its record holds it: all of it but its title, which is in the slot before
/// `slot` (see the crate docs), and where the record is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Held {
    pub(crate) id: BookingId,
    pub(crate) status: Status,
    /// Whether its holder checked in.
    pub(crate) checked_in: bool,
    pub(crate) room: RoomId,
    pub(crate) span: Span,
    pub(crate) attendees: u16,
    pub(crate) holder: Holder,
    pub(crate) nonce: Nonce,
    /// The title's length in bytes (0: none).
    pub(crate) title_len: u8,
    /// The page and slot of its latest booking record.
    pub(crate) page: u16,
    pub(crate) slot: u16,
}

impl Held {
    pub(crate) fn new(id: BookingId, new: &NewBooking) -> Held {
        Held {
            id,
            status: Status::Active,
            checked_in: false,
            room: new.room.clone(),
            span: new.span,
            attendees: new.attendees,
            holder: new.holder,
            nonce: new.nonce,
            title_len: new.title.len() as u8,
            page: 0,
            slot: 0,
        }
    }

    pub(crate) fn booking(&self, title: Title) -> Booking {
        Booking {
            id: self.id,
            new: NewBooking {
                room: self.room.clone(),
                span: self.span,
                title,
                attendees: self.attendees,
                holder: self.holder,
                nonce: self.nonce,
            },
            status: self.status,
            checked_in: self.checked_in,
            series: None,
        }
    }

    pub(crate) fn is_active_in(&self, room: &str) -> bool {
        self.status == Status::Active && self.room == room
    }
}

/// The booking record (kind 3) of `h`.
pub(crate) fn encode(h: &Held) -> Rec {
    let mut r = [0; SLOT];
    r[0] = KIND_BOOKING;
    r[1] = match h.status {
        Status::Active => 0,
        Status::Cancelled => 1,
        Status::Released => 2,
    } | if h.checked_in { CHECKED_IN } else { 0 };
    r[2] = h.room.len() as u8;
    r[3] = h.title_len;
    r[4..8].copy_from_slice(&h.id.to_le_bytes());
    r[8..12].copy_from_slice(&h.span.start.to_le_bytes());
    r[12..16].copy_from_slice(&h.span.end.to_le_bytes());
    r[16..24].copy_from_slice(&h.holder);
    r[24..32].copy_from_slice(&h.nonce);
    r[ROOM_AT..ROOM_AT + h.room.len()].copy_from_slice(h.room.as_bytes());
    r[56..58].copy_from_slice(&h.attendees.to_le_bytes());
    seal(&mut r);
    r
}

/// The title record (kind 4) of booking `id`.
pub(crate) fn title_record(id: BookingId, title: &str) -> Rec {
    let mut r = [0; SLOT];
    r[0] = KIND_TITLE;
    r[1] = title.len() as u8;
    r[4..8].copy_from_slice(&id.to_le_bytes());
    r[TITLE_AT..TITLE_AT + title.len()].copy_from_slice(title.as_bytes());
    seal(&mut r);
    r
}

/// The title in `r` if it is the intact title record of booking `id`, `len` bytes long.
pub(crate) fn title_of(r: &Rec, id: BookingId, len: u8) -> Option<Title> {
    let ok = intact(r) && r[0] == KIND_TITLE && r[1] == len && u32_at(r, 4) == id;
    let bytes = r.get(TITLE_AT..TITLE_AT + usize::from(len)).filter(|_| ok)?;
    Title::try_from(core::str::from_utf8(bytes).ok()?).ok()
}

/// A booking record (kind 3, or kind 1 of a whole hour), without where it is.
pub(crate) fn decode(r: &Rec) -> Option<Held> {
    let (status, checked_in) = match (r[1] & !CHECKED_IN, r[1] & CHECKED_IN != 0) {
        (0, checked_in) => (Status::Active, checked_in),
        (1, checked_in) => (Status::Cancelled, checked_in),
        (2, false) => (Status::Released, false),
        _ => return None,
    };
    let len = usize::from(r[2]);
    let room = core::str::from_utf8(r.get(ROOM_AT..ROOM_AT + len).filter(|_| len <= MAX_ROOM_ID)?).ok()?;
    let (span, attendees, title_len) = match r[0] {
        KIND_BOOKING => (Span::new(u32_at(r, 8), u32_at(r, 12))?, u16_at(r, 56), r[3]),
        KIND_HOUR_BOOKING => {
            let (year, month, day, hour) = (u16_at(r, 8), r[10], r[11], r[12]);
            let valid = (2000..3000).contains(&year) && (1..=12).contains(&month) && (1..=31).contains(&day);
            if !valid || hour >= 24 {
                return None;
            }
            (Span::hour(Day { year, month, day }, hour), u16_at(r, 13), 0)
        }
        _ => return None,
    };
    Some(Held {
        id: u32_at(r, 4),
        status,
        checked_in,
        room: RoomId::try_from(room).ok()?,
        span,
        attendees,
        holder: eight(r, 16),
        nonce: eight(r, 24),
        title_len: title_len.min(MAX_TITLE as u8),
        page: 0,
        slot: 0,
    })
}
