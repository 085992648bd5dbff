//! The wall clock: the boot clock plus an offset a trusted time sets (SNTP when networked, the
//! host's HMAC-tagged answer on the UART: [`crate::time`]), never stepped backwards, each
//! forward step bounded; until the first time the panel has no time.
//!
//! - The first time within [`TIME_FLOOR`]..[`TIME_CEIL`] sets the clock (a time outside is
//!   refused: a panel built in 2026 is not in 1990 or 2200).
//! - After that, a time behind the clock is refused (the clock keeps counting), and one more
//!   than [`MAX_STEP_S`] ahead moves the clock [`MAX_STEP_S`] only. With at most one time taken
//!   per 16 s (SNTP's `SYNC_EVERY_MS`, the UART's `time::MIN_GAP_S`), whoever tells the time can
//!   make the clock run at most 1 + 4/16 times as fast as real time, and never back: a forward
//!   jump reaches the panel over hours, not at once (a genuine correction of an hour takes four).
//! - A reset forgets the offset: the panel has no time until the next one.

use core::sync::atomic::{AtomicU32, Ordering};

use crate::diag::{self, Piece::Num, Piece::Text};

/// The earliest time that may set the clock: 2026-01-01T00:00:00Z.
pub const TIME_FLOOR: u64 = 1_767_225_600;
/// The first time past what may set the clock: 2100-01-01T00:00:00Z.
pub const TIME_CEIL: u64 = 4_102_444_800;
/// The most one time told moves a set clock forward, seconds.
pub const MAX_STEP_S: u64 = 4;

/// Who tells this image the time (in its diagnostics).
#[cfg(feature = "net")]
const SOURCE: &str = "SNTP";
/// Who tells this image the time (in its diagnostics).
#[cfg(not(feature = "net"))]
const SOURCE: &str = "host";

/// Wall time less boot time, seconds; 0: no time yet (one execution context: plain loads and
/// stores; a u32 holds every offset below [`TIME_CEIL`]).
static OFFSET: AtomicU32 = AtomicU32::new(0);

/// Why a time told was not taken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Outside [`TIME_FLOOR`]..[`TIME_CEIL`].
    Outside,
    /// Behind the set clock.
    Behind,
}

/// Whether the panel has a wall clock (a time was taken since boot).
pub fn is_set() -> bool {
    OFFSET.load(Ordering::Relaxed) != 0
}

/// Whether the panel waits for its time: an SNTP server is provisioned and has not answered
/// (an image without one keeps counting from boot).
#[cfg(feature = "net")]
pub fn awaited() -> bool {
    crate::provision::SNTP.is_some() && !is_set()
}

/// Whether the panel waits for its time: the host has not told it since boot.
#[cfg(not(feature = "net"))]
pub fn awaited() -> bool {
    !is_set()
}

/// The wall clock (unix seconds) at boot time `boot_s`, or `boot_s` itself while unset.
pub fn now(boot_s: u64) -> u64 {
    boot_s + u64::from(OFFSET.load(Ordering::Relaxed))
}

/// Takes `told` (unix seconds) at boot time `boot_s`, by the rules above, and says on
/// semihosting what it did; the clock after it, or why it was refused.
pub fn told(told: u64, boot_s: u64) -> Result<u64, Refused> {
    let clock = now(boot_s);
    let (offset, what) = if !(TIME_FLOOR..TIME_CEIL).contains(&told) || told < boot_s {
        (Err(Refused::Outside), ("clock: ", " time outside 2026-2099 refused: "))
    } else if !is_set() {
        (Ok(told - boot_s), ("clock: set by ", " to "))
    } else if told < clock {
        (Err(Refused::Behind), ("clock: ", " time behind the clock refused: "))
    } else if told - clock > MAX_STEP_S {
        (Ok(clock + MAX_STEP_S - boot_s), ("clock: ", " time too far ahead, stepped 4 s only: "))
    } else {
        (Ok(told - boot_s), ("", ""))
    };
    if let Some(o) = offset.ok().and_then(|o| u32::try_from(o).ok()) {
        OFFSET.store(o, Ordering::Relaxed);
    }
    if !what.0.is_empty() {
        diag::line(&[
            Text(what.0),
            Text(SOURCE),
            Text(what.1),
            Num(told),
            Text(" (clock "),
            Num(now(boot_s)),
            Text(")"),
        ]);
    }
    offset.map(|_| now(boot_s))
}
