//! The token format: sealing and opening.

use super::b64url;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::keys::KeyRing;
use crate::limits::{MAX_STATE_CHARS, MAX_STATE_PAYLOAD};

/// Bytes of truncated HMAC-SHA256 tag (128 bits).
pub const TAG_LEN: usize = 16;
const VERSION: u8 = 1;
const HEAD: usize = 1 + 1 + 4 + NONCE_LEN + 1;
const NONCE_LEN: usize = 8;
/// Largest token body in bytes.
const BODY_MAX: usize = HEAD + MAX_STATE_PAYLOAD + TAG_LEN;
/// Longest token in characters (base64url, no padding) that [`seal`] can produce.
pub const TOKEN_MAX: usize = b64url::encoded_len(BODY_MAX);
const _: () = assert!(TOKEN_MAX <= MAX_STATE_CHARS);
const DOMAIN: &[u8] = b"redmark/rs/v1";

/// Per-token randomness from the caller; also the at-most-once key of what it authorises.
pub type Nonce = [u8; NONCE_LEN];

/// What a token is bound to without carrying it.
#[derive(Clone, Copy, Debug)]
pub struct Binding<'a> {
    /// The authenticated principal.
    pub principal: &'a [u8],
    /// The server's clock epoch (a boot counter on a panel, 0 on a wall clock).
    pub epoch: u32,
    /// [`request_digest`](super::request_digest) of the originating request.
    pub request: [u8; 32],
}

/// A verified token's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The nonce it was sealed with.
    pub nonce: Nonce,
    /// When it stops being accepted (server clock, seconds).
    pub expires: u32,
    /// The tool's payload.
    pub payload: heapless::Vec<u8, MAX_STATE_PAYLOAD>,
}

/// Why a token was refused (for the log only: the wire says one thing for all of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SealError {
    /// Longer than [`MAX_STATE_CHARS`].
    Oversize,
    /// Not base64url.
    NotBase64,
    /// Too short or inconsistent lengths.
    Truncated,
    /// Unknown format version.
    Version,
    /// No key in the ring has its key id.
    UnknownKey,
    /// The tag does not verify: tampered, or bound to another principal, epoch or request.
    BadTag,
    /// Past its expiry.
    Expired,
    /// (sealing) payload larger than [`MAX_STATE_PAYLOAD`].
    PayloadTooLarge,
    /// (sealing) the ring has no key.
    NoKey,
}

impl core::fmt::Display for SealError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            SealError::Oversize => "too long",
            SealError::NotBase64 => "not base64url",
            SealError::Truncated => "truncated, or inconsistent lengths",
            SealError::Version => "unknown format version",
            SealError::UnknownKey => "unknown key",
            SealError::BadTag => "bad tag (tampered, or another principal, epoch or request)",
            SealError::Expired => "expired",
            SealError::PayloadTooLarge => "payload too large",
            SealError::NoKey => "no sealing key",
        })
    }
}

impl core::error::Error for SealError {}

/// Seals `payload` into `out`; returns the token text.
pub fn seal<'o>(
    ring: &KeyRing,
    bind: &Binding<'_>,
    expires: u32,
    nonce: Nonce,
    payload: &[u8],
    out: &'o mut [u8; TOKEN_MAX],
) -> Result<&'o str, SealError> {
    let key = ring.current().ok_or(SealError::NoKey)?;
    if payload.len() > MAX_STATE_PAYLOAD {
        return Err(SealError::PayloadTooLarge);
    }
    let mut body = [0u8; BODY_MAX];
    body[0] = VERSION;
    body[1] = key.id();
    body[2..6].copy_from_slice(&expires.to_be_bytes());
    body[6..6 + NONCE_LEN].copy_from_slice(&nonce);
    body[HEAD - 1] = payload.len() as u8;
    body[HEAD..HEAD + payload.len()].copy_from_slice(payload);
    let signed = HEAD + payload.len();
    let tag = tag(key.secret(), bind, &body[..signed]).ok_or(SealError::NoKey)?;
    body[signed..signed + TAG_LEN].copy_from_slice(&tag[..TAG_LEN]);
    let n = b64url::encode(&body[..signed + TAG_LEN], &mut out[..]).ok_or(SealError::Oversize)?;
    core::str::from_utf8(&out[..n]).map_err(|_| SealError::NotBase64)
}

/// Opens and verifies `token` at time `now` (server clock, seconds).
pub fn open(
    ring: &KeyRing,
    bind: &Binding<'_>,
    now: u64,
    token: &[u8],
) -> Result<Opened, SealError> {
    if token.len() > MAX_STATE_CHARS {
        return Err(SealError::Oversize);
    }
    let mut body = [0u8; MAX_STATE_CHARS];
    let n = b64url::decode(token, &mut body).ok_or(SealError::NotBase64)?;
    let body = &body[..n];
    if n < HEAD + TAG_LEN {
        return Err(SealError::Truncated);
    }
    if body[0] != VERSION {
        return Err(SealError::Version);
    }
    let plen = body[HEAD - 1] as usize;
    if plen > MAX_STATE_PAYLOAD || n != HEAD + plen + TAG_LEN {
        return Err(SealError::Truncated);
    }
    let key = ring.find(body[1]).ok_or(SealError::UnknownKey)?;
    let signed = HEAD + plen;
    let expected = tag(key.secret(), bind, &body[..signed]).ok_or(SealError::UnknownKey)?;
    if !bool::from(expected[..TAG_LEN].ct_eq(&body[signed..])) {
        return Err(SealError::BadTag);
    }
    let expires = u32::from_be_bytes([body[2], body[3], body[4], body[5]]);
    if now > u64::from(expires) {
        return Err(SealError::Expired);
    }
    let mut nonce = [0; NONCE_LEN];
    nonce.copy_from_slice(&body[6..6 + NONCE_LEN]);
    let payload =
        heapless::Vec::from_slice(&body[HEAD..signed]).map_err(|_| SealError::Truncated)?;
    Ok(Opened {
        nonce,
        expires,
        payload,
    })
}

fn tag(secret: &[u8], bind: &Binding<'_>, body: &[u8]) -> Option<[u8; 32]> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).ok()?;
    mac.update(DOMAIN);
    mac.update(&(bind.principal.len() as u32).to_be_bytes());
    mac.update(bind.principal);
    mac.update(&bind.epoch.to_be_bytes());
    mac.update(&bind.request);
    mac.update(body);
    Some(mac.finalize().into_bytes().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::b64url;
    use crate::seal::Key;

    fn ring(seed: u8, id: u8) -> KeyRing {
        KeyRing::new(Key::new(id, &[seed; 32]).unwrap())
    }

    const BIND: Binding<'static> = Binding {
        principal: b"alice",
        epoch: 0,
        request: [7; 32],
    };

    fn sealed(ring: &KeyRing, bind: &Binding<'_>, payload: &[u8]) -> heapless::String<TOKEN_MAX> {
        let mut out = [0; TOKEN_MAX];
        let t = seal(ring, bind, 1_000, [9; 8], payload, &mut out).unwrap();
        heapless::String::try_from(t).unwrap()
    }

    #[test]
    fn round_trip_and_size() {
        let r = ring(1, 0);
        let t = sealed(&r, &BIND, &[3]);
        assert!(t.len() <= 96, "{} chars", t.len());
        let o = open(&r, &BIND, 999, t.as_bytes()).unwrap();
        assert_eq!(
            (o.nonce, o.expires, &o.payload[..]),
            ([9; 8], 1_000, &[3u8][..])
        );
    }

    #[test]
    fn every_binding_and_failure_class() {
        let r = ring(1, 0);
        let t = sealed(&r, &BIND, b"p");
        let other = |b: Binding<'_>| open(&r, &b, 0, t.as_bytes()).unwrap_err();
        assert_eq!(
            other(Binding {
                principal: b"bob",
                ..BIND
            }),
            SealError::BadTag
        );
        assert_eq!(other(Binding { epoch: 1, ..BIND }), SealError::BadTag);
        assert_eq!(
            other(Binding {
                request: [8; 32],
                ..BIND
            }),
            SealError::BadTag
        );
        assert_eq!(
            open(&r, &BIND, 1_001, t.as_bytes()),
            Err(SealError::Expired)
        );
        assert_eq!(
            open(&ring(2, 0), &BIND, 0, t.as_bytes()),
            Err(SealError::BadTag)
        );
        assert_eq!(
            open(&ring(1, 5), &BIND, 0, t.as_bytes()),
            Err(SealError::UnknownKey)
        );
        assert_eq!(open(&r, &BIND, 0, b"!!!"), Err(SealError::NotBase64));
        assert_eq!(
            open(&r, &BIND, 0, &t.as_bytes()[..20]),
            Err(SealError::Truncated)
        );
        assert_eq!(open(&r, &BIND, 0, &[b'A'; 200]), Err(SealError::Oversize));
        let mut tampered: heapless::String<200> = heapless::String::try_from(t.as_str()).unwrap();
        tampered.push_str("-TAMPERED").unwrap();
        assert!(open(&r, &BIND, 0, tampered.as_bytes()).is_err());
    }

    #[test]
    fn rotated_keys_still_open() {
        let old = ring(1, 0);
        let t = sealed(&old, &BIND, b"");
        let mut new = ring(2, 1);
        new.retain(Key::new(0, &[1; 32]).unwrap()).unwrap();
        assert!(open(&new, &BIND, 0, t.as_bytes()).is_ok());
    }

    #[test]
    fn no_single_bit_flip_is_accepted() {
        let r = ring(1, 0);
        let t = sealed(&r, &BIND, &[0, 1]);
        let mut raw = [0u8; BODY_MAX];
        let n = b64url::decode(t.as_bytes(), &mut raw).unwrap();
        let mut accepted = 0;
        for bit in 0..n * 8 {
            let mut flipped = raw;
            flipped[bit / 8] ^= 1 << (bit % 8);
            let mut text = [0u8; MAX_STATE_CHARS];
            let m = b64url::encode(&flipped[..n], &mut text).unwrap();
            accepted += open(&r, &BIND, 0, &text[..m]).is_ok() as usize;
        }
        assert_eq!(accepted, 0);
    }
}
