//! The load of `bench/pg-bench.sh`: CLIENTS HTTP/1.1 keep-alive connections, spread over the
//! instances given, each booking one distinct slot after another (lock-step) for SECS seconds,
//! as cheaply as `pgbench` drives the database (std only, a thread per connection, no JSON
//! library), so the driver takes little of the CPU the servers and the database share.
//!
//!   booker SECS CLIENTS HOST:PORT...
//!   booker --list SECS CLIENTS HOST:PORT...
//!
//! Prints `BOOKED/S FAILED` on one line: acknowledged bookings per second (answers with
//! `"isError":false`) and how many answers were anything else. With `--list` every request is
//! a `tools/list` instead (`bench/compare.py`'s HTTP lock-step figure) and the line is
//! `ANSWERED/S FAILED P50_US`: answers with a result per second, the others, and the median
//! round trip in microseconds.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const ROOMS: [&str; 3] = ["atrium", "studio-b", "nook"];

/// What every request of a run is.
#[derive(Clone, Copy)]
enum Load {
    /// A booking of the next distinct slot; success is `"isError":false`.
    Book,
    /// `tools/list`; success is a result.
    List,
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let load = if args.first().is_some_and(|a| a == "--list") {
        args.remove(0);
        Load::List
    } else {
        Load::Book
    };
    let (Some(secs), Some(clients), addrs) = (
        args.first().and_then(|s| s.parse::<f64>().ok()),
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
        args.get(2..).unwrap_or_default(),
    ) else {
        eprintln!("usage: booker [--list] SECS CLIENTS HOST:PORT...");
        return ExitCode::from(2);
    };
    if addrs.is_empty() || clients == 0 {
        eprintln!("usage: booker [--list] SECS CLIENTS HOST:PORT...");
        return ExitCode::from(2);
    }
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|k| {
            let addr = addrs[k % addrs.len()].clone();
            std::thread::spawn(move || client(k, &addr, load, until))
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
        Load::List => {
            times.sort_unstable();
            let p50 = times
                .get(times.len() / 2)
                .map_or(f64::NAN, |&ns| ns as f64 / 1000.0);
            println!("{rate:.0} {bad} {p50:.1}");
        }
    }
    ExitCode::SUCCESS
}

/// Client `k` until `until`: books its own year (2100 + k), hour after hour, or lists the
/// tools. Returns the successes, the failures and each round trip's nanoseconds.
fn client(
    k: usize,
    addr: &str,
    load: Load,
    until: Instant,
) -> Result<(u64, u64, Vec<u64>), String> {
    let stream = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let mut out = stream.try_clone().map_err(|e| e.to_string())?;
    let mut input = BufReader::new(stream);
    let (mut ok, mut bad, mut n) = (0u64, 0u64, 0usize);
    let mut times = Vec::with_capacity(1 << 16);
    let mut req = Vec::with_capacity(1024);
    let mut body = Vec::with_capacity(4096);
    let mut line = String::new();
    while Instant::now() < until {
        let (json, method, name) = match load {
            Load::Book => {
                let (day, hour) = (n / 24, n % 24);
                let date = format!("{}-{:02}-{:02}", 2100 + k, 1 + day / 28 % 12, 1 + day % 28);
                let room = ROOMS[day / (28 * 12) % 3];
                let json = format!(
                    r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"{date}","hour":{hour},"room_id":"{room}"}},{META}}}}}"#
                );
                (json, "tools/call", "Mcp-Name: book_room\r\n")
            }
            Load::List => {
                let json = format!(
                    r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/list","params":{{{META}}}}}"#
                );
                (json, "tools/list", "")
            }
        };
        n += 1;
        req.clear();
        write!(
            req,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{json}",
            json.len()
        )
        .map_err(|e| e.to_string())?;
        let sent = Instant::now();
        out.write_all(&req)
            .map_err(|e| format!("{addr}: write: {e}"))?;
        // Status line and headers; the body's length from Content-Length.
        let mut len = None;
        loop {
            line.clear();
            let got = input
                .read_line(&mut line)
                .map_err(|e| format!("{addr}: read: {e}"))?;
            if got == 0 {
                return Err(format!("{addr}: closed the connection"));
            }
            let l = line.trim_end();
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
        body.resize(len, 0);
        input
            .read_exact(&mut body)
            .map_err(|e| format!("{addr}: read: {e}"))?;
        times.push(sent.elapsed().as_nanos() as u64);
        let fine = match load {
            Load::Book => contains(&body, br#""isError":false"#),
            Load::List => contains(&body, br#""result":{"#) && contains(&body, br#""tools":["#),
        };
        if fine {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    Ok((ok, bad, times))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
