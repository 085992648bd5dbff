//! The host's tests: no connection holds up another, nonces never repeat, and no message is
//! handled twice however its store answers.

use super::*;
use crate::host::group::Locked;
use crate::store::{Write, Written};
use redmark_core::booking::{
    Booking, BookingId, Holder, MemStore, Slot, StoreError, DEFAULT_FLOOR,
};
use redmark_core::seal::{Key, Nonce};
use std::sync::mpsc;
use std::time::Duration;

/// A store whose group commits wait until the test lets them through.
struct Gated {
    store: Locked<MemStore<8>>,
    open: std::sync::Mutex<mpsc::Receiver<()>>,
}

impl SharedStore for Gated {
    fn get(&self, id: BookingId) -> Result<Option<Booking>, StoreError> {
        self.store.get(id)
    }
    fn made_by(&self, h: &Holder, n: &Nonce) -> Result<Option<Booking>, StoreError> {
        self.store.made_by(h, n)
    }
    fn occupant(&self, room: &str, slot: Slot) -> Result<Option<Booking>, StoreError> {
        self.store.occupant(room, slot)
    }
    fn next_held(&self, h: &Holder, slot: Slot, room: &str) -> Result<Option<Booking>, StoreError> {
        self.store.next_held(h, slot, room)
    }
    fn write_group(&self, writes: &[Write]) -> Vec<Written> {
        let _ = self
            .open
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(30));
        self.store.write_group(writes)
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
    let (open, gate) = mpsc::channel();
    let store = Gated {
        store: Locked::new(MemStore::new()),
        open: std::sync::Mutex::new(gate),
    };
    let info = ServerInfo {
        name: "t",
        version: "0",
        instructions: None,
    };
    let key = Key::new(1, &[7u8; 32]).unwrap();
    let host = Shared::booking(
        DEFAULT_FLOOR,
        store,
        info,
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
        open.send(()).unwrap();
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
    app: HostedBooking,
    entered: Arc<std::sync::Mutex<std::collections::HashMap<Nonce, usize>>>,
}

impl App for Counted {
    type Tool = <HostedBooking as App>::Tool;

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
    fn link(&self) -> &HostLink {
        self.app.link()
    }
}

crate::hosted!(Counted, link);

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
    let info = ServerInfo {
        name: "t",
        version: "0",
        instructions: None,
    };
    let host = Shared::with_store(
        move || Counted {
            app: BookingApp::with_link(DEFAULT_FLOOR, HostLink::default(), info),
            entered: Arc::clone(&counts),
        },
        Locked::new(MemStore::<512>::new()),
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
