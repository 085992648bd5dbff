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

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// (id digits, rest of the line after them) of a line that starts with `PREFIX`.
fn split(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = line.strip_prefix(PREFIX)?;
    let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    (n > 0).then(|| rest.split_at(n))
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: canned-stub TABLE");
    let mut text = Vec::new();
    std::fs::File::open(&path)
        .and_then(|mut f| f.read_to_end(&mut text))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut table: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut lines = text.split(|&b| b == b'\n');
    while let (Some(req), Some(ans)) = (lines.next(), lines.next()) {
        table.insert(req.to_vec(), ans.to_vec());
    }
    drop(text);

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
        let written = match split(body).and_then(|(id, key)| Some((id, table.get(key)?))) {
            Some((id, answer)) => out
                .write_all(PREFIX)
                .and_then(|_| out.write_all(id))
                .and_then(|_| out.write_all(answer)),
            None => out.write_all(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"canned-stub: request not captured"}}"#,
            ),
        };
        if written.and_then(|_| out.write_all(b"\n")).is_err() {
            break;
        }
        // Flush once the requests already read are answered, as a server would.
        if input.buffer().is_empty() && out.flush().is_err() {
            break;
        }
    }
    let _ = out.flush();
}
