//! End-to-end tests of redmark.

pub mod app_host;
pub mod browser;
mod browser_tools;
pub mod page;
pub mod peers;
pub mod pg;
mod pg_tools;
pub mod qemu;
pub mod server;
pub mod wine;
mod wine_tools;

/// The hour a booking object's `start` (RFC 3339, `2099-09-17T09:00:00+00:00`) names.
pub fn start_hour(booking: &serde_json::Value) -> Option<u64> {
    booking["start"].as_str()?.get(11..13)?.parse().ok()
}
