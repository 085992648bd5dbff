//! End-to-end tests of redmark.
pub mod server;
