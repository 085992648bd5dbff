//! Bookings read in place: 256 titled bookings in a region sized for them come back after a
//! reopen and clash wherever their record is, a power cut at every step of a page's
//! carry-over loses nothing and doubles nothing, the store's RAM does not grow with what it
//! holds, and a log the image before (a RAM mirror; superseded records left whole) wrote
//! reads back as it left it, in its region or in a larger one around it.

use std::collections::HashSet;

use super::spans::churn;
use super::*;

/// Pages of a region sized for [`MAX_BOOKINGS`] titled bookings on these tests' 512-byte
/// pages (8 slots): `(pages - 1) * 6` slots hold 512 records with a third to spare.
const BIG_PAGES: u32 = 128;

/// The store on a region of [`BIG_PAGES`] pages (after one page of something else).
fn big(flash: Option<SimFlash>) -> Sim {
    let flash = flash.unwrap_or_else(|| SimFlash::sized(PAGE * (BIG_PAGES as usize + 1)));
    Sim::open(flash, BASE, BIG_PAGES).unwrap()
}

/// The `i`th booking of four busy weeks in one room: nine hours a day, each titled.
fn nth(i: u32) -> NewBooking {
    let mut n =
        new_booking("atrium", 1 + (i / 9) as u8, 8 + (i % 9) as u8, (i % 5) as u8, 0x5D00 + u64::from(i));
    n.title = Title::try_from(format!("Week {} review {i:03}: Zürich & Malmö", i / 45).as_str()).unwrap();
    n
}

/// The ids the log holds a record for, each once.
fn ids_once(s: &mut Sim, context: &str) -> Vec<BookingId> {
    let ids: Vec<BookingId> = helds(s).iter().map(|h| h.id).collect();
    let unique: HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{context}: a booking with two records: {ids:?}");
    ids
}

#[test]
fn bookings_256_with_titles_are_all_back_after_a_reopen_and_clash_in_any_page() {
    let mut store = big(None);
    assert_eq!(store.capacity(), MAX_BOOKINGS);
    let mut made = Vec::new();
    for i in 0..MAX_BOOKINGS {
        let Commit::Created(b) = now(store.commit(&nth(i))).unwrap() else { panic!("booking {i}") };
        made.push(b);
    }
    let one_more = new_booking("nook", 1, 1, 1, 0xF011);
    assert_eq!(now(store.commit(&one_more)), Err(StoreError::Full), "MAX_BOOKINGS active ones fill it");
    let mut store = big(Some(store.into_flash()));
    assert_eq!(all(&mut store), made, "every booking back, titles and all");
    let pages: HashSet<u16> = helds(&mut store).iter().map(|h| h.page).collect();
    assert!(pages.len() > 60, "records in {} pages", pages.len());
    for b in &made {
        // Half an hour into it, by someone else: taken by it, wherever its record is.
        let half = NewBooking { span: moved(&b.new, 30, 60), holder: [9; 8], ..b.new.clone() };
        assert_eq!(now(store.commit(&half)), Ok(Commit::Taken(b.clone())), "{}", b.id);
        assert_eq!(now(store.commit(&b.new)), Ok(Commit::Replayed(b.clone())), "{}", b.id);
    }
    let day = made[100].new.span.day();
    let walked = room_day(&mut store, "atrium", day);
    let from_then =
        made.iter().filter(|b| b.new.span.day() >= day).map(|b| (b.new.span, b.new.title.clone()));
    assert!(walked.iter().cloned().eq(from_then), "the room walked from a day on");
    // A cancel makes room for one more, and the ring goes on turning with 256 held.
    now(store.cancel(made[7].id, &Actor::holder(made[7].new.holder))).unwrap();
    assert!(matches!(now(store.commit(&one_more)), Ok(Commit::Created(_))));
    for round in 0..300u32 {
        let b = &made[(round % MAX_BOOKINGS) as usize];
        let (end, holder) = (b.new.span.end, Actor::holder(b.new.holder));
        if b.id != made[7].id {
            now(store.set_end(b.id, &holder, end, end - 5)).unwrap();
            now(store.set_end(b.id, &holder, end - 5, end)).unwrap();
        }
    }
    let mut store = big(Some(store.into_flash()));
    assert_eq!(ids_once(&mut store, "after the turns").len(), MAX_BOOKINGS as usize);
    for b in made.iter().filter(|b| b.id != made[7].id) {
        assert_eq!(now(store.get(b.id)).as_ref(), Ok(&Some(b.clone())));
    }
    let erases = &store.into_flash().erases;
    assert!(erases[1..].iter().all(|&e| e >= 2), "the ring turned: {erases:?}");
}

#[test]
fn the_store_in_ram_is_a_few_words_whatever_it_holds() {
    // No booking in it and no count in its type: the flash driver and a few words.
    let own = core::mem::size_of::<FlashStore<SimFlash>>() - core::mem::size_of::<SimFlash>();
    assert!(own <= 56, "{own} bytes besides the flash driver");
}

/// The bookings of the tests' store before a page is opened by the next titled record,
/// and one of them, titled and active, whose record is in the page about to leave.
fn on_the_turn() -> (SimFlash, Vec<Booking>, Booking) {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    let mut made = Vec::new();
    for k in 0..4u8 {
        let Commit::Created(b) =
            now(store.commit(&new_booking("nook", 2, 8 + k, 1, 0x70 + u64::from(k)))).unwrap()
        else {
            panic!()
        };
        made.push(b);
    }
    for i in 0..200u64 {
        let gone = (store.seq + 2).checked_sub(PAGES);
        let leaving = (0..PAGES).find(|&p| gone.is_some() && store.page_seq(p).unwrap() == gone);
        let full = store.next_slot + 2 > Sim::SLOTS;
        let there = helds(&mut store).into_iter().find(|h| {
            Some(u32::from(h.page)) == leaving && h.title_len > 0 && made.iter().any(|b| b.id == h.id)
        });
        if let (true, Some(h)) = (full, there) {
            let mut all_now = all(&mut store);
            all_now.retain(|b| made.iter().any(|m| m.id == b.id));
            let b = all_now.iter().find(|b| b.id == h.id).unwrap().clone();
            return (store.into_flash(), all_now, b);
        }
        let n = new_booking("churn", 1 + (i % 28) as u8, (i % 24) as u8, 9, 0xC000 + i);
        let Commit::Created(b) = now(store.commit(&n)).unwrap() else { panic!("churn {i}") };
        now(store.cancel(b.id, &Actor::holder(b.new.holder))).unwrap();
    }
    panic!("no turn with a booking of ours in the leaving page");
}

#[test]
fn a_power_cut_at_every_step_of_a_carry_over_loses_nothing_and_doubles_nothing() {
    let (flash, before, b) = on_the_turn();
    let erased = flash.erases.iter().sum::<u32>();
    let cancelled = Booking { status: Status::Cancelled, ..b.clone() };
    let mut cut = 0;
    loop {
        let mut f = flash.clone();
        f.budget = Some(cut);
        let mut store = Sim::open(f, BASE, PAGES).unwrap();
        let done = now(store.cancel(b.id, &Actor::holder(b.new.holder)));
        let f = store.into_flash().revive();
        let opened = f.erases.iter().sum::<u32>() > erased;
        let mut again = Sim::open(f, BASE, PAGES).unwrap();
        let context = format!("cut at step {cut}");
        ids_once(&mut again, &context);
        for o in &before {
            let got = now(again.get(o.id)).unwrap().unwrap_or_else(|| panic!("{context}: lost {}", o.id));
            match (&done, o.id == b.id) {
                (Ok(_), true) => assert_eq!(got, cancelled, "{context}: acknowledged"),
                (Err(_), true) => assert!(got == b || got == cancelled, "{context}: {got:?}"),
                (_, false) => assert_eq!(&got, o, "{context}"),
            }
        }
        // It goes on: the booking's hour is free once it is cancelled.
        let cancel = now(again.cancel(b.id, &Actor::holder(b.new.holder)));
        assert_eq!(cancel, Ok(Some(cancelled.clone())), "{context}");
        let other = NewBooking { holder: [3; 8], nonce: [0xEE; 8], ..b.new.clone() };
        assert!(matches!(now(again.commit(&other)), Ok(Commit::Created(_))), "{context}");
        ids_once(&mut again, &context);
        if let Ok(got) = done {
            assert_eq!(got, Some(cancelled.clone()));
            assert!(opened, "the cancel opened a page");
            break;
        }
        cut += 1;
    }
    assert!(cut > 60, "the cuts went through the erase, the copies and the kill: {cut}");
}

/// The log the image before reading in place (commit 24eb83f: a RAM mirror of up to N
/// bookings, superseded records left whole) wrote on these tests' flash, its 5 pages from
/// [`BASE`] in hex, dumped by running that image's store on this `SimFlash`: boot; six
/// bookings (`mirror_bookings`); the first three's ends moved 15 minutes later and back
/// twelve times each (the ring turned four times: a booking's superseded records in several
/// pages, one page outside the window); the fourth cancelled, the fifth checked in; boot.
const MIRROR_LOG: &str = include_str!("mirror-log.hex");

/// The tests' flash with [`MIRROR_LOG`] at [`BASE`].
fn mirror_flash() -> SimFlash {
    let mut f = SimFlash::new();
    for (i, byte) in MIRROR_LOG.trim().as_bytes().chunks(2).enumerate() {
        let byte = u8::from_str_radix(std::str::from_utf8(byte).unwrap(), 16).unwrap();
        f.mem[BASE as usize + i] = byte;
    }
    f
}

/// The bookings [`MIRROR_LOG`] holds, as that image left them.
fn mirror_bookings() -> Vec<Booking> {
    (0..6u64)
        .map(|n| {
            let new = new_booking(
                ["atrium", "nook", "studio-b"][n as usize % 3],
                3,
                9 + n as u8,
                1 + n as u8 % 2,
                0x600 + n,
            );
            let status = if n == 3 { Status::Cancelled } else { Status::Active };
            Booking { id: n as u32 + 1, new, status, checked_in: n == 4, series: None }
        })
        .collect()
}

#[test]
fn a_panel_upgraded_from_the_ram_mirror_keeps_its_bookings_in_its_region_or_a_larger_one() {
    assert_eq!(MIRROR_LOG.trim().len(), 2 * PAGE * PAGES as usize);
    let expected = mirror_bookings();
    // Its own region, then one grown by a page before it (the old pages at 1 to 5).
    for (base, pages) in [(BASE, PAGES), (0, PAGES + 1)] {
        let context = format!("region of {pages} pages at {base}");
        let mut store = Sim::open(mirror_flash(), base, pages).unwrap();
        assert_eq!(all(&mut store), expected, "{context}");
        assert_eq!(store.has_old_pages(), Ok(false), "{context}: the old pages turned out at once");
        assert_eq!(store.epoch(), 2, "{context}");
        assert_eq!(store.boot(), Ok(3), "{context}");
        for b in &expected {
            assert_eq!(now(store.commit(&b.new)), Ok(Commit::Replayed(b.clone())), "{context}");
        }
        // The cancelled hour is free; ids go on after the old ones.
        let free = NewBooking { holder: [4; 8], nonce: [4; 8], ..expected[3].new.clone() };
        let Ok(Commit::Created(made)) = now(store.commit(&free)) else { panic!("{context}") };
        assert_eq!(made.id, 7, "{context}");
        churn(&mut store, 40);
        let mut store = Sim::open(store.into_flash(), base, pages).unwrap();
        ids_once(&mut store, &context);
        // All but the cancelled one, forgotten (the oldest) to make room for the churn's.
        assert_eq!(now(store.get(expected[3].id)), Ok(None), "{context}");
        for b in expected.iter().filter(|b| b.status == Status::Active).chain([&made]) {
            assert_eq!(now(store.get(b.id)).as_ref(), Ok(&Some(b.clone())), "{context}");
        }
        assert_eq!(store.epoch(), 3, "{context}");
    }
}

#[test]
fn a_power_cut_at_every_step_of_the_first_boot_after_an_upgrade_loses_nothing() {
    let expected = mirror_bookings();
    let mut cut = 0;
    loop {
        let mut flash = mirror_flash();
        flash.budget = Some(cut);
        // The first boot of the new image: cleaning the old log and turning its pages out.
        let first = FlashStore::<ProbeFlash<'_>>::open(ProbeFlash(&mut flash), BASE, PAGES).map(|_| ());
        let mut store = Sim::open(flash.revive(), BASE, PAGES).unwrap();
        let context = format!("cut at step {cut}");
        assert_eq!(all(&mut store), expected, "{context}");
        assert_eq!(store.epoch(), 2, "{context}");
        assert_eq!(store.has_old_pages(), Ok(false), "{context}");
        ids_once(&mut store, &context);
        if first.is_ok() {
            break;
        }
        cut += 1;
    }
    assert!(cut > 100, "the cuts went through the kills and the page turns: {cut}");
}
