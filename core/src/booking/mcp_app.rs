//! The floor as an MCP App (the `io.modelcontextprotocol/ui` extension): the `ui://` resource
//! `day_schedule` names in its `_meta`, listed by `resources/list`; its document is the host's.
//!
//! The core declares the resource and answers its `resources/read` with every check a read
//! gets (version, headers, principal), but the document itself (tens of KiB, more than an
//! answer buffer of [`OUT`](crate::limits::OUT)) is the host's to lend: the text the core
//! writes is [`APP_BODY_SLOT`], which the desktop's host replaces with the document
//! (`shell/src/host/mcp_app.rs`). A host that lends none serves the slot as it is.

use crate::engine::{Call, CallError, Done, Reply, ResourceInfo};

/// The app's resource URI.
pub const APP_URI: &str = "ui://redmark/floor";

/// The MIME type of an MCP App's HTML document.
pub const APP_MIME: &str = "text/html;profile=mcp-app";

/// The `_meta` of the tool the app belongs to: hosts that render MCP Apps show it with the
/// tool's result.
pub const TOOL_META: &str = r#"{"ui":{"resourceUri":"ui://redmark/floor"}}"#;

/// What the core writes as the document's text: a host replaces it (a JSON string of letters
/// and punctuation only, so it is written as it is, never escaped).
pub const APP_BODY_SLOT: &str = "redmark:mcp-app-document";

/// The app's resource as `resources/list` describes it.
pub const APP_RESOURCE: ResourceInfo = ResourceInfo {
    uri: APP_URI,
    name: "floor",
    title: "The floor",
    description: "One day of the floor's rooms, to book a free time by pressing it (an MCP App)",
    mime_type: APP_MIME,
};

/// The resources the booking app serves.
pub const RESOURCES: &[ResourceInfo] = &[APP_RESOURCE];

/// `resources/read` of the booking app: the app's document (its slot), else not found.
pub fn read(uri: &str, _call: &Call<'_>, reply: Reply<'_, '_>) -> Result<Done, CallError> {
    if uri != APP_URI {
        return Err(CallError::NotFound);
    }
    Ok(reply.contents(|w| {
        w.begin_object().key("uri").string(APP_URI);
        w.key("mimeType").string(APP_MIME);
        w.key("text").string(APP_BODY_SLOT).end_object();
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_meta_names_the_resource() {
        let v: serde_json::Value = serde_json::from_str(TOOL_META).unwrap();
        assert_eq!(v["ui"]["resourceUri"], APP_URI);
        assert!(APP_URI.starts_with("ui://"));
    }

    #[test]
    fn the_slot_needs_no_escaping() {
        assert!(APP_BODY_SLOT
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-:".contains(&b)));
    }
}
