//! A bound named by a constant must be an integer constant.
use redmark_core::typed::Args;

const LONGEST: &str = "24";

#[derive(Args)]
struct RoomArgs<'a> {
    /// The room
    #[arg(max_len = LONGEST)]
    room: &'a str,
}

fn main() {}
