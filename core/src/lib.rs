//! redmark-core: a sans-IO, `no_std`, allocation-free MCP 2026-07-28 server engine.
//!
//! The engine is handed one JSON-RPC message, the time and the principal, and writes its
//! answer into a buffer the caller lends. It never reads a clock, an RNG or a socket.
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
//! - [`booking`]: the floor of rooms, the booking store trait and the `book_room` tools.
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
pub mod seal;
pub mod serve;
pub mod wire;

// The example names this crate as its users do.
#[cfg(doc)]
extern crate self as redmark_core;

/// The `extend_meeting` example (`core/examples/extend_meeting.rs`), documented here because
/// `cargo doc` does not document examples by default (and cargo 1.95 panics on an example's
/// `doc = true` beside dev-dependencies). Documentation only: not part of the crate.
#[cfg(doc)]
#[allow(unused_attributes)] // the example's crate-level attributes
#[path = "../examples/extend_meeting.rs"]
pub mod example_extend_meeting;

pub use engine::{App, Context, Engine, Handled, HttpHeaders, Note, Reply};
