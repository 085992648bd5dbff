//! What `redmark call` reads from tools/list: when the server knows no tool of the name asked
//! for, the names close to it (a small edit distance); and a tool's argument types, to type
//! KEY=VALUE pairs that read two ways (`start=9`, `hour=09`).

use serde_json::{Map, Value};

use super::mrtr::Session;
use super::transport::Transport;

/// The most tools/list pages read for a suggestion.
const MAX_PAGES: usize = 10;

/// Whether JSON-RPC error `e` says the server has no such tool (-32602 "Unknown tool").
pub fn is_unknown_tool(e: &Value) -> bool {
    e.get("code").and_then(Value::as_i64) == Some(-32602)
        && e.get("message")
            .and_then(Value::as_str)
            .is_some_and(|m| m.to_ascii_lowercase().starts_with("unknown tool"))
}

/// What to tell a user who called `wanted`, which the server does not have: the names close
/// to it, else every name it has; `None` if its tools cannot be listed.
pub fn did_you_mean(transport: &mut dyn Transport, wanted: &str) -> Option<String> {
    let names = tool_names(transport)?;
    let close = closest(wanted, &names);
    Some(if close.is_empty() {
        format!("the server's tools are {}", names.join(", "))
    } else {
        format!("did you mean {}?", close.join(" or "))
    })
}

/// The names of the server's tools (tools/list, following its cursor).
fn tool_names(transport: &mut dyn Transport) -> Option<Vec<String>> {
    let tools = tools(transport, 1000)?;
    let names = tools.iter().filter_map(|t| t.get("name")?.as_str());
    Some(names.map(str::to_owned).collect())
}

/// The `type` of each argument of `tool` in its input schema (`{"hour": "integer", …}`), if
/// the server lists the tool.
pub fn argument_types(transport: &mut dyn Transport, tool: &str) -> Option<Map<String, Value>> {
    // Numbered past the ids the call itself will use.
    let tools = tools(transport, 2000)?;
    let t = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))?;
    let props = t.get("inputSchema")?.get("properties")?.as_object()?;
    let types = props
        .iter()
        .filter_map(|(k, p)| Some((k.clone(), p.get("type")?.clone())));
    Some(types.collect())
}

/// The server's tools (tools/list, following its cursor), on request ids from `first_id`.
fn tools(transport: &mut dyn Transport, first_id: u64) -> Option<Vec<Value>> {
    // Numbered apart from the call's own requests, so no id is used twice on a connection.
    let mut session = Session::resuming(transport, first_id);
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let mut extra = Map::new();
        if let Some(c) = cursor.take() {
            extra.insert("cursor".into(), c);
        }
        let resp = session.request("tools/list", extra).ok()?;
        let result = resp.msg.get("result")?;
        tools.extend(result.get("tools")?.as_array()?.iter().cloned());
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    Some(tools)
}

/// The names within a third of `wanted`'s length in edits (at least one), closest first.
fn closest<'a>(wanted: &str, names: &'a [String]) -> Vec<&'a str> {
    let limit = (wanted.chars().count() / 3).max(1);
    let mut near: Vec<(usize, &str)> = names
        .iter()
        .map(|n| (edits(&wanted.to_lowercase(), &n.to_lowercase()), n.as_str()))
        .filter(|(d, _)| *d <= limit)
        .collect();
    near.sort();
    near.into_iter().map(|(_, n)| n).collect()
}

/// Levenshtein distance between `a` and `b`, in characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_offered_and_far_ones_not() {
        assert_eq!(edits("book_rom", "book_room"), 1);
        assert_eq!(edits("kitten", "sitting"), 3);
        let names: Vec<String> = ["book_room", "cancel_booking", "list_rooms"]
            .map(String::from)
            .to_vec();
        assert_eq!(closest("book_rom", &names), ["book_room"]);
        assert_eq!(closest("Book_Room", &names), ["book_room"]);
        assert_eq!(closest("list_room", &names), ["list_rooms"]);
        assert!(closest("order_lunch", &names).is_empty());
    }

    #[test]
    fn only_an_unknown_tool_error_asks_for_the_list() {
        let e = serde_json::json!({"code": -32602, "message": "Unknown tool: book_rom"});
        assert!(is_unknown_tool(&e));
        let other = serde_json::json!({"code": -32602, "message": "Invalid params"});
        assert!(!is_unknown_tool(&other));
    }
}
