//! Per-request `params._meta`: protocol version and client capabilities (SEP-2575).

use super::json::{Kind, Value};

/// `_meta` key of the protocol version.
pub const KEY_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities.
pub const KEY_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key under which results name the server.
pub const KEY_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// What the client declared it can do, for this request only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCaps {
    /// Form-mode elicitation (`elicitation: {}` or `elicitation.form`).
    pub elicitation_form: bool,
    /// URL-mode elicitation.
    pub elicitation_url: bool,
    /// `sampling/createMessage` input requests.
    pub sampling: bool,
    /// `roots/list` input requests.
    pub roots: bool,
}

/// The per-request `_meta` the engine needs.
#[derive(Clone, Copy, Debug)]
pub struct RequestMeta<'a> {
    /// The protocol version (a JSON string).
    pub version: Value<'a>,
    /// The declared client capabilities.
    pub caps: ClientCaps,
    /// `progressToken`, if the client wants progress notifications.
    pub progress_token: Option<Value<'a>>,
}

/// Which required `_meta` member is missing or of the wrong type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetaError {
    /// No `params._meta` object.
    Missing,
    /// No protocol version string.
    Version,
    /// No client capabilities object.
    Capabilities,
}

impl MetaError {
    /// The message of the `-32602` error the engine answers with.
    pub(crate) fn message(self) -> &'static str {
        match self {
            MetaError::Missing => "Missing params._meta",
            MetaError::Version => "Missing _meta io.modelcontextprotocol/protocolVersion",
            MetaError::Capabilities => "Missing _meta io.modelcontextprotocol/clientCapabilities",
        }
    }
}

impl core::fmt::Display for MetaError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for MetaError {}

/// Reads `params._meta`; unknown keys anywhere are ignored.
pub fn read<'a>(params: Option<Value<'a>>) -> Result<RequestMeta<'a>, MetaError> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .filter(|m| m.kind() == Kind::Object);
    let meta = meta.ok_or(MetaError::Missing)?;
    let [version, caps, progress_token] = meta.pick([KEY_VERSION, KEY_CAPS, "progressToken"]);
    let version = version.filter(|v| v.kind() == Kind::String);
    let version = version.ok_or(MetaError::Version)?;
    let caps = caps.filter(|v| v.kind() == Kind::Object);
    let caps = read_caps(caps.ok_or(MetaError::Capabilities)?);
    let progress_token =
        progress_token.filter(|t| t.kind() == Kind::String || t.as_i64().is_some());
    Ok(RequestMeta {
        version,
        caps,
        progress_token,
    })
}

fn read_caps<'a>(caps: Value<'a>) -> ClientCaps {
    let object = |v: Option<Value<'a>>| v.filter(|v| v.kind() == Kind::Object);
    let [elicitation, sampling, roots] = caps.pick(["elicitation", "sampling", "roots"]);
    let (form, url) = match object(elicitation) {
        None => (false, false),
        Some(e) => {
            let [form, url] = e.pick(["form", "url"]).map(|v| object(v).is_some());
            // `elicitation: {}` with neither sub-key means form (back-compat rule).
            (form || !url, url)
        }
    };
    ClientCaps {
        elicitation_form: form,
        elicitation_url: url,
        sampling: object(sampling).is_some(),
        roots: object(roots).is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    fn caps(json: &str) -> ClientCaps {
        let doc = parse(json.as_bytes()).unwrap();
        read(Some(doc)).unwrap().caps
    }

    #[test]
    fn elicitation_modes() {
        let m =
            |c: &str| format!(r#"{{"_meta":{{"{KEY_VERSION}":"2026-07-28","{KEY_CAPS}":{c}}}}}"#);
        assert!(caps(&m(r#"{"elicitation":{}}"#)).elicitation_form);
        assert!(caps(&m(r#"{"elicitation":{"form":{}}}"#)).elicitation_form);
        let url_only = caps(&m(r#"{"elicitation":{"url":{}}}"#));
        assert!(!url_only.elicitation_form && url_only.elicitation_url);
        assert_eq!(caps(&m("{}")), ClientCaps::default());
        let s = caps(&m(r#"{"sampling":{},"roots":{"listChanged":true},"x":1}"#));
        assert!(s.sampling && s.roots && !s.elicitation_form);
    }

    #[test]
    fn missing_members() {
        let r = |s: &str| read(Some(parse(s.as_bytes()).unwrap())).map(|_| ());
        assert_eq!(r("{}"), Err(MetaError::Missing));
        assert_eq!(r(r#"{"_meta":{}}"#), Err(MetaError::Version));
        let v = format!(r#"{{"_meta":{{"{KEY_VERSION}":"x"}}}}"#);
        assert_eq!(r(&v), Err(MetaError::Capabilities));
        assert_eq!(read(None).map(|_| ()), Err(MetaError::Missing));
    }
}
