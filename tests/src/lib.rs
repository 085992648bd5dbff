//! End-to-end tests of redmark.

pub mod peers;
pub mod pg;
mod pg_tools;
pub mod qemu;
pub mod server;
