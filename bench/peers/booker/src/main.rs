//! The load of `bench/pg-bench.sh`: CLIENTS HTTP/1.1 keep-alive connections, spread over the
//! instances given, each booking one distinct slot after another (lock-step) for SECS seconds,
//! as cheaply as `pgbench` drives the database (std only, a thread per connection, no JSON
//! library), so the driver takes little of the CPU the servers and the database share.
//!
//!   booker SECS CLIENTS HOST:PORT...
//!   booker --list SECS CLIENTS HOST:PORT...
//!   booker --round-trip SECS CLIENTS HOST:PORT...
//!
//! Prints `BOOKED/S FAILED` on one line: acknowledged bookings per second (answers with
//! `"isError":false`) and how many answers were anything else. With `--list` every request is
//! a `tools/list` instead (`bench/compare.py`'s HTTP lock-step figure) and the line is
//! `ANSWERED/S FAILED P50_US P99_US`: answers with a result per second, the others, and the
//! median and 99th-percentile round trip in microseconds. With `--round-trip` each step is a
//! whole booking as a client makes it (`bench/compare.py`'s booking round trip): `book_room`
//! with an ambiguous `room_hint`, which answers `input_required`, then the retry accepting a
//! room with the `requestState` echoed, which books; the line is as with `--list`, per round
//! trip (two requests), a success being a retry answered `"isError":false`. Client `k` of
//! CLIENTS books the year 2100 + CLIENTS + k there, so runs of different sizes against one
//! server never meet.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const META_ELICIT: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
const ROOMS: [&str; 3] = ["atrium", "studio-b", "nook"];

/// What every request of a run is.
#[derive(Clone, Copy)]
enum Load {
    /// A booking of the next distinct slot; success is `"isError":false`.
    Book,
    /// `tools/list`; success is a result.
    List,
    /// A booking asked with an ambiguous hint, then answered; success is the retry's
    /// `"isError":false`.
    RoundTrip,
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let load = match args.first().map(String::as_str) {
        Some("--list") => Load::List,
        Some("--round-trip") => Load::RoundTrip,
        _ => Load::Book,
    };
    if !matches!(load, Load::Book) {
        args.remove(0);
    }
    let (Some(secs), Some(clients), addrs) = (
        args.first().and_then(|s| s.parse::<f64>().ok()),
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
        args.get(2..).unwrap_or_default(),
    ) else {
        eprintln!("usage: booker [--list | --round-trip] SECS CLIENTS HOST:PORT...");
        return ExitCode::from(2);
    };
    if addrs.is_empty() || clients == 0 {
        eprintln!("usage: booker [--list | --round-trip] SECS CLIENTS HOST:PORT...");
        return ExitCode::from(2);
    }
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|k| {
            let addr = addrs[k % addrs.len()].clone();
            std::thread::spawn(move || client(k, clients, &addr, load, until))
        })
        .collect();
    let (mut ok, mut bad, mut times) = (0u64, 0u64, Vec::new());
    for t in threads {
        match t.join() {
            Ok(Ok((o, b, ns))) => {
                ok += o;
                bad += b;
                times.extend(ns);
            }
            Ok(Err(e)) => {
                eprintln!("booker: {e}");
                return ExitCode::FAILURE;
            }
            Err(_) => return ExitCode::FAILURE,
        }
    }
    let rate = ok as f64 / start.elapsed().as_secs_f64();
    match load {
        Load::Book => println!("{rate:.0} {bad}"),
        Load::List | Load::RoundTrip => {
            times.sort_unstable();
            let at = |q: usize| {
                times
                    .get(times.len() * q / 100)
                    .map_or(f64::NAN, |&ns| ns as f64 / 1000.0)
            };
            println!("{rate:.0} {bad} {:.1} {:.1}", at(50), at(99));
        }
    }
    ExitCode::SUCCESS
}

/// Client `k` of `clients` until `until`: books its own year (2100 + k, or 2100 + clients + k
/// for round trips), hour after hour, or lists the tools. Returns the successes, the failures
/// and each round trip's nanoseconds.
fn client(
    k: usize,
    clients: usize,
    addr: &str,
    load: Load,
    until: Instant,
) -> Result<(u64, u64, Vec<u64>), String> {
    let stream = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let mut conn = Conn {
        addr,
        out: stream.try_clone().map_err(|e| e.to_string())?,
        input: BufReader::new(stream),
        req: Vec::with_capacity(1024),
        body: Vec::with_capacity(4096),
        line: String::new(),
    };
    let (mut ok, mut bad, mut n) = (0u64, 0u64, 0usize);
    let mut times = Vec::with_capacity(1 << 16);
    while Instant::now() < until {
        let (day, hour) = (n / 24, n % 24);
        let year = match load {
            Load::RoundTrip => 2100 + clients + k,
            _ => 2100 + k,
        };
        let date = format!("{year}-{:02}-{:02}", 1 + day / 28 % 12, 1 + day % 28);
        let sent = Instant::now();
        let fine = match load {
            Load::Book => {
                let room = ROOMS[day / (28 * 12) % 3];
                let args = format!(r#"{{"day":"{date}","hour":{hour},"room_id":"{room}"}}"#);
                conn.post("tools/call", &book(n, &args, META, ""))?;
                contains(&conn.body, br#""isError":false"#)
            }
            Load::List => {
                let json = format!(
                    r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/list","params":{{{META}}}}}"#
                );
                conn.post("tools/list", &json)?;
                contains(&conn.body, br#""result":{"#) && contains(&conn.body, br#""tools":["#)
            }
            Load::RoundTrip => {
                // Both large rooms answer to the hint; the retry takes one of them by turns.
                let args =
                    format!(r#"{{"day":"{date}","hour":{hour},"room_hint":"the big room"}}"#);
                conn.post("tools/call", &book(2 * n, &args, META_ELICIT, ""))?;
                match request_state(&conn.body) {
                    Some(state) => {
                        let room = ROOMS[day / (28 * 12) % 2];
                        let more = format!(
                            r#","inputResponses":{{"room":{{"action":"accept","content":{{"room_id":"{room}"}}}}}},"requestState":"{state}""#
                        );
                        conn.post("tools/call", &book(2 * n + 1, &args, META_ELICIT, &more))?;
                        contains(&conn.body, br#""isError":false"#)
                    }
                    None => false,
                }
            }
        };
        times.push(sent.elapsed().as_nanos() as u64);
        n += 1;
        if fine {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    Ok((ok, bad, times))
}

/// A `book_room` call with these arguments (a JSON object), `more` params after them and the
/// `_meta` member `meta`.
fn book(id: usize, args: &str, meta: &str, more: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"book_room","arguments":{args}{more},{meta}}}}}"#
    )
}

/// The raw content of the answer's `"requestState"` string, as it must be echoed.
fn request_state(body: &[u8]) -> Option<String> {
    let key = br#""requestState":""#;
    let at = body.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = &body[at..];
    let mut end = 0;
    while end < rest.len() && rest[end] != b'"' {
        end += if rest[end] == b'\\' { 2 } else { 1 };
    }
    std::str::from_utf8(rest.get(..end)?)
        .ok()
        .map(str::to_string)
}

/// One keep-alive connection and its buffers; the last answer's body in `body`.
struct Conn<'a> {
    addr: &'a str,
    out: TcpStream,
    input: BufReader<TcpStream>,
    req: Vec<u8>,
    body: Vec<u8>,
    line: String,
}

impl Conn<'_> {
    /// POSTs `json` (a request of `method`) and reads the answer's body into `self.body`.
    fn post(&mut self, method: &str, json: &str) -> Result<(), String> {
        let addr = self.addr;
        let name = if method == "tools/call" {
            "Mcp-Name: book_room\r\n"
        } else {
            ""
        };
        self.req.clear();
        write!(
            self.req,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{json}",
            json.len()
        )
        .map_err(|e| e.to_string())?;
        self.out
            .write_all(&self.req)
            .map_err(|e| format!("{addr}: write: {e}"))?;
        // Status line and headers; the body's length from Content-Length.
        let mut len = None;
        loop {
            self.line.clear();
            let got = self
                .input
                .read_line(&mut self.line)
                .map_err(|e| format!("{addr}: read: {e}"))?;
            if got == 0 {
                return Err(format!("{addr}: closed the connection"));
            }
            let l = self.line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    len = value.trim().parse::<usize>().ok();
                }
            }
        }
        let len = len.ok_or_else(|| format!("{addr}: an answer without Content-Length"))?;
        self.body.resize(len, 0);
        self.input
            .read_exact(&mut self.body)
            .map_err(|e| format!("{addr}: read: {e}"))
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
