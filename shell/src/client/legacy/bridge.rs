//! What a 2025-11-25 session needs of a transport beyond a 2026-07-28 exchange: answering the
//! requests a server sends while a response is awaited, and sending notifications.

use serde_json::Value;

use crate::client::transport::{Outgoing, Transport, TransportError};

/// The revision this client speaks to servers that need `initialize`.
pub const LEGACY_VERSION: &str = "2025-11-25";

/// Answers a request a 2025-11-25 server sends mid-exchange: the whole response, or `None`
/// to stop.
pub type Serve<'a> = dyn FnMut(&Value) -> Option<Value> + 'a;

/// A transport that can also carry a 2025-11-25 session (the stream transports: `--stdio`,
/// `--tcp`, `--url`).
pub trait Bridge: Transport {
    /// Like [`Transport::exchange`] in a 2025-11-25 session: a request the server sends
    /// meanwhile (a pushed `elicitation/create`) is answered with the response `serve` makes;
    /// `serve` returning `None` stops the exchange with [`TransportError::Aborted`].
    fn exchange_serving(
        &mut self,
        req: &Outgoing<'_>,
        serve: &mut Serve<'_>,
    ) -> Result<Vec<String>, TransportError>;

    /// Sends a notification (nothing is awaited).
    fn notify(&mut self, body: &str) -> Result<(), TransportError>;
}

/// The response `serve` makes to the server's request `msg`, as text (traced), or
/// [`TransportError::Aborted`].
pub(super) fn served(serve: &mut Serve<'_>, msg: &Value) -> Result<String, TransportError> {
    let answer = serve(msg).ok_or(TransportError::Aborted)?.to_string();
    crate::client::trace::trace("→", &answer);
    Ok(answer)
}
