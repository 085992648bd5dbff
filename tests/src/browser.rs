//! Headless Chromium driven over WebDriver, for the booking page's tests and screenshots:
//! starts Debian's `chromedriver` on a loopback port, opens one session of `chromium` with a
//! fresh profile and no background networking, and speaks the W3C WebDriver protocol to it
//! with plain HTTP/1.1 and JSON. The driver is killed on drop.
//!
//! Every wait is bounded by [`crate::server::WAIT`] or the `timeout` given.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use base64ct::{Base64, Encoding};
use serde_json::{json, Value};

pub use crate::browser_tools::browser_paths;
use crate::server::{TempDir, WAIT};

/// The key W3C WebDriver names an element reference by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Keys as WebDriver spells them.
pub mod key {
    /// Tab.
    pub const TAB: &str = "\u{E004}";
    /// Enter.
    pub const ENTER: &str = "\u{E007}";
    /// Escape.
    pub const ESCAPE: &str = "\u{E00C}";
    /// Arrow down.
    pub const DOWN: &str = "\u{E015}";
    /// Space.
    pub const SPACE: &str = "\u{E00D}";
}

/// A running ChromeDriver with one Chromium session.
pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: TempDir,
}

/// An element of the page, by its WebDriver reference.
#[derive(Clone, Debug)]
pub struct Element {
    /// The WebDriver's reference.
    id: String,
    /// The selector it was found by, to find it again once the page redrew it.
    css: String,
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium window of `width` × `height` CSS pixels.
    pub fn start(width: u32, height: u32) -> Browser {
        let (chromium, chromedriver) =
            browser_paths().expect("chromium and chromedriver (scripts/browser.sh installs them)");
        let port = free_port();
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromedriver.display()));
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let profile = TempDir::new("chromium-profile");
        let mut b = Browser {
            driver,
            addr,
            session: String::new(),
            _profile: profile,
        };
        b.wait_ready();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.to_string_lossy(),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--hide-scrollbars",
                    "--force-device-scale-factor=1", "--lang=en-US",
                    format!("--user-data-dir={}", b._profile.path().display()),
                    format!("--window-size={width},{height}"),
                ],
            },
        }}});
        let v = b.send("POST", "/session", Some(caps));
        b.session = v["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {v}"))
            .to_string();
        b
    }

    fn wait_ready(&mut self) {
        let end = Instant::now() + WAIT;
        while Instant::now() < end {
            if TcpStream::connect(self.addr).is_ok() {
                let ready = exchange(self.addr, "GET", "/status", b"")
                    .is_ok_and(|(status, v)| status == 200 && v["value"]["ready"] == true);
                if ready {
                    return;
                }
            }
            if let Ok(Some(st)) = self.driver.try_wait() {
                panic!("chromedriver exited: {st}");
            }
            thread::sleep(Duration::from_millis(50));
        }
        panic!("chromedriver did not get ready within {WAIT:?}");
    }

    /// One WebDriver command; returns its `value`, panicking on an error.
    fn send(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let v = self.try_send(method, path, body);
        match v {
            Ok(v) => v,
            Err(e) => panic!("WebDriver {method} {path}: {e}"),
        }
    }

    fn try_send(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, Value> {
        let bytes = match body {
            Some(b) => b.to_string().into_bytes(),
            None if method == "POST" => b"{}".to_vec(),
            None => Vec::new(),
        };
        let (status, v) =
            exchange(self.addr, method, path, &bytes).map_err(|e| Value::String(e.to_string()))?;
        if status == 200 {
            Ok(v["value"].clone())
        } else {
            Err(v["value"].clone())
        }
    }

    fn cmd(&self, method: &str, tail: &str, body: Option<Value>) -> Value {
        self.send(method, &format!("/session/{}{tail}", self.session), body)
    }

    /// Loads `url` and waits for the page to be loaded.
    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    /// Reloads the page.
    pub fn refresh(&self) {
        self.cmd("POST", "/refresh", None);
    }

    /// Runs `script` (a function body; `arguments` holds `args`) and returns its value.
    pub fn js(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// Waits until `script` returns something truthy (not false, null, 0 or ""); returns it.
    pub fn wait_js(&self, what: &str, script: &str, timeout: Duration) -> Value {
        let end = Instant::now() + timeout;
        loop {
            let v = self.js(script, json!([]));
            let truthy =
                !matches!(&v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("");
            if truthy {
                return v;
            }
            if Instant::now() > end {
                let page = self.js("return document.body.innerText", json!([]));
                panic!("waited {timeout:?} for {what}; the page says:\n{page}");
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The first element matching a CSS selector, waiting for it up to [`WAIT`].
    pub fn find(&self, css: &str) -> Element {
        let end = Instant::now() + WAIT;
        loop {
            let body = json!({"using": "css selector", "value": css});
            match self.try_send(
                "POST",
                &format!("/session/{}/element", self.session),
                Some(body),
            ) {
                Ok(v) => {
                    return Element {
                        id: v[ELEMENT]
                            .as_str()
                            .unwrap_or_else(|| panic!("no element ref: {v}"))
                            .into(),
                        css: css.into(),
                    }
                }
                Err(e) if Instant::now() > end => panic!("no element {css}: {e}"),
                Err(_) => thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Clicks an element; one the page replaced since it was found (the grid redraws when a
    /// live update arrives) is found again by its selector and clicked, up to [`WAIT`].
    pub fn click(&self, e: &Element) {
        let end = Instant::now() + WAIT;
        let mut id = e.id.clone();
        loop {
            let path = format!("/session/{}/element/{id}/click", self.session);
            match self.try_send("POST", &path, None) {
                Ok(_) => return,
                Err(err) if err["error"] == "stale element reference" && Instant::now() < end => {
                    id = self.find(&e.css).id;
                }
                Err(err) => panic!("WebDriver POST {path}: {err}"),
            }
        }
    }

    /// Clears a text control and types `text` into it.
    pub fn fill(&self, e: &Element, text: &str) {
        self.cmd("POST", &format!("/element/{}/clear", e.id), None);
        self.cmd(
            "POST",
            &format!("/element/{}/value", e.id),
            Some(json!({ "text": text })),
        );
    }

    /// An element's rendered text.
    pub fn text(&self, e: &Element) -> String {
        self.cmd("GET", &format!("/element/{}/text", e.id), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Presses keys on whatever has the focus (a keyboard user's only way in).
    pub fn keys(&self, keys: &[&str]) {
        let mut actions = Vec::new();
        for k in keys {
            for c in k.chars() {
                actions.push(json!({"type": "keyDown", "value": c.to_string()}));
                actions.push(json!({"type": "keyUp", "value": c.to_string()}));
            }
        }
        self.cmd(
            "POST",
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        );
    }

    /// Opens a new tab and switches to it; returns the handle of the tab left.
    pub fn new_tab(&self) -> String {
        let old = self.handle();
        let v = self.cmd("POST", "/window/new", Some(json!({"type": "tab"})));
        self.cmd("POST", "/window", Some(json!({"handle": v["handle"]})));
        old
    }

    /// The handle of the current tab.
    pub fn handle(&self) -> String {
        let v = self.cmd("GET", "/window", None);
        v.as_str().unwrap_or_default().to_string()
    }

    /// Switches to the tab `handle`.
    pub fn switch_to(&self, handle: &str) {
        self.cmd("POST", "/window", Some(json!({ "handle": handle })));
    }

    /// Goes into the frame `frame` of the current page (`None`: back to the top page).
    pub fn frame(&self, frame: Option<&Element>) {
        let id = frame.map_or(Value::Null, |e| json!({ ELEMENT: e.id }));
        self.cmd("POST", "/frame", Some(json!({ "id": id })));
    }

    /// Resizes the window (CSS pixels of the outer window).
    pub fn resize(&self, width: u32, height: u32) {
        self.cmd(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        );
    }

    /// A PNG of one element (`Some`) or of the viewport, written to `path`.
    pub fn screenshot(&self, e: Option<&Element>, path: &Path) {
        let tail = match e {
            Some(e) => format!("/element/{}/screenshot", e.id),
            None => "/screenshot".into(),
        };
        let b64 = self.cmd("GET", &tail, None);
        let png =
            Base64::decode_vec(b64.as_str().unwrap_or_default()).expect("screenshot is base64");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("screenshot folder");
        }
        std::fs::write(path, png).expect("write screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.try_send("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// One HTTP/1.1 request to ChromeDriver and its JSON answer, read to its Content-Length
/// (ChromeDriver keeps the connection open whatever the request says).
fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &[u8],
) -> std::io::Result<(u16, Value)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(WAIT))?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line: {line:?}")))?;
    let mut length = 0;
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut bytes = vec![0; length];
    r.read_exact(&mut bytes)?;
    Ok((
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    ))
}

/// A loopback port nothing listens on (taken by the OS, then let go for ChromeDriver).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local addr").port()
}
