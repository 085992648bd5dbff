//! Sealed state is fixed-size: no borrowed strings.
use redmark_core::typed::Sealed;

#[derive(Sealed)]
struct State {
    at: u16,
    note: &'static str,
}

fn main() {}
