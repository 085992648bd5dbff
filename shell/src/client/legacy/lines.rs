//! A 2025-11-25 session over newline-delimited JSON (`--stdio`, `--tcp`): a server's requests
//! and the client's notifications are lines on the same stream.

use super::bridge::{served, Bridge, Serve};
use crate::client::transport::lines::Lines;
use crate::client::transport::{Outgoing, TransportError};

impl Bridge for Lines {
    fn exchange_serving(
        &mut self,
        req: &Outgoing<'_>,
        serve: &mut Serve<'_>,
    ) -> Result<Vec<String>, TransportError> {
        self.exchange_handling(req, &mut |lines, msg, _| {
            let answer = served(serve, msg)?;
            lines.write_line(&answer)
        })
    }

    fn notify(&mut self, body: &str) -> Result<(), TransportError> {
        self.write_line(body)
    }
}
