//! Spans and titles on flash: overlaps clash and touching spans do not, titles are carried
//! into new pages and through a cancel, and a panel upgraded from the image that booked whole
//! hours opens its flash log with every booking and its boot epoch.

use super::*;

/// The log the whole-hour image (commit f10e078, `FlashStore` with kind-1 booking records)
/// wrote on these tests' flash, page 0 from slot 0, as its own tests' `new_booking` made the
/// bookings: header; boot 1; bk_1 atrium 2026-09-21 15:00; bk_2 `abcdefghijklmnopqrstuvwx`
/// 2026-09-22 09:00; bk_3 nook 2026-09-21 16:00; bk_3 cancelled; boot 2. Dumped by running
/// that image's store on this `SimFlash`, not written by the code under test.
const WHOLE_HOUR_LOG: [&str; 7] = [
    "524d4b50010000000100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000043af7e04",
    "02000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000080815157",
    "0100060001000000ea0709150f2d00000101010101010101111100000000000061747269756d000000000000000000000000000000000000000000003a6d4406",
    "0100180002000000ea070916091b0000020202020202020222220000000000006162636465666768696a6b6c6d6e6f7071727374757677780000000020e8532e",
    "0100040003000000ea07091510300000010101010101010133330000000000006e6f6f6b000000000000000000000000000000000000000000000000abd665ec",
    "0101040003000000ea07091510300000010101010101010133330000000000006e6f6f6b0000000000000000000000000000000000000000000000005ad32985",
    "020000000200000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000f9b5ee71",
];

/// The whole-hour image's store geometry in its tests: 4 pages (of 8 slots: 8 titled
/// bookings, see `load`).
type WholeHourGeometry = FlashStore<SimFlash>;
const WHOLE_HOUR_PAGES: u32 = 4;

/// The tests' flash as the whole-hour image left it: page 0 erased and written, the others
/// as the factory left them.
fn whole_hour_flash() -> SimFlash {
    let mut f = SimFlash::new();
    let page0 = BASE as usize;
    f.mem[page0..page0 + PAGE].fill(0xFF);
    for (slot, hex) in WHOLE_HOUR_LOG.iter().enumerate() {
        for (i, byte) in hex.as_bytes().chunks(2).enumerate() {
            let byte = u8::from_str_radix(std::str::from_utf8(byte).unwrap(), 16).unwrap();
            f.mem[page0 + slot * SLOT + i] = byte;
        }
    }
    f
}

/// A booking of the whole hour as the whole-hour image made it (no title).
fn whole_hour(
    id: BookingId,
    room: &str,
    day: u8,
    hour: u8,
    holder: u8,
    nonce: u64,
    status: Status,
) -> Booking {
    let mut new = new_booking(room, day, hour, holder, nonce);
    new.title.clear();
    Booking { id, new, status, checked_in: false, series: None }
}

/// Books and cancels `rounds` times in a room of its own (with and without titles), so the
/// ring turns and pages are opened with the other bookings carried into them.
pub(super) fn churn(store: &mut FlashStore<SimFlash>, rounds: u64) {
    for i in 0..rounds {
        let n = new_booking("churn", 1 + (i % 28) as u8, (i % 24) as u8, 9, 0xC000 + i);
        let Commit::Created(b) = now(store.commit(&n)).unwrap() else { panic!("churn {i}") };
        now(store.cancel(b.id, &Actor::holder(b.new.holder))).unwrap();
    }
}

#[test]
fn a_panel_upgraded_from_whole_hours_keeps_its_bookings_and_epoch() {
    let mut store = WholeHourGeometry::open(whole_hour_flash(), BASE, WHOLE_HOUR_PAGES).unwrap();
    let expected = [
        whole_hour(1, "atrium", 21, 15, 1, 0x1111, Status::Active),
        whole_hour(2, "abcdefghijklmnopqrstuvwx", 22, 9, 2, 0x2222, Status::Active),
        whole_hour(3, "nook", 21, 16, 1, 0x3333, Status::Cancelled),
    ];
    assert_eq!(all(&mut store), expected);
    assert_eq!(store.epoch(), 2);
    assert_eq!(store.boot(), Ok(3));
    // bk_1 holds 15:00–16:00: half an hour into it is taken, its own operation replays.
    let mut half = new_booking("atrium", 21, 15, 4, 0x4444);
    half.span = moved(&half, 30, 60);
    assert_eq!(now(store.commit(&half)), Ok(Commit::Taken(expected[0].clone())));
    assert_eq!(now(store.commit(&expected[0].new)), Ok(Commit::Replayed(expected[0].clone())));
    // The cancelled hour is free; ids go on after the old ones.
    let nook = new_booking("nook", 21, 16, 4, 0x4445);
    let Ok(Commit::Created(made)) = now(store.commit(&nook)) else { panic!() };
    assert_eq!(made.id, 4);
    // Page after page is opened: the old bookings are carried along, now as kind 3.
    churn(&mut store, 60);
    let mut store = WholeHourGeometry::open(store.into_flash(), BASE, WHOLE_HOUR_PAGES).unwrap();
    for b in &expected[..2] {
        assert_eq!(now(store.get(b.id)), Ok(Some(b.clone())));
        let h = helds(&mut store).into_iter().find(|h| h.id == b.id).unwrap();
        assert_eq!(store.read(h.page.into(), h.slot.into()).unwrap()[0], KIND_BOOKING, "rewritten");
    }
    assert_eq!(now(store.get(made.id)), Ok(Some(made)));
    assert_eq!(store.epoch(), 3);
}

#[test]
fn an_overlap_is_a_clash_and_touching_is_not() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    let base = new_booking("nook", 21, 9, 1, 1);
    let at = |from: i32, minutes: u32, nonce: u64| NewBooking {
        span: moved(&base, from, minutes),
        nonce: nonce.to_le_bytes(),
        ..base.clone()
    };
    // 09:30–10:15.
    let Ok(Commit::Created(first)) = now(store.commit(&at(30, 45, 10))) else { panic!() };
    for (from, minutes, nonce) in [(60, 60, 11), (0, 31, 12), (0, 120, 13), (40, 5, 14)] {
        let got = now(store.commit(&at(from, minutes, nonce)));
        assert_eq!(got, Ok(Commit::Taken(first.clone())), "{from} +{minutes}");
    }
    for (from, minutes, nonce) in [(75, 45, 20), (0, 30, 21)] {
        let got = now(store.commit(&at(from, minutes, nonce)));
        assert!(matches!(got, Ok(Commit::Created(_))), "{from} +{minutes}: {got:?}");
    }
    let other_room = NewBooking { room: RoomId::try_from("atrium").unwrap(), ..at(30, 45, 22) };
    assert!(matches!(now(store.commit(&other_room)), Ok(Commit::Created(_))));
    // Cancelled, it clashes no more: 09:45–10:00 fits where it was.
    now(store.cancel(first.id, &Actor::holder(first.new.holder))).unwrap();
    assert!(matches!(now(store.commit(&at(45, 15, 23))), Ok(Commit::Created(_))));
    // The room's bookings from 09:00 on: the one under way at 10:00 first.
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    let spans: Vec<_> = room_day(&mut store, "nook", Day { year: 2026, month: 9, day: 21 })
        .into_iter()
        .map(|(s, _)| (s.start - base.span.start, s.minutes()))
        .collect();
    assert_eq!(spans, [(0, 30), (45, 15), (75, 45)]);
    let under_way = now(store.next_in_room("nook", base.span.start + 80)).unwrap().unwrap();
    assert_eq!(under_way.new.span, moved(&base, 75, 45));
}

#[test]
fn titles_are_carried_into_new_pages_and_through_a_cancel() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    let long = new_booking("nook", 1, 9, 1, 3);
    let short = new_booking("atrium", 1, 9, 1, 1);
    let untitled = new_booking("studio-b", 1, 9, 1, 2);
    assert_eq!(
        (long.title.as_str(), short.title.as_str(), untitled.title.as_str()),
        (LONG_TITLE, "Design review", "")
    );
    let mut made = Vec::new();
    for n in [&long, &short, &untitled] {
        let Ok(Commit::Created(b)) = now(store.commit(n)) else { panic!() };
        assert_eq!(b.new, *n);
        made.push(b);
    }
    churn(&mut store, 40);
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    for b in &made {
        assert_eq!(now(store.get(b.id)), Ok(Some(b.clone())), "after the ring turned");
    }
    let cancelled = now(store.cancel(made[0].id, &Actor::holder(long.holder))).unwrap().unwrap();
    assert_eq!((cancelled.status, cancelled.new.title.as_str()), (Status::Cancelled, LONG_TITLE));
    // Boots turn the ring without new bookings (which would push the cancelled one out).
    for _ in 0..40 {
        store.boot().unwrap();
    }
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    assert_eq!(now(store.get(made[0].id)), Ok(Some(cancelled)));
    assert_eq!(now(store.made_by(&short.holder, &short.nonce)), Ok(Some(made[1].clone())));
    let erases = store.into_flash().erases;
    assert!(erases[1..=PAGES as usize].iter().all(|&e| e >= 2), "the ring turned twice: {erases:?}");
}

#[test]
fn a_booking_whose_title_record_went_bad_keeps_the_booking_without_it() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    let n = new_booking("nook", 1, 9, 1, 1);
    let Ok(Commit::Created(b)) = now(store.commit(&n)) else { panic!() };
    let h = helds(&mut store)[0].clone();
    let at = store.addr(h.page.into(), u32::from(h.slot) - 1) as usize + TITLE_AT;
    let mut flash = store.into_flash();
    flash.mem[at] &= 0x0F;
    let mut store = Sim::open(flash, BASE, PAGES).unwrap();
    let mut untitled = b.clone();
    untitled.new.title.clear();
    assert_eq!(now(store.get(b.id)), Ok(Some(untitled.clone())));
    // It still holds its hour, and goes on without a title.
    assert_eq!(now(store.commit(&new_booking("nook", 1, 9, 2, 2))), Ok(Commit::Taken(untitled.clone())));
    churn(&mut store, 40);
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    assert_eq!(now(store.get(b.id)), Ok(Some(untitled)));
}
