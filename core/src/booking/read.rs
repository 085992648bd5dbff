//! A booking tool's slot, read from its checked `day` and `hour` arguments (the arguments
//! themselves are read by their `#[derive(Args)]` structs in `tools.rs`).

use super::slot::{Day, Slot};

/// The slot a `day` and `hour` argument name, if they name one.
pub(super) fn slot(day: &str, hour: i64) -> Option<Slot> {
    let day = Day::parse(day)?;
    let hour = u8::try_from(hour).ok().filter(|h| *h < 24)?;
    Some(Slot { day, hour })
}
