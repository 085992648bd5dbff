//! What a booking's commit writes does not grow with the store (issue 43): the same bookings,
//! committed in groups as the committer makes them, into an empty store and one of years.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use redb::backends::InMemoryBackend;
use redb::{Database, StorageBackend};
use redmark_core::booking::{Actor, Day, Minute, NewBooking, RoomId, Span, Title};

use super::commit_group;

/// A redb file in memory that counts the bytes written to it.
#[derive(Debug)]
struct Counted {
    file: InMemoryBackend,
    wrote: Arc<AtomicU64>,
}

impl StorageBackend for Counted {
    fn len(&self) -> Result<u64, std::io::Error> {
        self.file.len()
    }

    fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, std::io::Error> {
        self.file.read(offset, len)
    }

    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        self.file.set_len(len)
    }

    fn sync_data(&self, eventual: bool) -> Result<(), std::io::Error> {
        self.file.sync_data(eventual)
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        self.wrote.fetch_add(data.len() as u64, Ordering::Relaxed);
        self.file.write(offset, data)
    }
}

/// A store in memory and the count of bytes written to it.
fn counted() -> (Database, Arc<AtomicU64>) {
    let wrote = Arc::new(AtomicU64::new(0));
    let file = Counted {
        file: InMemoryBackend::new(),
        wrote: Arc::clone(&wrote),
    };
    (
        Database::builder().create_with_backend(file).unwrap(),
        wrote,
    )
}

const ROOMS: u32 = 16;
/// The stored bookings: four a room a day, 16 rooms, from 2030-01-01 (about 4 years and 3 months).
const STORED: u32 = 100_000;
const DAYS: u32 = STORED.div_ceil(4 * ROOMS);
/// Bookings a group commit makes in the comparison (pipelining clients, a few per group).
const GROUP: usize = 32;
/// Bookings compared: enough for the store's periodic work (at its usual share) to be in them.
const MEASURED: u32 = 16_000;

fn booking(room: u32, start: Minute, minutes: Minute, nonce: u32) -> NewBooking {
    NewBooking {
        room: RoomId::try_from(format!("r{room:02}").as_str()).unwrap(),
        span: Span::new(start, start + minutes).unwrap(),
        title: Title::try_from(format!("Meeting {nonce}").as_str()).unwrap(),
        attendees: 4,
        holder: [nonce as u8 % 8; 8],
        // Operation nonces are random: spread them as random ones are.
        nonce: u64::from(nonce)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .to_le_bytes(),
    }
}

fn first_day() -> Minute {
    Day {
        year: 2030,
        month: 1,
        day: 1,
    }
    .first_minute()
}

/// `news` committed in groups of `group`, each made as the committer makes one.
fn commit_all(db: &Database, news: &[NewBooking], group: usize) {
    for chunk in news.chunks(group) {
        commit_group(db, |t| {
            for n in chunk {
                t.book(n, &Actor::holder(n.holder))??;
            }
            Ok(())
        })
        .unwrap();
    }
}

/// Bytes written a booking while `news` are committed in groups of [`GROUP`].
fn written_a_booking(db: &Database, wrote: &AtomicU64, news: &[NewBooking]) -> f64 {
    let before = wrote.load(Ordering::Relaxed);
    commit_all(db, news, GROUP);
    (wrote.load(Ordering::Relaxed) - before) as f64 / news.len() as f64
}

/// Bookings of 45 to 90 minutes in the order a floor fills: day by day, room by room.
fn stored() -> Vec<NewBooking> {
    let mut out = Vec::new();
    for d in 0..DAYS {
        for r in 0..ROOMS {
            for (k, (at, minutes)) in [(480, 45), (600, 60), (780, 90), (960, 45)]
                .into_iter()
                .enumerate()
            {
                let n = d * 64 + r * 4 + k as u32;
                if n < STORED {
                    out.push(booking(r, first_day() + d * 1440 + at, minutes, n));
                }
            }
        }
    }
    out
}

/// New bookings in the gaps between the stored ones, on days spread over all the years.
fn measured() -> Vec<NewBooking> {
    let gaps = [(555, 45), (690, 60), (900, 60)];
    (0..MEASURED)
        .map(|j| {
            let t = (j * 7919) % (DAYS * ROOMS * 3);
            let (room, d, (at, minutes)) =
                ((t / 3) % ROOMS, t / (3 * ROOMS), gaps[(t % 3) as usize]);
            booking(room, first_day() + d * 1440 + at, minutes, STORED + j)
        })
        .collect()
}

/// The same bookings cost about as many bytes written into a store of 100 000 bookings over
/// four years as into an empty one: 1.20 times as many (4 916 and 4 103 a booking), bound at
/// 1.25 to leave redb's page layout some room; before the index tiers (`tiers.rs`) 1.84 times
/// (18 312 and 9 953): each scattered index insert copied a page of its own.
#[test]
fn a_booking_writes_about_as_much_into_years_of_bookings_as_into_an_empty_store() {
    let news = measured();
    let (empty, wrote_empty) = counted();
    let a = written_a_booking(&empty, &wrote_empty, &news);
    let (full, wrote_full) = counted();
    commit_all(&full, &stored(), 1000);
    let b = written_a_booking(&full, &wrote_full, &news);
    eprintln!(
        "bytes written a booking: {a:.0} into an empty store, {b:.0} into one of {STORED} ({:.2})",
        b / a
    );
    assert!(
        b <= 1.25 * a,
        "{b:.0} bytes a booking into a store of {STORED} bookings, {a:.0} into an empty one"
    );
}
