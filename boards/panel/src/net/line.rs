//! Newline-delimited JSON-RPC on one TCP connection, as `redmark serve --tcp` and the UART
//! serve it: framing by `Lines`, one answer line per message; a line over `LINE_MAX` gets
//! `-32600` and the connection goes on. A line not finished [`super::MESSAGE_MS`] after its
//! first byte is reset (see `slots`).

use embedded_storage::nor_flash::MultiwriteNorFlash;
use redmark_core::engine::{Context, Handled};
use redmark_core::serve::Host;
use redmark_core::wire::lines::Lines;
use smoltcp::socket::tcp::{Socket, State};

use super::slots::Wait;
use super::{Pass, LINE_PORT, PRINCIPAL};
use crate::{Panel, PanelHost, LINE_MAX};

/// One line connection's state: the partial line and its deadlines.
pub struct Conn {
    lines: Lines<LINE_MAX>,
    /// Its deadlines (see `slots`).
    pub wait: Wait,
}

impl Conn {
    pub const fn new() -> Conn {
        Conn { lines: Lines::new(), wait: Wait::new() }
    }
}

/// One pass over a line socket: (re)listen, enforce the deadlines, read until one message is
/// answered.
pub(crate) fn serve<F: MultiwriteNorFlash>(
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
    if s.state() == State::Listen {
        return Pass::Idle;
    }
    c.wait.begin(now_ms);
    if c.wait.expired(now_ms) {
        // No line begun in time, or one not finished in time (a byte now and then does not
        // stretch it): reset; the next pass listens again.
        s.abort();
        return Pass::Busy;
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
                let cx = Context {
                    now: host.now(),
                    principal: PRINCIPAL,
                    entropy: host.entropy(),
                    access: redmark_core::Access::USER,
                };
                engine.handle_line(line, &cx, out)
            });
            (used, handled)
        });
        let Ok(handled) = got else { break };
        pass = Pass::Busy;
        if let Some(h) = handled {
            c.wait.restart(now_ms);
            if answer(s, host, out, h) {
                break;
            }
        }
    }
    if c.lines.has_partial() {
        c.wait.started(now_ms);
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
