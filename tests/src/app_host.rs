//! The backend of the MCP Apps test host (`tests/peers/app/host.html`), on loopback: serves the
//! host page and the pinned `node_modules` (`scripts/app-peer.sh`) as static files, and carries
//! the host's MCP messages to `redmark serve` — `/mcp` forwarded to its Streamable HTTP
//! endpoint, `/stdio` written to its stdin as a line with the answer line read back — as a
//! chat host's own process would. One thread per connection; stops when dropped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;

use crate::server::WAIT;

/// Where the host's MCP messages go.
pub enum Upstream {
    /// `redmark serve --http ADDR`: `/mcp` is forwarded there.
    Http(SocketAddr),
    /// `redmark serve` on stdio: `/stdio` lines go to its stdin, answers come from its stdout.
    Stdio(ChildStdin, ChildStdout),
}

/// A running host backend.
pub struct AppHost {
    /// Where it listens (the host page is `http://ADDR/host.html`).
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

/// The stdio server's writer and who waits for which answer (by the request's id, as JSON).
struct Stdio {
    stdin: Mutex<ChildStdin>,
    waiting: Mutex<HashMap<String, Sender<String>>>,
}

/// What each connection needs.
struct Shared {
    page: PathBuf,
    modules: PathBuf,
    http: Option<SocketAddr>,
    stdio: Option<Arc<Stdio>>,
}

impl AppHost {
    /// Serves `page` at `/host.html` and `modules` (a `node_modules` folder) under
    /// `/node_modules/`, carrying MCP to `upstream`.
    pub fn start(page: &Path, modules: &Path, upstream: Upstream) -> AppHost {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the host's backend");
        let addr = listener.local_addr().expect("its address");
        let (http, stdio) = match upstream {
            Upstream::Http(a) => (Some(a), None),
            Upstream::Stdio(stdin, stdout) => {
                let s = Arc::new(Stdio {
                    stdin: Mutex::new(stdin),
                    waiting: Mutex::new(HashMap::new()),
                });
                let answers = Arc::clone(&s);
                thread::spawn(move || {
                    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                        let id = serde_json::from_str::<Value>(&line)
                            .map(|v| v["id"].to_string())
                            .unwrap_or_default();
                        let to = answers.waiting.lock().unwrap().remove(&id);
                        if let Some(to) = to {
                            let _ = to.send(line);
                        }
                    }
                });
                (None, Some(s))
            }
        };
        let shared = Arc::new(Shared {
            page: page.to_path_buf(),
            modules: modules.to_path_buf(),
            http,
            stdio,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        thread::spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let _ = serve(conn, &shared);
                });
            }
        });
        AppHost { addr, stop }
    }

    /// The host page's URL with `query` (e.g. `mode=http&day=2099-09-17`).
    pub fn url(&self, query: &str) -> String {
        format!("http://{}/host.html?{query}", self.addr)
    }
}

impl Drop for AppHost {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the stop.
        let _ = TcpStream::connect(self.addr);
    }
}

/// One request read: method, path, headers, body.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_request(conn: &mut BufReader<TcpStream>) -> std::io::Result<Request> {
    let mut line = String::new();
    conn.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if conn.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0usize);
    let mut body = vec![0; len];
    conn.read_exact(&mut body)?;
    Ok(Request {
        method,
        path,
        headers,
        body,
    })
}

fn respond(conn: &mut TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    conn.write_all(body)
}

fn serve(conn: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let req = read_request(&mut reader)?;
    let mut conn = conn;
    let path = req.path.split('?').next().unwrap_or_default();
    match (req.method.as_str(), path) {
        ("GET", "/host.html") => {
            let page = std::fs::read(&shared.page)?;
            respond(&mut conn, "200 OK", "text/html; charset=utf-8", &page)
        }
        ("GET", p) if p.starts_with("/node_modules/") => {
            let rel = &p["/node_modules/".len()..];
            if rel.split('/').any(|s| s == ".." || s.is_empty()) {
                return respond(&mut conn, "404 Not Found", "text/plain", b"");
            }
            match std::fs::read(shared.modules.join(rel)) {
                Ok(b) => respond(&mut conn, "200 OK", "text/javascript; charset=utf-8", &b),
                Err(_) => respond(&mut conn, "404 Not Found", "text/plain", b""),
            }
        }
        (_, "/mcp") => match shared.http {
            Some(upstream) => forward(&mut conn, &req, upstream),
            None => respond(&mut conn, "404 Not Found", "text/plain", b""),
        },
        ("POST", "/stdio") => match &shared.stdio {
            Some(s) => relay(&mut conn, &req.body, s),
            None => respond(&mut conn, "404 Not Found", "text/plain", b""),
        },
        _ => respond(&mut conn, "404 Not Found", "text/plain", b""),
    }
}

/// `/mcp` as redmark answers it: the request with its headers (less the browser's `Host`,
/// `Origin` and connection ones, which name this backend), the answer as it came.
fn forward(conn: &mut TcpStream, req: &Request, upstream: SocketAddr) -> std::io::Result<()> {
    let mut up = TcpStream::connect(upstream)?;
    up.set_read_timeout(Some(WAIT))?;
    write!(up, "{} /mcp HTTP/1.1\r\nHost: {upstream}\r\n", req.method)?;
    for (k, v) in &req.headers {
        let skip = ["host", "origin", "connection", "content-length", "referer"];
        if !skip.iter().any(|s| k.eq_ignore_ascii_case(s)) {
            write!(up, "{k}: {v}\r\n")?;
        }
    }
    write!(
        up,
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        req.body.len()
    )?;
    up.write_all(&req.body)?;
    let mut answer = Vec::new();
    up.read_to_end(&mut answer)?;
    conn.write_all(&answer)
}

/// `/stdio`: the body written to redmark's stdin as one line; the line answering its id back
/// (202 and nothing for a notification).
fn relay(conn: &mut TcpStream, body: &[u8], stdio: &Stdio) -> std::io::Result<()> {
    let msg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let line = msg.to_string();
    let answer = if msg.get("id").is_some() && msg.get("method").is_some() {
        let (tx, rx) = mpsc::channel();
        stdio
            .waiting
            .lock()
            .unwrap()
            .insert(msg["id"].to_string(), tx);
        Some(rx)
    } else {
        None
    };
    {
        let mut w = stdio.stdin.lock().unwrap();
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
        w.flush()?;
    }
    match answer {
        Some(rx) => match rx.recv_timeout(WAIT) {
            Ok(line) => respond(conn, "200 OK", "application/json", line.as_bytes()),
            Err(_) => respond(conn, "504 Gateway Timeout", "text/plain", b"no answer"),
        },
        None => respond(conn, "202 Accepted", "text/plain", b""),
    }
}
