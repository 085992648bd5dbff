//! A text answer is `Text<'a>`, not `&str`.
use redmark_core::typed::Question;

#[derive(Question)]
struct Name<'a> {
    name: &'a str,
}

fn main() {}
