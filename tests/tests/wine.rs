//! The Windows build (`x86_64-pc-windows-gnu`) under Wine: `redmark.exe serve` books a room
//! over stdio and over Streamable HTTP (loopback) for the Linux `redmark call`; a second
//! process on a data folder held by the first is refused, saying why, and so is `--tcp`
//! without `--tcp-any-local-user` (no peer-user check there; docs/platforms.md), served with it.
//! `redmark.exe call` itself starts a stdio server and runs `--token-command` through
//! `cmd.exe` (no `sh` on Windows), and the default data folder is the one docs/platforms.md
//! names.
//! Ignored without Wine and mingw-w64 (tests/build.rs); `REDMARK_REQUIRE_WINE=1` makes that a
//! failure.
#![cfg_attr(not(wine_tools), allow(dead_code, unused_imports))]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use redmark_tests::server::{redmark_bin, run_bounded, Run, Server, TempDir, WAIT};
use redmark_tests::wine::{windows_cmd_path, windows_exe, windows_path, wine};

/// A room booking that asks which room first (the red mark), answered on the command line.
const BOOK: [&str; 6] = [
    "--answer",
    "room.room_id=studio-b",
    "book_room",
    "day=2099-09-17",
    "hour=9",
    "room_hint=the big room",
];

/// `redmark call ARGS…` (the Linux client) with the Wine environment of the staged exe.
fn call(args: &[&str]) -> Run {
    let probe = wine(&windows_exe());
    let mut cmd = Command::new(redmark_bin());
    cmd.arg("call").args(args).env_remove("REDMARK_KEY");
    for (k, v) in probe.get_envs() {
        if let (Some(k), Some(v)) = (k.to_str(), v) {
            cmd.env(k, v);
        }
    }
    run_bounded(cmd)
}

#[test]
#[cfg_attr(not(wine_tools), ignore = "Wine or mingw-w64 is not installed")]
fn windows_build_books_over_stdio() {
    let data = TempDir::new("wine-stdio");
    let server = format!(
        "wine {} serve --data {}",
        windows_exe().display(),
        windows_path(data.path())
    );
    let booked = call(&[&["--stdio", &server][..], &BOOK].concat());
    assert_eq!(booked.code, 0, "{booked:?}");
    assert!(booked.stdout.contains("Booked Studio B"), "{booked:?}");
    // Kept on disk by the Windows build: for the next process Studio B is taken then, so the
    // only big room free, the atrium, is booked.
    let again = call(&[&["--stdio", &server][..], &BOOK].concat());
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.stdout.contains("Booked The Atrium") && again.stdout.contains("bk_2"),
        "{again:?}"
    );
}

/// `redmark.exe serve ARGS… --stdio` under Wine, listening: stops when its stdin closes.
struct Listening {
    child: Child,
    addr: String,
}

impl Listening {
    /// Starts it with `args` and waits for its first `redmark: listening KIND ADDR` line.
    fn start(data: &TempDir, args: &[&str], kind: &str) -> Listening {
        let prefix = format!("redmark: listening {kind} ");
        let mut child = wine(&windows_exe())
            .arg("serve")
            .args(args)
            .args(["--stdio", "--data"])
            .arg(windows_path(data.path()))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn wine");
        let (tx, rx) = mpsc::channel();
        let err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix(prefix.as_str()) {
                    let _ = tx.send(addr.trim().to_owned());
                }
            }
        });
        let addr = match rx.recv_timeout(WAIT) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("redmark.exe did not start listening under Wine");
            }
        };
        Listening { child, addr }
    }

    /// Closes its stdin and waits for it to stop by itself.
    fn stop(mut self) -> bool {
        drop(self.child.stdin.take());
        let deadline = std::time::Instant::now() + WAIT;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(s)) = self.child.try_wait() {
                return s.success();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[test]
#[cfg_attr(not(wine_tools), ignore = "Wine or mingw-w64 is not installed")]
fn windows_build_books_over_http_and_keeps_its_folder_to_itself() {
    let data = TempDir::new("wine-http");
    let server = Listening::start(&data, &["--http", "127.0.0.1:0"], "http");
    let url = format!("http://{}/mcp", server.addr);
    let booked = call(&[&["--url", &url][..], &BOOK].concat());
    assert_eq!(booked.code, 0, "{booked:?}");
    assert!(booked.stdout.contains("Booked Studio B"), "{booked:?}");

    // A second process on the held folder: refused, saying why and what to do instead.
    let mut second = wine(&windows_exe());
    second
        .args(["serve", "--data"])
        .arg(windows_path(data.path()));
    let refused = run_bounded(second);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("one redmark process serves a data folder")
            && refused.stderr.contains("--http 127.0.0.1:8080"),
        "{}",
        refused.stderr
    );

    assert!(
        server.stop(),
        "redmark.exe stops by itself when stdin closes"
    );
}

#[test]
#[cfg_attr(not(wine_tools), ignore = "Wine or mingw-w64 is not installed")]
fn windows_build_serves_tcp_only_when_told_there_is_no_peer_check() {
    let data = TempDir::new("wine-tcp");
    let mut tcp = wine(&windows_exe());
    tcp.args(["serve", "--tcp", "127.0.0.1:0", "--data"])
        .arg(windows_path(data.path()));
    let refused = run_bounded(tcp);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("peer-user check is Linux-only")
            && refused.stderr.contains("--tcp-any-local-user"),
        "{}",
        refused.stderr
    );
    // Told so, it serves TCP.
    let server = Listening::start(
        &data,
        &["--tcp", "127.0.0.1:0", "--tcp-any-local-user"],
        "tcp",
    );
    let listed = call(&["--tcp", &server.addr, "list_rooms"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert!(listed.stdout.contains("Studio B"), "{listed:?}");
    assert!(
        server.stop(),
        "redmark.exe stops by itself when stdin closes"
    );
}

/// `redmark.exe call ARGS…` under Wine: the Windows client itself.
fn call_exe(args: &[&str]) -> Run {
    let mut cmd = wine(&windows_exe());
    cmd.arg("call").args(args);
    run_bounded(cmd)
}

#[test]
#[cfg_attr(not(wine_tools), ignore = "Wine or mingw-w64 is not installed")]
fn windows_call_runs_its_command_lines_without_sh() {
    // --stdio: the command line as cmd.exe takes it (a .exe by its Windows path, a flag).
    let data = TempDir::new("wine-call");
    let server = format!(
        "{} serve --data {}",
        windows_cmd_path(&windows_exe()),
        windows_cmd_path(data.path())
    );
    let booked = call_exe(&[&["--stdio", &server][..], &BOOK].concat());
    assert_eq!(booked.code, 0, "{booked:?}");
    assert!(booked.stdout.contains("Booked Studio B"), "{booked:?}");

    // --token-command: a cmd.exe built-in prints the token; the server needs it.
    const TOKEN: &str = "alice-token-0123456789";
    let linux = TempDir::new("wine-call-tokens");
    let file = linux.path().join("tokens.toml");
    std::fs::write(&file, format!("alice = \"{TOKEN}\"\n")).unwrap();
    let server = Server::start(
        &["--http", "127.0.0.1:0", "--tokens", file.to_str().unwrap()],
        linux.path(),
    );
    let url = format!("http://{}/mcp", server.http[0]);
    let refused = call_exe(&["--url", &url, "list_rooms"]);
    assert_ne!(refused.code, 0, "no token: {refused:?}");
    let echo = format!("echo {TOKEN}");
    let listed = call_exe(&["--url", &url, "--token-command", &echo, "list_rooms"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert!(listed.stdout.contains("Studio B"), "{listed:?}");
}

#[test]
#[cfg_attr(not(wine_tools), ignore = "Wine or mingw-w64 is not installed")]
fn windows_default_data_folder_is_under_roaming_app_data() {
    // No --data: the folder docs/platforms.md names (%APPDATA%\redmark). Stdin is closed, so
    // the server says where its data is and stops.
    let mut serve = wine(&windows_exe());
    serve.arg("serve");
    let said = run_bounded(serve);
    assert_eq!(said.code, 0, "{said:?}");
    assert!(
        said.stderr.contains("redmark: data folder C:\\users\\")
            && said.stderr.contains("\\AppData\\Roaming\\redmark ("),
        "{}",
        said.stderr
    );
}
