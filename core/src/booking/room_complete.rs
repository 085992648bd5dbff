//! Completions of the room-day template's arguments (`completion/complete` with `ref/resource`): `room` by room id and alias, `day` by the words, weekdays and dates a read accepts.

use core::fmt::Write;

use super::floor::Floor;
use super::read::today;
use super::room_day::{room_of, DAY, ROOM_DAY_TEMPLATE};
use super::span::{Day, WEEKDAYS};
use crate::engine::{CallError, CompletionRef, CompletionRequest, Completions};
use crate::limits::{MAX_STR, ROOM_DAY_COMPLETED_DATES};

/// Whether `s` starts with `prefix`, ignoring ASCII case.
fn starts_with(s: &str, prefix: &str) -> bool {
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Suggests values for the room-day template's `room` (ids and aliases) and `day` (today,
/// tomorrow, weekday names, the next [`ROOM_DAY_COMPLETED_DATES`] dates; on the clock of
/// `context.arguments.room`'s building, and none when that names no room).
pub(super) fn complete(
    site: &[Floor<'_>],
    request: &CompletionRequest<'_>,
    out: &mut Completions<'_, '_>,
) -> Result<(), CallError> {
    let CompletionRef::Resource(uri) = request.reference else {
        return Err(CallError::InvalidParams("no prompts are served"));
    };
    if !uri.eq_str(ROOM_DAY_TEMPLATE) {
        return Err(CallError::InvalidParams(
            "completions are served for redmark://rooms/{room}/{day}",
        ));
    }
    let mut scratch = [0u8; MAX_STR];
    let Some(typed) = request.value.as_str(&mut scratch) else {
        return Ok(());
    };
    if request.argument.eq_str("room") {
        let names = site.iter().flat_map(|f| f.rooms.iter());
        let names = names.flat_map(|r| core::iter::once(&r.id).chain(r.aliases));
        // An alias two rooms share names neither: offered only what reads one room.
        let one = |n: &&&str| room_of(site, n).is_some();
        for n in names.filter(|n| starts_with(n, typed)).filter(one) {
            out.push(n);
        }
        return Ok(());
    }
    if !request.argument.eq_str("day") {
        return Ok(());
    }
    let mut room_scratch = [0u8; MAX_STR];
    let room = request.context.and_then(|c| c.get("room"));
    let floor = match room.map(|r| r.as_str(&mut room_scratch)) {
        None => site.first(),
        Some(r) => r.and_then(|r| room_of(site, r)).map(|(f, _)| f),
    };
    let Some(today) = floor.and_then(|f| today(request.now, f.zone)) else {
        return Ok(());
    };
    let words = ["today", "tomorrow"].into_iter();
    let weekdays = (0..7).map(|k| WEEKDAYS[(today.weekday() + k) % 7]);
    for word in words.chain(weekdays).filter(|w| starts_with(w, typed)) {
        out.push(word);
    }
    for k in 0..ROOM_DAY_COMPLETED_DATES {
        let Some(d) = Day::containing(today.first_minute() + k * DAY) else {
            break;
        };
        let mut date = heapless::String::<10>::new();
        if write!(date, "{d}").is_ok() && starts_with(&date, typed) {
            out.push(&date);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::{BookingApp, MemStore, DEFAULT_FLOOR};
    use crate::engine::{Config, Context, ServerInfo};
    use crate::limits::OUT;
    use crate::seal::{Key, KeyRing};
    use crate::{Access, Engine};
    use serde_json::{json, Value};

    type Booking = Engine<BookingApp<'static, MemStore<8>>>;

    fn engine() -> Booking {
        let info = ServerInfo {
            name: "redmark",
            version: "test",
            instructions: None,
        };
        let keys = KeyRing::new(Key::new(1, &[0x42; 32]).unwrap());
        let app = BookingApp::new(DEFAULT_FLOOR, MemStore::new(), info);
        Engine::new(app, keys, Config::default())
    }

    /// The answer to `completion/complete` with `params`, on Monday 2026-09-21 14:13 UTC.
    fn ask(e: &mut Booking, mut params: Value) -> Value {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        let msg = json!({"jsonrpc": "2.0", "id": 7, "method": "completion/complete",
            "params": params});
        let cx = Context {
            now: 1_790_000_000,
            principal: b"alice",
            entropy: [0; 8],
            access: Access::USER,
        };
        let mut out = vec![0u8; OUT];
        let h = e.handle(msg.to_string().as_bytes(), &cx, &mut out);
        serde_json::from_slice(&out[..h.len]).unwrap()
    }

    fn complete(
        e: &mut Booking,
        arg: &str,
        value: &str,
        context: Option<Value>,
    ) -> std::vec::Vec<String> {
        let mut params = json!({"ref": {"type": "ref/resource", "uri": ROOM_DAY_TEMPLATE},
            "argument": {"name": arg, "value": value}});
        if let Some(c) = context {
            params["context"] = json!({"arguments": c});
        }
        let r = ask(e, params);
        let values = r["result"]["completion"]["values"]
            .as_array()
            .expect("values");
        values
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn rooms_complete_by_id_and_alias_ignoring_case() {
        let mut e = engine();
        assert_eq!(
            complete(&mut e, "room", "", None),
            ["atrium", "studio-b", "nook", "the small room", "small room"]
        );
        assert_eq!(
            complete(&mut e, "room", "S", None),
            ["studio-b", "small room"]
        );
        assert_eq!(complete(&mut e, "room", "THE s", None), ["the small room"]);
        assert!(
            complete(&mut e, "room", "big", None).is_empty(),
            "shared aliases name neither"
        );
    }

    #[test]
    fn days_complete_words_weekdays_and_two_weeks_of_dates() {
        let mut e = engine();
        let all = complete(&mut e, "day", "", None);
        assert_eq!(&all[..4], ["today", "tomorrow", "monday", "tuesday"]);
        assert_eq!(all.len(), 2 + 7 + 14);
        assert_eq!(all[9], "2026-09-21");
        assert_eq!(all[22], "2026-10-04");
        assert_eq!(
            complete(&mut e, "day", "T", None),
            ["today", "tomorrow", "tuesday", "thursday"]
        );
        assert_eq!(complete(&mut e, "day", "2026-10", None).len(), 4);
        let room = Some(json!({"room": "nook"}));
        assert_eq!(complete(&mut e, "day", "to", room).len(), 2);
        let nowhere = Some(json!({"room": "boardroom"}));
        assert!(complete(&mut e, "day", "", nowhere).is_empty());
        assert!(complete(&mut e, "building", "", None).is_empty());
    }

    #[test]
    fn other_references_are_invalid_params() {
        let mut e = engine();
        for r in [
            json!({"type": "ref/prompt", "name": "x"}),
            json!({"type": "ref/resource", "uri": "ui://redmark/floor"}),
        ] {
            let params = json!({"ref": r, "argument": {"name": "room", "value": ""}});
            let err = &ask(&mut e, params)["error"];
            assert_eq!(err["code"], -32602, "{err}");
        }
    }
}
