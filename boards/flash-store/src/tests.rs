//! Host tests: a simulated NOR flash that can lose power at any word it programs or any
//! chunk it erases, and an exhaustive proof over every such step of a booking workload that
//! a reboot finds every acknowledged change and no half booking.

use std::collections::{HashMap, HashSet};
use std::vec::Vec;

use embedded_storage::nor_flash::{ErrorType, MultiwriteNorFlash, NorFlash, NorFlashErrorKind, ReadNorFlash};
use redmark_core::booking::{Day, MemStore, RoomId, Span};
use redmark_core::limits::MAX_TITLE;

use super::*;
use crate::record::*;
use sim::SimFlash;

mod ends;
mod forget;
mod in_place;
mod release;
mod sim;
mod spans;

const PAGE: usize = 512;
const PAGES: u32 = 5;
/// The store sits after one page of something else, as on a real chip.
const BASE: u32 = PAGE as u32;
const SIZE: usize = PAGE * (PAGES as usize + 2);
/// Bookings the tests' store holds: as many as 5 pages of 8 slots hold with titles (see load).
const HOLDS: u32 = 11;
type Sim = FlashStore<SimFlash>;

/// The outcome of a store operation, which a flash store gives on the first poll.
fn now<F: core::future::Future>(f: F) -> F::Output {
    redmark_core::engine::poll_once(f).expect("a flash store is ready at once")
}

/// The store on `flash` holding 6 bookings at most.
fn small(flash: SimFlash) -> Sim {
    let mut s = Sim::new(flash, BASE, PAGES).holding(6);
    s.load().unwrap();
    s
}

/// A title of the longest kind: 48 bytes, not all ASCII.
const LONG_TITLE: &str = "Quarter review: Zürich, Malmö & São Paulo 2/2";

/// The whole hour `hour` of 2026-09-`day` in `room`; titled as the nonce says (none, short, or
/// [`LONG_TITLE`]).
fn new_booking(room: &str, day: u8, hour: u8, holder: u8, nonce: u64) -> NewBooking {
    let title = ["", "Design review", "", LONG_TITLE][(nonce % 4) as usize];
    NewBooking {
        room: RoomId::try_from(room).unwrap(),
        span: Span::hour(Day { year: 2026, month: 9, day }, hour),
        title: Title::try_from(title).unwrap(),
        attendees: u16::from(hour) * 3,
        holder: [holder; 8],
        nonce: nonce.to_le_bytes(),
    }
}

/// `new` moved by `minutes` and lasting `length` minutes.
fn moved(new: &NewBooking, minutes: i32, length: u32) -> Span {
    let start = new.span.start.checked_add_signed(minutes).unwrap();
    Span::new(start, start + length).unwrap()
}

/// Every booking held (its record as found), by id.
fn helds<F: MultiwriteNorFlash>(s: &mut FlashStore<F>) -> Vec<Held> {
    let mut v = Vec::new();
    s.each(&mut |h, _| v.push(h.clone())).unwrap();
    v.sort_by_key(|h| h.id);
    v
}

/// Every booking held, titles read back, by id.
fn all<F: MultiwriteNorFlash>(s: &mut FlashStore<F>) -> Vec<Booking> {
    helds(s).iter().map(|h| s.booking(h).unwrap()).collect()
}

#[derive(Clone, Debug)]
enum Op {
    Boot,
    Book(NewBooking),
    /// Cancels the booking made by the op at this index (if it was made).
    Cancel(usize),
}

/// What was acknowledged before the power went.
#[derive(Default, Debug)]
struct Ledger {
    /// Book op index → the booking it acknowledged (created or replayed).
    booked: HashMap<usize, Booking>,
    /// Ids whose cancel was acknowledged.
    cancelled: HashSet<BookingId>,
    /// The op that was running when the power went.
    in_flight: Option<usize>,
    /// Epochs acknowledged.
    epochs: Vec<u32>,
    /// A booking was in flight when the power went in an earlier run: a cancelled booking
    /// forgotten to make room for it stays forgotten.
    earlier_book_cut: bool,
}

/// Opens the store and runs `ops` on `flash` until the power goes (or they are done).
fn run(flash: SimFlash, ops: &[Op], ledger: &mut Ledger) -> SimFlash {
    let mut store = match Sim::open(flash.clone(), BASE, PAGES) {
        Ok(s) => s,
        Err(_) => return flash_of_failed_open(flash),
    };
    for (i, op) in ops.iter().enumerate() {
        let done = match op {
            Op::Boot => store.boot().map(|e| ledger.epochs.push(e)),
            Op::Book(new) => now(store.commit(new)).map(|c| match c {
                Commit::Created(b) | Commit::Replayed(b) => {
                    ledger.booked.insert(i, b);
                }
                Commit::Taken(_) => {}
            }),
            Op::Cancel(j) => match ledger.booked.get(j) {
                Some(b) => now(store.cancel(b.id, &Actor::holder(b.new.holder))).map(|c| {
                    assert_eq!(c.map(|c| c.status), Some(Status::Cancelled));
                    ledger.cancelled.insert(b.id);
                }),
                None => Ok(()),
            },
        };
        if let Err(e) = done {
            assert_eq!(e, StoreError::Io, "op {i}");
            ledger.in_flight = Some(i);
            break;
        }
    }
    store.into_flash()
}

/// `open` consumed the flash it failed on: rerun it on a copy to get the state it left.
fn flash_of_failed_open(mut flash: SimFlash) -> SimFlash {
    // Replaying open with the same budget reproduces the same writes on the copy.
    let mut copy = flash.clone();
    let probe = ProbeFlash(&mut copy);
    let _ = FlashStore::<ProbeFlash<'_>>::open(probe, BASE, PAGES);
    flash = copy;
    flash
}

/// Borrows a [`SimFlash`] so a failed `open` leaves its effects behind.
pub(super) struct ProbeFlash<'a>(&'a mut SimFlash);

impl MultiwriteNorFlash for ProbeFlash<'_> {}
impl ErrorType for ProbeFlash<'_> {
    type Error = NorFlashErrorKind;
}
impl ReadNorFlash for ProbeFlash<'_> {
    const READ_SIZE: usize = 1;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        self.0.read(offset, bytes)
    }
    fn capacity(&self) -> usize {
        SIZE
    }
}
impl NorFlash for ProbeFlash<'_> {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = PAGE;
    fn erase(&mut self, from: u32, to: u32) -> Result<(), Self::Error> {
        self.0.erase(from, to)
    }
    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), Self::Error> {
        self.0.write(offset, bytes)
    }
}

/// After a reboot: every acknowledged booking and cancel is there, whole; nothing else is
/// but the one booking in flight; the store still decides at-most-once and no two active bookings of a room overlap;
/// the next boot's epoch is past every acknowledged one. Then it goes on working.
fn check_after_reboot(flash: SimFlash, ops: &[Op], ledger: &Ledger, context: &str) -> SimFlash {
    let mut store =
        Sim::open(flash.revive(), BASE, PAGES).unwrap_or_else(|e| panic!("{context}: open {e:?}"));
    let acked: HashMap<BookingId, &Booking> = ledger.booked.values().map(|b| (b.id, b)).collect();
    let in_flight_new = match ledger.in_flight.map(|i| &ops[i]) {
        Some(Op::Book(n)) => Some(n),
        _ => None,
    };
    let full = helds(&mut store).len() == HOLDS as usize;
    for b in acked.values() {
        let Some(got) = now(store.get(b.id)).unwrap() else {
            // A full store forgets its oldest cancelled booking to make room for a new one
            // (live, or while the booking that needed the room was being written).
            let made_room = full || in_flight_new.is_some() || ledger.earlier_book_cut;
            let forgettable = ledger.cancelled.contains(&b.id) && made_room;
            assert!(forgettable, "{context}: lost {b:?}");
            continue;
        };
        assert_eq!(got.new, b.new, "{context}");
        let cancel_in_flight =
            matches!(ledger.in_flight.map(|i| &ops[i]), Some(Op::Cancel(j)) if ledger.booked[j].id == b.id);
        if ledger.cancelled.contains(&b.id) {
            assert_eq!(got.status, Status::Cancelled, "{context}: cancel of {} lost", b.id);
        } else if !cancel_in_flight {
            assert_eq!(got.status, Status::Active, "{context}: {} cancelled unasked", b.id);
        }
    }
    let mut operations = HashSet::new();
    let held = all(&mut store);
    for b in &held {
        if !acked.contains_key(&b.id) {
            assert_eq!(Some(&b.new), in_flight_new, "{context}: a booking nobody was acknowledged or making");
        }
        assert!(operations.insert((b.new.holder, b.new.nonce)), "{context}: nonce twice");
        let clash = |o: &&Booking| {
            o.id != b.id
                && o.status == Status::Active
                && o.new.room == b.new.room
                && o.new.span.overlaps(&b.new.span)
        };
        if b.status == Status::Active {
            assert_eq!(held.iter().find(clash), None, "{context}: {} overlapped", b.id);
        }
    }
    let epoch = store.boot().unwrap();
    assert!(ledger.epochs.iter().all(|&e| e < epoch), "{context}: epoch {epoch} after {:?}", ledger.epochs);
    // Replays of acknowledged operations return the same booking, nothing new.
    for b in acked.values().filter(|b| !ledger.cancelled.contains(&b.id)) {
        match now(store.commit(&b.new)).unwrap() {
            Commit::Replayed(r) => assert_eq!(r.id, b.id, "{context}"),
            other => panic!("{context}: replay of {} gave {other:?}", b.id),
        }
    }
    let max_id = helds(&mut store).iter().map(|b| b.id).max().unwrap_or(0);
    let fresh = new_booking("after", 30, 23, 9, 0xAF7E);
    let made = now(store.commit(&fresh)).unwrap_or_else(|e| {
        panic!(
            "{context}: {e:?} {:?}",
            helds(&mut store).iter().map(|b| (b.id, b.status)).collect::<Vec<_>>()
        )
    });
    let Commit::Created(made) = made else { panic!("{context}: not created") };
    assert!(made.id > max_id, "{context}: id reused");
    let mut again = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    assert_eq!(now(again.get(made.id)).unwrap().as_ref(), Some(&made), "{context}");
    assert!(again.boot().unwrap() > epoch, "{context}");
    again.into_flash()
}

/// Boots, books (some with titles), replays, takes (an overlap), cancels, books a touching span
/// and rebooks: enough records to wrap the 5-page ring
/// twice (so pages are opened with bookings and titles carried forward) in an 11-booking store.
fn workload() -> Vec<Op> {
    let mut ops = vec![Op::Boot];
    let mut nonce = 1u64;
    for round in 0..5u8 {
        let first = ops.len();
        for k in 0..4u8 {
            ops.push(Op::Book(new_booking(
                ["atrium", "studio-b", "nook"][usize::from(k % 3)],
                round + 1,
                k + 8,
                k % 2,
                nonce,
            )));
            nonce += 1;
        }
        // The same operation again (replayed), half of the same hour by someone else (taken).
        let Op::Book(n) = ops[first].clone() else { unreachable!() };
        ops.push(Op::Book(n.clone()));
        let other = |n: &NewBooking, span, nonce: u64| NewBooking {
            span,
            holder: [7; 8],
            nonce: nonce.to_le_bytes(),
            ..n.clone()
        };
        ops.push(Op::Book(other(&n, moved(&n, 30, 60), nonce + 100)));
        ops.push(Op::Cancel(first));
        ops.push(Op::Cancel(first + 2));
        ops.push(Op::Cancel(first + 1));
        // The 45 minutes right after the booking that stays (booked: touching is no clash).
        let Op::Book(last) = ops[first + 3].clone() else { unreachable!() };
        ops.push(Op::Book(other(&last, moved(&last, 60, 45), nonce + 200)));
        ops.push(Op::Cancel(ops.len() - 1));
        ops.push(Op::Boot);
    }
    ops
}

#[test]
fn a_clean_run_matches_the_ram_store() {
    let ops = workload();
    let mut ledger = Ledger::default();
    let flash = run(SimFlash::new(), &ops, &mut ledger);
    assert_eq!(ledger.in_flight, None);
    // The same ops on MemStore, the reference semantics.
    let mut mem = MemStore::<64>::new();
    let mut mem_booked: HashMap<usize, Booking> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Book(n) => {
                if let Commit::Created(b) | Commit::Replayed(b) = now(mem.commit(n)).unwrap() {
                    mem_booked.insert(i, b);
                }
            }
            Op::Cancel(j) => {
                if let Some(b) = mem_booked.get(j) {
                    now(mem.cancel(b.id, &Actor::holder(b.new.holder))).unwrap();
                }
            }
            Op::Boot => {}
        }
    }
    let mut a: Vec<_> = ledger.booked.iter().map(|(i, b)| (*i, b.new.clone())).collect();
    let mut b: Vec<_> = mem_booked.iter().map(|(i, b)| (*i, b.new.clone())).collect();
    a.sort_by_key(|x| x.0);
    b.sort_by_key(|x| x.0);
    assert_eq!(a, b, "the same operations booked");
    assert!(flash.steps > 0);
    let turns = &flash.erases[1..=PAGES as usize];
    assert!(turns.iter().all(|&e| e >= 2), "the workload turns the ring twice: {turns:?}");
    let mut store = Sim::open(flash.revive(), BASE, PAGES).unwrap();
    assert_eq!(store.epoch(), 6);
    let active = helds(&mut store).iter().filter(|b| b.status == Status::Active).count();
    assert_eq!(active, mem.bookings().iter().filter(|b| b.status == Status::Active).count());
    // Each holder's bookings, walked after the reboot, as the RAM store walks them.
    for holder in [[0; 8], [1; 8], [7; 8]] {
        assert_eq!(held(&mut store, holder), held(&mut mem, holder), "holder {holder:?}");
    }
    assert!(!held(&mut store, [1; 8]).is_empty());
    // Each room's day, walked after the reboot, as the RAM store walks it.
    let days: std::collections::BTreeSet<_> =
        mem.bookings().iter().map(|b| (b.new.room.clone(), b.new.span.day())).collect();
    for (room, day) in &days {
        assert_eq!(room_day(&mut store, room, *day), room_day(&mut mem, room, *day), "{room} {day}");
    }
    assert!(days.iter().any(|(room, day)| !room_day(&mut store, room, *day).is_empty()));
}

/// The bookings of `room` from the start of `day` on, as `next_in_room` walks them.
fn room_day(s: &mut impl Store, room: &str, day: Day) -> Vec<(Span, Title)> {
    let mut walked = Vec::new();
    let mut from = day.first_minute();
    while let Some(b) = now(s.next_in_room(room, from)).unwrap() {
        assert!(b.new.span.end > from);
        from = b.new.span.end;
        walked.push((b.new.span, b.new.title));
    }
    walked
}

/// A holder's active bookings as `next_held` walks them from the start: (span, room) each.
fn held(s: &mut impl Store, holder: Holder) -> Vec<(Span, RoomId, Title)> {
    let mut walked: Vec<(Span, RoomId, Title)> = Vec::new();
    while let Some(b) = {
        let (start, room) = walked.last().map_or((0, RoomId::new()), |(s, r, _)| (s.start, r.clone()));
        now(s.next_held(&holder, start, &room)).unwrap()
    } {
        walked.push((b.new.span, b.new.room, b.new.title));
    }
    walked
}

#[test]
fn power_cut_at_every_step_loses_no_acknowledged_change_and_leaves_no_half_booking() {
    let ops = workload();
    let total = run(SimFlash::new(), &ops, &mut Ledger::default()).steps;
    assert!(total > 500, "the workload wraps the ring: {total} steps");
    for cut in 0..total {
        let mut flash = SimFlash::new();
        flash.budget = Some(cut);
        let mut ledger = Ledger::default();
        let flash = run(flash, &ops, &mut ledger);
        check_after_reboot(flash, &ops, &ledger, &format!("cut at step {cut}/{total}"));
    }
}

#[test]
fn power_cut_twice_in_a_row_while_recovering() {
    // Cut once in the workload, then again at every step of the next boot's first booking.
    let ops = workload();
    let total = run(SimFlash::new(), &ops, &mut Ledger::default()).steps;
    for cut in (0..total).step_by(37) {
        let mut flash = SimFlash::new();
        flash.budget = Some(cut);
        let mut ledger = Ledger::default();
        let flash = run(flash, &ops, &mut ledger).revive();
        let mut second = 0;
        loop {
            let mut f = flash.clone();
            f.budget = Some(second);
            let mut l2 = Ledger {
                booked: ledger.booked.clone(),
                cancelled: ledger.cancelled.clone(),
                ..Ledger::default()
            };
            l2.epochs = ledger.epochs.clone();
            l2.earlier_book_cut = matches!(ledger.in_flight.map(|i| &ops[i]), Some(Op::Book(_)));
            let more = [Op::Boot, Op::Book(new_booking("nook", 29, 5, 3, 0x5EC0))];
            // The second run's ops are indexed after the first's.
            let mut all = ops.clone();
            all.extend(more.iter().cloned());
            let f = run_from(f, &all, ops.len(), &mut l2);
            let finished = l2.in_flight.is_none();
            check_after_reboot(f, &all, &l2, &format!("cut at {cut}, then at {second}"));
            if finished {
                break;
            }
            second += 1;
        }
    }
}

/// Like [`run`], from op `start` on (earlier ops were acknowledged in `ledger` already).
fn run_from(flash: SimFlash, ops: &[Op], start: usize, ledger: &mut Ledger) -> SimFlash {
    let mut tail = Ledger::default();
    let f = run(flash, &ops[start..], &mut tail);
    ledger.booked.extend(tail.booked.into_iter().map(|(i, b)| (i + start, b)));
    ledger.cancelled.extend(tail.cancelled);
    ledger.epochs.extend(tail.epochs);
    ledger.in_flight = tail.in_flight.map(|i| i + start);
    f
}

#[test]
fn wear_is_spread_over_every_page() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    for i in 0..2000u64 {
        let n = new_booking("atrium", 1 + (i % 28) as u8, (i % 24) as u8, 1, i);
        let Commit::Created(b) = now(store.commit(&n)).unwrap() else { panic!("{i}") };
        now(store.cancel(b.id, &Actor::holder(b.new.holder))).unwrap();
    }
    let flash = store.into_flash();
    let ours = &flash.erases[1..=PAGES as usize];
    let (lo, hi) = (ours.iter().min().unwrap(), ours.iter().max().unwrap());
    assert!(*lo > 100 && hi - lo <= 1, "erases per page: {ours:?}");
    assert_eq!(flash.erases[0] + flash.erases[PAGES as usize + 1], 0, "only its own pages");
}

#[test]
fn six_active_bookings_fill_it_and_cancelled_ones_make_room() {
    let mut store = small(SimFlash::new());
    let mut ids = Vec::new();
    for h in 0..6 {
        let Commit::Created(b) = now(store.commit(&new_booking("nook", 1, h, 1, u64::from(h)))).unwrap()
        else {
            panic!()
        };
        ids.push(b.id);
    }
    assert_eq!(now(store.commit(&new_booking("nook", 1, 9, 1, 99))), Err(StoreError::Full));
    assert_eq!(now(store.cancel(ids[2], &Actor::holder([0xee; 8]))), Ok(None), "not theirs");
    assert_eq!(now(store.commit(&new_booking("nook", 1, 9, 1, 99))), Err(StoreError::Full));
    let holder = new_booking("nook", 1, 2, 1, 2).holder;
    now(store.cancel(ids[2], &Actor::holder(holder))).unwrap();
    assert!(matches!(now(store.commit(&new_booking("nook", 1, 9, 1, 99))), Ok(Commit::Created(_))));
    // The cancelled booking was forgotten to make room; a reboot agrees.
    assert_eq!(now(store.get(ids[2])).unwrap(), None);
    let mut store = small(store.into_flash());
    assert_eq!(helds(&mut store).len(), 6);
    assert!(helds(&mut store).iter().all(|b| b.status == Status::Active));
}

#[test]
fn a_write_that_reads_back_wrong_is_not_acknowledged_and_poisons_until_reopened() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    store.boot().unwrap();
    // A stuck bit where the next record goes.
    let at = store.addr(store.head, store.next_slot) as usize + 20;
    store.flash.stuck = Some(at);
    let n = new_booking("nook", 1, 1, 1, 1);
    assert_eq!(now(store.commit(&n)), Err(StoreError::Io));
    assert_eq!(now(store.commit(&new_booking("nook", 1, 2, 1, 2))), Err(StoreError::Io), "poisoned");
    let mut flash = store.into_flash();
    flash.stuck = None;
    flash.mem[at] = 0;
    let mut store = Sim::open(flash, BASE, PAGES).unwrap();
    assert_eq!(helds(&mut store).len(), 0, "the bad record is skipped");
    assert!(matches!(now(store.commit(&n)), Ok(Commit::Created(_))));
}

#[test]
fn records_round_trip() {
    let new = new_booking("abcdefghijklmnopqrstuvwx", 30, 23, 0xA5, u64::MAX);
    assert_eq!(new.title.len(), MAX_TITLE, "the longest title");
    let mut h = Held::new(0xDEAD_BEEF, &new);
    h.status = Status::Cancelled;
    let r = encode(&h);
    assert!(intact(&r));
    assert_eq!(decode(&r), Some(h.clone()));
    let t = title_record(h.id, &new.title);
    assert_eq!(title_of(&t, h.id, h.title_len), Some(new.title.clone()));
    assert_eq!(title_of(&t, h.id + 1, h.title_len), None, "another booking's title");
    assert_eq!(
        h.booking(new.title.clone()),
        Booking { id: h.id, new, status: Status::Cancelled, checked_in: false, series: None }
    );
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
}
