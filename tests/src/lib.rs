//! End-to-end tests of redmark.

pub mod qemu;
pub mod server;
