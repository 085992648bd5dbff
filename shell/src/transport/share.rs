//! Who holds the places of an HTTP listener, and the shares that keep one holder from taking
//! them all: a connection counts against the principal of its latest authenticated request, or
//! before that against its source address; one principal holds at most
//! `--max-connections-per-principal` (by default [`PRINCIPAL_SHARE_PERCENT`] of
//! `--max-connections`); and a newcomer at a bound takes the place
//! of another connection (a settled one first, unauthenticated first; then the largest
//! holder's) rather than being refused.
//!
//! A request takes the table's lock only when its connection changes holder (its first
//! authenticated request); beginning and ending a request touch the connection's own atomics.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

use crate::metrics::ListenerShares;

/// Connections one source address may hold before any request on them authenticated (with
/// `--tokens` or `--auth-issuer`).
pub const MAX_UNAUTHENTICATED_PER_SOURCE: usize = 32;
/// Percent of `--max-connections` that unauthenticated connections may hold together (with
/// `--tokens` or `--auth-issuer`).
pub const UNAUTHENTICATED_SHARE_PERCENT: usize = 75;
/// Percent of `--max-connections` one principal's connections may hold unless
/// `--max-connections-per-principal` says otherwise (with `--tokens` or `--auth-issuer`;
/// without either every HTTP client is the one anonymous principal).
pub const PRINCIPAL_SHARE_PERCENT: usize = 50;

/// Connections one principal may hold on a listener of `max` by default.
pub fn default_principal_share(max: usize) -> usize {
    (max * PRINCIPAL_SHARE_PERCENT / 100).max(1)
}
/// A connection used this recently (accepted, or a request answered) is replaced only when no
/// other connection can be: its client's next request may be on its way.
pub const RECENTLY_USED: Duration = Duration::from_secs(1);

/// What a connection counts against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Holder {
    /// No request on it has authenticated yet: its source address.
    Source(IpAddr),
    /// The principal its latest authenticated request named.
    Principal(Arc<[u8]>),
}

/// Set in [`Live::state`] once the connection's place went to a newcomer.
const REPLACED: usize = 1 << (usize::BITS - 1);

/// What a connection's requests update without the table's lock.
#[derive(Default)]
struct Live {
    /// Requests being answered on it (until hyper has taken their whole body), and
    /// [`REPLACED`].
    state: AtomicUsize,
    /// When it was accepted or last finished answering: nanoseconds since the table's epoch.
    used: AtomicU64,
}

/// One open connection.
struct Place {
    holder: Holder,
    live: Arc<Live>,
    /// Cancelled to close it: at once when idle, else after the answer being written.
    close: CancellationToken,
}

/// A holder's connections, and the requests refused for its share while it held them.
#[derive(Clone, Copy, Default)]
struct Tally {
    connections: usize,
    refused: u64,
}

/// The places of one listener.
struct Table {
    /// What [`Live::used`] counts from.
    epoch: Instant,
    places: HashMap<u64, Place>,
    next_id: u64,
    holders: HashMap<Holder, Tally>,
    unauthenticated: usize,
    refused: u64,
    replaced: u64,
    over_share: u64,
}

/// Which connections may make room for a newcomer.
#[derive(Clone, Copy)]
enum Among {
    /// Unauthenticated ones from this address.
    Source(IpAddr),
    /// Unauthenticated ones.
    Unauthenticated,
    /// Any.
    Any,
}

/// Nanoseconds from `epoch` to `t` (0 before it).
fn since(epoch: Instant, t: Instant) -> u64 {
    u64::try_from(t.saturating_duration_since(epoch).as_nanos()).unwrap_or(u64::MAX)
}

impl Table {
    fn new(epoch: Instant) -> Table {
        Table {
            epoch,
            places: HashMap::new(),
            next_id: 0,
            holders: HashMap::new(),
            unauthenticated: 0,
            refused: 0,
            replaced: 0,
            over_share: 0,
        }
    }

    fn count(&self, h: &Holder) -> usize {
        self.holders.get(h).map_or(0, |t| t.connections)
    }

    fn hold(&mut self, h: Holder) {
        if matches!(h, Holder::Source(_)) {
            self.unauthenticated += 1;
        }
        self.holders.entry(h).or_default().connections += 1;
    }

    fn release(&mut self, h: &Holder) {
        if matches!(h, Holder::Source(_)) {
            self.unauthenticated = self.unauthenticated.saturating_sub(1);
        }
        if let Some(t) = self.holders.get_mut(h) {
            t.connections = t.connections.saturating_sub(1);
            if t.connections == 0 {
                self.holders.remove(h);
            }
        }
    }

    /// The connection `among` that goes first: one not used for [`RECENTLY_USED`] (of those,
    /// an unauthenticated one first), then the largest holder's, then the least recently used.
    /// So a connection just accepted, whose first request is on its way, goes last of its
    /// holder's. Never one whose principal has a request in flight on it (an unauthenticated
    /// one's request, still authenticating, then gets 503: see [`Hold::charge`]).
    fn victim(&self, now: Instant, among: Among) -> Option<u64> {
        let now = since(self.epoch, now);
        let recent = u64::try_from(RECENTLY_USED.as_nanos()).unwrap_or(u64::MAX);
        self.places
            .iter()
            .filter(|(_, p)| {
                p.live.state.load(SeqCst) == 0 || matches!(p.holder, Holder::Source(_))
            })
            .filter(|(_, p)| match (among, &p.holder) {
                (Among::Source(ip), Holder::Source(from)) => ip == *from,
                (Among::Unauthenticated, Holder::Source(_)) | (Among::Any, _) => true,
                _ => false,
            })
            .max_by_key(|(_, p)| {
                let used = p.live.used.load(SeqCst);
                let settled = now.saturating_sub(used) >= recent;
                (
                    settled,
                    settled && matches!(p.holder, Holder::Source(_)),
                    self.count(&p.holder),
                    Reverse(used),
                )
            })
            .map(|(id, _)| *id)
    }

    /// Closes a connection `among` ([`Table::victim`]) and frees its place, or `false`.
    fn take(&mut self, now: Instant, among: Among) -> bool {
        // A request may begin on the chosen one meanwhile (it then keeps its place): choose
        // again, at most once per place.
        for _ in 0..=self.places.len() {
            let Some(id) = self.victim(now, among) else {
                return false;
            };
            let Some(p) = self.places.get(&id) else {
                return false;
            };
            let claimed = match p.holder {
                // Its request, if any, is still authenticating: refused at its charge.
                Holder::Source(_) => {
                    p.live.state.fetch_or(REPLACED, SeqCst);
                    true
                }
                Holder::Principal(_) => p
                    .live
                    .state
                    .compare_exchange(0, REPLACED, SeqCst, SeqCst)
                    .is_ok(),
            };
            if claimed {
                if let Some(p) = self.places.remove(&id) {
                    self.release(&p.holder);
                    p.close.cancel();
                }
                self.replaced += 1;
                return true;
            }
        }
        false
    }
}

/// The places of one HTTP listener (see the module docs).
pub struct Shares {
    max: usize,
    /// Requests authenticate (`--tokens`, `--auth-issuer`): the unauthenticated and principal
    /// shares apply.
    gated: bool,
    unauthenticated_limit: usize,
    principal_limit: usize,
    /// The listener's shutdown; each connection's close is a child of it.
    shutdown: CancellationToken,
    /// What [`Live::used`] counts from (the table's, readable without its lock).
    epoch: Instant,
    table: Mutex<Table>,
}

impl Shares {
    /// The places of a listener of `max` connections; `gated` when requests authenticate, and
    /// then one principal holds at most `per_principal` of them.
    pub fn new(
        max: usize,
        gated: bool,
        per_principal: usize,
        shutdown: &CancellationToken,
    ) -> Arc<Self> {
        let epoch = Instant::now();
        Arc::new(Shares {
            max,
            gated,
            unauthenticated_limit: (max * UNAUTHENTICATED_SHARE_PERCENT / 100).max(1),
            principal_limit: per_principal.clamp(1, max.max(1)),
            shutdown: shutdown.clone(),
            epoch,
            table: Mutex::new(Table::new(epoch)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // The table's counts stay consistent at every await-free step; a panic elsewhere
        // while it was held leaves nothing half-done.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for a new connection from `peer` (another's, closed, when at a bound), or why
    /// none.
    pub fn admit(self: &Arc<Self>, peer: SocketAddr) -> Result<Arc<Hold>, &'static str> {
        self.admit_at(peer, Instant::now())
    }

    /// [`Shares::admit`] at `now`.
    fn admit_at(
        self: &Arc<Self>,
        peer: SocketAddr,
        now: Instant,
    ) -> Result<Arc<Hold>, &'static str> {
        let ip = peer.ip();
        let mut t = self.lock();
        if let Some((among, why)) = self.bound(&t, ip) {
            if !t.take(now, among) {
                t.refused += 1;
                return Err(why);
            }
            tracing::debug!("{peer}: took the place of another connection, closed");
        }
        let id = t.next_id;
        t.next_id += 1;
        let close = self.shutdown.child_token();
        let live = Arc::new(Live::default());
        live.used.store(since(t.epoch, now), SeqCst);
        let holder = Holder::Source(ip);
        t.hold(holder.clone());
        t.places.insert(
            id,
            Place {
                holder,
                live: Arc::clone(&live),
                close: close.clone(),
            },
        );
        Ok(Arc::new(Hold {
            shares: Arc::clone(self),
            id,
            live,
            close,
            charged: Mutex::new(None),
        }))
    }

    /// The bound a newcomer from `ip` meets, if any: whose place it may take, and why it is
    /// refused when none can be taken.
    fn bound(&self, t: &Table, ip: IpAddr) -> Option<(Among, &'static str)> {
        if self.gated {
            if t.count(&Holder::Source(ip)) >= MAX_UNAUTHENTICATED_PER_SOURCE {
                let why = "too many unauthenticated connections from this address";
                return Some((Among::Source(ip), why));
            }
            if t.unauthenticated >= self.unauthenticated_limit {
                return Some((
                    Among::Unauthenticated,
                    "too many unauthenticated connections",
                ));
            }
        }
        let why = "connections already open, each answering a request";
        (t.places.len() >= self.max).then_some((Among::Any, why))
    }

    /// Who holds the listener now, and what was refused or closed for room so far: for
    /// metrics.
    pub fn snapshot(&self) -> ShareSnapshot {
        let t = self.lock();
        let mut principals: Vec<PrincipalShare> = t
            .holders
            .iter()
            .filter_map(|(h, tally)| match h {
                Holder::Principal(p) => Some(PrincipalShare {
                    principal: Arc::clone(p),
                    connections: tally.connections,
                    refused: tally.refused,
                }),
                Holder::Source(_) => None,
            })
            .collect();
        principals.sort_by(|a, b| a.principal.cmp(&b.principal));
        ShareSnapshot {
            max_connections: self.max,
            principal_share: self.gated.then_some(self.principal_limit),
            open: t.places.len(),
            unauthenticated: t.unauthenticated,
            principals,
            refused: t.refused,
            replaced: t.replaced,
            over_share: t.over_share,
        }
    }
}

/// One listener's places at a moment (see [`Shares::snapshot`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareSnapshot {
    /// `--max-connections`.
    pub max_connections: usize,
    /// Connections one principal may hold (`None`: one principal, no share).
    pub principal_share: Option<usize>,
    /// Connections open.
    pub open: usize,
    /// Of those, the ones no request has authenticated yet.
    pub unauthenticated: usize,
    /// Each principal holding connections, by name.
    pub principals: Vec<PrincipalShare>,
    /// New connections closed on accept since the start (no place, none could be taken).
    pub refused: u64,
    /// Connections closed to make room for a newcomer since the start.
    pub replaced: u64,
    /// Requests refused (503) because their principal held its share, since the start.
    pub over_share: u64,
}

impl ShareSnapshot {
    /// The counts `/metrics` shows (no principal's name).
    pub fn counts(&self) -> ListenerShares {
        ListenerShares {
            max_connections: self.max_connections,
            principal_share: self.principal_share,
            unauthenticated: self.unauthenticated,
            principals: self.principals.len(),
            largest: self
                .principals
                .iter()
                .map(|p| p.connections)
                .max()
                .unwrap_or(0),
            refused: self.refused,
            replaced: self.replaced,
            over_share: self.over_share,
        }
    }
}

/// One principal's part of a [`ShareSnapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrincipalShare {
    pub principal: Arc<[u8]>,
    /// Connections it holds.
    pub connections: usize,
    /// Its requests refused for its share while it held connections.
    pub refused: u64,
}

/// A connection's place: freed when dropped.
pub struct Hold {
    shares: Arc<Shares>,
    id: u64,
    live: Arc<Live>,
    close: CancellationToken,
    /// The principal it counts against, once a request authenticated (this connection's
    /// own: its requests come one at a time).
    charged: Mutex<Option<Arc<[u8]>>>,
}

impl Hold {
    /// Cancelled when the connection must close (room for a newcomer, or shutdown).
    pub fn closing(&self) -> &CancellationToken {
        &self.close
    }

    /// A request on this connection authenticated as `principal`: the connection counts
    /// against it from now on. The request is refused when the principal already holds its
    /// share, or when the connection was closed to make room (it would be served uncounted).
    pub fn charge(&self, principal: &Arc<[u8]>) -> Result<(), OverShare> {
        // This request counts in `state` already: a place is taken from a principal only while
        // its state is 0, so either the request sees REPLACED here or its place stays.
        if self.live.state.load(SeqCst) & REPLACED != 0 {
            return Err(OverShare { held: None });
        }
        let mut charged = self.charged.lock().unwrap_or_else(|p| p.into_inner());
        if charged.as_deref() == Some(&**principal) {
            return Ok(());
        }
        let mut t = self.shares.lock();
        let to = Holder::Principal(Arc::clone(principal));
        let from = match t.places.get(&self.id) {
            None => return Err(OverShare { held: None }),
            Some(p) => p.holder.clone(),
        };
        let held = t.count(&to);
        if self.shares.gated && held >= self.shares.principal_limit {
            t.over_share += 1;
            if let Some(tally) = t.holders.get_mut(&to) {
                tally.refused += 1;
            }
            return Err(OverShare { held: Some(held) });
        }
        t.release(&from);
        t.hold(to.clone());
        if let Some(p) = t.places.get_mut(&self.id) {
            p.holder = to;
        }
        *charged = Some(Arc::clone(principal));
        Ok(())
    }

    /// Counts a request as being answered on this connection until the guard is dropped.
    pub fn answering(self: &Arc<Self>) -> Answering {
        self.live.state.fetch_add(1, SeqCst);
        Answering(Arc::clone(self))
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut t = self.shares.lock();
        if let Some(p) = t.places.remove(&self.id) {
            t.release(&p.holder);
        }
    }
}

/// A request being answered (see [`Hold::answering`]).
pub struct Answering(Arc<Hold>);

impl Drop for Answering {
    fn drop(&mut self) {
        let live = &self.0.live;
        live.used
            .store(since(self.0.shares.epoch, Instant::now()), SeqCst);
        live.state.fetch_sub(1, SeqCst);
    }
}

/// A request whose principal already holds its share of the listener (`held`), or whose
/// connection was closed to make room (`None`): **503** with `Retry-After`, and the
/// connection closes.
#[derive(Debug)]
pub struct OverShare {
    held: Option<usize>,
}

impl IntoResponse for OverShare {
    fn into_response(self) -> Response {
        let text = match self.held {
            Some(n) => format!(
                "Service unavailable: your principal already holds {n} connections, its share \
                 of this server's; send on one of them\n"
            ),
            None => "Service unavailable: this connection was closed to make room for \
                     another; send again\n"
                .to_owned(),
        };
        let mut r = (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            text,
        )
            .into_response();
        let h = r.headers_mut();
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        h.insert(header::CONNECTION, HeaderValue::from_static("close"));
        r
    }
}

#[cfg(test)]
#[path = "share_tests.rs"]
mod tests;
