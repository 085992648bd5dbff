//! The rough edges a newcomer hit (issue 34, part 4), each pinned: the README's curl request
//! works as printed, `--trace` over `--url` shows the HTTP headers, `--help` says how to force
//! a string, a misspelled tool gets a did-you-mean, the client's form check and the server's
//! red mark are both shown, `serve --http 8080` says what to write, a tool error is one line.

mod client_support;

use client_support::*;

/// The README's curl example: its lines from `curl` to the first blank one.
fn readme_curl() -> String {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("    curl -s http://127.0.0.1:8080/mcp")
        .expect("README has the curl example");
    let block = &readme[start..];
    let end = block.find("\n\n").unwrap_or(block.len());
    block[..end].to_owned()
}

#[test]
fn the_readmes_curl_request_works_as_printed() {
    let server = Server::start(&["--http", "127.0.0.1:0"]);
    let command = readme_curl().replace("127.0.0.1:8080", &server.addr("http"));
    let out = std::process::Command::new("sh")
        .args(["-c", &command])
        .output()
        .expect("run curl");
    assert!(out.status.success(), "{command}\n{out:?}");
    let body = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&body).expect("a JSON answer");
    assert_eq!(v["result"]["resultType"], "complete", "{body}");
    assert!(body.contains("Studio B"), "lists the rooms: {body}");
}

#[test]
fn trace_over_url_shows_every_http_header_sent() {
    let server = Server::start(&["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/mcp", server.addr("http"));
    let out = redmark(&cat(&[&["call", "--trace", "--url", &url, "list_rooms"]]));
    assert_eq!(out.code, 0, "{out:?}");
    let post = out
        .stderr
        .lines()
        .find(|l| l.contains("POST ") && l.contains("tools/call"))
        .unwrap_or_else(|| panic!("no POST line: {}", out.stderr));
    for header in [
        "-H 'Content-Type: application/json'",
        "-H 'Accept: application/json, text/event-stream'",
        "-H 'MCP-Protocol-Version: 2026-07-28'",
        "-H 'Mcp-Method: tools/call'",
        "-H 'Mcp-Name: list_rooms'",
    ] {
        assert!(post.contains(header), "{header} in {post}");
    }
}

#[test]
fn call_help_says_how_to_force_a_string() {
    let out = redmark(&cat(&[&["call", "--help"]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(r#"booking_id='"3"'"#), "{}", out.stdout);
    assert!(out.stdout.contains("hour=09"), "{}", out.stdout);
}

#[test]
fn a_start_or_hour_typed_as_people_do_books() {
    let data = std::env::temp_dir().join(format!("redmark-typed-{}", std::process::id()));
    let d = data.to_str().unwrap();
    let cases = [
        ("start=9", "09:00–10:00"),
        ("hour=08", "08:00–09:00"),
        ("start=11:30", "11:30–12:30"),
    ];
    for (pair, at) in cases {
        let args = [
            "call",
            "--data",
            d,
            "book_room",
            "day=2099-09-17",
            pair,
            "room_id=nook",
        ];
        let out = redmark(&cat(&[&args]));
        assert_eq!(out.code, 0, "{pair}: {out:?}");
        assert!(out.stdout.contains(at), "{pair}: {}", out.stdout);
    }
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn a_misspelled_tool_gets_a_did_you_mean() {
    let out = redmark(&cat(&[&["call", "--scratch", "book_rom"]]));
    assert_eq!(out.code, 5, "{out:?}");
    assert!(out.stderr.contains("-32602"), "{}", out.stderr);
    assert!(
        out.stderr.contains("did you mean book_room?"),
        "{}",
        out.stderr
    );
    let far = redmark(&cat(&[&["call", "--scratch", "order_lunch"]]));
    assert!(
        far.stderr
            .contains("the server's tools are book_room, cancel_booking, extend_booking, end_booking, check_in, booking_trail, list_rooms"),
        "{}",
        far.stderr
    );
}

#[test]
fn a_refused_answer_shows_the_clients_check_and_the_servers_red_mark() {
    let out = redmark(&cat(&[&[
        "call",
        "--answer",
        "room.room_id=ballroom",
        "book_room",
        "day=2099-09-17",
        "hour=9",
        "room_hint=the big room",
    ]]));
    assert_eq!(out.code, 2, "{out:?}");
    let line = out.stderr.trim();
    assert!(
        line.contains("'ballroom' is not one of atrium, studio-b")
            && line.contains("the server says: Room: 'ballroom' is not one of the options"),
        "{line}"
    );
}

#[test]
fn serve_with_a_bare_port_says_what_to_write() {
    let out = redmark(&cat(&[&["serve", "--http", "8080"]]));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("write 127.0.0.1:8080"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_tool_error_is_one_line() {
    let out = redmark(&cat(&[&[
        "call",
        "--scratch",
        "cancel_booking",
        "booking_id=bk_9",
    ]]));
    assert_eq!(out.code, 1, "{out:?}");
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .chain(out.stderr.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(
        lines,
        ["There is no booking 'bk_9' of yours to cancel."],
        "{out:?}"
    );
}
