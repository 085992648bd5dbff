//! Two-way CalDAV (`redmark serve --caldav URL`): each room is a calendar collection on a CalDAV server, kept in step with the store by reconciling both every few seconds and right after the store tells of a change (docs/calendars.md, "Two-way CalDAV").
//!
//! There is no queue: the store is the durable record, so a pass compares what the store
//! holds for a room over the feeds' window with what the room's collection holds (kept up to
//! date by RFC 6578 collection sync where the server offers it: [`seen`]) and writes the
//! difference ([`plan`]). An outage of the server (or a restart of redmark) loses
//! nothing: the next pass finds the same difference. Our events have deterministic hrefs and
//! UIDs (the feeds'), written with `If-None-Match`/`If-Match`, and others' events are booked
//! under nonces derived from their UID and time, so passes of several instances on one
//! store at once write each resource and book each event once.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redmark_core::booking::{Floor, Holder};
use redmark_core::seal::KeyRing;
use tokio::sync::broadcast;

use crate::store::changes::Change;
use crate::store::Bookings;

pub mod dav;
pub mod event;
pub mod pass;
pub mod plan;
pub mod seen;

use dav::{Dav, DavError};
use pass::{PassError, Sync};
use seen::Seen;

/// How often every room is synced when the store tells of no change (an event a calendar client puts
/// in a room's collection holds its slot within this, plus one pass).
pub const SYNC_EVERY: Duration = Duration::from_secs(3);
/// The least time between two passes (a burst of bookings is synced together).
pub const MIN_GAP: Duration = Duration::from_millis(250);
/// Bytes of the `--caldav-credentials` file read at most.
const MAX_CREDENTIALS: u64 = 4096;
/// What the sealing key is derived into for the holder of bookings made for others' events.
const MIRROR_LABEL: &[u8] = b"redmark caldav mirror holder v1";

/// `--caldav` and its credentials, read.
pub struct Config {
    /// The base URL the rooms' collections go under.
    pub url: String,
    /// `user:password` (none: no `Authorization`).
    credentials: Option<(String, String)>,
}

impl Config {
    /// `--caldav url` with the `--caldav-credentials` file `file` (one line `user:password`,
    /// not readable by group or others).
    pub fn load(url: &str, file: Option<&Path>) -> Result<Config, String> {
        if !url.starts_with("http://") && !url.starts_with("https://") {
            return Err(format!(
                "--caldav {url}: give an http:// or https:// URL of a collection"
            ));
        }
        let credentials = match file {
            None => None,
            Some(f) => Some(read_credentials(f)?),
        };
        Ok(Config {
            url: url.to_owned(),
            credentials,
        })
    }
}

/// The `user:password` of the file `f`.
fn read_credentials(f: &Path) -> Result<(String, String), String> {
    let named = |e: String| format!("--caldav-credentials {}: {e}", f.display());
    if let Ok(Some(mode)) = crate::platform::files::shared_mode(f) {
        return Err(named(format!(
            "group or others may read it (mode {mode:o}); run chmod 600 on it"
        )));
    }
    let meta = std::fs::metadata(f).map_err(|e| named(e.to_string()))?;
    if meta.len() > MAX_CREDENTIALS {
        return Err(named(format!("over {MAX_CREDENTIALS} bytes")));
    }
    let text = std::fs::read_to_string(f).map_err(|e| named(e.to_string()))?;
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
    match line.split_once(':') {
        Some((u, p)) if !u.is_empty() => Ok((u.to_owned(), p.to_owned())),
        _ => Err(named("write one line user:password".into())),
    }
}

/// The syncer of `site`'s rooms with the server `config` names, over a handle of `store`,
/// for the caller to spawn (`None` for an empty key ring).
pub fn syncer<S: Bookings>(
    site: &'static [Floor<'static>],
    store: &S,
    ring: &KeyRing,
    config: Config,
) -> Option<impl std::future::Future<Output = ()>> {
    let tag = crate::calendar::uid_tag(ring)?;
    let mut mirror: Holder = [0; 8];
    mirror.copy_from_slice(&ring.derive(MIRROR_LABEL)?[..8]);
    let credentials = config.credentials.as_ref();
    let dav = Dav::new(&config.url, credentials.map(|(u, p)| (&u[..], &p[..])));
    let dav = Arc::new(dav);
    let sync = Sync { dav, tag, mirror };
    // Every committed change the store tells of (this instance's and, on PostgreSQL, the
    // others'), the calendar's own bookings included: one more pass finds nothing to do.
    let mut heard = store.changes().map(|c| c.follow());
    let mut store = store.handle();
    Some(async move {
        let mut outage = Outage::default();
        let mut ready: Vec<&'static str> = Vec::new();
        let mut seen: HashMap<&'static str, Seen> = HashMap::new();
        let mut said = HashSet::new();
        loop {
            let failed = one_pass(&sync, &mut store, site, &mut ready, &mut seen, &mut said).await;
            outage.after(failed);
            tokio::time::sleep(MIN_GAP).await;
            tokio::select! {
                () = tokio::time::sleep(SYNC_EVERY) => {}
                () = changed(&mut heard) => {}
            }
        }
    })
}

/// Waits for the store's next change (one missed for falling behind counts), then takes every
/// other change already told: a burst (a series of 52, the pass's own mirror bookings) wakes
/// one pass, not one a change. Never, for a store that tells none or once it stopped telling.
async fn changed(heard: &mut Option<broadcast::Receiver<Change>>) {
    use broadcast::error::{RecvError, TryRecvError};
    let Some(rx) = heard else {
        return std::future::pending().await;
    };
    let mut closed = matches!(rx.recv().await, Err(RecvError::Closed));
    while !closed {
        match rx.try_recv() {
            Ok(_) | Err(TryRecvError::Lagged(_)) => {}
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Closed) => closed = true,
        }
    }
    if closed {
        *heard = None;
        std::future::pending::<()>().await;
    }
}

/// One pass over every room: the first failure, if any (the other rooms are still synced).
async fn one_pass<S: Bookings>(
    sync: &Sync,
    store: &mut S,
    site: &'static [Floor<'static>],
    ready: &mut Vec<&'static str>,
    seen: &mut HashMap<&'static str, Seen>,
    said: &mut HashSet<String>,
) -> Option<String> {
    let mut failed = None;
    let now = jiff::Timestamp::now();
    for floor in site {
        for room in floor.rooms {
            let ran = match ready.contains(&room.id) {
                true => Ok(()),
                false => pass_ensure(&sync.dav, room.id, room.name).await,
            };
            let ran = match ran {
                Ok(()) => {
                    if !ready.contains(&room.id) {
                        ready.push(room.id);
                    }
                    let known = seen.entry(room.id).or_default();
                    pass::room(sync, store, known, floor, room, now).await
                }
                Err(e) => Err(e),
            };
            match ran {
                Ok(done) => log_done(room.id, &done, said),
                Err(e) => {
                    // Looked for again next time (it may have been deleted).
                    ready.retain(|r| *r != room.id);
                    let down = matches!(e, PassError::Dav(DavError::Unreachable(_)));
                    failed.get_or_insert(format!("{}: {e}", room.id));
                    // Unreachable: the other rooms would wait out their timeouts too.
                    if down {
                        return failed;
                    }
                }
            }
        }
    }
    failed
}

/// Makes room `id`'s collection unless it is there.
async fn pass_ensure(
    dav: &Arc<Dav>,
    id: &'static str,
    name: &'static str,
) -> Result<(), PassError> {
    let dav = Arc::clone(dav);
    tokio::task::spawn_blocking(move || dav.ensure(id, name))
        .await
        .map_err(|_| PassError::Lost)?
        .map_err(PassError::Dav)
}

/// What a room's pass changed, logged when it changed something.
fn log_done(room: &str, d: &pass::Done, said: &mut HashSet<String>) {
    if d.written + d.deleted + d.held + d.released + d.refused > 0 {
        tracing::info!(
            room,
            written = d.written,
            deleted = d.deleted,
            held = d.held,
            released = d.released,
            refused = d.refused,
            "CalDAV sync"
        );
    }
    for (href, why) in &d.unreadable {
        tracing::debug!(room, href, "CalDAV: an event that holds nothing: {why}");
    }
    for (uid, why) in &d.rejected {
        if said.len() == MAX_SAID {
            said.clear();
        }
        if said.insert(format!("{room} {uid} {why}")) {
            tracing::warn!(
                room,
                uid,
                "CalDAV: an event in the way could not be marked cancelled: {why}"
            );
        }
    }
}

/// Distinct warnings remembered so each is logged once (forgotten all at once past this).
const MAX_SAID: usize = 10_000;

/// An outage of the server, logged once when it starts and once when it ends.
#[derive(Default)]
struct Outage {
    /// When it started, and the passes failed since.
    since: Option<(Instant, u64)>,
}

impl Outage {
    /// After a pass that failed with `failed` (or did not).
    fn after(&mut self, failed: Option<String>) {
        match (failed, &mut self.since) {
            (Some(e), None) => {
                tracing::warn!(
                    "CalDAV sync failing: {e}; booking goes on, every change is synced when the \
                     server answers again"
                );
                self.since = Some((Instant::now(), 1));
            }
            (Some(_), Some((_, n))) => *n += 1,
            (None, Some((at, n))) => {
                tracing::warn!(
                    "CalDAV sync working again after {n} failed passes ({} s)",
                    at.elapsed().as_secs()
                );
                self.since = None;
            }
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_one_private_line() {
        let dir = std::env::temp_dir().join(format!("redmark-caldav-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("cred");
        std::fs::write(&f, "redmark:s3cret:with:colons\n").unwrap();
        crate::platform::files::make_private(&f).unwrap();
        let c = Config::load("http://127.0.0.1:5232/redmark/", Some(&f)).unwrap();
        assert_eq!(
            c.credentials,
            Some(("redmark".into(), "s3cret:with:colons".into()))
        );
        assert!(Config::load("ftp://x/", None).is_err());
        std::fs::write(&f, "no colon\n").unwrap();
        let e = Config::load("http://x/", Some(&f)).err().unwrap();
        assert!(e.contains("user:password"), "{e}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(&f, "a:b\n").unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = Config::load("http://x/", Some(&f)).err().unwrap();
            assert!(e.contains("chmod 600"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_outage_is_said_when_it_starts_and_ends() {
        let mut o = Outage::default();
        o.after(None);
        assert!(o.since.is_none());
        o.after(Some("down".into()));
        o.after(Some("down".into()));
        assert_eq!(o.since.map(|(_, n)| n), Some(2));
        o.after(None);
        assert!(o.since.is_none());
    }

    #[tokio::test]
    async fn a_burst_of_changes_wakes_one_pass_and_a_closed_hub_none() {
        let hub = crate::store::changes::Changes::new();
        let mut heard = Some(hub.follow());
        let span = redmark_core::booking::Span::new(30_000_000, 30_000_060).unwrap();
        for _ in 0..52 {
            hub.publish_room("atrium", span);
        }
        changed(&mut heard).await;
        let rx = heard.as_mut().unwrap();
        assert!(matches!(
            rx.try_recv(),
            Err(broadcast::error::TryRecvError::Empty)
        ));
        hub.publish_room("atrium", span);
        changed(&mut heard).await;
        drop(hub);
        let waited = tokio::time::timeout(Duration::from_millis(50), changed(&mut heard)).await;
        assert!(waited.is_err(), "a closed hub wakes nothing");
        assert!(heard.is_none());
    }
}
