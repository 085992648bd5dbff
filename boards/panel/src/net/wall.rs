//! The wall clock: the boot clock plus an offset an SNTP answer sets, never stepped backwards,
//! each forward step bounded; until the first answer the panel has no time.
//!
//! - The first answer within [`TIME_FLOOR`]..[`TIME_CEIL`] sets the clock (an answer outside
//!   is refused: a panel built in 2026 is not in 1990 or 2200).
//! - After that, an answer behind the clock is refused (the clock keeps counting), and one
//!   more than [`MAX_STEP_S`] ahead moves the clock [`MAX_STEP_S`] only. With one answer per
//!   [`super::sntp::SYNC_EVERY_MS`], whoever answers can make the clock run at most
//!   1 + 4/16 times as fast as real time, and never back: a forward jump reaches the panel
//!   over hours, not at once (a genuine correction of an hour takes four).
//! - A reset forgets the offset: the panel has no time until the next answer.

use core::sync::atomic::{AtomicU32, Ordering};

use crate::diag::{self, Piece::Num, Piece::Text};

/// The earliest time an SNTP answer may set: 2026-01-01T00:00:00Z.
pub const TIME_FLOOR: u64 = 1_767_225_600;
/// The first time past what an SNTP answer may set: 2100-01-01T00:00:00Z.
pub const TIME_CEIL: u64 = 4_102_444_800;
/// The most one SNTP answer moves a set clock forward, seconds.
pub const MAX_STEP_S: u64 = 4;

/// Wall time less boot time, seconds; 0: no time yet (one execution context: plain loads and
/// stores; a u32 holds every offset below [`TIME_CEIL`]).
static OFFSET: AtomicU32 = AtomicU32::new(0);

/// Whether the panel has a wall clock (an SNTP answer set it since boot).
pub fn is_set() -> bool {
    OFFSET.load(Ordering::Relaxed) != 0
}

/// Whether the panel waits for its time: an SNTP server is provisioned and has not answered
/// (an image without one keeps counting from boot, as the UART panel).
pub fn awaited() -> bool {
    crate::provision::SNTP.is_some() && !is_set()
}

/// The wall clock (unix seconds) at boot time `boot_s`, or `boot_s` itself while unset.
pub fn now(boot_s: u64) -> u64 {
    boot_s + u64::from(OFFSET.load(Ordering::Relaxed))
}

/// Takes `told` (unix seconds, an SNTP server's answer) at boot time `boot_s`, by the rules
/// above, and says on semihosting what it did.
pub fn told(told: u64, boot_s: u64) {
    let clock = now(boot_s);
    let (offset, what) = if !(TIME_FLOOR..TIME_CEIL).contains(&told) || told < boot_s {
        (None, "clock: SNTP time outside 2026-2099 refused: ")
    } else if !is_set() {
        (Some(told - boot_s), "clock: set by SNTP to ")
    } else if told < clock {
        (None, "clock: SNTP time behind the clock refused: ")
    } else if told - clock > MAX_STEP_S {
        (Some(clock + MAX_STEP_S - boot_s), "clock: SNTP time too far ahead, stepped 4 s only: ")
    } else {
        (Some(told - boot_s), "")
    };
    if let Some(o) = offset.and_then(|o| u32::try_from(o).ok()) {
        OFFSET.store(o, Ordering::Relaxed);
    }
    if !what.is_empty() {
        diag::line(&[Text(what), Num(told), Text(" (clock "), Num(now(boot_s)), Text(")")]);
    }
}
