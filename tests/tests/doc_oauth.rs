//! docs/oauth.md "Try it locally", as printed: its blocks (marked `<!-- try: NAME -->`) start
//! the identity provider (`scripts/oauth-peer.sh --serve`, oidc-provider) and `redmark serve`,
//! and get tokens, book and list with `redmark call` and `curl`, printing what the page shows;
//! then its step 4 in headless Chromium: the booking page signs in through the provider
//! (authorization code with PKCE, the provider's login and consent driven here), and what it
//! books is the signed-in user's. The only change made to the commands: the ports 9400 and
//! 8080 become free ones, so that tests running at once do not collide.

#![cfg(unix)]
#![cfg_attr(not(oauth_peer), allow(dead_code, unused_imports))]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;

use redmark_tests::browser::Browser;
use redmark_tests::page::{wait_cell, wait_says, SHOW};
use redmark_tests::server::{redmark_bin, run_bounded, TempDir, WAIT};
use serde_json::json;

/// The day the page shows in the docs' step 4.
const DAY: &str = "2099-09-17";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the checkout")
        .to_path_buf()
}

/// The text of the fenced block after the line `<!-- try: NAME -->` of docs/oauth.md.
fn block(name: &str) -> String {
    let doc = std::fs::read_to_string(repo().join("docs/oauth.md")).expect("docs/oauth.md");
    let marker = format!("<!-- try: {name} -->");
    let mut lines = doc.lines().skip_while(|l| *l != marker).skip(1);
    let fence = lines
        .next()
        .unwrap_or_else(|| panic!("no {marker} in docs/oauth.md"));
    assert!(
        fence.starts_with("```"),
        "{marker} is not followed by a fenced block"
    );
    let body: Vec<&str> = lines.take_while(|l| *l != "```").collect();
    body.join("\n") + "\n"
}

/// A loopback port nothing listens on.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A command of the docs in its own process group (killed whole on drop), stdin held open.
struct Running {
    child: Child,
    _stdin: ChildStdin,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

/// Steps 1 and 2 running: the provider and redmark, on free ports.
struct TryIt {
    /// The provider and redmark, once started.
    running: Vec<Running>,
    /// redmark's address as the docs name it, `127.0.0.1:PORT`.
    redmark: String,
    ports: (u16, u16),
    tmp: TempDir,
}

impl TryIt {
    /// Starts the docs' `provider` and `server` blocks and waits until both listen.
    fn start() -> TryIt {
        let tmp = TempDir::new("doc-oauth");
        let ports = (free_port(), free_port());
        let mut t = TryIt {
            running: Vec::new(),
            redmark: format!("127.0.0.1:{}", ports.1),
            ports,
            tmp,
        };
        let provider = t.spawn("provider", "listening ", false);
        t.running.push(provider);
        let server = t.spawn("server", "redmark: listening http ", true);
        t.running.push(server);
        t
    }

    /// The docs' block `name` with this run's ports.
    fn script(&self, name: &str) -> String {
        block(name)
            .replace("9400", &self.ports.0.to_string())
            .replace("8080", &self.ports.1.to_string())
    }

    /// `bash -c` of the block `name`, in the checkout, with the `redmark` under test first on
    /// PATH and temporary files in this test's folder.
    fn bash(&self, name: &str, flags: &[&str]) -> Command {
        let bin = redmark_bin();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin.parent().expect("bin dir").to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        let mut cmd = Command::new("bash");
        cmd.args(flags)
            .arg("-c")
            .arg(self.script(name))
            .current_dir(repo())
            .env("PATH", std::env::join_paths(dirs).expect("PATH"))
            .env("TMPDIR", self.tmp.path())
            .env_remove("REDMARK_TOKEN")
            .env_remove("REDMARK_CLIENT_SECRET")
            .env_remove("REDMARK_KEY")
            .env_remove("REDMARK_STORE");
        cmd
    }

    /// Starts the block `name` and waits (bounded) for a line starting with `ready` on its
    /// stdout (`on_stderr`: stderr).
    fn spawn(&self, name: &str, ready: &str, on_stderr: bool) -> Running {
        let mut cmd = self.bash(name, &[]);
        cmd.process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn bash");
        let stdin = child.stdin.take().expect("stdin");
        let (tx, rx) = mpsc::channel();
        for (stream, watched) in [
            (
                Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
                !on_stderr,
            ),
            (Box::new(child.stderr.take().expect("stderr")), on_stderr),
        ] {
            let tx = tx.clone();
            thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let _ = tx.send((watched, line));
                }
            });
        }
        // The readers hold the only senders: both streams closed (it exited) ends the wait.
        drop(tx);
        let running = Running {
            child,
            _stdin: stdin,
        };
        let mut said = String::new();
        loop {
            match rx.recv_timeout(WAIT) {
                Ok((true, line)) if line.starts_with(ready) => return running,
                Ok((_, line)) => said += &(line + "\n"),
                Err(_) => panic!("the docs' {name} block did not get ready; it said:\n{said}"),
            }
        }
    }

    /// Runs the block `name` to its end (`bash -e -o pipefail`): its stdout, after a success.
    fn run(&self, name: &str) -> String {
        let run = run_bounded(self.bash(name, &["-e", "-o", "pipefail"]));
        assert_eq!(
            run.code, 0,
            "the docs' {name} block failed:\n{}{}",
            run.stdout, run.stderr
        );
        run.stdout
    }

    /// `redmark call --url` of this redmark with `args`: its stdout, after a success.
    fn call(&self, args: &[&str], secret: Option<&str>) -> String {
        let mut cmd = Command::new(redmark_bin());
        cmd.args(["call", "--no-input", "--url"])
            .arg(format!("http://{}/mcp", self.redmark))
            .args(args)
            .env_remove("REDMARK_TOKEN")
            .env_remove("REDMARK_CLIENT_SECRET");
        if let Some(s) = secret {
            cmd.env("REDMARK_CLIENT_SECRET", s);
        }
        let run = run_bounded(cmd);
        assert_eq!(run.code, 0, "redmark call {args:?}: {}", run.stderr);
        run.stdout
    }
}

impl Drop for TryIt {
    /// Stops both, and removes the keys the provider made for its port.
    fn drop(&mut self) {
        self.running.clear();
        let keys = format!("target/oauth-peer/try-keys-{}.json", self.ports.0);
        let _ = std::fs::remove_file(repo().join(keys));
    }
}

/// Steps 1 to 3 as printed: the calls print what the docs show.
#[test]
#[cfg_attr(
    not(oauth_peer),
    ignore = "needs oidc-provider (scripts/oauth-peer.sh installs it)"
)]
fn the_try_it_locally_recipe_runs_as_printed() {
    let t = TryIt::start();
    assert_eq!(t.run("calls"), block("printed"));
}

/// Step 4: the page offers Sign in on the 401, refuses an answer whose `state` it did not
/// send, signs in through the provider's login and consent, shows alice's booking as hers,
/// books on the grid as her (what `redmark call` with the page's token and with alice's client
/// credentials lists), keeps the token in sessionStorage only, and signs out.
#[test]
#[cfg_attr(
    not(all(oauth_peer, browser_tools)),
    ignore = "needs oidc-provider (scripts/oauth-peer.sh) and chromium/chromedriver"
)]
fn the_page_signs_in_through_the_provider_and_books_as_that_user() {
    let t = TryIt::start();
    t.run("calls");
    let page = format!("http://{}/?day={DAY}", t.redmark);
    let b = Browser::start(1000, 1300);
    b.goto(&page);
    wait_says(&b, "error", "The server needs a bearer token");
    let policy = b.js(
        "return fetch('/').then((r) => r.headers.get('content-security-policy'))",
        json!([]),
    );
    let policy = policy.as_str().unwrap_or_default().to_owned();
    let issuer = format!("http://127.0.0.1:{}", t.ports.0);
    assert!(
        policy.contains(&format!("connect-src 'self' {issuer};")),
        "{policy}"
    );

    // An answer this tab's sign-in did not ask for (another state) is refused, unused.
    b.click(&b.find("#signin-button"));
    b.find("input[name=login]");
    b.goto(&format!("http://{}/?code=forged&state=forged", t.redmark));
    wait_says(&b, "error", "its state differs");

    // The real sign-in: the provider's login page, its consent page, back to the page.
    b.click(&b.find("#signin-button"));
    b.fill(&b.find("input[name=login]"), "alice");
    b.fill(&b.find("input[name=password]"), "any password");
    b.click(&b.find("button[type=submit]"));
    b.wait_js(
        "the consent page",
        "const p = document.querySelector('input[name=prompt]'); return !!p && p.value === 'consent';",
        SHOW,
    );
    b.click(&b.find("button[type=submit]"));
    let who = b.wait_js(
        "signed in",
        "const w = document.getElementById('who'); return !!w && w.textContent.includes('Signed in') && w.textContent;",
        SHOW,
    );
    assert_eq!(
        who,
        format!("Signed in as alice at {issuer} (the token is kept in this tab only).")
    );
    let address = b.js("return location.href", json!([]));
    assert_eq!(address, page, "the code and state leave the address");

    // alice's booking from step 3 is hers here; what she books on the grid is hers there.
    wait_cell(&b, "atrium", "09:00", "own");
    b.click(&b.find("td[data-room=studio-b][data-start='11:00'] button"));
    wait_says(
        &b,
        "status",
        "Booked Studio B (12 seats) on Thursday 2099-09-17 at 11:00–12:00",
    );
    wait_cell(&b, "studio-b", "11:00", "own");
    let stored = b.js(
        "return [sessionStorage.getItem('redmark.token'), localStorage.length]",
        json!([]),
    );
    let token = stored[0]
        .as_str()
        .expect("the token, in sessionStorage")
        .to_owned();
    assert_eq!(stored[1], 0, "nothing in localStorage");
    let listed = t.call(
        &["--token", &token, "list_bookings", &format!("day={DAY}")],
        None,
    );
    assert!(
        listed.contains("bk_1 — The Atrium") && listed.contains("bk_2 — Studio B"),
        "{listed}"
    );
    let alice = t.call(
        &[
            "--client-id",
            "alice",
            "list_bookings",
            &format!("day={DAY}"),
        ],
        Some("alice-secret-0123456789"),
    );
    assert_eq!(
        alice, listed,
        "the page's user and the client alice are one principal"
    );

    // Sign out: the token is gone, and the page offers Sign in again.
    b.click(&b.find("#signout"));
    wait_says(&b, "error", "The server needs a bearer token");
    b.find("#signin-button");
    let left = b.js("return sessionStorage.getItem('redmark.token')", json!([]));
    assert_eq!(left, json!(null));
}
