//! base64url without padding (RFC 4648 §5), the requestState's text form: encode and a strict
//! decode (no `=`, no other alphabet, no length ≡ 1 mod 4, no nonzero bits after the last
//! byte: one text per body, as the `base64` crate's `URL_SAFE_NO_PAD` decodes).
//!
//! Written out rather than through the `base64` crate's general-purpose engine, whose unrolled
//! codec is about 2.3 KiB of a door panel's flash; the tests hold the two equal.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Characters `n` bytes encode to.
pub(crate) const fn encoded_len(n: usize) -> usize {
    (n * 4).div_ceil(3)
}

/// Encodes `src` into `out`; the number of characters, or `None` if `out` is too short.
pub(crate) fn encode(src: &[u8], out: &mut [u8]) -> Option<usize> {
    let n = encoded_len(src.len());
    let out = out.get_mut(..n)?;
    for (group, text) in src.chunks(3).zip(out.chunks_mut(4)) {
        let mut bits = [0u8; 3];
        bits[..group.len()].copy_from_slice(group);
        let word = u32::from_be_bytes([0, bits[0], bits[1], bits[2]]);
        for (i, c) in text.iter_mut().enumerate() {
            *c = ALPHABET[(word >> (18 - 6 * i) & 63) as usize];
        }
    }
    Some(n)
}

/// The 6-bit value of one base64url character.
fn sextet(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decodes `text` into `out`; the number of bytes, or `None` if `text` is not canonical
/// unpadded base64url or `out` is too short.
pub(crate) fn decode(text: &[u8], out: &mut [u8]) -> Option<usize> {
    if text.len() % 4 == 1 {
        return None;
    }
    let n = text.len() * 3 / 4;
    let out = out.get_mut(..n)?;
    for (group, bytes) in text.chunks(4).zip(out.chunks_mut(3)) {
        let mut word = 0u32;
        for (i, &c) in group.iter().enumerate() {
            word |= sextet(c)? << (18 - 6 * i);
        }
        let full = word.to_be_bytes();
        // Bits past the last whole byte must be zero, or two texts would decode alike.
        if full[1 + bytes.len()..].iter().any(|&b| b != 0) {
            return None;
        }
        bytes.copy_from_slice(&full[1..1 + bytes.len()]);
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use base64::Engine as _;
    use proptest::prelude::*;

    #[test]
    fn rfc4648_vectors() {
        for (plain, text) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut out = [0u8; 16];
            let n = encode(plain.as_bytes(), &mut out).unwrap();
            assert_eq!(&out[..n], text.as_bytes());
            let n = decode(text.as_bytes(), &mut out).unwrap();
            assert_eq!(&out[..n], plain.as_bytes());
        }
    }

    #[test]
    fn padding_other_alphabets_and_stray_bits_are_refused() {
        let mut out = [0u8; 16];
        for bad in [
            "Zg==", "Zm8=", "Z", "Zm9v+", "Zm9v/w", "Zh", "Zm9", "Zm 9v", "Zm9v\n",
        ] {
            assert_eq!(decode(bad.as_bytes(), &mut out), None, "{bad:?}");
        }
    }

    #[test]
    fn a_short_output_is_refused() {
        assert_eq!(encode(b"foo", &mut [0; 3]), None);
        assert_eq!(decode(b"Zm9v", &mut [0; 2]), None);
    }

    proptest! {
        #[test]
        fn encodes_as_the_base64_crate(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut out = [0u8; 400];
            let n = encode(&bytes, &mut out).unwrap();
            let theirs = B64.encode(&bytes);
            prop_assert_eq!(&out[..n], theirs.as_bytes());
            let mut back = [0u8; 300];
            let m = decode(&out[..n], &mut back).unwrap();
            prop_assert_eq!(&back[..m], &bytes[..]);
        }

        #[test]
        fn decodes_as_the_base64_crate(text in "[A-Za-z0-9_=+/ -]{0,40}") {
            let mut out = [0u8; 64];
            let ours = decode(text.as_bytes(), &mut out).map(|n| out[..n].to_vec());
            prop_assert_eq!(ours, B64.decode(text.as_bytes()).ok());
        }

        #[test]
        fn decodes_alphabet_texts_as_the_base64_crate(text in "[A-Za-z0-9_-]{0,40}") {
            let mut out = [0u8; 64];
            let ours = decode(text.as_bytes(), &mut out).map(|n| out[..n].to_vec());
            prop_assert_eq!(ours, B64.decode(text.as_bytes()).ok());
        }
    }
}
