//! End-to-end tests of redmark.
