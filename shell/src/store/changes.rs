//! The change hub: every committed change to a booking (its room and UTC minutes), broadcast.
//!
//! Whoever follows them hears them: the `subscriptions/listen` streams.
//!
//! One hub per store. Who publishes: the redb store after each write it made; PostgreSQL's
//! listener for every instance's writes, its own included (each write transaction sends a
//! `NOTIFY`, `pg/notify.rs`); a calendar sync calls [`Changes::publish`] for what it changed.
//! Who follows: the transports' listen streams, through [`Changes::follow`].

use std::sync::Arc;

use redmark_core::booking::{
    Booking, Commit, Minute, NewBooking, Occurrence, Resized, SeriesCommit, Span,
};
use tokio::sync::broadcast;

/// Changes a slow follower may fall behind by before it misses some; it is then told that
/// anything may have changed ([`Change::Unknown`]), never silently left stale.
pub const CHANGES_BACKLOG: usize = 1024;

/// One change to the bookings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Bookings of `room` overlapping `span` changed (made, cancelled, moved, checked in,
    /// released).
    Room { room: Arc<str>, span: Span },
    /// Changes may have been missed (a follower fell behind, the database's listener
    /// reconnected): every followed room-day may have changed.
    Unknown,
}

impl Change {
    /// A change to `room` over `span`.
    pub fn room(room: &str, span: Span) -> Change {
        Change::Room {
            room: Arc::from(room),
            span,
        }
    }

    /// The change a booking's making or unmaking is.
    pub fn of(b: &Booking) -> Change {
        Change::room(&b.new.room, b.new.span)
    }

    /// As a line for another instance (`start end room`, UTC minutes): PostgreSQL's `NOTIFY`.
    pub fn encode(&self) -> String {
        match self {
            Change::Room { room, span } => format!("{} {} {room}", span.start, span.end),
            Change::Unknown => "*".into(),
        }
    }

    /// A line [`Change::encode`] wrote (`None` when it is not one).
    pub fn decode(line: &str) -> Option<Change> {
        if line == "*" {
            return Some(Change::Unknown);
        }
        let mut parts = line.splitn(3, ' ');
        let start: Minute = parts.next()?.parse().ok()?;
        let end: Minute = parts.next()?.parse().ok()?;
        let room = parts.next().filter(|r| !r.is_empty())?;
        Some(Change::room(room, Span::new(start, end)?))
    }
}

/// The hub: a broadcast of [`Change`]s.
#[derive(Debug)]
pub struct Changes {
    tx: broadcast::Sender<Change>,
}

impl Changes {
    /// A hub nobody follows yet.
    pub fn new() -> Arc<Changes> {
        let (tx, _) = broadcast::channel(CHANGES_BACKLOG);
        Arc::new(Changes { tx })
    }

    /// Tells every follower that bookings of `room` over `span` changed (the one call a new
    /// source of changes, e.g. a calendar sync, makes).
    pub fn publish_room(&self, room: &str, span: Span) {
        self.publish(Change::room(room, span));
    }

    /// Tells every follower of `change` (none following: dropped).
    pub fn publish(&self, change: Change) {
        let _ = self.tx.send(change);
    }

    /// Every change from now on.
    pub fn follow(&self) -> broadcast::Receiver<Change> {
        self.tx.subscribe()
    }
}

/// What a booking's commit changed (a new booking only).
pub fn of_commit(c: &Commit) -> Vec<Change> {
    match c {
        Commit::Created(b) => vec![Change::of(b)],
        Commit::Replayed(_) | Commit::Taken(_) => vec![],
    }
}

/// What a write that answers with the booking it changed changed (cancel, check-in, release).
pub fn of_booking(b: &Option<Booking>) -> Vec<Change> {
    b.iter().map(Change::of).collect()
}

/// What moving a booking's end from `from` changed: its span then and now.
pub fn of_resized(r: &Option<Resized>, from: Minute) -> Vec<Change> {
    match r {
        Some(Resized::Moved(b)) => {
            let span = b.new.span;
            let wide = Span::new(span.start, span.end.max(from)).unwrap_or(span);
            vec![Change::room(&b.new.room, wide)]
        }
        _ => vec![],
    }
}

/// What booking a series changed: each occurrence, in its room.
pub fn of_series(
    base: &NewBooking,
    other: &str,
    occ: &[Occurrence],
    c: &SeriesCommit,
) -> Vec<Change> {
    match c {
        SeriesCommit::Created(..) => occ
            .iter()
            .map(|o| {
                let room = if o.elsewhere { other } else { &base.room };
                Change::room(room, o.span)
            })
            .collect(),
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_travels_as_a_line() {
        let c = Change::room("studio b", Span::new(30_000_000, 30_000_060).unwrap());
        assert_eq!(c.encode(), "30000000 30000060 studio b");
        assert_eq!(Change::decode(&c.encode()), Some(c));
        assert_eq!(Change::decode("*"), Some(Change::Unknown));
        for bad in [
            "",
            "30000000 30000060",
            "x 2 r",
            "30000060 30000000 r",
            "30000000 30000060 ",
        ] {
            assert_eq!(Change::decode(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn followers_get_what_is_published_after_they_follow() {
        let hub = Changes::new();
        let span = Span::new(30_000_000, 30_000_060).unwrap();
        hub.publish_room("before", span);
        let mut f = hub.follow();
        hub.publish_room("atrium", span);
        assert_eq!(f.recv().await.unwrap(), Change::room("atrium", span));
    }
}
