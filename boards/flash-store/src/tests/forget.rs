//! Past meetings forgotten: a store full of active bookings that have ended takes new ones
//! once they are forgotten, keeps what has not ended, and a reboot agrees.

use super::*;

#[test]
fn ended_bookings_are_forgotten_and_make_room_for_new_ones() {
    let mut store = small(SimFlash::new());
    let mut made = Vec::new();
    // Six hours of 2026-09-01, all active: the store is full.
    for h in 0..6 {
        let Commit::Created(b) = now(store.commit(&new_booking("nook", 1, h, 1, u64::from(h)))).unwrap()
        else {
            panic!()
        };
        made.push(b);
    }
    let next = new_booking("nook", 2, 9, 1, 99);
    assert_eq!(now(store.commit(&next)), Err(StoreError::Full));
    // At 03:00 the hours 0, 1 and 2 have ended; at most two a call.
    let three = made[3].new.span.start;
    assert_eq!(store.forget_ended(three, 2), Ok(2));
    assert_eq!(store.forget_ended(three, 2), Ok(1));
    assert_eq!(store.forget_ended(three, 2), Ok(0), "the rest has not ended");
    for b in &made[..3] {
        assert_eq!(now(store.get(b.id)), Ok(None), "bk_{} forgotten", b.id);
    }
    assert!(matches!(now(store.commit(&next)), Ok(Commit::Created(_))));
    let mut store = small(store.into_flash());
    let kept: Vec<BookingId> = helds(&mut store).iter().map(|h| h.id).collect();
    assert_eq!(kept, [made[3].id, made[4].id, made[5].id, made[5].id + 1], "after a reboot");
}
