//! The load of `bench/pg-bench.sh`: CLIENTS HTTP/1.1 keep-alive connections, spread over the
//! instances given, each booking one distinct slot after another (lock-step) for SECS seconds,
//! as cheaply as `pgbench` drives the database (std only, a thread per connection, no JSON
//! library), so the driver takes little of the CPU the servers and the database share.
//!
//!   booker SECS CLIENTS HOST:PORT...
//!
//! Prints `BOOKED/S FAILED` on one line: acknowledged bookings per second (answers with
//! `"isError":false`) and how many answers were anything else.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const ROOMS: [&str; 3] = ["atrium", "studio-b", "nook"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(secs), Some(clients), addrs) = (
        args.first().and_then(|s| s.parse::<f64>().ok()),
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
        args.get(2..).unwrap_or_default(),
    ) else {
        eprintln!("usage: booker SECS CLIENTS HOST:PORT...");
        return ExitCode::from(2);
    };
    if addrs.is_empty() || clients == 0 {
        eprintln!("usage: booker SECS CLIENTS HOST:PORT...");
        return ExitCode::from(2);
    }
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|k| {
            let addr = addrs[k % addrs.len()].clone();
            std::thread::spawn(move || client(k, &addr, until))
        })
        .collect();
    let (mut ok, mut bad) = (0u64, 0u64);
    for t in threads {
        match t.join() {
            Ok(Ok((o, b))) => {
                ok += o;
                bad += b;
            }
            Ok(Err(e)) => {
                eprintln!("booker: {e}");
                return ExitCode::FAILURE;
            }
            Err(_) => return ExitCode::FAILURE,
        }
    }
    println!("{:.0} {bad}", ok as f64 / start.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}

/// Client `k`: books its own year (2100 + k), hour after hour, until `until`.
fn client(k: usize, addr: &str, until: Instant) -> Result<(u64, u64), String> {
    let stream = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let mut out = stream.try_clone().map_err(|e| e.to_string())?;
    let mut input = BufReader::new(stream);
    let (mut ok, mut bad, mut n) = (0u64, 0u64, 0usize);
    let mut req = Vec::with_capacity(1024);
    let mut body = Vec::with_capacity(4096);
    let mut line = String::new();
    while Instant::now() < until {
        let (day, hour) = (n / 24, n % 24);
        let date = format!("{}-{:02}-{:02}", 2100 + k, 1 + day / 28 % 12, 1 + day % 28);
        let room = ROOMS[day / (28 * 12) % 3];
        let json = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"{date}","hour":{hour},"room_id":"{room}"}},{META}}}}}"#
        );
        n += 1;
        req.clear();
        write!(
            req,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: book_room\r\nContent-Length: {}\r\n\r\n{json}",
            json.len()
        )
        .map_err(|e| e.to_string())?;
        out.write_all(&req).map_err(|e| format!("{addr}: write: {e}"))?;
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
        if contains(&body, br#""isError":false"#) {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    Ok((ok, bad))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
