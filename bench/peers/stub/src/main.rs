//! The canned stub of `bench/compare.sh`: answers each line on stdin with redmark's own answer
//! to it, looked up in a table captured from `redmark serve` at the start of the run. It does
//! no JSON work, so its figures are the ceiling of the machine, the pipe and the driver.
//!
//!     canned-stub TABLE
//!
//! TABLE holds pairs of lines: a request with its id cut out, then the answer with its id cut
//! out. "Cut out" means: the line starts with `{"jsonrpc":"2.0","id":` and the decimal digits
//! that follow are the id; the key (or answer) is everything after the digits. The stub splices
//! each request's id back into the canned answer, so answers carry the same bytes as redmark's.
//! A line not in the table gets a JSON-RPC error (the driver counts it as a failure).
//!
//!     canned-stub TABLE --http HOST:PORT
//!
//! The same over HTTP/1.1 keep-alive instead of stdio: every POST body is looked up like a
//! line and answered `200` with `application/json` and the canned bytes, one thread per
//! connection, no HTTP library. Prints `canned-stub: listening http HOST:PORT` on stderr (port
//! 0 picks one). Its figures are the ceiling of the machine, loopback TCP and the driver for
//! redmark's HTTP rows.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// (id digits, rest of the line after them) of a line that starts with `PREFIX`.
fn split(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = line.strip_prefix(PREFIX)?;
    let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    (n > 0).then(|| rest.split_at(n))
}

/// A request `table` has no answer for.
const NOT_CAPTURED: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"canned-stub: request not captured"}}"#;

/// Writes the answer to the request `body` (a line without its newline) to `out`.
fn answer(
    table: &HashMap<Vec<u8>, Vec<u8>>,
    body: &[u8],
    out: &mut impl Write,
) -> std::io::Result<()> {
    match split(body).and_then(|(id, key)| Some((id, table.get(key)?))) {
        Some((id, canned)) => out
            .write_all(PREFIX)
            .and_then(|_| out.write_all(id))
            .and_then(|_| out.write_all(canned)),
        None => out.write_all(NOT_CAPTURED),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .expect("usage: canned-stub TABLE [--http HOST:PORT]");
    let mut text = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut text))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut table: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut lines = text.split(|&b| b == b'\n');
    while let (Some(req), Some(ans)) = (lines.next(), lines.next()) {
        table.insert(req.to_vec(), ans.to_vec());
    }
    drop(text);
    if let (Some("--http"), Some(addr)) = (args.get(1).map(String::as_str), args.get(2)) {
        return http(table, addr);
    }

    let stdin = std::io::stdin().lock();
    let mut input = BufReader::with_capacity(64 * 1024, stdin);
    let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        if answer(&table, body, &mut out)
            .and_then(|_| out.write_all(b"\n"))
            .is_err()
        {
            break;
        }
        // Flush once the requests already read are answered, as a server would.
        if input.buffer().is_empty() && out.flush().is_err() {
            break;
        }
    }
    let _ = out.flush();
}

/// Serves `table` over HTTP/1.1 keep-alive on `addr`, a thread per connection, until killed.
fn http(table: HashMap<Vec<u8>, Vec<u8>>, addr: &str) {
    let listener = TcpListener::bind(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
    let at = listener.local_addr().expect("a bound address");
    eprintln!("canned-stub: listening http {at}");
    let table: &'static HashMap<Vec<u8>, Vec<u8>> = Box::leak(Box::new(table));
    for conn in listener.incoming().flatten() {
        std::thread::spawn(move || {
            let _ = http_conn(table, conn);
        });
    }
}

/// One keep-alive connection: a POST's head and `Content-Length` body in, its answer out in
/// one write.
fn http_conn(table: &HashMap<Vec<u8>, Vec<u8>>, conn: TcpStream) -> std::io::Result<()> {
    conn.set_nodelay(true)?;
    let mut out = conn.try_clone()?;
    let mut input = BufReader::with_capacity(64 * 1024, conn);
    let (mut head, mut body, mut json, mut reply) =
        (String::new(), Vec::new(), Vec::new(), Vec::new());
    loop {
        let mut len = 0;
        loop {
            head.clear();
            if input.read_line(&mut head)? == 0 {
                return Ok(());
            }
            let l = head.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    len = value.trim().parse().unwrap_or(0);
                }
            }
        }
        body.resize(len, 0);
        input.read_exact(&mut body)?;
        json.clear();
        answer(table, &body, &mut json)?;
        reply.clear();
        write!(
            reply,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            json.len()
        )?;
        reply.extend_from_slice(&json);
        out.write_all(&reply)?;
    }
}
