//! Open `subscriptions/listen` streams as the host keeps them: what each follows, what it hears.
//!
//! Each stream's room-days, the store's changes that touch them, and each message on the stream
//! written by the connection's engine.

use std::sync::Arc;

use redmark_core::booking::{watched, Floor, Span};
use redmark_core::engine::listen::Listen;
use tokio::sync::broadcast;

use super::{Conn, Hosted};
use crate::store::changes::{Change, Changes};

/// What a booking app's host needs to serve listen streams: the store's change hub and the
/// floors (a room-day's span is on its floor's clock).
#[derive(Clone)]
pub struct Live {
    pub changes: Arc<Changes>,
    pub floors: &'static [Floor<'static>],
}

/// One open stream: its id and the room-days it follows.
pub struct Watch {
    /// The listen request's id, raw JSON.
    id: Vec<u8>,
    /// Each URI followed, with its room and the UTC minutes of its day.
    uris: Vec<(String, Arc<str>, Span)>,
    /// OPS (crate::metrics): counted as an open stream while it lives.
    _open: crate::metrics::Open,
}

/// A followed stream of changes, with the messages it asks to be sent.
pub struct Follow {
    pub watch: Watch,
    pub changes: broadcast::Receiver<Change>,
}

impl Live {
    /// Where no change ever comes from: the streams of an app whose store tells none.
    pub fn quiet() -> Live {
        Live {
            changes: Changes::new(),
            floors: &[],
        }
    }

    /// Starts following the store's changes for the stream `message` opened (a listen request
    /// the engine acknowledged), `None` if it is not one.
    pub fn follow(&self, message: &[u8]) -> Option<Follow> {
        let listen = Listen::read(message)?;
        let mut uris = Vec::new();
        listen.for_each_uri(|uri| {
            if let Some((room, span)) = watched(self.floors, uri) {
                uris.push((uri.to_owned(), Arc::from(room), span));
            }
        });
        Some(Follow {
            watch: Watch {
                id: listen.id().to_vec(),
                uris,
                _open: crate::metrics::metrics().listen_stream(),
            },
            changes: self.changes.follow(),
        })
    }
}

impl Watch {
    /// The URIs `change` touches (every one for [`Change::Unknown`]).
    pub fn touched<'w>(&'w self, change: &'w Change) -> impl Iterator<Item = &'w str> + 'w {
        self.uris
            .iter()
            .filter(move |(_, room, span)| match change {
                Change::Room { room: r, span: s } => r == room && s.overlaps(span),
                Change::Unknown => true,
            })
            .map(|(uri, _, _)| uri.as_str())
    }

    /// The stream's id, raw JSON.
    pub fn id(&self) -> &[u8] {
        &self.id
    }
}

impl<A: Hosted> Conn<A> {
    /// `notifications/resources/updated` for `uri` on the stream `watch` (`None`: it does not
    /// fit the engine's buffer, which a URI the engine accepted always does).
    pub fn resource_updated(&self, watch: &Watch, uri: &str) -> Option<Vec<u8>> {
        let mut out = super::answer_buffer();
        let n = self
            .engine
            .write_resource_updated(&watch.id, uri, &mut out)
            .ok()?;
        Some(out[..n].to_vec())
    }

    /// The result that ends the stream `watch` gracefully (HTTP).
    pub fn listen_closed(&self, watch: &Watch) -> Option<Vec<u8>> {
        let mut out = super::answer_buffer();
        let n = self.engine.write_listen_closed(&watch.id, &mut out).ok()?;
        Some(out[..n].to_vec())
    }

    /// The `notifications/cancelled` that ends the stream `watch` (stdio).
    pub fn listen_cancelled(&self, watch: &Watch) -> Option<Vec<u8>> {
        let mut out = super::answer_buffer();
        let n = self
            .engine
            .write_listen_cancelled(&watch.id, &mut out)
            .ok()?;
        Some(out[..n].to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::booking::{day_span, Day, DEFAULT_FLOOR};

    static FLOORS: [Floor<'static>; 1] = [DEFAULT_FLOOR];

    /// A stream hears nothing once its hub is dropped: why `Shared` holds even a quiet one.
    #[test]
    fn a_quiet_hubs_streams_stay_open_while_it_is_held() {
        use tokio::sync::broadcast::error::TryRecvError;
        let live = Live::quiet();
        let msg = br#"{"jsonrpc":"2.0","id":"s","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["redmark://rooms/atrium/2026-12-07"]}}}"#;
        let mut f = live.follow(msg).unwrap();
        assert_eq!(f.changes.try_recv().unwrap_err(), TryRecvError::Empty);
        drop(live);
        assert_eq!(f.changes.try_recv().unwrap_err(), TryRecvError::Closed);
    }

    #[test]
    fn a_stream_hears_changes_to_its_room_days_only() {
        let live = Live {
            changes: Changes::new(),
            floors: &FLOORS,
        };
        let msg = br#"{"jsonrpc":"2.0","id":"s","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["redmark://rooms/atrium/2026-12-07"]}}}"#;
        let f = live.follow(msg).unwrap();
        assert_eq!(f.watch.id(), br#""s""#);
        let day = day_span(DEFAULT_FLOOR.zone, Day::parse("2026-12-07").unwrap());
        let hour = Span::new(day.start + 600, day.start + 660).unwrap();
        let touched = |c: Change| f.watch.touched(&c).map(String::from).collect::<Vec<_>>();
        assert_eq!(
            touched(Change::room("atrium", hour)),
            ["redmark://rooms/atrium/2026-12-07"]
        );
        assert!(touched(Change::room("studio-b", hour)).is_empty());
        let next_day = Span::new(day.end, day.end + 60).unwrap();
        assert!(touched(Change::room("atrium", next_day)).is_empty());
        assert_eq!(touched(Change::Unknown).len(), 1);
    }
}
