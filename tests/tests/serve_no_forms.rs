//! A host that renders no forms, as the official Python SDK 2.3 client without the elicitation
//! capability: "the big room" is answered with the candidates and the argument to call again
//! with, and the second call, with the `room_id` of the room the user meant, books that room.

use redmark_tests::peers::run_python;
use redmark_tests::server::{Server, TempDir};
use serde_json::json;

#[test]
fn a_host_without_forms_books_the_room_the_user_meant_on_the_second_call() {
    let Some(py) = redmark_tests::peers::python_sdk_2_3("REDMARK_REQUIRE_OAUTH") else {
        return;
    };
    let data = TempDir::new("no-forms");
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let url = format!("http://{}/mcp", s.http[0]);
    let args = json!({"day": "2099-09-17", "start": "9:30", "minutes": 45,
                      "title": "Design review", "room_hint": "the big room"});
    let out = run_python(
        &py,
        "no_forms_client.py",
        &[url.as_str(), &args.to_string(), "Studio B"],
    );

    let first = &out["first"];
    assert_eq!(first["isError"], true, "{out:#}");
    let text = first["text"].as_str().unwrap();
    assert!(text.contains("Ask the user"), "{text}");
    assert_eq!(
        out["candidates"],
        json!({"The Atrium (24 seats)": "atrium", "Studio B (12 seats)": "studio-b"}),
        "{text}"
    );
    assert_eq!(
        (&out["arg"], &out["picked"]),
        (&json!("room_id"), &json!("studio-b"))
    );

    let second = &out["second"];
    assert_eq!(second["isError"], false, "{out:#}");
    let booked = second["text"].as_str().unwrap();
    assert!(
        booked.starts_with("Booked Studio B (12 seats) on Thursday 2099-09-17 at 09:30–10:15"),
        "{booked}"
    );
    assert!(booked.contains("\"Design review\""), "{booked}");

    let mine = out["bookings"]["text"].as_str().unwrap();
    assert!(mine.contains("Studio B") && mine.contains("bk_1"), "{mine}");
    assert!(!mine.contains("Atrium") && !mine.contains("bk_2"), "{mine}");
}
