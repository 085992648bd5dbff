//! The one host of the engine in the shell: every transport (stdio, TCP, HTTP) and the
//! in-process client build and drive the engine here — clock, entropy, principal, notes,
//! panics, durable writes.
//!
//! There is no engine shared by all connections. [`Shared`] holds what every engine is made
//! of (the app's parts, each with its own handle on the app's store, the sealing keys, the
//! configuration); each connection makes its own [`Conn`]: an engine and a reused answer
//! buffer. The engine keeps no state between requests (an open question travels in the
//! client's sealed `requestState`), so engines need no lock, and a message is answered on the
//! task that read it. A handling that waits for its store keeps its place (see `drive.rs`):
//! the app's store handle awaits its read or its durable write, and wakes the handling.
//!
//! Every request gets an answer: a panic while the engine handles it (a bug, or a library
//! meeting damage it did not expect) is caught here, logged, and answered with a JSON-RPC
//! `-32603` error carrying the request's id (read with the core's envelope parser), on every
//! transport; serving goes on. Continuing with the same engine is safe since it keeps no state
//! between requests; a panic mid-request commits nothing (writes are made by the store's own
//! committer, in transactions), and the redb store catches redb's own panics and then refuses further
//! use of the file (see [`crate::store::redb`]).

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use redmark_core::booking::{BookingApp, Floor};
use redmark_core::engine::{fault_answer, Config, Note, ServerInfo};
use redmark_core::fixtures::Fixtures;
use redmark_core::limits::OUT;
use redmark_core::seal::KeyRing;
use redmark_core::Via;
use redmark_core::{App, Engine, Handled};

pub mod changes;
pub mod drive;
pub mod entropy;
mod inject;
pub mod mcp_app;
pub mod msg;
pub mod room_day;

use crate::auth::role::reseat;
use crate::calendar::{Calendars, Source};
use crate::store::pg::PgStore;
use crate::store::redb::RedbBookings;
use crate::store::{Admin, Bookings, Fence};
pub use drive::{Cx, Panicked};
pub use msg::{Msg, OwnedHeaders};

/// The principal of stdio and TCP clients: the local user.
pub const LOCAL_PRINCIPAL: &[u8] = b"local";

/// An app the shell can host.
pub trait Hosted: App + Send + Sized + 'static {
    /// Where the app's store keeps this engine's place in its connection's read-after-write
    /// order (`None`: it keeps no store, or its store needs no order).
    fn fence(&self) -> Option<&Fence> {
        None
    }

    /// [`drive::drive`] on this app, as a future that may move between threads. Written per
    /// app type ([`hosted!`](crate::hosted!)), where the compiler sees that the app's handling is `Send`.
    fn drive<'a>(
        engine: &'a mut Engine<Self>,
        msg: Msg<'a>,
        cx: &'a Cx<'a>,
        out: &'a mut [u8],
    ) -> Driving<'a>;

    /// [`run_job`] on this app, boxed as a future that may move between threads (one
    /// allocation per begun message; written by [`hosted!`](crate::hosted!) like [`Hosted::drive`]).
    fn begin(job: Job<Self>) -> Begin;
}

/// A message being driven ([`Hosted::drive`]).
pub type Driving<'a> = Pin<Box<dyn Future<Output = Result<Handled, Panicked>> + Send + 'a>>;

/// A begun message on its way ([`Hosted::begin`]).
pub type Begin = Pin<Box<dyn Future<Output = Finished> + Send>>;

/// Makes an app type [`Hosted`]: `redmark::hosted!(MyApp);`, or `redmark::hosted!(MyApp,
/// store)` for a [`BookingApp`] over a shell store ([`Bookings`]), whose handle keeps the
/// engine's place in its connection's order. Written per type, where the compiler sees that
/// the app's handling (its tools, its store's futures) may move between threads.
#[macro_export]
macro_rules! hosted {
    ($app:ty) => {
        impl $crate::host::Hosted for $app {
            $crate::hosted!(@drive);
        }
    };
    ($app:ty, store) => {
        impl $crate::host::Hosted for $app {
            fn fence(&self) -> ::core::option::Option<&$crate::store::Fence> {
                ::core::option::Option::Some($crate::store::Bookings::fence(self.store()))
            }
            $crate::hosted!(@drive);
        }
    };
    (@drive) => {
        fn drive<'a>(
            engine: &'a mut $crate::core::Engine<Self>,
            msg: $crate::host::Msg<'a>,
            cx: &'a $crate::host::Cx<'a>,
            out: &'a mut [u8],
        ) -> $crate::host::Driving<'a> {
            ::std::boxed::Box::pin($crate::host::drive::drive(engine, msg, cx, out))
        }
        fn begin(job: $crate::host::Job<Self>) -> $crate::host::Begin {
            ::std::boxed::Box::pin($crate::host::run_job(job))
        }
    };
}

crate::hosted!(Fixtures);
crate::hosted!(HostedBooking<RedbBookings>, store);
crate::hosted!(HostedBooking<PgStore>, store);

/// The booking app as the shell hosts it: its tools hold a handle on the shell's store
/// (redb unless named).
pub type HostedBooking<S = RedbBookings> = BookingApp<'static, S>;

/// The answer [`Shared::run_line`] gives a line, to come.
pub type LineAnswer = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send>>;

/// What every connection's engine is made of.
pub struct Shared<A> {
    make: Box<dyn Fn() -> A + Send + Sync>,
    keys: KeyRing,
    config: Config,
    /// The app's store, for the operator's paths (none without a store).
    admin: Option<Box<dyn Admin>>,
    /// The app serves resources (the 2025-11-25 bridge's `initialize` says so).
    resources: bool,
    /// The booking app's calendar feeds (none for another app).
    calendars: Option<Arc<dyn Calendars>>,
    /// What listen streams follow (quiet for an app whose store tells no changes: held here,
    /// since a stream's changes end when their hub is dropped).
    live: changes::Live,
}

impl<A: Hosted> Shared<A> {
    /// Engines hosting the apps `make` builds.
    pub fn new(
        make: impl Fn() -> A + Send + Sync + 'static,
        keys: KeyRing,
        config: Config,
    ) -> Arc<Self> {
        let resources = serves_resources(&make());
        Arc::new(Shared {
            make: Box::new(make),
            keys,
            config,
            admin: None,
            resources,
            calendars: None,
            live: changes::Live::quiet(),
        })
    }

    /// The app's store, for `/healthz` and `redmark backup` (none without a store).
    pub fn admin(&self) -> Option<&dyn Admin> {
        self.admin.as_deref()
    }

    /// The calendar feeds (`/calendars/` on `--http`), for a booking app.
    pub fn calendars(&self) -> Option<&dyn Calendars> {
        self.calendars.as_deref()
    }

    /// The store's changes and the floors, for `subscriptions/listen` streams (quiet: the
    /// app's store tells no changes).
    pub fn live(&self) -> &changes::Live {
        &self.live
    }

    /// Whether the app serves resources (concrete or templates).
    pub fn serves_resources(&self) -> bool {
        self.resources
    }

    /// A new engine (cheap: the app's parts, the keys and the configuration are copied).
    pub fn engine(&self) -> Engine<A> {
        Engine::new((self.make)(), self.keys.clone(), self.config)
    }

    /// A connection: its own engine and answer buffer.
    pub fn connection(self: &Arc<Self>) -> Conn<A> {
        Conn {
            engine: self.engine(),
            principal: None,
            shared: Arc::clone(self),
            answer: Vec::new(),
        }
    }

    /// Runs one line on a connection of its own and returns the answer, if any: how the
    /// 2025-11-25 bridge (`crate::legacy`) reaches the core from any transport.
    pub fn run_line(
        self: &Arc<Self>,
        principal: Arc<[u8]>,
    ) -> impl FnMut(Vec<u8>) -> LineAnswer + Clone + Send + 'static {
        let shared = Arc::clone(self);
        let principal: Arc<[u8]> = Arc::from(reseat(&principal, Via::Legacy));
        move |line| {
            let (shared, principal) = (Arc::clone(&shared), Arc::clone(&principal));
            Box::pin(async move {
                let mut conn = shared.connection();
                let h = conn.handle(Msg::Line(&line), &principal).await;
                h.responded.then(|| conn.answer(&h).to_vec())
            })
        }
    }
}

impl<S: Bookings> Shared<HostedBooking<S>>
where
    HostedBooking<S>: Hosted,
{
    /// The booking tools over `floor` (a site of one building or more), each engine's with its own handle on `store`: reads
    /// on the store, durable writes as it makes them (a redb store group-commits them).
    pub fn booking(
        floor: &'static [Floor<'static>],
        store: S,
        info: ServerInfo,
        keys: KeyRing,
        config: Config,
    ) -> Arc<Self> {
        let admin: Box<dyn Admin> = Box::new(store.handle());
        let resources = serves_resources(&BookingApp::site(floor, store.handle(), info));
        let calendars =
            Source::new(floor, store.handle(), &keys).map(|s| Arc::new(s) as Arc<dyn Calendars>);
        let live = store
            .changes()
            .map_or_else(changes::Live::quiet, |changes| changes::Live {
                changes,
                floors: floor,
            });
        Arc::new(Shared {
            make: Box::new(move || BookingApp::site(floor, store.handle(), info)),
            keys,
            config,
            admin: Some(admin),
            resources,
            calendars,
            live,
        })
    }
}

/// One connection's engine and answer buffer.
pub struct Conn<A: Hosted> {
    engine: Engine<A>,
    /// The principal of the last message begun (the same for every line of a connection).
    principal: Option<Arc<[u8]>>,
    shared: Arc<Shared<A>>,
    /// The last answer (as long as the longest so far).
    answer: Vec<u8>,
}

/// What [`Conn::begin`] came to.
pub enum Begun {
    /// Answered: see [`Conn::answer`].
    Done(Handled),
    /// Waiting for its store: finish it with [`Conn::resume`].
    Waiting(InFlight),
}

/// A message waiting for its store, owning all it needs (its own engine, a copy of its line,
/// its answer buffer), so the connection goes on with the next line meanwhile.
pub struct InFlight {
    handling: Begin,
    fence: Option<Fence>,
    /// Bytes of its line.
    pub len: usize,
}

impl InFlight {
    /// Whether it waits to read until the connection's earlier writes are made.
    pub fn held(&self) -> bool {
        self.fence.as_ref().is_some_and(Fence::held)
    }
}

/// A message begun on its own ([`Conn::begin`]): all it owns while it waits.
pub struct Job<A: Hosted> {
    engine: Box<Engine<A>>,
    /// A copy of its line (`None`: a line over the framing limit).
    line: Option<Vec<u8>>,
    principal: Arc<[u8]>,
}

/// A begun message at its end, with what it owned.
pub struct Finished {
    line: Option<Vec<u8>>,
    out: Box<[u8]>,
    ran: Result<Handled, Panicked>,
}

/// Drives a begun message to its end ([`drive::drive`] on what the job owns).
pub async fn run_job<A: Hosted>(job: Job<A>) -> Finished {
    let Job {
        mut engine,
        line,
        principal,
    } = job;
    let mut out = answer_buffer();
    let cx = Cx::new(&principal);
    let msg = line.as_deref().map_or(Msg::TooLong, Msg::Line);
    let ran = drive::drive(&mut engine, msg, &cx, &mut out).await;
    Finished { line, out, ran }
}

impl<A: Hosted> Conn<A> {
    /// Answers `msg` from `principal`; the answer is [`Conn::answer`]`(&handled)`.
    pub async fn handle(&mut self, msg: Msg<'_>, principal: &[u8]) -> Handled {
        let cx = Cx::new(principal);
        let mut out = answer_buffer();
        if let Some(f) = self.engine.app().fence() {
            f.begin(false);
        }
        let ran = A::drive(&mut self.engine, msg, &cx, &mut out).await;
        self.finish(msg, ran, &mut out)
    }

    /// Starts `line` (`None`: a line over the framing limit) and runs it until it finishes or
    /// waits for its store. `fenced`: earlier messages of this connection are still in flight
    /// (a read before its own first write then waits until it is resumed). Messages begun are
    /// resumed in the order they were begun.
    pub fn begin(&mut self, line: Option<&[u8]>, principal: &[u8], fenced: bool) -> Begun {
        let engine = Box::new(self.shared.engine());
        let fence = engine.app().fence().cloned();
        if let Some(f) = &fence {
            f.begin(fenced);
        }
        let line = line.map(<[u8]>::to_vec);
        let len = line.as_ref().map_or(0, Vec::len);
        let principal = match &self.principal {
            Some(p) if **p == *principal => Arc::clone(p),
            _ => Arc::clone(self.principal.insert(Arc::from(principal))),
        };
        let mut handling = A::begin(Job {
            engine,
            line,
            principal,
        });
        let mut poll = TaskContext::from_waker(Waker::noop());
        match handling.as_mut().poll(&mut poll) {
            Poll::Ready(f) => Begun::Done(self.finished(f)),
            Poll::Pending => Begun::Waiting(InFlight {
                handling,
                fence,
                len,
            }),
        }
    }

    /// Finishes a message [`Conn::begin`] left waiting (without blocking the thread).
    pub async fn resume(&mut self, p: InFlight) -> Handled {
        let f = p.handling.await;
        self.finished(f)
    }

    fn finished(&mut self, mut f: Finished) -> Handled {
        let msg = f.line.as_deref().map_or(Msg::TooLong, Msg::Line);
        self.finish(msg, f.ran, &mut f.out)
    }

    /// The answer of `ran` kept as [`Conn::answer`]; a panic answered `-32603`.
    fn finish(&mut self, msg: Msg<'_>, ran: Result<Handled, Panicked>, out: &mut [u8]) -> Handled {
        let h = match ran {
            Ok(h) => {
                if let Some(note) = h.note {
                    log_note(note);
                }
                h
            }
            Err(Panicked) => {
                tracing::error!("a request panicked in the engine; answered with -32603");
                fault(msg, out)
            }
        };
        self.answer.clear();
        if h.responded {
            self.answer.extend_from_slice(&out[..h.len]);
        }
        // OPS (crate::metrics): every answered message, by method and outcome.
        crate::metrics::metrics().request(msg.bytes(), &out[..h.len], h.responded);
        // The MCP App's document, larger than `out`, goes into its read's answer here.
        let mut h = h;
        if h.responded && mcp_app::fill(msg.bytes(), &mut self.answer) {
            h.len = self.answer.len();
        }
        // A room's day's calendar, written from its JSON by the shell's ICS writer.
        let tag = self
            .shared
            .calendars
            .as_ref()
            .map_or("local", |c| c.uid_tag());
        if h.responded && room_day::fill(msg.bytes(), &mut self.answer, tag) {
            h.len = self.answer.len();
        }
        h
    }

    /// The answer bytes of `h` (lines joined by `\n`; empty unless `h.responded`).
    pub fn answer(&self, h: &Handled) -> &[u8] {
        if h.responded {
            &self.answer
        } else {
            &[]
        }
    }
}

/// Whether `app` serves resources, as `server/discover` says.
fn serves_resources<A: App>(app: &A) -> bool {
    !app.resources().is_empty() || !app.resource_templates().is_empty()
}

/// A message's answer buffer: [`OUT`] bytes, made for it.
fn answer_buffer() -> Box<[u8]> {
    vec![0u8; OUT].into_boxed_slice()
}

/// The `-32603` line for when even [`fault`] panicked: no id, since reading it is what failed.
const FAULT_WITHOUT_ID: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#;

/// The `-32603` answer to a message whose handling failed, written into `out`.
fn fault(msg: Msg<'_>, out: &mut [u8]) -> Handled {
    let bytes = msg.bytes();
    // `fault_answer` re-reads the input with the envelope parser, which may be what panicked:
    // a second panic gets the fixed id-less answer instead.
    panic::catch_unwind(AssertUnwindSafe(|| fault_answer(bytes, out))).unwrap_or_else(|_| {
        tracing::error!("the -32603 answer panicked too; answered without an id");
        out[..FAULT_WITHOUT_ID.len()].copy_from_slice(FAULT_WITHOUT_ID);
        Handled {
            len: FAULT_WITHOUT_ID.len(),
            status: 500,
            responded: true,
            note: None,
            listening: false,
        }
    })
}

fn log_note(note: Note) {
    match note {
        Note::StateRejected(why) => tracing::info!("requestState rejected: {why}"),
        // Once per store outage, not once per request (store/outage.rs).
        Note::Internal(why) => crate::store::outage::tool_fault(why),
        other => tracing::warn!("engine: {other}"),
    }
}

#[cfg(test)]
mod tests;
