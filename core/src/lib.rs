//! redmark-core: a sans-IO, `no_std`, allocation-free MCP 2026-07-28 server engine.
//!
//! The engine is handed one JSON-RPC message, the time and the principal, and writes its
//! answer into a buffer the caller lends. It never reads a clock, an RNG or a socket.
//!
//! # Your first tool that asks
//!
//! A tool's arguments, its question and its tool table are Rust types with derives
//! ([`typed`]): the schemas, the checks, the red mark on a wrong answer and the typed reads
//! all come from them, at compile time, with no heap. This is `core/examples/first_tool.rs`,
//! run as this page's test; `docs/writing-a-tool.md` goes further (sealed state, at most once).
//!
#![doc = concat!("```\n", include_str!("../examples/first_tool.rs"), "```")]
//!
//! Layers, bottom up:
//! - [`wire`]: a validating zero-copy JSON view for reading and a bounded writer for emitting;
//!   JSON-RPC envelope and per-request `_meta`.
//! - [`seal`]: `requestState` tokens — HMAC-SHA256 over a compact binary layout, bound to the
//!   principal, an expiry and a digest of the originating request.
//! - [`mrtr`]: Multi Round-Trip Requests as data — input requests and responses,
//!   elicitation forms, answers and their validation.
//! - [`engine`]: dispatch, `_meta` checks, the one error table, the [`engine::App`] trait,
//!   and the round trip a tool runs through its [`Reply`] (ask, elicit, answer).
//! - [`booking`]: the floor of rooms, the booking store and the `book_room` tools.
//! - [`typed`]: tools, forms and sealed state as Rust types (the derives of `redmark-macros`).
//!
//! # The app's own I/O
//!
//! The engine is sans-IO for protocol bytes; the application's own I/O is an `async` trait the
//! app holds, the embedded idiom (`embedded-storage-async`, embassy). The booking tools await
//! their [`Store`](booking::Store): a synchronous store (RAM, a panel's flash) is ready on the
//! first poll, so [`Engine::handle`] serves a message in one call; a store across a network or
//! a bus is awaited by a host that drives [`Engine::handling`] on its executor. Either way the
//! message is parsed and run once, and the handling lives in the caller's frame, no heap:
//!
//! ```
//! use redmark_core::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
//! use redmark_core::engine::{Config, Context, Engine, ServerInfo};
//! use redmark_core::seal::{Key, KeyRing};
//!
//! # fn main() -> Result<(), redmark_core::seal::KeyError> {
//! let info = ServerInfo { name: "door-panel", version: "1.0.0", instructions: None };
//! let app = BookingApp::new(DEFAULT_FLOOR, MemStore::<8>::new(), info);
//! let mut engine = Engine::new(app, KeyRing::new(Key::new(1, &[7; 32])?), Config::default());
//!
//! let book = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_room",
//!     "arguments":{"day":"2030-01-07","hour":9,"room_id":"nook"},"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let cx = Context { now: 1_800_000_000, principal: b"alice", entropy: [1; 8], access: redmark_core::Access::USER };
//! let mut out = [0u8; 4096];
//! let handled = engine.handle(book, &cx, &mut out);
//! assert!(handled.responded);
//! assert_eq!(engine.app().store().bookings().len(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! With the `fixtures` feature, `fixtures` hosts the official conformance suite's tools,
//! prompts and resources on the same engine (the shell's `serve --fixtures`).
//!
//! [`Engine`] states the calling contract and serves one message in its example.
//!
//! A tool that is not ours: `core/examples/extend_meeting.rs` hosts a door panel's
//! `extend_meeting` (ask to confirm, state sealed in `requestState`, no store) on the engine,
//! written only against this public API; `cargo doc` shows it as `example_extend_meeting`.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod booking;
pub mod engine;
#[cfg(feature = "fixtures")]
pub mod fixtures;
pub mod limits;
pub mod mrtr;
pub mod prelude;
pub mod seal;
pub mod serve;
pub mod typed;
pub mod wire;

// The derives name this crate as its users do, here as in the examples.
extern crate self as redmark_core;

/// The `extend_meeting` example (`core/examples/extend_meeting.rs`), documented here because
/// `cargo doc` does not document examples by default (and cargo 1.95 panics on an example's
/// `doc = true` beside dev-dependencies). Documentation only: not part of the crate.
#[cfg(doc)]
#[allow(unused_attributes, missing_docs)] // the example's crate-level attributes, its fields
#[path = "../examples/extend_meeting.rs"]
pub mod example_extend_meeting;

pub use engine::{Access, App, Context, Engine, Handled, HttpHeaders, Note, Reply, Via};
