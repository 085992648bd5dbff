//! The HTTP header checks: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*` (SEP-2243) against the body (`-32020` on a mismatch).

use base64ct::{Base64, Encoding as _};

use super::error::RpcError;
use super::method::Method;
use super::{HttpHeaders, ToolEntry, ToolInfo};
use crate::limits::MAX_STR;
use crate::wire::json::{Kind, Value};
use crate::wire::meta::{self, RequestMeta};

pub(super) fn notification_headers<'a>(
    h: &HttpHeaders<'_>,
    method: Value<'a>,
    params: Option<Value<'a>>,
) -> Result<(), RpcError<'a>> {
    let Some(version) = h.version else {
        return Err(RpcError::HeaderMismatch(
            "Missing MCP-Protocol-Version header",
        ));
    };
    if !h.method.is_some_and(|v| header_eq(v, method)) {
        return Err(RpcError::HeaderMismatch(
            "Mcp-Method header does not match the body",
        ));
    }
    let body_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(meta::KEY_VERSION));
    if body_version.is_some_and(|v| !header_eq(version, v)) {
        return Err(RpcError::HeaderMismatch(
            "MCP-Protocol-Version header does not match _meta",
        ));
    }
    Ok(())
}

pub(super) fn check_headers<'a>(
    h: &HttpHeaders<'_>,
    method: Value<'a>,
    params: Option<Value<'a>>,
    meta: &RequestMeta<'a>,
    m: Method,
) -> Result<(), RpcError<'a>> {
    if !h.version.is_some_and(|v| header_eq(v, meta.version)) {
        return Err(RpcError::HeaderMismatch(
            "MCP-Protocol-Version header does not match _meta",
        ));
    }
    if !h.method.is_some_and(|v| header_eq(v, method)) {
        return Err(RpcError::HeaderMismatch(
            "Mcp-Method header does not match the body",
        ));
    }
    let name_member = match m {
        Method::ToolsCall | Method::PromptsGet => Some("name"),
        #[cfg(feature = "resources")]
        Method::ResourcesRead => Some("uri"),
        _ => None,
    };
    if let Some(member) = name_member {
        let name = params.and_then(|p| p.get(member));
        match (h.name, name) {
            (None, _) => return Err(RpcError::HeaderMismatch("Missing Mcp-Name header")),
            (Some(v), Some(n)) if header_eq(v, n) => {}
            _ => {
                return Err(RpcError::HeaderMismatch(
                    "Mcp-Name header does not match the body",
                ))
            }
        }
    }
    Ok(())
}

/// SEP-2243 custom headers: every tool argument the called tool declares in
/// [`ToolInfo::param_headers`] must be mirrored, when present in the body, by its
/// `Mcp-Param-NAME` header of equal value (literal, or `=?base64?…?=` with strict padding); a
/// header without the argument, or with another value, is a mismatch (`-32020`).
pub(super) fn check_param_headers<'a, T>(
    tools: &[ToolEntry<T>],
    params: Option<Value<'a>>,
    h: &HttpHeaders<'_>,
) -> Result<(), RpcError<'a>> {
    let name = params.and_then(|p| p.get("name"));
    let Some(tool) = tools
        .iter()
        .map(|t| &t.info)
        .find(|t| name.is_some_and(|n| n.eq_str(t.name)))
    else {
        return Ok(()); // unknown tools are answered later, with -32602
    };
    let args = params.and_then(|p| p.get("arguments"));
    for declared in tool.param_headers {
        let body = args.and_then(|a| a.get(declared.argument));
        match (body, h.param(declared.header)) {
            (None, None) => {}
            (Some(_), None) => return Err(RpcError::HeaderMismatch("Missing Mcp-Param header")),
            (None, Some(_)) => {
                return Err(RpcError::HeaderMismatch(
                    "Mcp-Param header without its argument",
                ))
            }
            (Some(v), Some(sent)) if header_eq(sent, v) => {}
            (Some(_), Some(_)) => {
                return Err(RpcError::HeaderMismatch(
                    "Mcp-Param header does not match the body",
                ))
            }
        }
    }
    Ok(())
}

impl ToolInfo {
    /// Whether [`ToolInfo::param_headers`] says exactly what the schema says: every top-level
    /// property with `"x-mcp-header": NAME` declared as that argument and header, and nothing
    /// else. The engine reads only the declaration; an app's test calls this to keep the two
    /// equal.
    pub fn param_headers_match_schema(&self) -> bool {
        let Ok(schema) = crate::wire::json::parse(self.input_schema.as_bytes()) else {
            return false;
        };
        let mut in_schema = 0;
        for (prop, s) in schema.get("properties").iter().flat_map(|p| p.members()) {
            let Some(header) = s.get("x-mcp-header") else {
                continue;
            };
            in_schema += 1;
            let mut scratch = [0u8; MAX_STR];
            let (Some(header), Some(prop)) = (header.as_plain_str(), prop.as_str(&mut scratch))
            else {
                return false;
            };
            if !self
                .param_headers
                .iter()
                .any(|d| d.argument == prop && d.header == header)
            {
                return false;
            }
        }
        in_schema == self.param_headers.len()
    }
}

/// Compares a header value (possibly `=?base64?…?=`) with a JSON string, number or boolean.
/// Optional whitespace around the value is not part of it (RFC 9110 §5.5).
#[inline(never)]
fn header_eq(header: &str, v: Value<'_>) -> bool {
    let header = header.trim_matches([' ', '\t']);
    let encoded = header
        .strip_prefix("=?base64?")
        .and_then(|s| s.strip_suffix("?="));
    let same = |text: &str| match v.kind() {
        Kind::String => v.eq_str(text),
        Kind::Number | Kind::Bool => v.raw() == text.as_bytes(),
        _ => false,
    };
    match encoded {
        None => same(header),
        Some(b64) => {
            let mut buf = [0u8; MAX_STR];
            match Base64::decode(b64, &mut buf) {
                Ok(bytes) => core::str::from_utf8(bytes).is_ok_and(same),
                Err(_) => false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ParamHeader;
    use super::ToolInfo;

    const REGION: &[ParamHeader] = &[ParamHeader {
        argument: "region",
        header: "Region",
    }];

    fn tool(input_schema: &'static str, param_headers: &'static [ParamHeader]) -> ToolInfo {
        ToolInfo {
            name: "t",
            title: "T",
            description: "",
            input_schema,
            read_only: true,
            destructive: false,
            idempotent: true,
            salient: None,
            answers_need_state: false,
            param_headers,
            meta: None,
        }
    }

    #[test]
    fn a_declaration_must_say_what_the_schema_marks() {
        let marked = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer"}}}"#;
        let plain = r#"{"type":"object","properties":{"region":{"type":"string"}}}"#;
        assert!(tool(marked, REGION).param_headers_match_schema());
        assert!(tool(plain, &[]).param_headers_match_schema());
        assert!(
            !tool(marked, &[]).param_headers_match_schema(),
            "undeclared"
        );
        assert!(
            !tool(plain, REGION).param_headers_match_schema(),
            "not marked"
        );
        let other = &[ParamHeader {
            argument: "region",
            header: "Zone",
        }];
        assert!(
            !tool(marked, other).param_headers_match_schema(),
            "other header"
        );
        assert!(!tool("{", &[]).param_headers_match_schema(), "not JSON");
    }
}
