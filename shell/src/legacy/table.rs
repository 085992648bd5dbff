//! The legacy HTTP session table and its bounds: at most [`MAX_SESSIONS_PER_PRINCIPAL`] per
//! principal and [`MAX_SESSIONS`] in all; a session with a call in flight is never dropped to
//! make room for another principal.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{MAX_SESSIONS, MAX_SESSIONS_PER_PRINCIPAL};

/// Why no session could be opened.
#[derive(Debug, PartialEq, Eq)]
pub enum OpenError {
    /// This principal holds [`MAX_SESSIONS_PER_PRINCIPAL`] sessions, each with a call in flight.
    PrincipalFull,
    /// [`MAX_SESSIONS`] are open and every one that could go has a call in flight.
    Full,
    /// No randomness for a session id (or a poisoned lock).
    Unavailable,
}

/// What the table keeps of a session besides the session itself.
pub struct Entry<T> {
    /// Who opened it; only they may use it.
    pub principal: Arc<[u8]>,
    last_used: Mutex<Instant>,
    /// A call is in flight (a question waits): the session is not dropped for someone else.
    busy: AtomicBool,
    pub value: T,
}

impl<T> Entry<T> {
    /// Records whether a call is in flight (after every change of the session).
    pub fn set_busy(&self, busy: bool) {
        self.busy.store(busy, Ordering::Relaxed);
    }

    fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed)
    }

    fn last_used(&self) -> Instant {
        self.last_used
            .lock()
            .map(|t| *t)
            .unwrap_or_else(|_| Instant::now())
    }
}

/// Every legacy HTTP session of one listener, by id.
pub struct Table<T> {
    map: Mutex<HashMap<String, Arc<Entry<T>>>>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            map: Mutex::new(HashMap::new()),
        }
    }
}

/// A fresh unguessable session id (32 hex digits).
fn new_id() -> Option<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).ok()?;
    Some(hex::encode(b))
}

impl<T> Table<T> {
    /// The session `id` if `principal` owns it (and marks it used).
    pub fn lookup(&self, id: &str, principal: &[u8]) -> Option<Arc<Entry<T>>> {
        let map = self.map.lock().ok()?;
        let s = map.get(id).filter(|s| &*s.principal == principal)?;
        if let Ok(mut t) = s.last_used.lock() {
            *t = Instant::now();
        }
        Some(Arc::clone(s))
    }

    /// Ends session `id`.
    pub fn remove(&self, id: &str) -> Option<Arc<Entry<T>>> {
        self.map.lock().ok()?.remove(id)
    }

    /// Opens a session for `principal`. When the principal is at its cap, its own least
    /// recently used idle session goes; when the table is full, the least recently used idle
    /// session goes (the principal's own first). A busy session is never dropped.
    pub fn open(
        &self,
        principal: &Arc<[u8]>,
        value: T,
    ) -> Result<(String, Arc<Entry<T>>), OpenError> {
        let id = new_id().ok_or(OpenError::Unavailable)?;
        let mut map = self.map.lock().map_err(|_| OpenError::Unavailable)?;
        let own = |e: &Entry<T>| e.principal == *principal;
        let mine = map.values().filter(|e| own(e)).count();
        if mine >= MAX_SESSIONS_PER_PRINCIPAL {
            let victim = map
                .iter()
                .filter(|(_, e)| own(e) && !e.is_busy())
                .min_by_key(|(_, e)| e.last_used())
                .map(|(k, _)| k.clone())
                .ok_or(OpenError::PrincipalFull)?;
            tracing::info!(
                "legacy http: a principal holds {MAX_SESSIONS_PER_PRINCIPAL} sessions; dropped its least recently used idle one"
            );
            map.remove(&victim);
        } else if map.len() >= MAX_SESSIONS {
            let victim = map
                .iter()
                .filter(|(_, e)| !e.is_busy())
                .min_by_key(|(_, e)| (!own(e), e.last_used()))
                .map(|(k, _)| k.clone())
                .ok_or(OpenError::Full)?;
            tracing::info!(
                "legacy http: {MAX_SESSIONS} sessions open; dropped the least recently used idle one"
            );
            map.remove(&victim);
        }
        let entry = Arc::new(Entry {
            principal: Arc::clone(principal),
            last_used: Mutex::new(Instant::now()),
            busy: AtomicBool::new(false),
            value,
        });
        map.insert(id.clone(), Arc::clone(&entry));
        Ok((id, entry))
    }

    #[cfg(test)]
    fn count(&self, principal: &[u8]) -> usize {
        let map = self.map.lock().unwrap();
        map.values().filter(|e| &*e.principal == principal).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str) -> Arc<[u8]> {
        Arc::from(name.as_bytes())
    }

    /// One principal opening sessions without end never takes another's: its own least
    /// recently used idle session goes, and when all of its own are busy it is refused.
    #[test]
    fn a_principal_is_capped_by_its_own_sessions() {
        let t = Table::default();
        let (alice, bob) = (p("alice"), p("bob"));
        let (a, a_entry) = t.open(&alice, ()).unwrap();
        a_entry.set_busy(true);
        let (first_bob, _) = t.open(&bob, ()).unwrap();
        for _ in 0..300 {
            t.open(&bob, ()).unwrap();
        }
        assert!(t.lookup(&a, &alice).is_some(), "alice's session stays");
        assert!(t.lookup(&first_bob, &bob).is_none(), "bob's oldest went");
        assert_eq!(t.count(&bob), MAX_SESSIONS_PER_PRINCIPAL);
        let map = t.map.lock().unwrap();
        for e in map.values() {
            e.set_busy(true);
        }
        drop(map);
        assert!(matches!(t.open(&bob, ()), Err(OpenError::PrincipalFull)));
        assert!(t.lookup(&a, &alice).is_some());
    }

    /// A full table drops an idle session (the opener's own first), never a busy one of
    /// another principal; with every session busy it refuses.
    #[test]
    fn a_full_table_never_drops_a_busy_session() {
        let t = Table::default();
        let principals: Vec<Arc<[u8]>> = (0..MAX_SESSIONS / MAX_SESSIONS_PER_PRINCIPAL)
            .map(|i| p(&format!("p{i}")))
            .collect();
        let mut busy = Vec::new();
        for (i, pr) in principals.iter().enumerate() {
            for j in 0..MAX_SESSIONS_PER_PRINCIPAL {
                let (id, e) = t.open(pr, ()).unwrap();
                // Everyone's sessions are busy except p0's last one.
                if !(i == 0 && j + 1 == MAX_SESSIONS_PER_PRINCIPAL) {
                    e.set_busy(true);
                    busy.push((id, Arc::clone(pr)));
                }
            }
        }
        let newcomer = p("newcomer");
        t.open(&newcomer, ()).unwrap();
        for (id, pr) in &busy {
            assert!(t.lookup(id, pr).is_some(), "a busy session was dropped");
        }
        assert_eq!(t.count(&principals[0]), MAX_SESSIONS_PER_PRINCIPAL - 1);
        assert_eq!(
            t.open(&newcomer, ()).err(),
            None,
            "its own idle session goes"
        );
        let map = t.map.lock().unwrap();
        for e in map.values() {
            e.set_busy(true);
        }
        drop(map);
        assert!(matches!(t.open(&newcomer, ()), Err(OpenError::Full)));
        assert!(t.lookup("nope", &newcomer).is_none());
    }
}
