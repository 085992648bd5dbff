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
//! - [`Hosted`] and [`hosted!`]: what the host needs of an app (its store link, if its tools
//!   wait for one: the booking tools' [`HostLink`]);
//! - [`host::Shared::with_store`]: engines whose tools wait for a [`store::SharedStore`]
//!   (reads at once or awaited, writes group-committed);
//! - [`store::SharedStore`]: another place for bookings (redb and PostgreSQL are two).

mod auth;
pub mod backup;
pub mod check;
pub mod client;
mod folder;
pub mod host;
mod legacy;
pub mod metrics;
pub mod ops;
mod platform;
pub mod serve;
pub mod store;
mod transport;
mod web;

pub use host::{HostLink, Hosted};
pub use redmark_core as core;
pub use serve::ServeArgs;
