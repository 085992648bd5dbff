//! End-to-end tests of redmark.

pub mod browser;
mod browser_tools;
pub mod peers;
pub mod pg;
mod pg_tools;
pub mod qemu;
pub mod server;
pub mod wine;
mod wine_tools;
