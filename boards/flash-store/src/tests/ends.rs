//! A booking's end moved on flash (`set_end`): later only into free time, earlier at once,
//! kept with its title through a reboot, and a power cut while it is written leaves the old
//! end or the new one, never neither.

use super::*;

/// `b` ending at minute `end` instead.
fn ending(b: &Booking, end: Minute) -> Booking {
    let mut b = b.clone();
    b.new.span = Span::new(b.new.span.start, end).unwrap();
    b
}

#[test]
fn an_end_moves_into_free_time_only_and_survives_a_reboot() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    // 09:00-10:00 titled; someone else's 10:30-11:30 in the same room.
    let mine = new_booking("nook", 1, 9, 1, 1);
    let Commit::Created(b) = now(store.commit(&mine)).unwrap() else { panic!() };
    let theirs = NewBooking { span: moved(&mine, 90, 60), ..new_booking("nook", 1, 9, 2, 2) };
    let Commit::Created(t) = now(store.commit(&theirs)).unwrap() else { panic!() };
    let (end, holder) = (b.new.span.end, b.new.holder);
    assert_eq!(now(store.set_end(b.id, &Actor::holder([9; 8]), end, end + 30)), Ok(None), "not theirs");
    assert_eq!(now(store.set_end(b.id, &Actor::holder(holder), end, end + 60)), Ok(Some(Resized::Taken(t))));
    let longer = ending(&b, end + 30);
    assert_eq!(
        now(store.set_end(b.id, &Actor::holder(holder), end, end + 30)),
        Ok(Some(Resized::Moved(longer.clone())))
    );
    assert_eq!(
        now(store.set_end(b.id, &Actor::holder(holder), end, end + 30)),
        Ok(Some(Resized::Moved(longer.clone())))
    );
    assert_eq!(
        now(store.set_end(b.id, &Actor::holder(holder), end, end + 15)),
        Ok(Some(Resized::Changed(longer.clone())))
    );
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    assert_eq!(now(store.get(b.id)), Ok(Some(longer)), "the new end, title and all, after a reboot");
    let shorter = ending(&b, end - 30);
    assert_eq!(
        now(store.set_end(b.id, &Actor::holder(holder), end + 30, end - 30)),
        Ok(Some(Resized::Moved(shorter.clone())))
    );
    let freed = NewBooking { span: moved(&mine, 30, 30), ..new_booking("nook", 1, 9, 3, 3) };
    assert!(matches!(now(store.commit(&freed)), Ok(Commit::Created(_))), "the time given back");
    let mut store = Sim::open(store.into_flash(), BASE, PAGES).unwrap();
    assert_eq!(helds(&mut store).iter().find(|h| h.id == b.id).map(|h| h.span), Some(shorter.new.span));
}

#[test]
fn a_power_cut_while_an_end_moves_leaves_the_old_end_or_the_new() {
    let mut store = Sim::open(SimFlash::new(), BASE, PAGES).unwrap();
    let Commit::Created(b) = now(store.commit(&new_booking("atrium", 2, 14, 1, 3))).unwrap() else {
        panic!()
    };
    let flash = store.into_flash();
    let (end, holder) = (b.new.span.end, b.new.holder);
    let mut cut = 0;
    loop {
        let mut f = flash.clone();
        f.budget = Some(cut);
        let mut store = Sim::open(f, BASE, PAGES).unwrap();
        let moved = now(store.set_end(b.id, &Actor::holder(holder), end, end + 45));
        let f = store.into_flash();
        let mut again = Sim::open(f.revive(), BASE, PAGES).unwrap();
        let got = now(again.get(b.id)).unwrap().expect("the booking is never lost");
        assert_eq!(got.new.title, b.new.title, "cut at step {cut}");
        match moved {
            Ok(_) => {
                assert_eq!(got, ending(&b, end + 45), "acknowledged at step {cut}");
                break;
            }
            Err(e) => {
                assert_eq!(e, StoreError::Io);
                assert!(got == b || got == ending(&b, end + 45), "cut at step {cut}: {got:?}");
            }
        }
        cut += 1;
    }
    assert!(cut > 10, "the cuts went through the writes: {cut}");
}
