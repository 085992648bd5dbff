//! Byte tests eight at a time in plain integer arithmetic (SIMD within a register), for the
//! scans over long inputs on 64-bit targets; 32-bit targets (the panel) keep their byte loops.

/// Every byte 0x01.
pub(super) const ONES: u64 = u64::from_ne_bytes([1; 8]);
/// Every byte 0x80.
pub(super) const HIGH: u64 = ONES * 0x80;

/// The high bit set in each byte of `v` that is zero (exact as to whether any is, which is all
/// the callers ask).
pub(super) const fn zeros(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGH
}

/// Nonzero if any byte of `v` is `byte`.
pub(super) const fn has(v: u64, byte: u8) -> u64 {
    zeros(v ^ (ONES * byte as u64))
}

/// The eight bytes at `b[i..]` as one word, if eight are left.
pub(super) fn word(b: &[u8], i: usize) -> Option<u64> {
    let w: [u8; 8] = b.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_ne_bytes(w))
}

/// Past the whole words from `i` on that hold no `byte` (a byte loop finishes the scan).
pub(super) fn skip_without(b: &[u8], mut i: usize, byte: u8) -> usize {
    while let Some(v) = word(b, i) {
        if has(v, byte) != 0 {
            break;
        }
        i += 8;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_finds_a_byte_in_any_lane_and_no_false_one() {
        for lane in 0..8 {
            for byte in [0u8, b'\n', b'"', 0x7F, 0x80, 0xFF] {
                let mut w = [byte.wrapping_add(1); 8];
                assert_eq!(has(u64::from_ne_bytes(w), byte), 0, "{byte:#x} absent");
                w[lane] = byte;
                assert_ne!(has(u64::from_ne_bytes(w), byte), 0, "{byte:#x} in lane {lane}");
            }
        }
    }

    #[test]
    fn word_needs_eight_bytes() {
        assert_eq!(word(b"12345678", 0), Some(u64::from_ne_bytes(*b"12345678")));
        assert_eq!(word(b"12345678", 1), None);
        assert_eq!(word(b"", usize::MAX), None);
    }
}
