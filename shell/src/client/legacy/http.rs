//! A 2025-11-25 session over HTTP: the `Mcp-Session-Id` a server gives at `initialize`, sent
//! back with the `2025-11-25` version on every later POST, and a `DELETE` at the end; a server's
//! requests arrive on the event stream and are answered with POSTs.

use super::bridge::{served, Bridge, Serve, LEGACY_VERSION};
use crate::client::trace::trace;
use crate::client::transport::http::Http;
use crate::client::transport::{Outgoing, Transport, TransportError};

/// An HTTP endpoint that a call may turn into a 2025-11-25 session: 2026-07-28 exchanges go
/// through unchanged; the session is ended (`DELETE`) when this is dropped.
pub struct HttpSessions {
    http: Http,
    /// The `Mcp-Session-Id` a 2025-11-25 server gave at `initialize`.
    session: Option<String>,
}

impl HttpSessions {
    /// No session yet on `http`.
    pub fn over(http: Http) -> HttpSessions {
        HttpSessions {
            http,
            session: None,
        }
    }
}

/// The headers of a POST in a 2025-11-25 session: no 2026-07-28 ones; the session's once it
/// has one.
fn session_headers(session: Option<&str>) -> Vec<(&str, &str)> {
    match session {
        Some(id) => vec![
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", LEGACY_VERSION),
        ],
        None => Vec::new(),
    }
}

/// POSTs a notification or a response in a 2025-11-25 session (nothing comes back).
fn send(http: &Http, session: Option<&str>, body: &str) -> Result<(), TransportError> {
    let resp = http.post(body, &session_headers(session))?;
    let status = resp.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(TransportError::Protocol(format!(
            "HTTP {status} for a POSTed notification or response"
        )));
    }
    Ok(())
}

impl Transport for HttpSessions {
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError> {
        self.http.exchange(req)
    }
}

impl Bridge for HttpSessions {
    fn exchange_serving(
        &mut self,
        req: &Outgoing<'_>,
        serve: &mut Serve<'_>,
    ) -> Result<Vec<String>, TransportError> {
        trace(
            " ",
            &format!("POST {} (2025-11-25 session)", self.http.url()),
        );
        let resp = self
            .http
            .post(req.body, &session_headers(self.session.as_deref()))?;
        if let Some(id) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(id.to_owned());
        }
        let session = self.session.as_deref();
        self.http.read_answer(req, resp, &mut |http, msg, _| {
            let answer = served(serve, msg)?;
            send(http, session, &answer)
        })
    }

    fn notify(&mut self, body: &str) -> Result<(), TransportError> {
        send(&self.http, self.session.as_deref(), body)
    }
}

impl Drop for HttpSessions {
    fn drop(&mut self) {
        // A 2025-11-25 session is ended, as its clients should.
        if let Some(id) = self.session.take() {
            self.http.delete(&[
                ("Mcp-Session-Id", &id),
                ("MCP-Protocol-Version", LEGACY_VERSION),
            ]);
        }
    }
}
