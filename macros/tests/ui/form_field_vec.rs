//! A list is not a form field: forms are flat objects of primitives.
use redmark_core::typed::Question;

#[derive(Question)]
struct Pick {
    rooms: Vec<u8>,
}

fn main() {}
