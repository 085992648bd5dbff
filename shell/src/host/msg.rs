//! One message as a transport hands it to the host: a framed line, an over-long line, or an
//! HTTP body with its MCP headers.

/// One message for the engine, borrowed from the transport's buffers.
#[derive(Clone, Copy)]
pub enum Msg<'a> {
    /// One framed line from a byte stream (blank lines are ignored).
    Line(&'a [u8]),
    /// A line or body longer than the framing limit (answered with an id-less -32600).
    TooLong,
    /// One HTTP body with its MCP headers.
    Http {
        body: &'a [u8],
        headers: &'a OwnedHeaders,
    },
}

impl<'a> Msg<'a> {
    /// The message's bytes (`None`: over the framing limit).
    pub fn bytes(self) -> Option<&'a [u8]> {
        match self {
            Msg::Line(b) | Msg::Http { body: b, .. } => Some(b),
            Msg::TooLong => None,
        }
    }
}

/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and every `Mcp-Param-*` as received.
#[derive(Default)]
pub struct OwnedHeaders {
    pub version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
    /// `(name after "Mcp-Param-", value)`.
    pub params: Vec<(String, String)>,
}
