//! Byte tests eight at a time in plain integer arithmetic (SIMD within a register), for the
//! scans over strings and lines; the same code on every target (a `u64` is two registers on
//! the panel's 32-bit cores).

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

/// The high bit set in each byte of `v` that a JSON string cannot hold as it is (`"`, `\\` or
/// a control byte below 0x20); exact as to whether any is, as [`zeros`].
pub(super) const fn special(v: u64) -> u64 {
    let control = v.wrapping_sub(ONES * 0x20) & !v & HIGH;
    control | has(v, b'"') | has(v, b'\\')
}

/// Every byte `b'a'`, which no caller's test flags: the lanes past the end of a short word.
const PAD: u64 = ONES * b'a' as u64;

/// The first `b[i..]` byte a lane of `hit` flags, or `b.len()`. `hit` flags lanes of a word
/// (byte 0 in the low bits) as [`zeros`] does: the lowest flagged lane is always a true one, and
/// a word with no true one has none flagged. The last, short word is padded with `b'a'`, which
/// no caller's test flags, so no byte is looked at alone.
pub(super) fn find(b: &[u8], mut i: usize, hit: impl Fn(u64) -> u64) -> usize {
    while let Some(rest) = b.get(i..).filter(|r| !r.is_empty()) {
        let (word, n) = match rest.first_chunk::<8>() {
            Some(w) => (u64::from_le_bytes(*w), 8),
            None => (short_word(b, rest), rest.len()),
        };
        let lanes = hit(word);
        if lanes != 0 {
            return b.len().min(i + (lanes.trailing_zeros() / 8) as usize);
        }
        i += n;
    }
    b.len()
}

/// `rest`, the last 1 to 7 bytes of `b`, as a word whose lanes past its end are [`PAD`].
/// Loaded, not assembled byte by byte (most keys end in a short word): as the 8 bytes that end
/// `b`, shifted down, when `b` has them; else as two overlapping 4-byte halves. Never through
/// a stack copy: a word stored by bytes and read back as one stalls the load.
fn short_word(b: &[u8], rest: &[u8]) -> u64 {
    let n = rest.len();
    let pad = PAD << (8 * n);
    if let Some(last) = b.last_chunk::<8>() {
        return u64::from_le_bytes(*last) >> (8 * (8 - n)) | pad;
    }
    if let (Some(lo), Some(hi)) = (rest.first_chunk::<4>(), rest.last_chunk::<4>()) {
        // The halves overlap when n < 8: a shared lane gets the same byte twice.
        let (lo, hi) = (u32::from_le_bytes(*lo), u32::from_le_bytes(*hi));
        return u64::from(lo) | u64::from(hi) << (8 * (n - 4)) | pad;
    }
    rest.iter().rev().fold(0, |w, &x| w << 8 | u64::from(x)) | pad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_finds_a_byte_in_any_lane_and_no_false_one() {
        for lane in 0..8 {
            for byte in [0u8, b'\n', b'"', 0x7F, 0x80, 0xFF] {
                let mut w = [byte.wrapping_add(1); 8];
                assert_eq!(has(u64::from_le_bytes(w), byte), 0, "{byte:#x} absent");
                w[lane] = byte;
                assert_ne!(
                    has(u64::from_le_bytes(w), byte),
                    0,
                    "{byte:#x} in lane {lane}"
                );
            }
        }
    }

    #[test]
    fn find_gives_the_first_hit_in_whole_and_padded_words() {
        let newline = |v| has(v, b'\n');
        for len in 0..20 {
            for at in 0..=len {
                let mut b = [b'x'; 20];
                if at < len {
                    b[at] = b'\n';
                    b[len - 1] = b'\n';
                }
                for from in 0..=at {
                    assert_eq!(find(&b[..len], from, newline), at, "len {len}, at {at}");
                }
            }
        }
        assert_eq!(find(b"ab", 5, newline), 2);
    }

    #[test]
    fn a_short_word_is_the_rest_then_padding() {
        let b: [u8; 20] = core::array::from_fn(|k| b'A' + k as u8);
        for len in 1..=b.len() {
            for from in len.saturating_sub(7)..len {
                let rest = &b[from..len];
                let mut want = [b'a'; 8];
                want[..rest.len()].copy_from_slice(rest);
                assert_eq!(
                    short_word(&b[..len], rest),
                    u64::from_le_bytes(want),
                    "len {len}, from {from}"
                );
            }
        }
    }
}
