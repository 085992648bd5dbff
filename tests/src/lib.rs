//! End-to-end tests of redmark.

pub mod pg;
mod pg_tools;
pub mod qemu;
pub mod server;
