//! One argument stands in for a question of one field: `stand_in` on two fields is refused.
use redmark_core::prelude::*;

#[derive(Question)]
#[question(stand_in = "room_id")]
struct Where {
    #[field(title = "Room")]
    room: Pick<4>,
    #[field(title = "Floor")]
    level: u8,
}

fn main() {}
