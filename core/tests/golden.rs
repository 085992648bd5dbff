//! Golden tests: for each method and each error, the exact response to a fixed request on a
//! fresh engine (fixed key, clock and entropy). `REDMARK_BLESS=1` rewrites the `.response`
//! files; review the diff before committing.

mod common;

use std::path::PathBuf;

use serde_json::Value;

#[test]
fn every_golden_exchange() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("REDMARK_BLESS").is_some();
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "request"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 30, "golden cases missing");
    let mut failures = Vec::new();
    for req_path in cases {
        let request = std::fs::read(&req_path).unwrap();
        let mut client = common::Client::default();
        let (handled, text) = client.raw(&request);
        let resp_path = req_path.with_extension("response");
        let shown = if handled.responded {
            format!("{} {}\n", handled.status, text)
        } else {
            "no response\n".into()
        };
        if bless {
            std::fs::write(&resp_path, &shown).unwrap();
        } else {
            let expected = std::fs::read_to_string(&resp_path).unwrap_or_default();
            if expected != shown {
                failures.push(format!(
                    "{}:\n  expected {expected}  got      {shown}",
                    req_path.display()
                ));
            }
        }
        if handled.responded {
            let resp: Value = serde_json::from_str(&text).unwrap();
            let method = serde_json::from_slice::<Value>(&request)
                .ok()
                .and_then(|r| r["method"].as_str().map(String::from));
            common::validate(method.as_deref(), &resp);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
