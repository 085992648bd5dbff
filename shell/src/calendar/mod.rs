//! The floor in people's calendars: iCalendar feeds of a room, of the caller's own bookings and a room's free/busy, read from the store, with the per-principal feed key (docs/calendars.md).
//!
//! The transport authenticates (a bearer token as for `/mcp`, or the feed's key in the URL)
//! and hands [`Calendars::read`] who asks; this module reads the store through the core's
//! [`Store`](redmark_core::booking::Store) and writes the document ([`ics`], [`feed`]).

use std::future::Future;
use std::pin::Pin;

use base64ct::{Base64UrlUnpadded, Encoding};
use hmac::{Hmac, Mac};
use jiff::Timestamp;
use redmark_core::booking::{Floor, Holder, StoreError};
use redmark_core::seal::KeyRing;
use sha2::Sha256;

use crate::store::Bookings;

pub mod caldav;
pub mod feed;
pub mod ics;
pub mod recur;
pub mod room_day;

/// Where the feeds are served on `--http`.
pub const PREFIX: &str = "/calendars/";
/// What the key of the sealing ring is derived into for feed keys (rotating it changes them).
const KEY_LABEL: &[u8] = b"redmark calendar feed key v1";
/// What it is derived into for the feeds' event ids.
const UID_LABEL: &[u8] = b"redmark calendar uid v1";

/// A path under [`PREFIX`], parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `/calendars/`: the caller's feed URLs, with its key.
    Index,
    /// `/calendars/mine.ics`: the caller's own bookings.
    Mine,
    /// `/calendars/rooms/<room>.ics`: a room's bookings.
    Room(String),
    /// `/calendars/rooms/<room>/freebusy.ics`: a room's busy times.
    FreeBusy(String),
    /// Any other path under the prefix.
    Unknown,
}

impl Route {
    /// The route `path` names, or `None` outside [`PREFIX`].
    pub fn of(path: &str) -> Option<Route> {
        let rest = path
            .strip_prefix(PREFIX)
            .or_else(|| (path == PREFIX.trim_end_matches('/')).then_some(""))?;
        let room = |id: &str| {
            let ok = !id.is_empty() && !id.contains('/');
            ok.then(|| id.to_string())
        };
        Some(match rest {
            "" => Route::Index,
            "mine.ics" => Route::Mine,
            _ => match rest.strip_prefix("rooms/") {
                Some(r) => match r.strip_suffix("/freebusy.ics") {
                    Some(id) => room(id).map_or(Route::Unknown, Route::FreeBusy),
                    None => r
                        .strip_suffix(".ics")
                        .and_then(room)
                        .map_or(Route::Unknown, Route::Room),
                },
                None => Route::Unknown,
            },
        })
    }
}

/// Who asks for which feed, and when.
#[derive(Clone, Debug)]
pub struct Ask {
    /// The feed.
    pub route: Route,
    /// The caller's holder (its bookings' owner).
    pub holder: Holder,
    /// Whether it reads every title (an operator by its bearer token; never by a feed key).
    pub operator: bool,
    /// The request's time.
    pub now: Timestamp,
}

/// A feed, written.
#[derive(Debug)]
pub struct Feed {
    /// The iCalendar document.
    pub body: String,
    /// Whether [`feed::MAX_FEED_EVENTS`] cut it short.
    pub truncated: bool,
}

/// Why a feed was not written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedError {
    /// No room of the floor has that id.
    UnknownRoom,
    /// The store failed.
    Store(StoreError),
}

impl From<StoreError> for FeedError {
    fn from(e: StoreError) -> Self {
        FeedError::Store(e)
    }
}

/// A feed being read.
pub type Reading = Pin<Box<dyn Future<Output = Result<Feed, FeedError>> + Send>>;

/// What the transport asks of a booking host's store for its feeds.
pub trait Calendars: Send + Sync {
    /// The key feed URLs are signed with.
    fn key(&self) -> &FeedKey;
    /// The rooms, for the index.
    fn floors(&self) -> &'static [Floor<'static>];
    /// The feed `ask` names.
    fn read(&self, ask: Ask) -> Reading;
    /// What makes its event ids this server's (`bk_N@<tag>.redmark`).
    fn uid_tag(&self) -> &str;
}

/// The feeds of a booking host: its floors, a handle on its store, its keys.
pub struct Source<S> {
    floors: &'static [Floor<'static>],
    store: S,
    key: FeedKey,
    uid_tag: String,
}

impl<S: Bookings> Source<S> {
    /// Feeds of `floors` over `store`, keyed from `ring` (`None` for an empty ring).
    pub fn new(floors: &'static [Floor<'static>], store: S, ring: &KeyRing) -> Option<Self> {
        Some(Source {
            floors,
            store,
            key: FeedKey(ring.derive(KEY_LABEL)?),
            uid_tag: uid_tag(ring)?,
        })
    }
}

/// What makes event ids this server's (`bk_<id>@<tag>.redmark`: [`feed::uid`]), from the
/// sealing key (`None` for an empty ring).
pub fn uid_tag(ring: &KeyRing) -> Option<String> {
    Some(hex::encode(&ring.derive(UID_LABEL)?[..6]))
}

impl<S: Bookings> Calendars for Source<S> {
    fn key(&self) -> &FeedKey {
        &self.key
    }

    fn floors(&self) -> &'static [Floor<'static>] {
        self.floors
    }

    fn uid_tag(&self) -> &str {
        &self.uid_tag
    }

    fn read(&self, ask: Ask) -> Reading {
        let (floors, mut store, tag) = (self.floors, self.store.handle(), self.uid_tag.clone());
        // A store's futures are `Send` only for its concrete type (see `crate::hosted!`), so
        // the read runs where that need not be proven: on a blocking thread of the runtime.
        let rt = tokio::runtime::Handle::current();
        Box::pin(async move {
            let run = move || rt.block_on(feed::write(floors, &mut store, &ask, &tag));
            tokio::task::spawn_blocking(run)
                .await
                .unwrap_or(Err(FeedError::Store(StoreError::Io)))
        })
    }
}

/// The key a principal's feed URLs carry (`?key=`), derived from the sealing key.
pub struct FeedKey([u8; 32]);

impl FeedKey {
    /// The MAC of `principal` bound to `binding` (the SHA-256 of its `--tokens` token, or
    /// nothing).
    fn mac(&self, principal: &[u8], binding: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(&(principal.len() as u32).to_be_bytes());
        mac.update(principal);
        mac.update(binding);
        mac
    }

    /// `principal`'s feed key: `<principal, base64url>.<MAC, base64url>`.
    pub fn issue(&self, principal: &[u8], binding: &[u8]) -> String {
        let tag = self.mac(principal, binding).finalize().into_bytes();
        format!(
            "{}.{}",
            Base64UrlUnpadded::encode_string(principal),
            Base64UrlUnpadded::encode_string(&tag)
        )
    }

    /// The principal `key` was issued to, if it was issued by this key bound to one of
    /// `bindings` (compared in constant time).
    pub fn open<'b>(
        &self,
        key: &str,
        bindings: impl IntoIterator<Item = &'b [u8]>,
    ) -> Option<Vec<u8>> {
        let (p, t) = key.split_once('.')?;
        let principal = Base64UrlUnpadded::decode_vec(p).ok()?;
        let tag = Base64UrlUnpadded::decode_vec(t).ok()?;
        let valid = bindings
            .into_iter()
            .any(|b| self.mac(&principal, b).verify_slice(&tag).is_ok());
        valid.then_some(principal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redmark_core::seal::Key;

    #[test]
    fn routes_under_the_prefix() {
        assert_eq!(Route::of("/calendars/"), Some(Route::Index));
        assert_eq!(Route::of("/calendars"), Some(Route::Index));
        assert_eq!(Route::of("/calendars/mine.ics"), Some(Route::Mine));
        assert_eq!(
            Route::of("/calendars/rooms/atrium.ics"),
            Some(Route::Room("atrium".into()))
        );
        assert_eq!(
            Route::of("/calendars/rooms/atrium/freebusy.ics"),
            Some(Route::FreeBusy("atrium".into()))
        );
        for odd in [
            "/calendars/rooms/.ics",
            "/calendars/rooms/a/b.ics",
            "/calendars/x",
        ] {
            assert_eq!(Route::of(odd), Some(Route::Unknown), "{odd}");
        }
        assert_eq!(Route::of("/mcp"), None);
        assert_eq!(Route::of("/calendarsx"), None);
    }

    #[test]
    fn a_feed_key_opens_for_its_principal_and_binding_only() {
        let ring = KeyRing::new(Key::new(1, &[7; 32]).unwrap());
        let key = FeedKey(ring.derive(KEY_LABEL).unwrap());
        let issued = key.issue(b"http:alice", b"token-hash");
        assert_eq!(
            key.open(&issued, [&b"token-hash"[..]]),
            Some(b"http:alice".to_vec())
        );
        assert_eq!(
            key.open(&issued, [&b"other"[..], &b"token-hash"[..]])
                .as_deref(),
            Some(&b"http:alice"[..])
        );
        // Another binding (the token was changed), none, or a changed principal: refused.
        assert_eq!(key.open(&issued, [&b"new-token-hash"[..]]), None);
        assert_eq!(key.open(&issued, []), None);
        let (_, tag) = issued.split_once('.').unwrap();
        let forged = format!("{}.{tag}", Base64UrlUnpadded::encode_string(b"http:bob"));
        assert_eq!(key.open(&forged, [&b"token-hash"[..]]), None);
        for junk in ["", ".", "a.b", "no-dot", "%%.%%"] {
            assert_eq!(key.open(junk, [&b""[..]]), None, "{junk}");
        }
        // A rotated sealing key issues other keys.
        let rotated = KeyRing::new(Key::new(2, &[8; 32]).unwrap());
        let other = FeedKey(rotated.derive(KEY_LABEL).unwrap());
        assert_eq!(other.open(&issued, [&b"token-hash"[..]]), None);
    }
}
