//! The host's tests: no connection holds up another, nonces never repeat, no message is
//! handled twice however its store answers, and a tool that awaits a timer is woken, not spun.

use super::*;
use crate::store::redb::{RedbBookings, RedbStore};
use crate::store::{Admin, Bookings, Fence};
use redmark_core::booking::{
    Actor, Booking, BookingId, Commit, Holder, Minute, NewBooking, Occurrence, Resized,
    SeriesCommit, SeriesIds, Store, StoreError, Trail, DEFAULT_FLOOR, DEFAULT_SITE,
};
use redmark_core::seal::{Key, Nonce};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;
use tokio::sync::Semaphore;

/// A redb store in memory whose operations each wait for a timer-like future first (pending
/// twice, woken from another thread), and whose commits wait for a permit if gated.
struct Hooked {
    inner: RedbBookings,
    gate: Option<Arc<Semaphore>>,
    /// Polls of the timer-like futures, all handles together.
    polls: Arc<AtomicUsize>,
}

impl Hooked {
    fn new(gate: Option<Arc<Semaphore>>) -> Self {
        Hooked {
            inner: RedbBookings::new(RedbStore::in_memory().unwrap()),
            gate,
            polls: Arc::default(),
        }
    }

    /// Pending twice, each time woken 1 ms later by a thread of its own (a timer firing).
    async fn tick(&self) {
        let mut left = 2;
        std::future::poll_fn(|cx| {
            self.polls.fetch_add(1, Ordering::SeqCst);
            if left == 0 {
                return Poll::Ready(());
            }
            left -= 1;
            let waker = cx.waker().clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1));
                waker.wake();
            });
            Poll::Pending
        })
        .await;
    }
}

impl Store for Hooked {
    async fn commit_by(&mut self, new: &NewBooking, by: &Actor) -> Result<Commit, StoreError> {
        self.tick().await;
        if let Some(gate) = &self.gate {
            let _ = gate.acquire().await;
        }
        self.inner.commit_by(new, by).await
    }
    async fn cancel(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.cancel(id, by).await
    }
    async fn trail(&mut self, id: BookingId) -> Result<Trail, StoreError> {
        self.tick().await;
        self.inner.trail(id).await
    }
    async fn get(&mut self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.get(id).await
    }
    async fn made_by(&mut self, h: &Holder, n: &Nonce) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.made_by(h, n).await
    }
    async fn next_held(
        &mut self,
        h: &Holder,
        start: Minute,
        room: &str,
    ) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.next_held(h, start, room).await
    }
    async fn next_in_room(
        &mut self,
        room: &str,
        from: Minute,
    ) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.next_in_room(room, from).await
    }
    async fn set_end(
        &mut self,
        id: BookingId,
        by: &Actor,
        from: Minute,
        to: Minute,
    ) -> Result<Option<Resized>, StoreError> {
        self.tick().await;
        self.inner.set_end(id, by, from, to).await
    }
    async fn check_in(&mut self, id: BookingId, by: &Actor) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.check_in(id, by).await
    }
    async fn release_due(
        &mut self,
        now: Minute,
        window: u16,
        by: &Actor,
    ) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.release_due(now, window, by).await
    }
    async fn commit_series(
        &mut self,
        base: &NewBooking,
        other: &str,
        occurrences: &[Occurrence],
        by: &Actor,
    ) -> Result<SeriesCommit, StoreError> {
        self.tick().await;
        self.inner.commit_series(base, other, occurrences, by).await
    }
    async fn cancel_series(
        &mut self,
        series: BookingId,
        from: Minute,
        by: &Actor,
    ) -> Result<Option<SeriesIds>, StoreError> {
        self.tick().await;
        self.inner.cancel_series(series, from, by).await
    }
    async fn next_in_series(
        &mut self,
        series: BookingId,
        after: BookingId,
    ) -> Result<Option<Booking>, StoreError> {
        self.tick().await;
        self.inner.next_in_series(series, after).await
    }
}

impl Bookings for Hooked {
    fn handle(&self) -> Self {
        Hooked {
            inner: self.inner.handle(),
            gate: self.gate.clone(),
            polls: Arc::clone(&self.polls),
        }
    }
    fn fence(&self) -> &Fence {
        self.inner.fence()
    }
}

impl Admin for Hooked {
    fn probe(&self) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + '_>> {
        self.inner.probe()
    }
}

crate::hosted!(HostedBooking<Hooked>, store);

fn info() -> ServerInfo {
    ServerInfo {
        name: "t",
        version: "0",
        instructions: None,
    }
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// No lock is shared by connections: while one connection's booking waits for its commit,
/// another connection is answered, and the booking is answered once the commit is made.
#[test]
fn a_booking_waiting_for_its_commit_holds_up_no_other_connection() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let gate = Arc::new(Semaphore::new(0));
    let store = Hooked::new(Some(Arc::clone(&gate)));
    let key = Key::new(1, &[7u8; 32]).unwrap();
    let host = Shared::booking(
        DEFAULT_SITE,
        store,
        info(),
        KeyRing::new(key),
        Config::default(),
    );
    rt.block_on(async {
        let book = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2099-01-01","hour":9,"room_id":"nook"}},{META}}}}}"#
        );
        let h = Arc::clone(&host);
        let booking = tokio::spawn(async move {
            let mut a = h.connection();
            let got = a.handle(Msg::Line(book.as_bytes()), b"a").await;
            String::from_utf8_lossy(a.answer(&got)).into_owned()
        });
        let list = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{META}}}}}"#
        );
        let mut b = host.connection();
        for _ in 0..3 {
            let got = tokio::time::timeout(
                Duration::from_secs(10),
                b.handle(Msg::Line(list.as_bytes()), b"b"),
            )
            .await
            .expect("held up by the other connection's commit");
            assert!(String::from_utf8_lossy(b.answer(&got)).contains("book_room"));
        }
        assert!(!booking.is_finished(), "answered before its commit was made");
        gate.add_permits(1);
        let answer = tokio::time::timeout(Duration::from_secs(10), booking)
            .await
            .expect("the booking is answered once committed")
            .unwrap();
        assert!(answer.contains("Booked"), "{answer}");
    });
}

/// The booking app, counting how often its tools are entered per operation (a message run
/// twice would enter twice with the same nonce).
struct Counted {
    app: HostedBooking<Hooked>,
    entered: Arc<std::sync::Mutex<std::collections::HashMap<Nonce, usize>>>,
}

impl App for Counted {
    type Tool = <HostedBooking<Hooked> as App>::Tool;

    fn info(&self) -> ServerInfo {
        self.app.info()
    }

    fn tools(&self) -> &[redmark_core::engine::ToolEntry<Self::Tool>] {
        self.app.tools()
    }

    async fn call_tool(
        &mut self,
        tool: Self::Tool,
        call: &redmark_core::engine::Call<'_>,
        reply: redmark_core::Reply<'_, '_>,
    ) -> Result<redmark_core::engine::Done, redmark_core::engine::CallError> {
        *self
            .entered
            .lock()
            .unwrap()
            .entry(call.operation())
            .or_default() += 1;
        self.app.call_tool(tool, call, reply).await
    }
}

impl Counted {
    fn store(&self) -> &Hooked {
        self.app.store()
    }
}

crate::hosted!(Counted, store);

/// Pipelined bookings on 8 connections (every slot asked twice, so half find it taken and
/// read which rooms are free), each line begun while earlier ones wait for their group
/// commit: every message enters its tool exactly once, and every answer is right.
#[test]
fn no_message_is_handled_twice() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let key = Key::new(1, &[7u8; 32]).unwrap();
    let entered = Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
    let counts = Arc::clone(&entered);
    let store = Hooked::new(None);
    let host = Shared::new(
        move || Counted {
            app: BookingApp::new(DEFAULT_FLOOR, store.handle(), info()),
            entered: Arc::clone(&counts),
        },
        KeyRing::new(key),
        Config::default(),
    );
    const PER: usize = 48;
    let answers = rt.block_on(async {
        let mut tasks = Vec::new();
        for c in 0..8 {
            let host = Arc::clone(&host);
            tasks.push(tokio::spawn(async move {
                let mut conn = host.connection();
                let mut waiting = std::collections::VecDeque::new();
                let mut answers = Vec::new();
                for i in 0..PER {
                    let (day, hour) = (1 + (c * PER + i) / 2 / 24, (c * PER + i) / 2 % 24);
                    let line = format!(
                        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2099-01-{day:02}","hour":{hour},"room_id":"nook"}},{META}}}}}"#
                    );
                    let fenced = !waiting.is_empty();
                    match conn.begin(Some(line.as_bytes()), b"p", fenced) {
                        Begun::Done(h) if !fenced => {
                            answers.push(String::from_utf8_lossy(conn.answer(&h)).into_owned())
                        }
                        Begun::Done(h) => waiting.push_back(Err(
                            String::from_utf8_lossy(conn.answer(&h)).into_owned(),
                        )),
                        Begun::Waiting(p) => waiting.push_back(Ok(p)),
                    }
                }
                for w in waiting {
                    answers.push(match w {
                        Ok(p) => {
                            let h = conn.resume(p).await;
                            String::from_utf8_lossy(conn.answer(&h)).into_owned()
                        }
                        Err(a) => a,
                    });
                }
                answers
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    });
    assert_eq!(answers.len(), 8 * PER);
    let booked = answers.iter().filter(|a| a.contains("Booked")).count();
    let taken = answers
        .iter()
        .filter(|a| a.contains("is already booked"))
        .count();
    assert_eq!(booked, 8 * PER / 2, "one booking per slot");
    assert_eq!(
        taken,
        8 * PER / 2,
        "the second asker of each slot finds it taken"
    );
    let entered = entered.lock().unwrap();
    assert_eq!(entered.len(), 8 * PER, "one operation per message");
    assert!(
        entered.values().all(|&n| n == 1),
        "a message entered its tool twice"
    );
}

/// A booking whose every store operation first awaits a timer-like future (pending twice,
/// woken from another thread) books under the host, and each such future is polled three
/// times: once to start, once per wake. A host that spun on a pending handling would poll it
/// thousands of times in the milliseconds it waits.
#[test]
fn a_tool_awaiting_a_timer_books_without_spinning() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let store = Hooked::new(None);
    let polls = Arc::clone(&store.polls);
    let key = Key::new(1, &[7u8; 32]).unwrap();
    let host = Shared::booking(
        DEFAULT_SITE,
        store,
        info(),
        KeyRing::new(key),
        Config::default(),
    );
    let answers = rt.block_on(async {
        let mut conn = host.connection();
        let mut answers = Vec::new();
        for id in 1..=2 {
            // The same time twice: the second finds it taken and reads what fits instead.
            let book = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2099-01-01","hour":9,"room_id":"nook"}},{META}}}}}"#
            );
            let h = conn.handle(Msg::Line(book.as_bytes()), b"a").await;
            answers.push(String::from_utf8_lossy(conn.answer(&h)).into_owned());
        }
        answers
    });
    assert!(answers[0].contains("Booked"), "{}", answers[0]);
    assert!(answers[1].contains("is already booked"), "{}", answers[1]);
    let polls = polls.load(Ordering::SeqCst);
    // The booking: one commit. The second: its commit, the read of the meeting in the way (to
    // name it if the caller may read its title), then what fits instead: one read per room of
    // the floor, and three reads that find three other starts in the room (09:15 reads the
    // meeting 09:00-10:00, which settles the five other nearer starts; 10:00 reads the room
    // free from then, which settles 10:15; 08:00 reads it free until 09:00).
    let waits = 1 + 1 + 1 + DEFAULT_FLOOR.rooms.len() + 3;
    assert_eq!(
        polls,
        3 * waits,
        "each timer polled once to start and once per wake"
    );
}
