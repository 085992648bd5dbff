//! A choice is a unit variant.
use redmark_core::typed::Choices;

#[derive(Clone, Copy, Choices)]
enum Size {
    Small,
    Custom(u8),
}

fn main() {}
