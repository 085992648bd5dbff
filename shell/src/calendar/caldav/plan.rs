//! The reconciliation decision, a pure function: a room's bookings in the window and the events in its collection in, what to write, delete, book and cancel out.

use std::collections::{BTreeMap, BTreeSet};

use redmark_core::booking::{Booking, BookingId, Holder, Minute, Span};
use redmark_core::seal::Nonce;

/// An event in a room's collection, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// Its path on the server.
    pub href: String,
    /// Its ETag, quoted as the server sent it.
    pub etag: String,
    /// What it is.
    pub kind: Kind,
}

/// Whose an event is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One redmark wrote for booking `id`, with the state it carried (`X-REDMARK-STATE`).
    Ours {
        /// The booking.
        id: BookingId,
        /// What it said of the booking when written, while it still shows that (none: edited
        /// since, or no marker).
        state: Option<String>,
    },
    /// One someone else wrote.
    Foreign(Foreign),
    /// One that cannot hold a slot (not iCalendar, recurring, no time): left alone, logged.
    Unreadable(String),
}

/// An event someone else wrote, as far as it holds a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Foreign {
    /// Its UID.
    pub uid: String,
    /// Its time in UTC minutes.
    pub span: Span,
    /// Its SUMMARY (empty: none).
    pub title: String,
    /// Whether it says `STATUS:CANCELLED` (it then holds nothing).
    pub cancelled: bool,
    /// Its SEQUENCE.
    pub sequence: u32,
}

/// A booking of ours to write: its event's href and the state it should say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Put {
    /// The booking.
    pub id: BookingId,
    /// Where its event lives (deterministic: every instance writes the same resource).
    pub href: String,
    /// `None`: create it (`If-None-Match: *`); `Some(etag)`: replace that version (`If-Match`).
    pub if_match: Option<String>,
}

/// What one pass does to a room, in this order: cancel `stale` mirror bookings, hold the
/// `hold` events (by their index in the listing, earliest first), write `put`, and delete the
/// events of `gone` unless their booking is still active (outside the window).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Mirror bookings whose event is gone, cancelled or moved.
    pub stale: Vec<BookingId>,
    /// Foreign events that should hold their slot.
    pub hold: Vec<usize>,
    /// Our bookings whose event is missing or out of date.
    pub put: Vec<Put>,
    /// Events of ours with no active booking of the room in the window: (booking, href, etag).
    pub gone: Vec<(BookingId, String, String)>,
}

/// The href of booking `id`'s event in `collection` (ending in `/`), `tag` the server's.
pub fn href_of(collection: &str, id: BookingId, tag: &str) -> String {
    format!("{collection}redmark-bk_{id}-{tag}.ics")
}

/// How many times a foreign event is booked again after its booking was cancelled in
/// redmark (each time under the next nonce); past that it is marked cancelled instead.
pub const MAX_REBOOKS: u32 = 16;

/// The nonce of the `round`th booking of a foreign event at `span`: the same on every
/// instance, so a retry or another instance books it at most once.
pub fn nonce_of(uid: &str, span: Span, round: u32) -> Nonce {
    use sha2::{Digest, Sha256};
    let d = Sha256::new()
        .chain_update(b"redmark caldav event v1")
        .chain_update((uid.len() as u32).to_be_bytes())
        .chain_update(uid.as_bytes())
        .chain_update(span.start.to_be_bytes())
        .chain_update(span.end.to_be_bytes())
        .chain_update(round.to_be_bytes())
        .finalize();
    let mut n = Nonce::default();
    let len = n.len();
    n.copy_from_slice(&d[..len]);
    n
}

/// The plan for a room whose active bookings in `window` are `local` (each with the state its
/// event should say), whose collection (`collection`, ending in `/`) holds `remote`; mirror
/// bookings are `mirror`'s, our events carry `tag`.
pub fn plan(
    local: &[(Booking, String)],
    remote: &[Remote],
    mirror: Holder,
    collection: &str,
    tag: &str,
    window: (Minute, Minute),
) -> Plan {
    let mut out = Plan::default();
    // The nonces a current foreign event's booking may carry.
    let mut current: BTreeSet<Nonce> = BTreeSet::new();
    let mut hold: Vec<(Span, &str, usize)> = Vec::new();
    let mut ours: BTreeMap<BookingId, (&Remote, Option<&str>)> = BTreeMap::new();
    for (i, r) in remote.iter().enumerate() {
        match &r.kind {
            Kind::Foreign(f) if !f.cancelled && in_window(f.span, window) => {
                current.extend((0..MAX_REBOOKS).map(|n| nonce_of(&f.uid, f.span, n)));
                hold.push((f.span, &f.uid, i));
            }
            Kind::Ours { id, state } => {
                // Two resources for one booking (one written by hand): the first kept.
                ours.entry(*id).or_insert((r, state.as_deref()));
            }
            _ => {}
        }
    }
    hold.sort();
    out.hold = hold.into_iter().map(|(_, _, i)| i).collect();
    let mut seen = BTreeSet::new();
    for (b, state) in local {
        if b.new.holder == mirror {
            if !current.contains(&b.new.nonce) {
                out.stale.push(b.id);
            }
            continue;
        }
        seen.insert(b.id);
        let href = href_of(collection, b.id, tag);
        match ours.get(&b.id) {
            Some((_, Some(s))) if *s == state.as_str() => {}
            Some((r, _)) => out.put.push(Put {
                id: b.id,
                href: r.href.clone(),
                if_match: Some(r.etag.clone()),
            }),
            None => out.put.push(Put {
                id: b.id,
                href,
                if_match: None,
            }),
        }
    }
    for (id, (r, _)) in ours {
        if !seen.contains(&id) {
            out.gone.push((id, r.href.clone(), r.etag.clone()));
        }
    }
    out
}

/// Whether `span` shares a minute with `window`.
fn in_window(span: Span, (from, to): (Minute, Minute)) -> bool {
    span.start < to && from < span.end
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::{holder, Day, NewBooking, Status};

    const COL: &str = "/cal/atrium/";
    const TAG: &str = "t1";

    fn at(h: u32) -> Minute {
        Day::parse("2026-12-07").unwrap().first_minute() + h * 60
    }

    fn window() -> (Minute, Minute) {
        (at(0), at(24 * 30))
    }

    fn mirror() -> Holder {
        holder(b"caldav mirror")
    }

    fn booking(id: BookingId, who: Holder, h: u32, nonce: Nonce) -> Booking {
        Booking {
            id,
            new: NewBooking {
                room: "atrium".try_into().unwrap(),
                span: Span::new(at(h), at(h + 1)).unwrap(),
                title: "".try_into().unwrap(),
                attendees: 0,
                holder: who,
                nonce,
            },
            status: Status::Active,
            checked_in: false,
            series: None,
        }
    }

    fn ours(id: BookingId, state: Option<&str>) -> Remote {
        Remote {
            href: href_of(COL, id, TAG),
            etag: format!("\"e{id}\""),
            kind: Kind::Ours {
                id,
                state: state.map(str::to_owned),
            },
        }
    }

    fn foreign(uid: &str, h: u32, cancelled: bool) -> Remote {
        Remote {
            href: format!("{COL}{uid}.ics"),
            etag: "\"f\"".into(),
            kind: Kind::Foreign(Foreign {
                uid: uid.into(),
                span: Span::new(at(h), at(h + 1)).unwrap(),
                title: "Standup".into(),
                cancelled,
                sequence: 0,
            }),
        }
    }

    fn run(local: &[(Booking, String)], remote: &[Remote]) -> Plan {
        plan(local, remote, mirror(), COL, TAG, window())
    }

    #[test]
    fn a_new_booking_is_created_an_unchanged_one_left_a_changed_one_replaced() {
        let alice = holder(b"alice");
        let local = [
            (booking(1, alice, 9, [1; 8]), "s1".to_string()),
            (booking(2, alice, 10, [2; 8]), "s2".to_string()),
            (booking(3, alice, 11, [3; 8]), "s3".to_string()),
        ];
        let remote = [ours(2, Some("s2")), ours(3, Some("old"))];
        let p = run(&local, &remote);
        assert_eq!(
            p.put,
            vec![
                Put {
                    id: 1,
                    href: "/cal/atrium/redmark-bk_1-t1.ics".into(),
                    if_match: None
                },
                Put {
                    id: 3,
                    href: "/cal/atrium/redmark-bk_3-t1.ics".into(),
                    if_match: Some("\"e3\"".into())
                },
            ]
        );
        assert!(p.stale.is_empty() && p.hold.is_empty() && p.gone.is_empty());
    }

    #[test]
    fn an_event_of_ours_without_its_booking_is_gone_and_a_missing_state_is_rewritten() {
        let local = [(booking(5, holder(b"a"), 9, [5; 8]), "s5".to_string())];
        let p = run(&local, &[ours(4, Some("x")), ours(5, None)]);
        assert_eq!(
            p.gone,
            vec![(4, href_of(COL, 4, TAG), "\"e4\"".to_string())]
        );
        assert_eq!(p.put.len(), 1);
        assert_eq!(p.put[0].if_match.as_deref(), Some("\"e5\""));
    }

    #[test]
    fn foreign_events_are_held_earliest_first_unless_cancelled_or_outside_the_window() {
        let remote = [
            foreign("late", 15, false),
            foreign("gone", 9, true),
            foreign("early", 8, false),
            foreign("past", 0, false),
            Remote {
                href: "x".into(),
                etag: "e".into(),
                kind: Kind::Unreadable("recurring".into()),
            },
        ];
        let mut p = plan(&[], &remote, mirror(), COL, TAG, (at(1), at(100)));
        assert_eq!(p.hold, vec![2, 0]);
        p.hold.clear();
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn a_mirror_booking_stays_while_its_event_does_and_is_stale_once_it_moves_or_goes() {
        let f = foreign("standup", 9, false);
        let Kind::Foreign(ev) = &f.kind else {
            unreachable!()
        };
        let held = booking(7, mirror(), 9, nonce_of("standup", ev.span, 0));
        let rebooked = booking(8, mirror(), 9, nonce_of("standup", ev.span, 3));
        let local = [(held.clone(), String::new()), (rebooked, String::new())];
        let p = run(&local, std::slice::from_ref(&f));
        assert!(p.stale.is_empty(), "{p:?}");
        assert!(
            p.put.is_empty(),
            "a mirror booking is never written back as ours"
        );
        // Moved an hour later: the booking at the old time is stale.
        let p = run(&local[..1], &[foreign("standup", 10, false)]);
        assert_eq!(p.stale, vec![7]);
        // Cancelled in the calendar, or deleted: stale too.
        assert_eq!(
            run(&local[..1], &[foreign("standup", 9, true)]).stale,
            vec![7]
        );
        assert_eq!(run(&local[..1], &[]).stale, vec![7]);
    }

    #[test]
    fn nonces_differ_by_event_time_and_round() {
        let s = Span::new(at(9), at(10)).unwrap();
        let t = Span::new(at(9), at(11)).unwrap();
        assert_eq!(nonce_of("a", s, 0), nonce_of("a", s, 0));
        assert_ne!(nonce_of("a", s, 0), nonce_of("a", s, 1));
        assert_ne!(nonce_of("a", s, 0), nonce_of("a", t, 0));
        assert_ne!(nonce_of("a", s, 0), nonce_of("b", s, 0));
    }
}
