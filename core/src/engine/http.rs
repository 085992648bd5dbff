//! The HTTP headers a message came with ([`HttpHeaders`]), and whether it came with any
//! ([`Sent`]).

/// The MCP headers of one Streamable HTTP request, as the transport saw them; the engine
/// checks them against the body (`-32020` on a mismatch). `None` fields are headers that were
/// absent. Only [`Engine::handle_http`](super::Engine::handle_http) takes them, so only HTTP
/// is held to them.
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpHeaders<'a> {
    /// `MCP-Protocol-Version`.
    pub version: Option<&'a str>,
    /// `Mcp-Method`.
    pub method: Option<&'a str>,
    /// `Mcp-Name`.
    pub name: Option<&'a str>,
    /// Every `Mcp-Param-*` header (SEP-2243), in any order: the name after `Mcp-Param-` and
    /// the raw value. Checked against the tool arguments its
    /// [`ToolInfo::param_headers`](super::ToolInfo::param_headers) declares.
    pub params: &'a [(&'a str, &'a str)],
}

impl<'a> HttpHeaders<'a> {
    /// The value of `Mcp-Param-{name}` (name matched case-insensitively), if sent.
    pub fn param(&self, name: &str) -> Option<&'a str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// The headers a message came with, as a type: `()` for a message without any (a byte
/// stream's line), so a host that serves only lines links none of the header checks.
pub(super) trait Sent<'h>: Copy {
    /// The HTTP headers, if the message came over HTTP.
    fn http(self) -> Option<&'h HttpHeaders<'h>>;
}

impl<'h> Sent<'h> for () {
    fn http(self) -> Option<&'h HttpHeaders<'h>> {
        None
    }
}

impl<'h> Sent<'h> for &'h HttpHeaders<'h> {
    fn http(self) -> Option<&'h HttpHeaders<'h>> {
        Some(self)
    }
}
