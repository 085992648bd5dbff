//! The feeds' content: a room's bookings (others' titles as the floor's privacy rule says), the caller's own, and a room's free/busy, within a bounded range around now.

use std::collections::BTreeSet;

use jiff::tz::TimeZone;
use redmark_core::booking::{
    title_readable, Booking, BookingId, Floor, Minute, Room, Status, Store, StoreError,
};

use super::ics::{utc_stamp, utc_time, vtimezone, Ics};
use super::recur::{differs, group, recurrence, Entry, Recurrence};
use super::{Ask, Feed, FeedError, Route};

/// Days before today (UTC) a feed starts, at midnight.
pub const DAYS_BACK: u32 = 31;
/// Days after today (UTC) a feed ends, at the midnight after.
pub const DAYS_AHEAD: u32 = 366;
/// Bookings one feed holds at most (the earliest in the range; later ones come in as earlier
/// ones leave it).
pub const MAX_FEED_EVENTS: usize = 2000;
/// What a booking the caller may not read is called.
pub const BUSY: &str = "Busy";

/// Minutes in a day.
const DAY: Minute = 24 * 60;

/// The feed `ask` names from `store`, over the rooms of `floors`; `tag` makes event ids this
/// server's.
pub async fn write<S: Store>(
    floors: &'static [Floor<'static>],
    store: &mut S,
    ask: &Ask,
    tag: &str,
) -> Result<Feed, FeedError> {
    let now = (ask.now.as_second() / 60).clamp(0, i64::from(Minute::MAX)) as Minute;
    // Whole UTC days, so a feed's text (and its ETag) stays the same all day while its
    // bookings do: a calendar app polling it is answered 304.
    let today = now - now % DAY;
    let from = today.saturating_sub(DAYS_BACK * DAY);
    let to = today.saturating_add((DAYS_AHEAD + 1) * DAY);
    let mut list = Listing {
        bookings: Vec::new(),
        truncated: false,
    };
    let (name, busy_of) = match &ask.route {
        Route::Room(id) | Route::FreeBusy(id) => {
            let (_, room) = find(floors, id).ok_or(FeedError::UnknownRoom)?;
            room_bookings(store, id, from, to, &mut list).await?;
            let busy_of = matches!(ask.route, Route::FreeBusy(_)).then_some(room.id);
            (room.name, busy_of)
        }
        Route::Mine => {
            mine(store, ask, from, to, &mut list).await?;
            ("My room bookings", None)
        }
        Route::Index | Route::Unknown => return Err(FeedError::UnknownRoom),
    };
    let mut ics = Ics::calendar();
    ics.raw("METHOD", "PUBLISH");
    ics.text("X-WR-CALNAME", name);
    if list.truncated {
        ics.text(
            "X-WR-CALDESC",
            &format!(
                "Only the first {MAX_FEED_EVENTS} bookings from {} on: later ones appear as \
                 earlier ones leave the feed",
                utc_time(from)
            ),
        );
    }
    let stamp = utc_stamp(ask.now);
    if let Some(room) = busy_of {
        let uid = format!("freebusy-{room}@{tag}.redmark");
        free_busy(&mut ics, &list.bookings, (from, to), &stamp, &uid);
    } else {
        // From a day earlier: a room's feed holds the booking under way at its start too.
        zones(
            &mut ics,
            floors,
            &list.bookings,
            from.saturating_sub(DAY),
            to,
        );
        for entry in group(&list.bookings) {
            match entry {
                Entry::Alone(b) => {
                    let uid = uid(b.id, tag);
                    event(&mut ics, floors, b, ask, (&stamp, &uid), Recur::None);
                }
                Entry::Series(id, all) => series(&mut ics, floors, id, &all, ask, &stamp, tag),
            }
        }
    }
    Ok(Feed {
        body: ics.end_calendar(),
        truncated: list.truncated,
    })
}

/// The bookings a feed holds, in start order.
struct Listing {
    bookings: Vec<Booking>,
    truncated: bool,
}

impl Listing {
    /// Takes `b` unless the feed is full (then says so): whether to go on.
    fn take(&mut self, b: Booking) -> bool {
        if self.bookings.len() == MAX_FEED_EVENTS {
            self.truncated = true;
            return false;
        }
        self.bookings.push(b);
        true
    }
}

/// The floor and room with id `id`.
fn find(
    floors: &'static [Floor<'static>],
    id: &str,
) -> Option<(&'static Floor<'static>, &'static Room<'static>)> {
    floors
        .iter()
        .find_map(|f| f.rooms.iter().find(|r| r.id == id).map(|r| (f, r)))
}

/// Room `id`'s active bookings under way in `from..to`.
async fn room_bookings<S: Store>(
    store: &mut S,
    id: &str,
    mut from: Minute,
    to: Minute,
    list: &mut Listing,
) -> Result<(), StoreError> {
    while let Some(b) = store.next_in_room(id, from).await? {
        let s = b.new.span;
        // Only forward, within the range: a store that answered otherwise would walk for ever.
        if s.end <= from || s.start >= to {
            break;
        }
        from = s.end;
        if !list.take(b) {
            break;
        }
    }
    Ok(())
}

/// The caller's active and released bookings starting in `from..to`.
async fn mine<S: Store>(
    store: &mut S,
    ask: &Ask,
    from: Minute,
    to: Minute,
    list: &mut Listing,
) -> Result<(), StoreError> {
    let mut after = (from, String::new());
    while let Some(b) = store.next_held(&ask.holder, after.0, &after.1).await? {
        let key = (b.new.span.start, b.new.room.as_str());
        if key <= (after.0, after.1.as_str()) || b.new.span.start >= to {
            break;
        }
        after = (key.0, key.1.to_string());
        if !list.take(b) {
            break;
        }
    }
    Ok(())
}

/// A VTIMEZONE for each zone the bookings' rooms are on.
fn zones(
    ics: &mut Ics,
    floors: &'static [Floor<'static>],
    bookings: &[Booking],
    from: Minute,
    to: Minute,
) {
    let names: BTreeSet<&str> = bookings
        .iter()
        .filter_map(|b| find(floors, &b.new.room))
        .map(|(f, _)| f.zone.name())
        .collect();
    for name in names {
        if let Ok(tz) = TimeZone::get(name) {
            vtimezone(ics, &tz, name, from, to);
        }
    }
}

/// The UID of booking `id`'s event, `tag` the server's ([`super::uid_tag`]): the same in
/// every feed and in a CalDAV collection.
pub fn uid(id: BookingId, tag: &str) -> String {
    format!("bk_{id}@{tag}.redmark")
}

/// What a VEVENT says of its series.
enum Recur<'a> {
    /// It is of none.
    None,
    /// It is the series: its rule and exceptions, on this zone.
    Rule(&'a Recurrence),
    /// It is the instance the series' rule starts at this minute, on this zone.
    Instance(&'a TimeZone, &'a str, Minute),
}

/// The zone of the floor `b`'s room is on, and its name.
fn zone_of(floors: &'static [Floor<'static>], b: &Booking) -> Option<(TimeZone, &'static str)> {
    let (f, _) = find(floors, &b.new.room)?;
    Some((TimeZone::get(f.zone.name()).ok()?, f.zone.name()))
}

/// Series `id`'s occurrences (in start order) as one recurring VEVENT with the first's time,
/// room and title, and an instance of its own for each that differs (released, extended or
/// ended, in another room); written one by one on a floor whose zone is unknown.
fn series(
    ics: &mut Ics,
    floors: &'static [Floor<'static>],
    id: BookingId,
    all: &[&Booking],
    ask: &Ask,
    stamp: &str,
    tag: &str,
) {
    let Some((tz, name)) = zone_of(floors, all[0]) else {
        for b in all {
            let uid = uid(b.id, tag);
            event(ics, floors, b, ask, (stamp, &uid), Recur::None);
        }
        return;
    };
    let uid = format!("series-{id}@{tag}.redmark");
    let rule = recurrence(all, &tz);
    let mut first = all[0].clone();
    first.status = Status::Active;
    event(ics, floors, &first, ask, (stamp, &uid), Recur::Rule(&rule));
    for (b, at) in all.iter().zip(&rule.instances) {
        if differs(b, &first, &tz) {
            let recur = Recur::Instance(&tz, name, *at);
            event(ics, floors, b, ask, (stamp, &uid), recur);
        }
    }
}

/// One booking as a VEVENT (`stamp` its DTSTAMP, `uid` its UID), of a series as `recur` says.
fn event(
    ics: &mut Ics,
    floors: &'static [Floor<'static>],
    b: &Booking,
    ask: &Ask,
    (stamp, uid): (&str, &str),
    recur: Recur<'_>,
) {
    let found = find(floors, &b.new.room);
    ics.raw("BEGIN", "VEVENT");
    ics.raw("UID", uid);
    ics.raw("DTSTAMP", stamp);
    let span = b.new.span;
    match zone_of(floors, b) {
        Some((tz, name)) => {
            ics.local("DTSTART", &tz, name, span.start);
            ics.local("DTEND", &tz, name, span.end);
            if let Recur::Rule(r) = recur {
                ics.raw("RRULE", &r.rule);
                if !r.excluded.is_empty() {
                    ics.local_list("EXDATE", &tz, name, &r.excluded);
                }
            }
        }
        None => {
            ics.raw("DTSTART", &utc_time(span.start));
            ics.raw("DTEND", &utc_time(span.end));
        }
    }
    if let Recur::Instance(tz, name, at) = recur {
        ics.local("RECURRENCE-ID", tz, name, at);
    }
    let readable = match found {
        Some((f, _)) => title_readable(f, b, ask.holder, ask.operator),
        None => (b.new.holder == ask.holder).then_some(true),
    };
    let room_name = found.map_or(b.new.room.as_str(), |(_, r)| r.name);
    let summary = match readable {
        Some(_) if !b.new.title.is_empty() => b.new.title.as_str(),
        Some(true) => room_name,
        _ => BUSY,
    };
    ics.text("SUMMARY", summary);
    ics.text("LOCATION", room_name);
    let (status, sequence) = match b.status {
        Status::Active => ("CONFIRMED", "0"),
        Status::Cancelled | Status::Released => ("CANCELLED", "1"),
    };
    ics.raw("STATUS", status);
    ics.raw("SEQUENCE", sequence);
    ics.raw(
        "TRANSP",
        if status == "CONFIRMED" {
            "OPAQUE"
        } else {
            "TRANSPARENT"
        },
    );
    ics.raw("END", "VEVENT");
}

/// The room's busy times in `from..to` as one VFREEBUSY, touching bookings joined.
fn free_busy(
    ics: &mut Ics,
    bookings: &[Booking],
    (from, to): (Minute, Minute),
    stamp: &str,
    uid: &str,
) {
    ics.raw("BEGIN", "VFREEBUSY");
    ics.raw("UID", uid);
    ics.raw("DTSTAMP", stamp);
    ics.raw("DTSTART", &utc_time(from));
    ics.raw("DTEND", &utc_time(to));
    let mut busy: Vec<(Minute, Minute)> = Vec::new();
    for b in bookings {
        let (s, e) = (b.new.span.start.max(from), b.new.span.end.min(to));
        match busy.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => busy.push((s, e)),
        }
    }
    for (s, e) in busy {
        ics.raw(
            "FREEBUSY;FBTYPE=BUSY",
            &format!("{}/{}", utc_time(s), utc_time(e)),
        );
    }
    ics.raw("END", "VFREEBUSY");
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::{
        holder, Actor, Day, MemStore, NewBooking, Span, Tz, DEFAULT_FLOOR,
    };
    use redmark_core::Access;

    const DAY0: &str = "2026-12-07";

    fn floors(public_titles: bool) -> &'static [Floor<'static>] {
        let zone: &'static Tz = Box::leak(Box::new(Tz(TimeZone::get("Europe/Berlin").unwrap())));
        let floor = Floor {
            zone,
            public_titles,
            ..DEFAULT_FLOOR
        };
        Box::leak(Box::new([floor]))
    }

    fn at(h: u32, m: u32) -> Minute {
        Day::parse(DAY0).unwrap().first_minute() + h * 60 + m
    }

    fn ask(route: Route, who: &[u8]) -> Ask {
        Ask {
            route,
            holder: holder(who),
            operator: false,
            now: jiff::Timestamp::from_second(i64::from(at(0, 0)) * 60).unwrap(),
        }
    }

    async fn book(
        s: &mut MemStore<4096>,
        who: &[u8],
        room: &str,
        from: Minute,
        to: Minute,
        title: &str,
    ) -> u32 {
        let new = NewBooking {
            room: room.try_into().unwrap(),
            span: Span::new(from, to).unwrap(),
            title: title.try_into().unwrap(),
            attendees: 0,
            holder: holder(who),
            nonce: nonce(room, from, to),
        };
        match s.commit(&new).await.unwrap() {
            redmark_core::booking::Commit::Created(b) => b.id,
            other => panic!("{other:?}"),
        }
    }

    fn nonce(room: &str, from: Minute, to: Minute) -> redmark_core::seal::Nonce {
        let mut n = redmark_core::seal::Nonce::default();
        n[..4].copy_from_slice(&from.to_be_bytes());
        n[4..8].copy_from_slice(&(to ^ (room.len() as u32) << 28).to_be_bytes());
        n
    }

    /// Runs `f` on a thread with room for a store of thousands of bookings on its stack.
    fn run<F: std::future::Future<Output = ()> + Send + 'static>(f: F) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let t = std::thread::Builder::new().stack_size(64 << 20);
        t.spawn(move || rt.block_on(f)).unwrap().join().unwrap();
    }

    /// Asked again later the same day, every feed is the same text but its DTSTAMP lines.
    #[test]
    fn a_feed_asked_later_the_same_day_is_unchanged() {
        run(async {
            let mut s = Box::new(MemStore::<4096>::new());
            book(&mut s, b"alice", "atrium", at(9, 0), at(10, 0), "Board").await;
            let floors = floors(true);
            for route in [
                Route::Room("atrium".into()),
                Route::FreeBusy("atrium".into()),
                Route::Mine,
            ] {
                let mut bodies = Vec::new();
                for (h, m) in [(0, 1), (13, 37), (23, 59)] {
                    let mut a = ask(route.clone(), b"alice");
                    a.now = jiff::Timestamp::from_second(i64::from(at(h, m)) * 60).unwrap();
                    let feed = write(floors, &mut *s, &a, "t").await.unwrap();
                    let lines = feed
                        .body
                        .split("\r\n")
                        .filter(|l| !l.starts_with("DTSTAMP:"));
                    bodies.push(lines.collect::<Vec<_>>().join("\n"));
                }
                assert_eq!(bodies[0], bodies[1], "{route:?}");
                assert_eq!(bodies[0], bodies[2], "{route:?}");
            }
        });
    }

    #[test]
    fn a_room_feed_names_only_what_its_reader_may_read() {
        run(async {
            let mut s = Box::new(MemStore::<4096>::new());
            book(
                &mut s,
                b"alice",
                "atrium",
                at(9, 0),
                at(10, 0),
                "Board; review",
            )
            .await;
            book(
                &mut s,
                b"bob",
                "atrium",
                at(10, 0),
                at(11, 30),
                "Bob's secret",
            )
            .await;
            let room = Route::Room("atrium".into());
            let private = write(floors(false), &mut *s, &ask(room.clone(), b"alice"), "t")
                .await
                .unwrap();
            let body = private.body;
            assert!(body.contains("SUMMARY:Board\\; review\r\n"), "{body}");
            assert!(!body.contains("secret"), "{body}");
            assert!(body.contains("SUMMARY:Busy\r\n"));
            assert!(body.contains("DTSTART;TZID=Europe/Berlin:20261207T100000\r\n"));
            assert!(body.contains("DTEND;TZID=Europe/Berlin:20261207T123000\r\n"));
            assert!(body.contains("BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n"));
            assert!(body.contains("UID:bk_1@t.redmark\r\n"));
            assert!(!body.contains("ORGANIZER"), "the store names no organiser");
            let public = write(floors(true), &mut *s, &ask(room, b"carol"), "t")
                .await
                .unwrap();
            assert!(public.body.contains("SUMMARY:Bob's secret\r\n"));
            let err = write(
                floors(true),
                &mut *s,
                &ask(Route::Room("attic".into()), b"a"),
                "t",
            )
            .await;
            assert_eq!(err.unwrap_err(), FeedError::UnknownRoom);
        });
    }

    #[test]
    fn mine_holds_released_bookings_as_cancelled_and_not_others() {
        run(async {
            let mut s = Box::new(MemStore::<4096>::new());
            book(&mut s, b"alice", "nook", at(8, 0), at(9, 0), "").await;
            book(&mut s, b"alice", "atrium", at(9, 0), at(10, 0), "Planning").await;
            book(&mut s, b"bob", "atrium", at(11, 0), at(12, 0), "Bob's").await;
            let floor = redmark_core::booking::Actor::floor(0, 1);
            let released = s.release_due(at(8, 30), 15, &floor).await.unwrap().unwrap();
            assert_eq!(released.new.room.as_str(), "nook");
            let body = write(floors(false), &mut *s, &ask(Route::Mine, b"alice"), "t")
                .await
                .unwrap()
                .body;
            assert_eq!(body.matches("BEGIN:VEVENT").count(), 2, "{body}");
            assert!(!body.contains("Bob"));
            let nook = &body[body.find("UID:bk_1@").unwrap()..];
            assert!(
                nook.contains("SUMMARY:The Nook\r\n"),
                "own untitled: the room"
            );
            assert!(nook.starts_with("UID:bk_1@t.redmark\r\n"));
            let nook = &nook[..nook.find("END:VEVENT").unwrap()];
            assert!(
                nook.contains("STATUS:CANCELLED\r\nSEQUENCE:1\r\n"),
                "{nook}"
            );
            assert!(body.contains("SUMMARY:Planning\r\n"));
            assert!(body.contains("STATUS:CONFIRMED\r\n"));
            // A cancelled booking leaves the feed (the store's reads walk active and released
            // ones only).
            let by = Actor::of(b"alice", 0, Access::USER);
            s.cancel(2, &by).await.unwrap().unwrap();
            let body = write(floors(false), &mut *s, &ask(Route::Mine, b"alice"), "t")
                .await
                .unwrap()
                .body;
            assert!(!body.contains("Planning"));
        });
    }

    #[test]
    fn free_busy_joins_touching_bookings_and_names_nothing() {
        run(async {
            let mut s = Box::new(MemStore::<4096>::new());
            book(&mut s, b"alice", "atrium", at(9, 0), at(10, 0), "Secret").await;
            book(&mut s, b"bob", "atrium", at(10, 0), at(10, 30), "Other").await;
            book(&mut s, b"bob", "atrium", at(13, 0), at(14, 0), "").await;
            let fb = Route::FreeBusy("atrium".into());
            let body = write(floors(true), &mut *s, &ask(fb, b"alice"), "t")
                .await
                .unwrap()
                .body;
            assert!(
                body.contains("FREEBUSY;FBTYPE=BUSY:20261207T090000Z/20261207T103000Z\r\n"),
                "{body}"
            );
            assert!(body.contains("FREEBUSY;FBTYPE=BUSY:20261207T130000Z/20261207T140000Z\r\n"));
            assert!(!body.contains("Secret") && !body.contains("VEVENT"));
            assert!(body.contains("UID:freebusy-atrium@t.redmark\r\n"));
        });
    }

    #[test]
    fn a_feed_stops_at_its_bound_and_says_so() {
        run(async {
            let mut s = Box::new(MemStore::<4096>::new());
            let start = at(0, 0);
            for i in 0..(MAX_FEED_EVENTS as u32 + 3) {
                book(
                    &mut s,
                    b"a",
                    "nook",
                    start + i * 15,
                    start + i * 15 + 15,
                    "",
                )
                .await;
            }
            let feed = write(
                floors(false),
                &mut *s,
                &ask(Route::Room("nook".into()), b"z"),
                "t",
            )
            .await
            .unwrap();
            assert!(feed.truncated);
            assert_eq!(feed.body.matches("BEGIN:VEVENT").count(), MAX_FEED_EVENTS);
            assert!(feed
                .body
                .contains("X-WR-CALDESC:Only the first 2000 bookings from"));
        });
    }
}
