//! Framing: any byte stream splits into lines of at most the buffer size, never panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redmark_core::wire::{Line, Lines};

fuzz_target!(|data: &[u8]| {
    let mut lines = Lines::<32>::new();
    let mut rest = data;
    while !rest.is_empty() {
        let (used, line) = lines.push(rest);
        if let Some(Line::Message(m)) = line {
            assert!(m.len() <= 32);
        }
        rest = &rest[used..];
    }
});
