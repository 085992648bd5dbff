//! Check-in and release on flash: a booking checked in stays, one nobody checked in to is
//! released once when its window passes, both as they were after a reboot.

use super::*;

/// The releaser (the flash log keeps no trail).
const FLOOR: Actor = Actor::floor(0, 0);

#[test]
fn a_check_in_keeps_a_booking_and_a_no_show_is_released_once_through_a_reboot() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    let Commit::Created(kept) = now(store.commit(&new_booking("nook", 1, 9, 1, 1))).unwrap() else {
        panic!()
    };
    let Commit::Created(gone) = now(store.commit(&new_booking("atrium", 1, 9, 1, 2))).unwrap() else {
        panic!()
    };
    let holder = kept.new.holder;
    assert_eq!(now(store.check_in(kept.id, &Actor::holder([9; 8]))), Ok(None), "not theirs");
    let checked = Booking { checked_in: true, ..kept.clone() };
    assert_eq!(now(store.check_in(kept.id, &Actor::holder(holder))), Ok(Some(checked.clone())));
    assert_eq!(now(store.check_in(kept.id, &Actor::holder(holder))), Ok(Some(checked.clone())), "again");
    let start = kept.new.span.start;
    assert_eq!(now(store.release_due(start + 9, 10, &FLOOR)), Ok(None), "inside the window");
    let released = Booking { status: Status::Released, ..gone.clone() };
    assert_eq!(now(store.release_due(start + 10, 10, &FLOOR)), Ok(Some(released.clone())));
    assert_eq!(now(store.release_due(start + 10, 10, &FLOOR)), Ok(None), "released once");
    assert_eq!(now(store.check_in(gone.id, &Actor::holder(holder))), Ok(Some(released.clone())), "too late");
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    assert_eq!(now(store.get(kept.id)), Ok(Some(checked)), "after a reboot");
    assert_eq!(now(store.get(gone.id)), Ok(Some(released)));
    let theirs = NewBooking { holder: [9; 8], ..new_booking("atrium", 1, 9, 1, 3) };
    assert!(matches!(now(store.commit(&theirs)), Ok(Commit::Created(_))), "its time is free");
}

#[test]
fn release_in_one_room_leaves_the_other_rooms_no_shows() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    let Commit::Created(other) = now(store.commit(&new_booking("nook", 1, 9, 1, 1))).unwrap() else {
        panic!()
    };
    let Commit::Created(door) = now(store.commit(&new_booking("atrium", 1, 9, 1, 2))).unwrap() else {
        panic!()
    };
    let start = door.new.span.start;
    assert_eq!(now(store.release_due(start + 9, 10, &FLOOR)), Ok(None), "inside the window");
    let released = Booking { status: Status::Released, ..door.clone() };
    assert_eq!(store.release_due_in("atrium", start + 10, 10), Ok(Some(released.clone())));
    assert_eq!(store.release_due_in("atrium", start + 10, 10), Ok(None), "released once");
    assert_eq!(now(store.get(other.id)), Ok(Some(other.clone())), "another room's: untouched");
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    assert_eq!(now(store.get(door.id)), Ok(Some(released)), "after a reboot");
    assert_eq!(now(store.get(other.id)), Ok(Some(other)));
}
