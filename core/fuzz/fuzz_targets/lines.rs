//! Framing: any byte stream, pushed in chunks of any size, splits into exactly the lines a
//! plain `split('\n')` gives (a trailing `\r` dropped; a line of more than the buffer's
//! bytes, `\r` included, is `TooLong`), never panicking. The first byte sets the chunk size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redmark_core::wire::{Line, Lines};

const N: usize = 32;

fuzz_target!(|data: &[u8]| {
    let Some((&step, data)) = data.split_first() else {
        return;
    };
    let step = usize::from(step % 64) + 1;
    let mut lines = Lines::<N>::new();
    let mut got: Vec<Option<Vec<u8>>> = Vec::new();
    for chunk in data.chunks(step) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let (used, line) = lines.push(rest);
            assert!(used > 0 && used <= rest.len());
            match line {
                Some(Line::Message(m)) => got.push(Some(m.to_vec())),
                Some(Line::TooLong) => got.push(None),
                None => assert_eq!(used, rest.len()),
            }
            rest = &rest[used..];
        }
    }
    let mut parts: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let tail = parts.pop().unwrap_or_default();
    let want: Vec<Option<Vec<u8>>> = parts
        .iter()
        .map(|raw| (raw.len() <= N).then(|| raw.strip_suffix(b"\r").unwrap_or(raw).to_vec()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(lines.has_partial(), !tail.is_empty());
});
