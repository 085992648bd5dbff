//! A blocking serve loop over any `embedded-io` byte stream (a UART, a socket): framing,
//! engine, newline. Async hosts drive [`Lines`] and [`Engine::handle_line`] themselves.

use embedded_io::{Read, Write};

use crate::engine::{App, Context, Engine, Note};
use crate::wire::lines::{Line, Lines};

/// What the loop needs from its host for every message.
pub trait Host {
    /// The server's clock, seconds.
    fn now(&mut self) -> u64;
    /// Fresh random bytes for a nonce.
    fn entropy(&mut self) -> [u8; 8];
    /// Something for the log (never on the wire).
    fn note(&mut self, _note: Note) {}
}

/// Serves newline-delimited JSON-RPC on `io` until end of stream or an I/O error. Each
/// answer is written as its line(s), each ended by `\n`.
pub fn serve<A: App, T: Read + Write, const N: usize>(
    engine: &mut Engine<A>,
    io: &mut T,
    lines: &mut Lines<N>,
    out: &mut [u8],
    principal: &[u8],
    host: &mut impl Host,
) -> Result<(), T::Error> {
    let mut chunk = [0u8; crate::limits::READ_CHUNK];
    loop {
        let n = io.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (used, line) = lines.push(rest);
            rest = &rest[used..];
            if let Some(line) = line {
                answer(engine, line, io, out, principal, host)?;
            }
        }
    }
}

fn answer<A: App, T: Write>(
    engine: &mut Engine<A>,
    line: Line<'_>,
    io: &mut T,
    out: &mut [u8],
    principal: &[u8],
    host: &mut impl Host,
) -> Result<(), T::Error> {
    let cx = Context {
        now: host.now(),
        principal,
        entropy: host.entropy(),
        access: crate::Access::USER,
    };
    let handled = engine.handle_line(line, &cx, out);
    if let Some(note) = handled.note {
        host.note(note);
    }
    if handled.responded {
        io.write_all(&out[..handled.len])?;
        io.write_all(b"\n")?;
        io.flush()?;
    }
    Ok(())
}
