//! A room's collection as last seen: its events by href and the RFC 6578 sync token, brought up to date with the changes since the token where the server offers collection sync, else listed whole each pass.

use std::collections::BTreeMap;

use super::dav::{Changes, Dav, DavError, Listed, Synced, MAX_LISTING_BYTES, MAX_REMOTE_EVENTS};

/// Passes between two syncs from no token (every event read again), which mends a cache a
/// server's sync report left wrong.
pub const RESYNC_EVERY: u32 = 200;

/// What is known of one room's collection (kept in memory: after a restart the first pass
/// reads it whole).
#[derive(Debug, Default)]
pub struct Seen {
    /// The token of the last sync (`None`: sync from none next).
    token: Option<String>,
    /// The events: href → (ETag, data).
    events: BTreeMap<String, (String, String)>,
    /// The server said it does not offer collection sync for this collection.
    unsupported: bool,
    /// Passes since the last sync from no token.
    passes: u32,
}

impl Seen {
    /// The collection's events now, read with `dav` (blocking).
    pub fn refresh(&mut self, dav: &Dav, room: &str) -> Result<Vec<Listed>, DavError> {
        if self.unsupported {
            return dav.list(room);
        }
        if self.passes >= RESYNC_EVERY {
            self.forget();
        }
        // Twice at most: the token may have expired (then again from none).
        for _ in 0..2 {
            let token = self.token.clone().unwrap_or_default();
            match dav.sync(room, &token) {
                Ok(Synced::Changes(c)) => {
                    tracing::debug!(
                        room,
                        changed = c.changed.len(),
                        removed = c.removed.len(),
                        whole = token.is_empty(),
                        "CalDAV collection sync"
                    );
                    if let Err(e) = self.apply(c, token.is_empty()) {
                        self.forget();
                        return Err(e);
                    }
                    self.passes += 1;
                    return Ok(self.listing());
                }
                Ok(Synced::TokenInvalid) => self.forget(),
                Ok(Synced::Unsupported) => {
                    self.unsupported = true;
                    return dav.list(room);
                }
                Err(e) => return Err(e),
            }
        }
        self.forget();
        Err(DavError::Status("REPORT sync-collection", 403))
    }

    /// Drops what is known: the next sync is from no token.
    fn forget(&mut self) {
        self.token = None;
        self.events.clear();
        self.passes = 0;
    }

    /// Takes in `c` (`whole`: every event, replacing what was known); fails past the bounds
    /// of a listing.
    fn apply(&mut self, c: Changes, whole: bool) -> Result<(), DavError> {
        if whole {
            self.events.clear();
        }
        for href in c.removed {
            self.events.remove(&href);
        }
        for l in c.changed {
            self.events.insert(l.href, (l.etag, l.data));
        }
        let bytes: usize = self.events.values().map(|(_, d)| d.len()).sum();
        if self.events.len() > MAX_REMOTE_EVENTS || bytes as u64 > MAX_LISTING_BYTES {
            return Err(DavError::TooLarge);
        }
        self.token = Some(c.token);
        Ok(())
    }

    /// The events known, as a listing.
    fn listing(&self) -> Vec<Listed> {
        self.events
            .iter()
            .map(|(href, (etag, data))| Listed {
                href: href.clone(),
                etag: etag.clone(),
                data: data.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(href: &str, etag: &str) -> Listed {
        Listed {
            href: href.into(),
            etag: etag.into(),
            data: "BEGIN:VCALENDAR".into(),
        }
    }

    #[test]
    fn changes_replace_add_and_remove_and_a_whole_sync_starts_afresh() {
        let mut s = Seen::default();
        let first = Changes {
            token: "t1".into(),
            changed: vec![ev("/a", "1"), ev("/b", "1")],
            removed: vec![],
        };
        s.apply(first, true).unwrap();
        let next = Changes {
            token: "t2".into(),
            changed: vec![ev("/b", "2"), ev("/c", "1")],
            removed: vec!["/a".into(), "/never-seen".into()],
        };
        s.apply(next, false).unwrap();
        let l = s.listing();
        let got: Vec<(&str, &str)> = l.iter().map(|l| (&*l.href, &*l.etag)).collect();
        assert_eq!(got, vec![("/b", "2"), ("/c", "1")]);
        assert_eq!(s.token.as_deref(), Some("t2"));
        let whole = Changes {
            token: "t3".into(),
            changed: vec![ev("/d", "1")],
            removed: vec![],
        };
        s.apply(whole, true).unwrap();
        assert_eq!(s.listing().len(), 1);
    }

    #[test]
    fn past_the_bounds_a_sync_fails() {
        let mut s = Seen::default();
        let many = Changes {
            token: "t".into(),
            changed: (0..=MAX_REMOTE_EVENTS)
                .map(|i| ev(&format!("/{i}"), "1"))
                .collect(),
            removed: vec![],
        };
        assert_eq!(s.apply(many, true), Err(DavError::TooLarge));
    }
}
