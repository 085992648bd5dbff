//! 2026-07-28 → 2025-11-25 result shapes: what a legacy client must not see is removed.

use serde_json::{json, Value};

/// Members of a 2026-07-28 result that 2025-11-25 does not have.
const MODERN_ONLY: &[&str] = &["resultType", "ttlMs", "cacheScope"];

/// Rewrites one core result in place for a 2025-11-25 client.
pub fn legacy_result(result: &mut Value) {
    let Some(obj) = result.as_object_mut() else {
        return;
    };
    for k in MODERN_ONLY {
        obj.remove(*k);
    }
    // CallToolResult: structuredContent must be an object in 2025-11-25.
    if obj.get("structuredContent").is_some_and(|s| !s.is_object()) {
        obj.remove("structuredContent");
    }
    // ListToolsResult: an outputSchema's root must be `type: object`.
    if let Some(tools) = obj.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            if tool
                .get("outputSchema")
                .is_some_and(|s| s.get("type").and_then(Value::as_str) != Some("object"))
            {
                tool.remove("outputSchema");
            }
        }
    }
}

/// The 2025-11-25 era's subscriptions (`resources/subscribe`, and a 2026-07-28 listen sent
/// inside a legacy session): refused, since a legacy session holds no stream (`initialize`
/// never says `resources.subscribe`).
pub fn refuses_subscriptions(method: &str) -> Option<&'static str> {
    [
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
    ]
    .contains(&method)
    .then_some(
        "Method not found: resource updates need MCP 2026-07-28 (subscriptions/listen); \
             a 2025-11-25 session has no subscriptions",
    )
}

/// What `initialize` says the server has: tools, and resources when the app serves them.
pub fn server_capabilities(resources: bool) -> Value {
    if resources {
        json!({"tools": {}, "resources": {}})
    } else {
        json!({"tools": {}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_modern_members() {
        let mut r = json!({"resultType":"complete","tools":[{"name":"a","outputSchema":{"type":"array"}},
            {"name":"b","outputSchema":{"type":"object"}}],"ttlMs":1,"cacheScope":"public","_meta":{}});
        legacy_result(&mut r);
        assert_eq!(
            r,
            json!({"tools":[{"name":"a"},{"name":"b","outputSchema":{"type":"object"}}],"_meta":{}})
        );
        let mut c =
            json!({"resultType":"complete","content":[],"structuredContent":[1],"isError":false});
        legacy_result(&mut c);
        assert_eq!(c, json!({"content":[],"isError":false}));
    }
}
