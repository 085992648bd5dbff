//! Tests of the listener's shares (`share.rs`): the bounds, which idle connection makes room,
//! the principal share, and the snapshot.

use super::*;

fn peer(i: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 1, i], 1))
}

fn alice() -> Arc<[u8]> {
    Arc::from(&b"http:alice"[..])
}

fn bob() -> Arc<[u8]> {
    Arc::from(&b"http:bob"[..])
}

/// Later than [`RECENTLY_USED`] after everything the tests did.
fn later() -> Instant {
    Instant::now() + 2 * RECENTLY_USED
}

/// Says connection `h` was last used at `at`.
fn used_at(s: &Shares, h: &Hold, at: Instant) {
    h.live.used.store(since(s.epoch, at), SeqCst);
}

/// Unauthenticated connections are bounded per source and in all; at a bound a newcomer takes
/// the place of an unauthenticated one (its own source's at the per-source bound), even one
/// whose request is still authenticating: that request is then refused.
#[test]
fn unauthenticated_connections_are_bounded() {
    let s = Shares::new(
        100,
        true,
        default_principal_share(100),
        &CancellationToken::new(),
    );
    let held: Vec<_> = (0..MAX_UNAUTHENTICATED_PER_SOURCE)
        .map(|_| s.admit(peer(1)).unwrap())
        .collect();
    let authenticating: Vec<_> = held.iter().map(|h| h.answering()).collect();
    let other = s.admit(peer(2)).expect("another source");
    let newcomer = s.admit(peer(1)).expect("in place of one of its own");
    let replaced: Vec<_> = held.iter().filter(|h| h.closing().is_cancelled()).collect();
    assert_eq!(replaced.len(), 1, "one connection of the source made room");
    assert!(replaced[0].charge(&alice()).is_err(), "served uncounted");
    assert!(!other.closing().is_cancelled());
    let snap = s.snapshot();
    assert_eq!(snap.unauthenticated, MAX_UNAUTHENTICATED_PER_SOURCE + 1);
    assert_eq!((snap.replaced, snap.refused), (1, 0));
    drop(authenticating);
    drop(held);
    assert_eq!(s.snapshot().unauthenticated, 2);
    drop((newcomer, other));

    let s = Shares::new(
        100,
        true,
        default_principal_share(100),
        &CancellationToken::new(),
    );
    let limit = 100 * UNAUTHENTICATED_SHARE_PERCENT / 100;
    let _many: Vec<_> = (0..100u8).map(|i| s.admit(peer(i)).unwrap()).collect();
    let snap = s.snapshot();
    assert_eq!(snap.unauthenticated, limit, "in all");
    assert_eq!(snap.replaced, (100 - limit) as u64);
}

/// At the cap, a newcomer is refused only when every connection is a principal's with a
/// request in flight.
#[test]
fn only_requests_in_flight_keep_a_place() {
    let s = Shares::new(
        4,
        true,
        default_principal_share(4),
        &CancellationToken::new(),
    );
    let conns: Vec<_> = (0..4)
        .map(|i| {
            let c = s.admit(peer(i)).unwrap();
            c.charge(&if i % 2 == 0 { alice() } else { bob() }).unwrap();
            c
        })
        .collect();
    let busy: Vec<_> = conns.iter().map(|c| c.answering()).collect();
    assert!(s.admit(peer(9)).is_err());
    assert_eq!(s.snapshot().refused, 1);
    drop(busy);
    assert!(s.admit(peer(9)).is_ok());
}

/// `--max-connections-per-principal` sets the share: 2 of 8 here (and never more than the cap).
#[test]
fn the_share_is_the_operators_to_set() {
    let s = Shares::new(8, true, 2, &CancellationToken::new());
    let conns: Vec<_> = (0..4).map(|i| s.admit(peer(i)).unwrap()).collect();
    let charged = conns.iter().filter(|c| c.charge(&alice()).is_ok()).count();
    assert_eq!(charged, 2);
    assert_eq!(s.snapshot().principal_share, Some(2));
    let wide = Shares::new(4, true, 99, &CancellationToken::new());
    assert_eq!(wide.snapshot().principal_share, Some(4));
}

/// One principal holds at most its share; another principal still gets its connections, and
/// a refused request leaves the connection where it was.
#[test]
fn a_principal_holds_at_most_its_share() {
    let s = Shares::new(
        8,
        true,
        default_principal_share(8),
        &CancellationToken::new(),
    );
    let share = 8 * PRINCIPAL_SHARE_PERCENT / 100;
    let mut charged = 0;
    let conns: Vec<_> = (0..8)
        .map(|i| {
            let c = s.admit(peer(i)).unwrap();
            charged += usize::from(c.charge(&alice()).is_ok());
            c
        })
        .collect();
    assert_eq!(charged, share);
    let snap = s.snapshot();
    assert_eq!(snap.principal_share, Some(share));
    assert_eq!(snap.over_share, 8 - share as u64);
    assert_eq!(snap.unauthenticated, 8 - share);
    assert_eq!(snap.principals[0].connections, share);
    assert_eq!(snap.principals[0].refused, 8 - share as u64);
    // A connection of alice's may be used again by alice, and by bob.
    assert!(conns[0].charge(&alice()).is_ok());
    assert!(conns[7].charge(&bob()).is_ok());
    assert!(conns[0].charge(&bob()).is_ok());
    let snap = s.snapshot();
    assert_eq!(
        snap.principals
            .iter()
            .map(|p| p.connections)
            .collect::<Vec<_>>(),
        [share - 1, 2],
        "alice, bob"
    );
    drop(conns);
    assert_eq!(s.snapshot().open, 0);
    assert!(s.snapshot().principals.is_empty());
}

/// Without tokens there is one principal: no share, no unauthenticated bounds, only the cap,
/// where the least recently used idle connection makes room.
#[test]
fn one_principal_has_the_whole_listener() {
    let s = Shares::new(
        4,
        false,
        default_principal_share(4),
        &CancellationToken::new(),
    );
    let anon: Arc<[u8]> = Arc::from(&b"http:anonymous"[..]);
    let conns: Vec<_> = (0..4).map(|_| s.admit(peer(1)).unwrap()).collect();
    for c in &conns {
        c.charge(&anon).unwrap();
    }
    // Used in the order 2, 0, 3, 1: connection 2 is the least recently used.
    let t0 = later();
    for (k, i) in [2, 0, 3, 1].into_iter().enumerate() {
        used_at(&s, &conns[i], t0 + Duration::from_millis(k as u64));
    }
    let newcomer = s.admit_at(peer(1), t0 + 2 * RECENTLY_USED).unwrap();
    let closed: Vec<_> = (0..4)
        .filter(|i| conns[*i].closing().is_cancelled())
        .collect();
    assert_eq!(closed, [2]);
    let snap = s.snapshot();
    assert_eq!(
        (snap.open, snap.replaced, snap.principal_share),
        (4, 1, None)
    );
    // Closed for the newcomer: its later drop frees nothing twice.
    drop(conns);
    assert_eq!(s.snapshot().open, 1);
    drop(newcomer);
}

/// Which idle connection makes room: a settled one before a recently used one (of those an
/// unauthenticated one, then the largest holder's), then the least recently used; never one
/// whose principal has a request in flight on it.
#[test]
fn the_idle_connection_that_makes_room() {
    let s = Shares::new(
        6,
        true,
        default_principal_share(6),
        &CancellationToken::new(),
    );
    let a: Vec<_> = (0..3)
        .map(|i| {
            let c = s.admit(peer(i)).unwrap();
            c.charge(&alice()).unwrap();
            c
        })
        .collect();
    let b = s.admit(peer(3)).unwrap();
    b.charge(&bob()).unwrap();
    let fresh = s.admit(peer(4)).unwrap();
    let waiting = s.admit(peer(5)).unwrap();
    waiting.charge(&bob()).unwrap();
    let _in_flight = waiting.answering();
    let now = Instant::now();
    let settled = later();
    // Everything recently used: the least recently used goes first, never the newest.
    assert_eq!(s.lock().victim(now, Among::Any), Some(a[0].id));
    // Settled: the unauthenticated one first; never the one answering.
    assert_eq!(s.lock().victim(settled, Among::Any), Some(fresh.id));
    drop(fresh);
    // Of the principals' idle ones, alice (3) before bob (2).
    let v = s.lock().victim(settled, Among::Any).unwrap();
    assert!(a.iter().any(|c| c.id == v), "alice's");
    // A settled one before a recently used one, even of a smaller holder.
    let t0 = later();
    for c in &a {
        used_at(&s, c, t0);
    }
    let v = s.lock().victim(t0 + RECENTLY_USED / 2, Among::Any);
    assert_eq!(v, Some(b.id), "bob's settled one");
    // Only unauthenticated ones when the unauthenticated bound is the one reached.
    assert_eq!(s.lock().victim(settled, Among::Unauthenticated), None);
}

/// A request that has begun keeps its connection's place; one that begins after the place went
/// to a newcomer is refused, even on a connection already its principal's.
#[test]
fn a_request_keeps_its_place_or_is_refused() {
    let s = Shares::new(
        1,
        true,
        default_principal_share(1),
        &CancellationToken::new(),
    );
    let c = s.admit(peer(1)).unwrap();
    {
        let _answering = c.answering();
        c.charge(&alice()).unwrap();
        assert!(s.admit_at(peer(2), later()).is_err(), "in flight: kept");
    }
    let newcomer = s.admit_at(peer(2), later()).unwrap();
    assert!(c.closing().is_cancelled());
    let _answering = c.answering();
    assert!(c.charge(&alice()).is_err(), "served uncounted otherwise");
    assert_eq!(s.snapshot().open, 1);
    drop(newcomer);
}
