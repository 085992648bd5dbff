//! A room's day as the host serves it: the `text/calendar` content of its `resources/read`, written by the shell's ICS writer from the JSON content the core answered (no second store read).
//!
//! The core reads the store, decides what the caller may read and writes the JSON content,
//! with a slot ([`CALENDAR_SLOT`]) where the calendar goes: the host, which every transport's
//! messages pass through (stdio, TCP, HTTP, the 2025-11-25 bridge, the folder relay), puts the
//! calendar there, as it puts the MCP App's document into its read (`mcp_app.rs`).

use redmark_core::booking::room_day::{CALENDAR_SLOT, ROOM_DAY_PREFIX};
use serde_json::Value;

use crate::calendar::room_day;

/// Puts the calendar into `answer` when it is the answer to a `resources/read` of a room's day
/// (`request`: the message's bytes; `tag` makes event ids this server's); any other answer is
/// left as it is. Returns whether it did.
pub fn fill(request: Option<&[u8]>, answer: &mut Vec<u8>, tag: &str) -> bool {
    let Some(at) = memchr::memmem::find(answer, CALENDAR_SLOT.as_bytes()) else {
        return false;
    };
    // The slot as a whole JSON string: its quotes around it.
    let (from, to) = (at.wrapping_sub(1), at + CALENDAR_SLOT.len());
    let quoted = answer.get(from) == Some(&b'"') && answer.get(to) == Some(&b'"');
    if !quoted || !reads_a_room_day(request) {
        return false;
    }
    // The response is the last line (progress notifications, if any, come before it).
    let line_start = answer[..from]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |n| n + 1);
    let Ok(response) = serde_json::from_slice::<Value>(&answer[line_start..]) else {
        return false;
    };
    let json = response["result"]["contents"][0]["text"].as_str();
    let Some(doc) = json.and_then(|t| serde_json::from_str::<Value>(t).ok()) else {
        return false;
    };
    let Some(calendar) = room_day::write(&doc, tag, jiff::Timestamp::now()) else {
        return false;
    };
    answer.splice(from..=to, Value::from(calendar).to_string().bytes());
    true
}

/// Whether `request` is one `resources/read` of a room's day.
fn reads_a_room_day(request: Option<&[u8]>) -> bool {
    let Some(Ok(v)) = request.map(serde_json::from_slice::<Value>) else {
        return false;
    };
    let uri = v["params"]["uri"].as_str().unwrap_or("");
    v["method"] == "resources/read" && uri.starts_with(ROOM_DAY_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(uri: &str) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}})
            .to_string()
            .into_bytes()
    }

    fn answer() -> Vec<u8> {
        let doc = json!({"room": {"id": "nook", "name": "The Nook", "seats": 4},
            "day": "2026-12-07", "time_zone": "UTC", "bookings": [
            {"id": "bk_1", "start": "2026-12-07T09:00:00+00:00", "end": "2026-12-07T10:00:00+00:00",
             "from": "09:00", "to": "10:00", "status": "active", "yours": false, "private": true}]});
        let uri = "redmark://rooms/nook/2026-12-07";
        json!({"jsonrpc": "2.0", "id": 3, "result": {"contents": [
            {"uri": uri, "mimeType": "application/json", "text": doc.to_string()},
            {"uri": uri, "mimeType": "text/calendar", "text": CALENDAR_SLOT}]}})
        .to_string()
        .into_bytes()
    }

    #[test]
    fn the_read_of_a_room_day_gets_its_calendar() {
        let mut a = answer();
        assert!(fill(Some(&read("redmark://rooms/nook/today")), &mut a, "t"));
        let v: Value = serde_json::from_slice(&a).unwrap();
        let cal = v["result"]["contents"][1]["text"].as_str().unwrap();
        assert!(cal.starts_with("BEGIN:VCALENDAR\r\n"), "{cal}");
        assert!(cal.contains("UID:bk_1@t.redmark\r\n") && cal.contains("SUMMARY:Busy\r\n"));
        assert_eq!(
            v["result"]["contents"][0],
            serde_json::from_slice::<Value>(&answer()).unwrap()["result"]["contents"][0]
        );
        // With progress lines ahead of it too.
        let mut a = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n".to_vec();
        a.extend(answer());
        assert!(fill(Some(&read("redmark://rooms/nook/today")), &mut a, "t"));
    }

    #[test]
    fn any_other_message_keeps_its_answer() {
        let mut a = answer();
        assert!(!fill(Some(&read("ui://redmark/floor")), &mut a, "t"));
        assert!(!fill(None, &mut a, "t"));
        let call = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"uri":"redmark://rooms/nook/today"}}"#;
        assert!(!fill(Some(call), &mut a, "t"));
        assert_eq!(a, answer());
        // The slot inside a longer string (a title) is not the slot.
        let echoed = format!(r#"{{"result":{{"text":"a {CALENDAR_SLOT}"}}}}"#);
        let mut a = echoed.clone().into_bytes();
        assert!(!fill(
            Some(&read("redmark://rooms/nook/today")),
            &mut a,
            "t"
        ));
        assert_eq!(a, echoed.into_bytes());
    }
}
