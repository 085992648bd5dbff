//! The official Python MCP SDK 2.3 (a 2026-07-28 client, installed by scripts/sdk-peer.sh) as
//! a client of the networked panel: books over HTTP, answering the form it is asked.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

/// The client: books with `room_hint` "the big room", its elicitation callback answering the
/// form with the atrium; prints the forms' messages and the tool result as JSON.
const PY_CLIENT: &str = r#"
import asyncio, json, sys
from mcp.client import Client
import mcp.types as types

asked = []

async def elicit(context, params):
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"room_id": "atrium"})

async def main(url, day, hour):
    async with Client(url, elicitation_callback=elicit, cache=None) as c:
        r = await c.call_tool("book_room", {"day": day, "hour": hour, "room_hint": "the big room"})
        out = r.model_dump(mode="json", by_alias=True, exclude_none=True)
        print(json.dumps({"asked": asked, "result": out}))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"#;

/// Books the atrium for `hour` on `day` through the Python SDK at the panel's `url`; what the
/// client printed (`asked`: the forms' messages; `result`: the tool result). None when the SDK
/// is not installed (which fails the test under `REDMARK_REQUIRE_PANEL=1`).
pub fn sdk_book(url: &str, day: &str, hour: u32) -> Option<Value> {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    let py = crate::peers::python_sdk_2_3("REDMARK_REQUIRE_PANEL")?;
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("redmark-py-sdk-{}-{run}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder for the client");
    let script = dir.join("client.py");
    std::fs::write(&script, PY_CLIENT).expect("write the client");
    let mut cmd = std::process::Command::new(py);
    cmd.arg(&script).args([url, day, &hour.to_string()]);
    let out = crate::server::run_bounded(cmd);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.code, 0, "{out:?}");
    Some(serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}")))
}
