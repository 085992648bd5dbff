//! Host tests of the request-head parser and the Host/Origin guard.

extern crate std;

use std::format;
use std::string::String;

use super::*;

const PANEL: [u8; 4] = [10, 0, 2, 15];

/// A request head with `headers` (each `Name: value`), then the blank line and `body`.
fn request(headers: &[&str], body: &str) -> String {
    let mut r = String::from("POST /mcp?x=1 HTTP/1.1\r\n");
    for h in headers {
        r.push_str(h);
        r.push_str("\r\n");
    }
    r.push_str("\r\n");
    r.push_str(body);
    r
}

fn parsed(headers: &[&str]) -> Result<Head<'static>, HeadError> {
    let text: &'static str = std::boxed::Box::leak(request(headers, "").into_boxed_str());
    parse(text.as_bytes())
}

#[test]
fn reads_the_request_line_and_the_headers_the_panel_uses() {
    let text = request(
        &[
            "Host: 10.0.2.15:80",
            "origin: http://localhost:3000",
            "Content-Length:  \t2 ",
            "Connection: keep-alive, Upgrade",
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: book_room",
            "Mcp-Param-Day: 2099-09-17",
            "User-Agent: \u{e9}t\u{e9}",
        ],
        "{}",
    );
    let h = parse(text.as_bytes()).unwrap();
    assert_eq!((h.method, h.path), ("POST", "/mcp"));
    assert_eq!(h.host, Some("10.0.2.15:80"));
    assert_eq!(h.origin, Some("http://localhost:3000"));
    assert_eq!(h.content_length, Some(2));
    assert!(!h.close && !h.chunked);
    assert_eq!(h.version, Some("2026-07-28"));
    assert_eq!((h.mcp_method, h.mcp_name), (Some("tools/call"), Some("book_room")));
    assert_eq!(&h.params[..h.param_count], &[("Day", "2099-09-17")]);
    assert_eq!(h.len, text.len() - 2);
    assert_eq!(guard(&h, PANEL), Ok(()));
}

#[test]
fn content_length_is_digits_only() {
    for good in ["0", "2", "0002", "2048"] {
        assert!(content_length(good.as_bytes()).is_ok(), "{good}");
    }
    let overflow = format!("{}0", usize::MAX);
    for bad in ["", "+2", "-1", "2 2", "2, 2", "2,2", "0x10", "2.0", "٢", overflow.as_str()] {
        assert_eq!(content_length(bad.as_bytes()), Err(HeadError::Malformed), "{bad:?}");
    }
    assert_eq!(content_length(format!("{}", usize::MAX).as_bytes()), Ok(usize::MAX));
}

#[test]
fn a_bad_or_repeated_content_length_is_malformed() {
    let overflow = format!("Content-Length: {}0", usize::MAX);
    for bad in [
        "Content-Length: +2",
        "Content-Length: -1",
        "Content-Length: 2 2",
        "Content-Length: 2, 2",
        "Content-Length:",
        overflow.as_str(),
    ] {
        assert_eq!(parsed(&["Host: localhost", bad]).err(), Some(HeadError::Malformed), "{bad}");
    }
    // Twice, even with the same value; and a value folded onto the next line (obs-fold).
    let twice = parsed(&["Content-Length: 2", "Content-Length: 2"]);
    assert_eq!(twice.err(), Some(HeadError::Malformed));
    let folded = parsed(&["Content-Length:", " 2"]);
    assert_eq!(folded.err(), Some(HeadError::Malformed));
    // Whitespace around the value is the field's optional whitespace, not part of it.
    assert_eq!(parsed(&["Content-Length:\t 2 "]).unwrap().content_length, Some(2));
}

#[test]
fn a_head_waits_for_its_blank_line() {
    let text = request(&["Host: localhost", "Content-Length: 2"], "{}");
    let end = text.find("\r\n\r\n").unwrap() + 4;
    for cut in 0..end {
        assert_eq!(parse(&text.as_bytes()[..cut]).err(), Some(HeadError::Incomplete), "{cut}");
    }
    assert_eq!(parse(&text.as_bytes()[..end]).unwrap().len, end);
}

#[test]
fn malformed_heads() {
    for bad in [
        "POST /mcp HTTP/2.0\r\n\r\n",
        "POST /mcp HTTP/1.1 extra\r\n\r\n",
        "POST  /mcp HTTP/1.1\r\n\r\n",
        "POST /mcp\r\n\r\n",
        "POST /m\x01cp HTTP/1.1\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nNo colon\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost : localhost\r\n\r\n",
        "POST /mcp HTTP/1.1\r\n: empty name\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost: a\x00b\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nOrigin: http://localhost\r\nOrigin: http://evil\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nMcp-Method: a\r\nMcp-Method: b\r\n\r\n",
    ] {
        assert_eq!(parse(bad.as_bytes()).err(), Some(HeadError::Malformed), "{bad:?}");
    }
    // A value the panel reads must be UTF-8; one it skips need not be.
    let latin1 = b"POST /mcp HTTP/1.1\r\nHost: caf\xe9\r\n\r\n";
    assert_eq!(parse(latin1).err(), Some(HeadError::Malformed));
    let skipped = b"POST /mcp HTTP/1.1\r\nX-Note: caf\xe9\r\n\r\n";
    assert!(parse(skipped).is_ok());
}

#[test]
fn header_and_param_tables_are_bounded() {
    let mut text = String::from("POST /mcp HTTP/1.1\r\n");
    for i in 0..MAX_HEADERS {
        text.push_str(&format!("X-{i}: v\r\n"));
    }
    assert!(parse(format!("{text}\r\n").as_bytes()).is_ok());
    text.push_str("X-last: v\r\n\r\n");
    assert_eq!(parse(text.as_bytes()).err(), Some(HeadError::TooManyHeaders));

    let mut text = String::from("POST /mcp HTTP/1.1\r\n");
    for i in 0..MAX_PARAMS {
        text.push_str(&format!("Mcp-Param-P{i}: v\r\n"));
    }
    assert_eq!(parse(format!("{text}\r\n").as_bytes()).unwrap().param_count, MAX_PARAMS);
    text.push_str("Mcp-Param-Last: v\r\n\r\n");
    assert_eq!(parse(text.as_bytes()).err(), Some(HeadError::Malformed));
}

#[test]
fn connection_and_transfer_encoding() {
    let h = parsed(&["Connection: Close"]).unwrap();
    assert!(h.close);
    let h = parse(b"POST /mcp HTTP/1.0\r\n\r\n").unwrap();
    assert!(h.close, "HTTP/1.0 closes by default");
    let h = parse(b"POST /mcp HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    assert!(!h.close);
    assert!(parsed(&["Transfer-Encoding: chunked"]).unwrap().chunked);
}

#[test]
fn the_guard_wants_host_and_origin_to_name_the_panel() {
    let ok = [
        &["Host: localhost"][..],
        &["Host: LOCALHOST:8080"],
        &["Host: 127.0.0.1:80"],
        &["Host: [::1]:80"],
        &["Host: 10.0.2.15"],
        &["Host: 10.0.2.15", "Origin: https://10.0.2.15:8443/app"],
    ];
    for headers in ok {
        assert_eq!(guard(&parsed(headers).unwrap(), PANEL), Ok(()), "{headers:?}");
    }
    let refused = [
        &[][..],
        &["Host: evil.example"],
        &["Host: +10.0.2.15"],
        &["Host: 10.0.2.15.evil"],
        &["Host: 10.0.2.16"],
        &["Host: localhost", "Origin: http://evil.example"],
        &["Host: localhost", "Origin: null"],
        &["Host: localhost", "Origin: http://localhost.evil:80"],
    ];
    for headers in refused {
        assert!(guard(&parsed(headers).unwrap(), PANEL).is_err(), "{headers:?}");
    }
}
