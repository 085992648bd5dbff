//! base64url without padding (RFC 4648 §5), the requestState's text form: encode and a strict
//! decode (no `=`, no other alphabet, no length ≡ 1 mod 4, no nonzero bits after the last
//! byte: one text per body), through RustCrypto's `base64ct`.
//!
//! `base64ct` rather than the `base64` crate: its codec is a plain loop (the `base64` crate's
//! unrolled general-purpose engine is about 2.3 KiB of a door panel's flash), it is strict as
//! above, and it runs in constant time; the tests hold it equal to a bit-at-a-time reference.

use base64ct::{Base64UrlUnpadded, Encoding as _};

/// Characters `n` bytes encode to.
pub(crate) const fn encoded_len(n: usize) -> usize {
    (n * 4).div_ceil(3)
}

/// Encodes `src` into `out`; the number of characters, or `None` if `out` is too short.
pub(crate) fn encode(src: &[u8], out: &mut [u8]) -> Option<usize> {
    Base64UrlUnpadded::encode(src, out).ok().map(str::len)
}

/// Decodes `text` into `out`; the number of bytes, or `None` if `text` is not strict
/// unpadded base64url or `out` is too short.
pub(crate) fn decode(text: &[u8], out: &mut [u8]) -> Option<usize> {
    Base64UrlUnpadded::decode(text, out).ok().map(<[u8]>::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    /// A bit-at-a-time reference: unpadded base64url of `bytes`.
    fn reference_encode(bytes: &[u8]) -> String {
        let bits: Vec<u8> = bytes
            .iter()
            .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1))
            .collect();
        bits.chunks(6)
            .map(|c| {
                let v = (0..6).fold(0, |v, i| v << 1 | c.get(i).copied().unwrap_or(0));
                ALPHABET[v as usize] as char
            })
            .collect()
    }

    /// The reference's strict decode: unpadded base64url whose unused last bits are zero.
    fn reference_decode(text: &[u8]) -> Option<Vec<u8>> {
        if text.len() % 4 == 1 {
            return None;
        }
        let mut bits = Vec::new();
        for c in text {
            let v = ALPHABET.iter().position(|a| a == c)?;
            bits.extend((0..6).rev().map(|i| (v >> i) as u8 & 1));
        }
        let whole = bits.len() / 8 * 8;
        if bits[whole..].iter().any(|&b| b != 0) {
            return None;
        }
        Some(
            bits[..whole]
                .chunks(8)
                .map(|c| c.iter().fold(0, |v, b| v << 1 | b))
                .collect(),
        )
    }

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
        fn encodes_as_the_reference(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut out = [0u8; 400];
            let n = encode(&bytes, &mut out).unwrap();
            let theirs = reference_encode(&bytes);
            prop_assert_eq!(&out[..n], theirs.as_bytes());
            let mut back = [0u8; 300];
            let m = decode(&out[..n], &mut back).unwrap();
            prop_assert_eq!(&back[..m], &bytes[..]);
        }

        #[test]
        fn decodes_as_the_reference(text in "[A-Za-z0-9_=+/ -]{0,40}") {
            let mut out = [0u8; 64];
            let ours = decode(text.as_bytes(), &mut out).map(|n| out[..n].to_vec());
            prop_assert_eq!(ours, reference_decode(text.as_bytes()));
        }

        #[test]
        fn decodes_alphabet_texts_as_the_reference(text in "[A-Za-z0-9_-]{0,40}") {
            let mut out = [0u8; 64];
            let ours = decode(text.as_bytes(), &mut out).map(|n| out[..n].to_vec());
            prop_assert_eq!(ours, reference_decode(text.as_bytes()));
        }
    }
}
