//! Newline-delimited JSON-RPC on one TCP connection, as `redmark serve --tcp` and the UART
//! serve it: framing by `Lines`, one answer line per message; a line over `LINE_MAX` gets
//! `-32600` and the connection goes on.

use embedded_storage::nor_flash::NorFlash;
use redmark_core::engine::{Context, Handled};
use redmark_core::serve::Host;
use redmark_core::wire::lines::Lines;
use smoltcp::socket::tcp::{Socket, State};

use super::{Pass, IDLE_MS, LINE_PORT, PRINCIPAL};
use crate::{Panel, PanelHost, LINE_MAX};

/// One line connection's state: the partial line.
pub struct Conn {
    lines: Lines<LINE_MAX>,
    /// When the connection last brought a byte (ms since boot); 0: not yet established.
    last_ms: u64,
}

impl Conn {
    pub const fn new() -> Conn {
        Conn { lines: Lines::new(), last_ms: 0 }
    }
}

/// One pass over a line socket: (re)listen, read until one message is answered.
pub(crate) fn serve<F: NorFlash>(
    s: &mut Socket<'_>,
    c: &mut Conn,
    engine: &mut Panel<F>,
    host: &mut PanelHost,
    out: &mut [u8],
    now_ms: u64,
) -> Pass {
    if !s.is_open() {
        *c = Conn::new();
        let _ = s.listen(LINE_PORT);
        return Pass::Idle;
    }
    if s.state() == State::Established && c.last_ms == 0 {
        c.last_ms = now_ms;
    }
    if s.state() == State::CloseWait && s.send_queue() == 0 && !s.can_recv() {
        // The client closed and has every answer: listen again at once (see http.rs).
        s.abort();
        *c = Conn::new();
        let _ = s.listen(LINE_PORT);
        return Pass::Busy;
    }
    // The next message is read only once the last answer has left: a client that does not
    // read holds up only itself, and every answer fits the empty send buffer.
    if s.send_queue() > 0 || !s.may_send() {
        return Pass::Idle;
    }
    let mut pass = Pass::Idle;
    while s.can_recv() {
        let got = s.recv(|data| {
            let (used, line) = c.lines.push(data);
            let handled = line.map(|line| {
                let cx = Context { now: host.now(), principal: PRINCIPAL, entropy: host.entropy() };
                engine.handle_line(line, &cx, out)
            });
            (used, handled)
        });
        let Ok(handled) = got else { break };
        c.last_ms = now_ms;
        pass = Pass::Busy;
        if let Some(h) = handled {
            if answer(s, host, out, h) {
                break;
            }
        }
    }
    if pass == Pass::Idle {
        if c.last_ms != 0 && now_ms.saturating_sub(c.last_ms) > IDLE_MS {
            s.abort();
            return Pass::Busy;
        }
    }
    pass
}

/// Sends one answer line; true when something was sent.
fn answer(s: &mut Socket<'_>, host: &mut PanelHost, out: &[u8], h: Handled) -> bool {
    if let Some(note) = h.note {
        host.note(note);
    }
    if !h.responded {
        return false;
    }
    let _ = s.send_slice(&out[..h.len]);
    let _ = s.send_slice(b"\n");
    true
}
