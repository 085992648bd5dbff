//! End-to-end tests of redmark.

pub mod peers;
pub mod qemu;
pub mod server;
