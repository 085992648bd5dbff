//! redmark as a library: your own MCP 2026-07-28 tools served with everything `redmark serve`
//! gives the booking floor — stdio, TCP and Streamable HTTP, durable sealing keys in the data
//! folder, bearer tokens and OAuth, the 2025-11-25 bridge, panics answered, the same flags and
//! defaults — and reachable with `redmark call`.
//!
//! Write an [`App`](redmark_core::App) on the core (its tools ask with
//! [`Reply::elicit`](redmark_core::Reply)), make it [`Hosted`] with [`hosted!`], and hand a
//! maker of it to [`serve::run_app`] with the command line parsed as [`ServeArgs`]:
//!
//! ```ignore
//! struct Lunch;
//! impl redmark::core::App for Lunch { /* info, tools, async fn call_tool */ }
//! redmark::hosted!(Lunch);
//!
//! fn main() -> std::process::ExitCode {
//!     redmark::serve::run_app(redmark::ServeArgs::from_command_line(), || Lunch)
//! }
//! ```
//!
//! `shell/examples/lunch.rs` is that server, whole (tested over stdio and HTTP, and driven by
//! `redmark call`, in `tests/tests/shell_library.rs`).
//!
//! Extension points:
//! - [`serve::run_app`]: any app, every transport (what `serve --fixtures` uses too), with a
//!   data folder of its own unless `--data` names one ([`serve::app_data_dir`]: `redmark-NAME`
//!   beside the floor's, NAME from the app's `ServerInfo`);
//! - [`Hosted`] and [`hosted!`]: what the host needs of an app (for a booking app over a shell
//!   store, the store handle's place in its connection's order);
//! - [`host::Shared::booking`]: the booking tools over a [`store::Bookings`], each engine with
//!   a handle of its own;
//! - [`store::Bookings`]: another place for bookings, the core's
//!   [`Store`](redmark_core::booking::Store) with a handle per engine (redb and PostgreSQL are
//!   two).

mod auth;
pub mod backup;
pub mod calendar;
pub mod check;
pub mod client;
pub mod data;
pub mod fault;
mod folder;
pub mod host;
pub mod legacy;
pub mod metrics;
pub mod ops;
mod platform;
pub mod serve;
pub mod store;
mod transport;
mod web;

pub use host::Hosted;
pub use redmark_core as core;
pub use serve::ServeArgs;
