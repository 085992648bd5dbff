//! Bounds that do not fit the argument's type.
use redmark_core::typed::Args;

#[derive(Args)]
struct Hour {
    #[arg(min = 0, max = 300)]
    hour: u8,
}

fn main() {}
