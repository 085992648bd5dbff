//! Attacker-chosen requestState strings: opening never panics and never succeeds by chance.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redmark_core::seal::{open, Binding, Key, KeyRing};

fuzz_target!(|data: &[u8]| {
    let Ok(key) = Key::new(1, &[3; 32]) else {
        return;
    };
    let ring = KeyRing::new(key);
    let bind = Binding {
        principal: b"p",
        epoch: 0,
        request: [0; 32],
    };
    assert!(open(&ring, &bind, 0, data).is_err());
});
