//! The UART panel's time from its host: `redmark/timeChallenge` gives a fresh nonce, and
//! `redmark/time` `{"t": unix s, "tag": 64 hex}` is taken only with that nonce outstanding,
//! issued less than [`TIME_ANSWER_S`] earlier by the boot clock, with
//! `tag = HMAC-SHA256(time key, "redmark-panel time v1" ‖ nonce ‖ t as 8 bytes BE)` compared in
//! constant time. Any answer spends the challenge (one guess per challenge, one challenge at a
//! time); a time taken moves the clock by [`crate::wall`]'s rules, at most one per
//! [`MIN_GAP_S`]. `book_room` is refused until the panel has a time ([`Timed`]). The time key
//! (`REDMARK_PANEL_TIME_KEY`) is not the sealing key: the host that tells the time cannot mint
//! requestStates.

use embedded_io::{Read, Write};
use hmac::{Hmac, Mac};
use redmark_core::booking::BookingTool;
use redmark_core::engine::{App, Call, CallError, Context, Done, Reply, ServerInfo, ToolEntry};
use redmark_core::serve::Host;
use redmark_core::wire::envelope;
use redmark_core::wire::json::Value;
use redmark_core::wire::lines::{Line, Lines};
use redmark_core::wire::write::Writer;
use sha2::Sha256;

use crate::{diag, provision, wall, Panel, PanelHost, LINE_MAX, PRINCIPAL};

/// A challenge's answer must come within this many seconds of the boot clock (whole seconds:
/// an answer within 1 s is always in time, one 2 s late never).
pub const TIME_ANSWER_S: u64 = 2;
/// After a time is taken, answers are refused for this many seconds (the clock then runs at
/// most 1 + [`wall::MAX_STEP_S`]/16 times as fast as real time, whatever the host says).
pub const MIN_GAP_S: u64 = 16;
/// What both methods' names begin with.
const METHODS: &[u8] = b"redmark/time";
/// What the tag covers before the nonce and the time.
const DOMAIN: &[u8] = b"redmark-panel time v1";

/// What `book_room` answers while the panel has no time.
pub const NO_TIME: &str =
    "Not booked: the panel has no time yet (its host has not told it), so it cannot tell which hours are past. Try again in a minute.";

/// The challenge outstanding and when the last time was taken.
pub struct TimeState {
    /// The nonce outstanding and the boot second it was issued.
    challenge: Option<([u8; 8], u64)>,
    /// The boot second the last time was taken.
    taken_s: Option<u64>,
}

/// No challenge, no time taken ([`TimeState::new`]).
impl Default for TimeState {
    fn default() -> TimeState {
        TimeState::new()
    }
}

impl TimeState {
    /// No challenge, no time taken.
    pub const fn new() -> TimeState {
        TimeState { challenge: None, taken_s: None }
    }

    /// Answers `msg` into `out` if it is one of the two time methods: `Some(len)` (0: a
    /// notification, nothing to send); `None`: the engine's message. Not inlined: its frame
    /// (the HMAC) is not on the stack while the engine answers (inlined, the micro:bit's peak
    /// stack grew 432 B; the engine's call in a function of its own cost 120 B more).
    #[inline(never)]
    fn answer(&mut self, msg: &[u8], host: &mut PanelHost, out: &mut [u8]) -> Option<usize> {
        // Every other message is parsed once, by the engine.
        if !msg.windows(METHODS.len()).any(|w| w == METHODS) {
            return None;
        }
        let env = envelope::read(msg).ok()?;
        let mut w = Writer::new(out);
        w.begin_object().key("jsonrpc").string("2.0").key("id");
        match env.id {
            Some(id) => w.raw(id.raw()),
            None => w.raw(b"null"),
        };
        let boot_s = (host.now_s)();
        if env.method.eq_str("redmark/timeChallenge") {
            let nonce = host.entropy();
            self.challenge = Some((nonce, boot_s));
            w.key("result").begin_object().key("nonce").string_with(|f| hex(f, &nonce)).end_object();
        } else if env.method.eq_str("redmark/time") {
            match self.take(env.params, boot_s) {
                Ok(clock) => w.key("result").begin_object().key("clock").int(clock as i64).end_object(),
                Err(why) => w
                    .key("error")
                    .begin_object()
                    .key("code")
                    .int(-32000)
                    .key("message")
                    .string(why)
                    .end_object(),
            };
        } else {
            return None;
        }
        w.end_object();
        Some(if env.id.is_some() { w.finish().unwrap_or(0) } else { 0 })
    }

    /// Takes a `redmark/time` answer's `params` at boot second `boot_s`: the clock after it,
    /// or why not.
    fn take(&mut self, params: Option<Value<'_>>, boot_s: u64) -> Result<u64, &'static str> {
        let Some((nonce, issued_s)) = self.challenge.take() else {
            return Err("Time refused: no challenge outstanding");
        };
        if boot_s.saturating_sub(issued_s) >= TIME_ANSWER_S {
            return Err("Time refused: the challenge has expired");
        }
        let [t, tag] = params.map_or([None, None], |p| p.pick(["t", "tag"]));
        let t = t.and_then(|t| t.as_i64()).and_then(|t| u64::try_from(t).ok());
        let mut bytes = [0u8; 32];
        let (Some(t), true) = (t, tag.and_then(|v| v.as_plain_str()).is_some_and(|s| unhex(s, &mut bytes)))
        else {
            return Err("Time refused: params must be t (unix seconds) and tag (64 hex digits)");
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&provision::TIME_KEY) else {
            return Err("Time refused: no time key");
        };
        mac.update(DOMAIN);
        mac.update(&nonce);
        mac.update(&t.to_be_bytes());
        if mac.verify_slice(&bytes).is_err() {
            diag::text("clock: host time with a bad tag refused");
            return Err("Time refused: bad tag");
        }
        if wall::is_set() && self.taken_s.is_some_and(|at| boot_s.saturating_sub(at) < MIN_GAP_S) {
            return Err("Time refused: one time per 16 s");
        }
        match wall::told(t, boot_s) {
            Ok(clock) => {
                self.taken_s = Some(boot_s);
                Ok(clock)
            }
            Err(wall::Refused::Outside) => Err("Time refused: outside 2026-2099"),
            Err(wall::Refused::Behind) => Err("Time refused: behind the panel's clock"),
        }
    }
}

/// Writes `bytes` as lowercase hex.
fn hex(f: &mut dyn core::fmt::Write, bytes: &[u8]) -> core::fmt::Result {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        f.write_char(char::from(DIGITS[usize::from(b >> 4)]))?;
        f.write_char(char::from(DIGITS[usize::from(b & 15)]))?;
    }
    Ok(())
}

/// Reads `s` (exactly twice `out`'s length in hex digits) into `out`; false if it is not.
fn unhex(s: &str, out: &mut [u8]) -> bool {
    let digit = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    s.len() == 2 * out.len()
        && s.as_bytes().chunks_exact(2).zip(out.iter_mut()).all(|(pair, o)| {
            match (digit(pair[0]), digit(pair[1])) {
                (Some(h), Some(l)) => {
                    *o = h << 4 | l;
                    true
                }
                _ => false,
            }
        })
}

/// A booking app whose `book_room` waits for the host's time.
pub struct Timed<A>(pub A);

impl<A: App<Tool = BookingTool>> App for Timed<A> {
    type Tool = BookingTool;

    fn info(&self) -> ServerInfo {
        self.0.info()
    }

    fn tools(&self) -> &[ToolEntry<BookingTool>] {
        self.0.tools()
    }

    async fn call_tool(
        &mut self,
        tool: BookingTool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        if tool == BookingTool::BookRoom && wall::awaited() {
            return Ok(reply.fail(NO_TIME));
        }
        self.0.call_tool(tool, call, reply).await
    }
}

/// Serves newline JSON-RPC on `uart` for ever: the time methods here, every other message by
/// the engine. A UART error or end is a fault.
pub(crate) fn serve<U: Read + Write, F: embedded_storage::nor_flash::MultiwriteNorFlash>(
    uart: &mut U,
    engine: &mut Panel<F>,
    lines: &mut Lines<LINE_MAX>,
    out: &mut [u8],
    host: &mut PanelHost,
) -> ! {
    let mut time = TimeState::new();
    let mut chunk = [0u8; redmark_core::limits::READ_CHUNK];
    let mut forgot_at = None;
    loop {
        let n = match uart.read(&mut chunk) {
            Ok(n) if n > 0 => n,
            _ => diag::fail(),
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (used, line) = lines.push(rest);
            rest = &rest[used..];
            let Some(line) = line else { continue };
            let timed = match line {
                Line::Message(msg) => time.answer(msg, host, out),
                Line::TooLong => None,
            };
            let len = timed.unwrap_or_else(|| {
                let cx = Context {
                    now: host.now(),
                    principal: PRINCIPAL,
                    entropy: host.entropy(),
                    access: redmark_core::Access::USER,
                };
                let handled = engine.handle_line(line, &cx, out);
                if let Some(note) = handled.note {
                    host.note(note);
                }
                if handled.responded {
                    handled.len
                } else {
                    0
                }
            });
            if len > 0
                && (uart.write_all(&out[..len]).is_err()
                    || uart.write_all(b"\n").is_err()
                    || uart.flush().is_err())
            {
                diag::fail();
            }
            // Past meetings forgotten with a trusted time, once a minute, after an answer is
            // sent (a pass over the store, kept out of the answer's time).
            let minute = wall::is_set().then(|| host.now()).and_then(redmark_core::booking::minute_of);
            if let Some(m) = minute.filter(|&m| forgot_at != Some(m)) {
                crate::forget_past(engine.app_mut().0.store_mut(), m);
                forgot_at = Some(m);
            }
        }
    }
}
