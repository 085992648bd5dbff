//! Fractions are a form field, not an argument the checks take.
use redmark_core::typed::Args;

#[derive(Args)]
struct Price {
    #[arg(min = 0, max = 9)]
    amount: f64,
}

fn main() {}
