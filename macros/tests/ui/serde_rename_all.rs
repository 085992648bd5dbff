//! Under `#[args(serde)]` the schema names each field as declared: a container `rename_all`
//! would have serde read other names than the schema asks for, so it is refused.
use redmark_core::prelude::*;

#[derive(Args, serde::Deserialize)]
#[args(serde)]
#[serde(rename_all = "camelCase")]
struct Order {
    /// How many
    #[arg(min = 1, max = 9)]
    dish_count: u8,
}

fn main() {}
