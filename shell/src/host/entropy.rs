//! Fresh entropy for every message, fetched from the OS in batches per thread.

use std::cell::RefCell;

use crate::platform::random::entropy;

/// 8 fresh bytes of the OS's generator (from this thread's batch).
pub(crate) fn next_entropy() -> [u8; 8] {
    ENTROPY.with_borrow_mut(Entropy::next)
}

/// Nonces fetched from the OS in bulk per thread: each is still 8 fresh bytes of the OS's
/// generator, for one `getrandom` call every [`ENTROPY_BATCH`] messages instead of one each.
struct Entropy {
    bytes: [u8; ENTROPY_BATCH * 8],
    used: usize,
}

/// Nonces per `getrandom` call.
const ENTROPY_BATCH: usize = 64;

impl Entropy {
    fn next(&mut self) -> [u8; 8] {
        if self.used == ENTROPY_BATCH {
            if getrandom::fill(&mut self.bytes).is_err() {
                // Never seen on Linux: the one-at-a-time source has its own fallback.
                return entropy();
            }
            self.used = 0;
        }
        let mut n = [0; 8];
        n.copy_from_slice(&self.bytes[self.used * 8..][..8]);
        // Used bytes are wiped: a nonce is never handed out twice.
        self.bytes[self.used * 8..][..8].fill(0);
        self.used += 1;
        n
    }
}

thread_local! {
    static ENTROPY: RefCell<Entropy> = const {
        RefCell::new(Entropy {
            bytes: [0; ENTROPY_BATCH * 8],
            used: ENTROPY_BATCH,
        })
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bulk-fetched nonces are all different across many refills.
    #[test]
    fn nonces_from_the_pool_never_repeat() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..ENTROPY_BATCH * 40 {
            assert!(seen.insert(next_entropy()), "a nonce came twice");
        }
    }
}
