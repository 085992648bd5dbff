//! What a booking tool's checked arguments name: the slot of a `day` and `hour`, the caller's
//! booking of a `bk_N` id (the arguments themselves are read by their `#[derive(Args)]`
//! structs in `tools.rs`).

use super::slot::{Day, Slot};
use super::store::Store;
use super::store::{Booking, Holder, StoreError};

/// The slot a `day` and `hour` argument name, if they name one.
pub(super) fn slot(day: &str, hour: i64) -> Option<Slot> {
    let day = Day::parse(day)?;
    let hour = u8::try_from(hour).ok().filter(|h| *h < 24)?;
    Some(Slot { day, hour })
}

/// The booking `id` (as `bk_N`) names, if `holder` holds it; anyone else's is `None` too.
pub(super) async fn yours<S: Store>(
    store: &mut S,
    id: &str,
    holder: &Holder,
) -> Result<Option<Booking>, StoreError> {
    let Some(id) = id.strip_prefix("bk_").and_then(|n| n.parse().ok()) else {
        return Ok(None);
    };
    Ok(store.get(id).await?.filter(|b| b.new.holder == *holder))
}
