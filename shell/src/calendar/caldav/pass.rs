//! One sync pass over one room: the store's bookings in the window and the collection's events read, the plan made, and carried out (store writes through the core's `Store`, server writes on a blocking thread).

use std::sync::Arc;

use jiff::tz::TimeZone;
use jiff::Timestamp;
use redmark_core::booking::{
    title_readable, Actor, Booking, Commit, Floor, Holder, Minute, NewBooking, Room, Status, Store,
    StoreError, Title,
};
use redmark_core::limits::MAX_TITLE;

use super::dav::{Dav, DavError, Listed, Written};
use super::event::{self, Ours};
use super::plan::{nonce_of, plan, Foreign, Kind, Remote, MAX_REBOOKS};
use super::seen::Seen;
use crate::calendar::feed::{uid, BUSY, DAYS_AHEAD, DAYS_BACK};

/// Bookings of one room one pass reads at most (the earliest in the window).
pub const MAX_SYNC_BOOKINGS: usize = 2000;

/// Minutes in a day.
const DAY: Minute = 24 * 60;

/// Why a room's pass stopped.
#[derive(Debug)]
pub enum PassError {
    /// The CalDAV server failed.
    Dav(DavError),
    /// The store failed.
    Store(StoreError),
    /// A blocking request's thread was lost.
    Lost,
}

impl std::fmt::Display for PassError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PassError::Dav(e) => write!(f, "CalDAV server {e}"),
            PassError::Store(e) => write!(f, "store: {e}"),
            PassError::Lost => f.write_str("a CalDAV request's thread was lost"),
        }
    }
}

impl From<StoreError> for PassError {
    fn from(e: StoreError) -> Self {
        PassError::Store(e)
    }
}

impl From<DavError> for PassError {
    fn from(e: DavError) -> Self {
        PassError::Dav(e)
    }
}

/// What a pass changes with: the server, our event tag and the mirror bookings' holder.
pub struct Sync {
    /// The CalDAV server.
    pub dav: Arc<Dav>,
    /// The feeds' UID tag (this server's keys).
    pub tag: String,
    /// Who holds the bookings made for others' events.
    pub mirror: Holder,
}

/// What one room's pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Done {
    /// Events written (ours, or others' marked cancelled).
    pub written: usize,
    /// Events of ours deleted.
    pub deleted: usize,
    /// Bookings made for others' events.
    pub held: usize,
    /// Mirror bookings cancelled (their event gone or moved).
    pub released: usize,
    /// Others' events refused (marked cancelled).
    pub refused: usize,
    /// Events that hold nothing: (href, why).
    pub unreadable: Vec<(String, String)>,
    /// Others' events the server would not take back marked cancelled: (UID, why).
    pub rejected: Vec<(String, String)>,
}

/// Runs `f` with the server on a blocking thread.
async fn blocking<T: Send + 'static>(
    dav: &Arc<Dav>,
    f: impl FnOnce(&Dav) -> Result<T, DavError> + Send + 'static,
) -> Result<T, PassError> {
    let dav = Arc::clone(dav);
    tokio::task::spawn_blocking(move || f(&dav))
        .await
        .map_err(|_| PassError::Lost)?
        .map_err(PassError::Dav)
}

/// `room`'s collection now, `seen` brought up to date on a blocking thread.
async fn refresh(
    dav: &Arc<Dav>,
    seen: &mut Seen,
    room: &'static str,
) -> Result<Vec<Listed>, PassError> {
    let (dav, mut mine) = (Arc::clone(dav), std::mem::take(seen));
    let (back, listed) = tokio::task::spawn_blocking(move || {
        let listed = mine.refresh(&dav, room);
        (mine, listed)
    })
    .await
    .map_err(|_| PassError::Lost)?;
    *seen = back;
    Ok(listed?)
}

/// One pass over `room` of `floor` at `now`, `seen` what is known of its collection.
pub async fn room<S: Store>(
    sync: &Sync,
    store: &mut S,
    seen: &mut Seen,
    floor: &Floor<'static>,
    room: &Room<'static>,
    now: Timestamp,
) -> Result<Done, PassError> {
    let mut done = Done::default();
    let tz = TimeZone::get(floor.zone.name()).unwrap_or(TimeZone::UTC);
    let now_m = (now.as_second() / 60).clamp(0, i64::from(Minute::MAX)) as Minute;
    let window = (
        now_m.saturating_sub(DAYS_BACK * DAY),
        now_m.saturating_add(DAYS_AHEAD * DAY),
    );
    // The store first: a booking another instance made for an event is then always older
    // than the listing, which holds that event unless it was deleted since (else this pass
    // would take that booking for a stale one and cancel it).
    let local = bookings(store, room.id, window).await?;
    let listed = refresh(&sync.dav, seen, room.id).await?;
    let (remote, data) = read_all(listed, &sync.tag, &tz, &mut done);
    let summarised: Vec<(Booking, String)> = local
        .into_iter()
        .map(|b| {
            let s = summary(floor, &b).to_owned();
            let state = event::state(&b, &s);
            (b, state)
        })
        .collect();
    let collection = sync.dav.path(&sync.dav.collection(room.id));
    let p = plan(
        &summarised,
        &remote,
        sync.mirror,
        &collection,
        &sync.tag,
        window,
    );
    let actor = Actor::holder(sync.mirror);
    for id in p.stale {
        store.cancel(id, &actor).await?;
        done.released += 1;
    }
    for i in p.hold {
        let Kind::Foreign(f) = &remote[i].kind else {
            continue;
        };
        let refusal = match hold(store, sync.mirror, &actor, room.id, f).await? {
            Held::Yes(new) => {
                done.held += usize::from(new);
                continue;
            }
            Held::Taken(b) => format!(
                "Not booked: {} is booked from {} to {} ({}) in redmark, which keeps its \
                 rooms' bookings",
                room.name,
                event::wall(&tz, b.new.span.start),
                event::wall(&tz, b.new.span.end),
                floor.zone.name()
            ),
            Held::CancelledInRedmark => format!(
                "Not booked: its booking of {} was cancelled in redmark {MAX_REBOOKS} times",
                room.name
            ),
        };
        let Some(body) = event::cancelled(&data[i], f.sequence, &refusal) else {
            continue;
        };
        let (href, etag) = (remote[i].href.clone(), remote[i].etag.clone());
        match blocking(&sync.dav, move |d| d.put(&href, &body, Some(&etag))).await {
            Ok(Written::Done) => {
                done.refused += 1;
                tracing::info!(room = room.id, uid = %f.uid, "CalDAV: {refusal}");
            }
            Ok(Written::Lost) => {}
            // The server refused the event as rewritten (it holds nothing here either way):
            // said, and the room's other changes still made.
            Err(PassError::Dav(e @ DavError::Status(..))) => {
                done.rejected.push((f.uid.clone(), e.to_string()));
            }
            Err(e) => return Err(e),
        }
    }
    for put in p.put {
        let Some(b) = summarised
            .iter()
            .find(|(b, _)| b.id == put.id)
            .map(|(b, _)| b)
        else {
            continue;
        };
        let uid = uid(b.id, &sync.tag);
        let ours = Ours {
            booking: b,
            uid: &uid,
            summary: summary(floor, b),
            room: room.name,
            zone: Some((&tz, floor.zone.name())),
        };
        let body = event::write(&ours, now);
        let put2 = put.clone();
        let w = blocking(&sync.dav, move |d| {
            d.put(&put2.href, &body, put2.if_match.as_deref())
        })
        .await?;
        done.written += usize::from(w == Written::Done);
    }
    for (id, href, etag) in p.gone {
        let active = store
            .get(id)
            .await?
            .is_some_and(|b| b.status == Status::Active);
        if active {
            continue;
        }
        if blocking(&sync.dav, move |d| d.delete(&href, &etag)).await? == Written::Done {
            done.deleted += 1;
        }
    }
    Ok(done)
}

/// The listing read: each event's [`Remote`] and its text.
fn read_all(
    listed: Vec<Listed>,
    tag: &str,
    tz: &TimeZone,
    done: &mut Done,
) -> (Vec<Remote>, Vec<String>) {
    let mut remote = Vec::with_capacity(listed.len());
    let mut data = Vec::with_capacity(listed.len());
    for l in listed {
        let kind = event::read(&l.data, tag, tz);
        if let Kind::Unreadable(why) = &kind {
            done.unreadable.push((l.href.clone(), why.clone()));
        }
        remote.push(Remote {
            href: l.href,
            etag: l.etag,
            kind,
        });
        data.push(l.data);
    }
    (remote, data)
}

/// Room `room`'s active bookings under way in `window`, earliest first (at most
/// [`MAX_SYNC_BOOKINGS`]).
async fn bookings<S: Store>(
    store: &mut S,
    room: &str,
    (mut from, to): (Minute, Minute),
) -> Result<Vec<Booking>, StoreError> {
    let mut out = Vec::new();
    while let Some(b) = store.next_in_room(room, from).await? {
        let s = b.new.span;
        // Only forward, within the window: a store that answered otherwise would walk for ever.
        if s.end <= from || s.start >= to || out.len() == MAX_SYNC_BOOKINGS {
            break;
        }
        from = s.end;
        out.push(b);
    }
    Ok(out)
}

/// What our event of `b` is called: its title where the floor lets everyone read it, else
/// "Busy".
fn summary<'a>(floor: &Floor<'_>, b: &'a Booking) -> &'a str {
    match title_readable(floor, b, [0; 8], false) {
        Some(_) if !b.new.title.is_empty() => b.new.title.as_str(),
        _ => BUSY,
    }
}

/// Whether a foreign event holds its slot.
#[derive(Debug)]
pub enum Held {
    /// It does: its booking was made now (`true`) or before.
    Yes(bool),
    /// This other active booking holds some of its time.
    Taken(Booking),
    /// Its booking was cancelled in redmark [`MAX_REBOOKS`] times.
    CancelledInRedmark,
}

/// Books foreign event `f` in `room` as `mirror`, once: the booking its current round's nonce
/// made if any and not cancelled, else a new one under the next round's.
pub async fn hold<S: Store>(
    store: &mut S,
    mirror: Holder,
    actor: &Actor,
    room: &str,
    f: &Foreign,
) -> Result<Held, StoreError> {
    for round in 0..MAX_REBOOKS {
        let nonce = nonce_of(&f.uid, f.span, round);
        match store.made_by(&mirror, &nonce).await? {
            Some(b) if b.status == Status::Cancelled => continue,
            Some(_) => return Ok(Held::Yes(false)),
            None => {}
        }
        let new = NewBooking {
            room: room.try_into().map_err(|_| StoreError::Io)?,
            span: f.span,
            title: title(&f.title),
            attendees: 0,
            holder: mirror,
            nonce,
        };
        return Ok(match store.commit_by(&new, actor).await? {
            Commit::Created(_) => Held::Yes(true),
            Commit::Replayed(b) if b.status == Status::Cancelled => continue,
            Commit::Replayed(_) => Held::Yes(false),
            Commit::Taken(b) => Held::Taken(b),
        });
    }
    Ok(Held::CancelledInRedmark)
}

/// `s` as a booking title: control characters left out, cut at [`MAX_TITLE`] bytes between
/// characters.
fn title(s: &str) -> Title {
    let mut t = Title::new();
    for c in s.chars().filter(|c| !c.is_control()) {
        if t.push(c).is_err() {
            break;
        }
    }
    debug_assert!(t.len() <= MAX_TITLE);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::{holder, Day, MemStore, Span};

    fn at(h: u32) -> Minute {
        Day::parse("2026-12-07").unwrap().first_minute() + h * 60
    }

    fn event(uid: &str, h: u32) -> Foreign {
        Foreign {
            uid: uid.into(),
            span: Span::new(at(h), at(h + 1)).unwrap(),
            title: "Ünïcode title that is far longer than forty-eight bytes, really".into(),
            cancelled: false,
            sequence: 0,
        }
    }

    fn run<F: std::future::Future<Output = ()> + Send + 'static>(f: F) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let t = std::thread::Builder::new().stack_size(64 << 20);
        t.spawn(move || rt.block_on(f)).unwrap().join().unwrap();
    }

    #[test]
    fn a_foreign_event_is_booked_once_refused_when_taken_and_rebooked_after_a_cancel() {
        run(async {
            let mut s = Box::new(MemStore::<64>::new());
            let mirror = holder(b"mirror");
            let actor = Actor::holder(mirror);
            let f = event("standup@example", 9);
            let held = hold(&mut *s, mirror, &actor, "atrium", &f).await.unwrap();
            assert!(matches!(held, Held::Yes(true)));
            // Again (a retry, another instance): the same booking, nothing new.
            let again = hold(&mut *s, mirror, &actor, "atrium", &f).await.unwrap();
            assert!(matches!(again, Held::Yes(false)));
            let b = s.get(1).await.unwrap().unwrap();
            assert!(s.get(2).await.unwrap().is_none(), "booked once");
            assert!(b.new.title.len() <= MAX_TITLE && b.new.title.starts_with("Ünïcode"));
            // Another event over it is refused, naming the booking in the way.
            let other = event("other@example", 9);
            match hold(&mut *s, mirror, &actor, "atrium", &other)
                .await
                .unwrap()
            {
                Held::Taken(t) => assert_eq!(t.id, 1),
                h => panic!("{h:?}"),
            }
            // Cancelled in redmark: booked again under the next round.
            s.cancel(1, &actor).await.unwrap().unwrap();
            let re = hold(&mut *s, mirror, &actor, "atrium", &f).await.unwrap();
            assert!(matches!(re, Held::Yes(true)));
            let b2 = s.get(2).await.unwrap().unwrap();
            assert_eq!(b2.new.nonce, nonce_of(&f.uid, f.span, 1));
            assert_eq!(b2.status, Status::Active);
        });
    }
}
