//! [`Http`]: Streamable HTTP (`--url`), with the 2026-07-28 headers, answering with JSON or SSE.

use std::io::BufReader;
use std::time::Duration;

use base64ct::{Base64, Encoding as _};
use serde_json::Value;
use ureq::http::Response;

use super::{
    is_response_to, is_server_request, read_line_limited, refuse_server_request, too_long,
    trace_ignored, Outgoing, Transport, TransportError, MAX_MESSAGE, PROTOCOL_VERSION,
};
use crate::client::trace::{trace, tracing};

/// What to do with a request the server sends on an event stream while a response is awaited,
/// given the endpoint, the message and its text; an error stops the exchange.
pub type OnRequest<'a> = dyn FnMut(&Http, &Value, &str) -> Result<(), TransportError> + 'a;

/// Streamable HTTP, 2026-07-28: one POST per request, no session, the protocol headers set.
pub struct Http {
    url: String,
    agent: ureq::Agent,
    timeout: Duration,
    /// `Authorization: Bearer` value (an OAuth access token or a `--tokens` token).
    bearer: Option<String>,
}

impl Http {
    /// A client of the MCP endpoint at `url` (`http://` or `https://`).
    pub fn new(url: &str, timeout: Duration) -> Result<Http, TransportError> {
        if !url.starts_with("http://") && !url.starts_with("https://") {
            return Err(TransportError::Io(format!(
                "'{url}': only http:// and https:// URLs are supported"
            )));
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .max_redirects(0)
            .tls_config(crate::platform::tls::config())
            .build()
            .into();
        Ok(Http {
            url: url.to_owned(),
            agent,
            timeout,
            bearer: None,
        })
    }

    /// Sends `token` as `Authorization: Bearer` on every request.
    pub fn with_bearer(mut self, token: Option<String>) -> Http {
        self.bearer = token;
        self
    }

    /// `req` with the bearer token, if there is one.
    fn authorized<B>(&self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.bearer {
            Some(t) => req.header("Authorization", &format!("Bearer {t}")),
            None => req,
        }
    }

    /// The endpoint's URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` as JSON (accepting JSON or an event stream back) with `headers` besides.
    pub(crate) fn post(
        &self,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Result<Response<ureq::Body>, TransportError> {
        let mut post = self
            .authorized(self.agent.post(&self.url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        for (name, value) in headers {
            post = post.header(*name, *value);
        }
        post.send(body).map_err(|e| match e {
            ureq::Error::Timeout(_) => TransportError::Timeout(self.timeout),
            e => TransportError::Io(format!("POST {}: {e}", self.url)),
        })
    }

    /// Under `--trace`: the POST about to be sent, every header as curl's `-H` would take it
    /// (a bearer token hidden), so it can be repeated with curl.
    fn sent_headers(&self, headers: &[(&str, &str)]) -> String {
        let mut line = format!(
            "POST {} -H 'Content-Type: application/json' \
             -H 'Accept: application/json, text/event-stream'",
            self.url
        );
        if self.bearer.is_some() {
            line.push_str(" -H 'Authorization: Bearer …'");
        }
        for (name, value) in headers {
            line.push_str(&format!(" -H '{name}: {value}'"));
        }
        line
    }

    /// Sends a DELETE with `headers`, as a courtesy: its outcome is not looked at.
    pub(crate) fn delete(&self, headers: &[(&str, &str)]) {
        let mut delete = self.authorized(self.agent.delete(&self.url));
        for (name, value) in headers {
            delete = delete.header(*name, *value);
        }
        let _ = delete.call();
    }
}

/// A header value as sent: plain when it is visible ASCII without leading/trailing spaces,
/// else the `=?base64?…?=` form the spec defines.
pub fn header_value(v: &str) -> String {
    let plain =
        v.bytes().all(|b| (0x20..0x7f).contains(&b)) && v.trim() == v && !v.starts_with("=?");
    if plain {
        v.to_owned()
    } else {
        format!("=?base64?{}?=", Base64::encode_string(v.as_bytes()))
    }
}

impl Transport for Http {
    /// POSTs `req` with the 2026-07-28 headers and reads its response (JSON or SSE); server
    /// requests are refused: 2026-07-28 servers send none.
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError> {
        let method = header_value(req.method);
        let name = req.name.map(header_value);
        let mut headers = vec![
            ("MCP-Protocol-Version", PROTOCOL_VERSION),
            ("Mcp-Method", method.as_str()),
        ];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name.as_str()));
        }
        if tracing() {
            trace(" ", &self.sent_headers(&headers));
        }
        let resp = self.post(req.body, &headers)?;
        self.read_answer(req, resp, &mut |_, msg, text| {
            refuse_server_request(msg, text)
        })
    }
}

impl Http {
    /// Reads the answer to `req` from `resp`: a JSON body, or an event stream whose messages
    /// come up to and including the response; a request the server sends on the stream is
    /// handed to `on_request`.
    pub(crate) fn read_answer(
        &self,
        req: &Outgoing<'_>,
        mut resp: Response<ureq::Body>,
        on_request: &mut OnRequest<'_>,
    ) -> Result<Vec<String>, TransportError> {
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if tracing() {
            trace(" ", &format!("HTTP {status} {ctype}"));
        }
        if status == 401 || status == 403 {
            let challenge = resp
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("(no WWW-Authenticate)");
            let hint = if status == 401 {
                "pass an access token: --token, REDMARK_TOKEN, --token-command, or --client-id \
                 with --client-secret (docs/oauth.md)"
            } else {
                "the token lacks a scope this request needs"
            };
            return Err(TransportError::Io(format!(
                "HTTP {status} from {}: {hint}; the server says: {challenge}",
                self.url
            )));
        }
        let body = resp.body_mut();
        if ctype == "text/event-stream" {
            let mut got = Vec::new();
            let mut data = String::new();
            let mut reader = BufReader::new(body.as_reader());
            loop {
                let line = read_line_limited(&mut reader, MAX_MESSAGE)?.unwrap_or_default();
                let n = line.len();
                let line = line.trim_end_matches(['\n', '\r']);
                if n == 0 || line.is_empty() {
                    // End of an event: dispatch its data.
                    if !data.is_empty() {
                        let text = std::mem::take(&mut data);
                        if let Ok(msg) = serde_json::from_str::<Value>(&text) {
                            trace("←", &text);
                            if is_server_request(&msg) {
                                on_request(self, &msg, &text)?;
                                continue;
                            }
                            let done = is_response_to(&msg, req.id);
                            got.push(text);
                            if done {
                                return Ok(got);
                            }
                        } else {
                            trace_ignored(&text, "an event that is not JSON");
                        }
                    }
                    if n == 0 {
                        return Err(TransportError::Closed);
                    }
                } else if let Some(d) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    let d = d.strip_prefix(' ').unwrap_or(d);
                    if data.len() + 1 + d.len() > MAX_MESSAGE {
                        return Err(too_long(MAX_MESSAGE));
                    }
                    data.push_str(d);
                }
                // `event:`, `id:`, `retry:` and comments carry nothing a client needs here.
            }
        }
        let text = body
            .with_config()
            .limit(MAX_MESSAGE as u64)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => too_long(MAX_MESSAGE),
                e => TransportError::Io(format!("reading the body: {e}")),
            })?;
        if ctype == "application/json" {
            if let Ok(msg) = serde_json::from_str::<Value>(&text) {
                // Only this request's response (or an error without an id): an error naming
                // another request is not this call's outcome.
                if is_response_to(&msg, req.id) {
                    trace("←", &text);
                    return Ok(vec![text]);
                }
            }
        }
        let excerpt: String = text.chars().take(200).collect();
        Err(TransportError::Protocol(format!(
            "HTTP {status} ({}) without a JSON-RPC response: {excerpt}",
            if ctype.is_empty() {
                "no content type"
            } else {
                &ctype
            }
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values() {
        assert_eq!(header_value("book_room"), "book_room");
        assert_eq!(header_value("réserver"), "=?base64?csOpc2VydmVy?=");
        assert_eq!(header_value(" a"), "=?base64?IGE=?=");
        assert_eq!(header_value("=?x"), "=?base64?PT94?=");
    }
}
