//! A nested struct is not a form field (only a `Choices` enum may be named by path).
use redmark_core::typed::Question;

#[derive(Clone, Copy)]
struct Address {
    street: u8,
}

#[derive(Question)]
struct Where {
    address: Address,
}

fn main() {}
