//! [`InProcess`]: a redmark engine on the default floor inside this process (on the data folder
//! of `redmark serve`, or in memory with `--scratch`): nothing else needs to run.

use std::sync::Arc;

use redmark_core::booking::Floor;
#[cfg(test)]
use redmark_core::booking::DEFAULT_SITE;
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::seal::{Key, KeyRing};

use super::{Outgoing, Transport, TransportError};
use crate::client::trace::trace;
use crate::host::{Conn, Hosted, HostedBooking, Msg, Shared};
use crate::store::redb::{RedbBookings, RedbStore};

/// A redmark server inside this process: nothing else needs to run. `redmark call` runs the
/// booking floor on the data folder `redmark serve` uses ([`crate::serve::booking_host`]);
/// [`InProcess::scratch`] is a throwaway floor in memory.
pub struct InProcess<A: Hosted> {
    conn: Conn<A>,
    /// Where the host's futures run (this process's one thread: the client is synchronous).
    runtime: tokio::runtime::Runtime,
}

impl InProcess<HostedBooking> {
    /// The default floor with bookings in memory and a random sealing key: gone on exit.
    pub fn scratch(floor: &'static [Floor<'static>]) -> Result<Self, TransportError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret)
            .map_err(|e| TransportError::Io(format!("no randomness: {e}")))?;
        let key =
            Key::new(0, &secret).map_err(|e| TransportError::Io(format!("sealing key: {e}")))?;
        let info = ServerInfo {
            name: "redmark",
            version: env!("CARGO_PKG_VERSION"),
            instructions: None,
        };
        let store = RedbStore::in_memory().map_err(|e| TransportError::Io(e.0))?;
        let store = RedbBookings::new(store);
        let host = Shared::booking(floor, store, info, KeyRing::new(key), Config::default());
        InProcess::new(&host)
    }
}

impl<A: Hosted> InProcess<A> {
    /// Serves one connection of `host` in this process, driven as `redmark serve` drives its
    /// transports (the same clock, entropy, principal, notes and panic answers).
    pub fn new(host: &Arc<Shared<A>>) -> Result<Self, TransportError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TransportError::Io(format!("cannot start the in-process host: {e}")))?;
        Ok(InProcess {
            conn: host.connection(),
            runtime,
        })
    }
}

impl<A: Hosted> Transport for InProcess<A> {
    fn exchange(&mut self, req: &Outgoing<'_>) -> Result<Vec<String>, TransportError> {
        let msg = Msg::Line(req.body.as_bytes());
        let h = self
            .runtime
            .block_on(self.conn.handle(msg, crate::host::LOCAL_PRINCIPAL));
        if !h.responded {
            return Err(TransportError::Protocol(
                "the in-process server did not answer".into(),
            ));
        }
        let text = std::str::from_utf8(self.conn.answer(&h)).map_err(|_| {
            TransportError::Protocol("the in-process server wrote invalid UTF-8".into())
        })?;
        let got: Vec<String> = text.split('\n').map(str::to_owned).collect();
        got.iter().for_each(|m| trace("←", m));
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::client::transport::{is_response_to, PROTOCOL_VERSION};

    #[test]
    fn in_process_answers() {
        let mut t = InProcess::scratch(DEFAULT_SITE).unwrap();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{PROTOCOL_VERSION}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        );
        let got = t
            .exchange(&Outgoing {
                id: 1,
                method: "tools/list",
                name: None,
                body: &body,
            })
            .unwrap();
        let last: Value = serde_json::from_str(got.last().unwrap()).unwrap();
        assert!(is_response_to(&last, 1));
        assert_eq!(last["result"]["tools"][0]["name"], "book_room");
    }
}
