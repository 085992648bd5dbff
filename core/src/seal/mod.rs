//! Sealed `requestState`: what a tool needs on the retry, carried by the client, which must
//! treat it as opaque and which the server must treat as attacker-controlled.
//!
//! The principal, the boot epoch and a digest of the originating request are *bound* (fed to
//! the MAC as associated data) rather than carried, so the token holds only what the server
//! cannot recompute:
//!
//! ```text
//! token = base64url( ver | kid | expires u32 | nonce[8] | len u8 | payload | tag[16] )
//! tag   = HMAC-SHA256(key[kid], "redmark/rs/v1" | lp(principal) | epoch | request | body)[..16]
//! ```
//! A state replayed by another principal, after a reboot, or onto other arguments recomputes a
//! different tag: one failure path, one wire message. The reason is reported for logging only.

mod b64url;
mod digest;
mod keys;
mod token;

pub use digest::{request_digest, Origin};
pub use keys::{Key, KeyError, KeyRing, KEY_MAX, KEY_MIN};
pub use token::{open, seal, Binding, Nonce, Opened, SealError, TAG_LEN, TOKEN_MAX};
