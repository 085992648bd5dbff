//! The door panel's HTTP request-head parser (`boards/panel-http`: httparse's tokenizing, the
//! headers the panel reads, the Host/Origin guard) on arbitrary bytes, as a connection's
//! receive buffer holds them. Never a panic; a head that parses is within the input, its
//! tables within their bounds, and the same head whatever follows it (its last byte cut off,
//! it is incomplete); `content_length` takes exactly the digit strings `usize` holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redmark_panel_http::{content_length, guard, parse, HeadError, MAX_PARAMS};

fuzz_target!(|data: &[u8]| {
    if let Ok(head) = parse(data) {
        assert!(head.len <= data.len() && head.param_count <= MAX_PARAMS);
        let _ = guard(&head, [10, 0, 2, 15]);
        let alone = parse(&data[..head.len]).expect("the head alone parses");
        assert_eq!(alone.len, head.len);
        assert_eq!(alone.content_length, head.content_length);
        assert_eq!(
            parse(&data[..head.len - 1]).err(),
            Some(HeadError::Incomplete)
        );
    }
    let digits = !data.is_empty() && data.iter().all(u8::is_ascii_digit);
    let expected = std::str::from_utf8(data)
        .ok()
        .filter(|_| digits)
        .and_then(|s| s.parse::<usize>().ok());
    assert_eq!(content_length(data).ok(), expected);
});
