//! Private helpers of the CalDAV tests: a throwaway Radicale 3.9 per test (scripts/caldav-peer.sh installs it), the Python `caldav` client reading and writing its rooms, and `redmark serve --caldav` on a Berlin floor.
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use redmark_core::booking::{minute_of, Day};
use redmark_tests::peers::{run_python, script};
use redmark_tests::server::{post_mcp, run_bounded, tool_call, Server};
use serde_json::{json, Value};

/// The Radicale user redmark syncs as.
pub const USER: &str = "redmark";
/// Its password (a test secret: never logged).
pub const PASSWORD: &str = "caldav-test-secret-77e1";
/// The floor's zone.
pub const ZONE: &str = "Europe/Berlin";
/// How long a change may take to reach the other side (the done-when's 10 s).
pub const SYNCED_WITHIN: Duration = Duration::from_secs(10);

/// The floor: two rooms in Berlin, titles public (so they are written to the collection).
pub const FLOOR: &str = r#"time_zone = "Europe/Berlin"
public_titles = true

[[room]]
id = "atrium"
name = "The Atrium"
seats = 24

[[room]]
id = "nook"
name = "The Nook"
seats = 4
"#;

/// The venv's interpreter (Radicale and `caldav`), or `None` (said) unless
/// `REDMARK_REQUIRE_CALDAV=1`.
pub fn python() -> Option<PathBuf> {
    redmark_tests::peers::venv_python(
        "caldav-peer",
        "Radicale and caldav",
        "scripts/caldav-peer.sh",
        "REDMARK_REQUIRE_CALDAV",
    )
}

/// A Radicale on a loopback port with its storage in `dir`; killed on drop.
pub struct Radicale {
    child: Child,
    /// Its port.
    pub port: u16,
    dir: PathBuf,
    py: PathBuf,
}

impl Radicale {
    /// Starts one on a free port, storage and users in `dir`.
    pub fn start(py: &Path, dir: &Path) -> Radicale {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        Self::start_on(py, dir, port)
    }

    /// Starts one on `port` (again, after [`Radicale::kill9`]: the same storage).
    pub fn start_on(py: &Path, dir: &Path, port: u16) -> Radicale {
        std::fs::write(dir.join("users"), format!("{USER}:{PASSWORD}\n")).unwrap();
        let config = format!(
            "[server]\nhosts = 127.0.0.1:{port}\n\
             [auth]\ntype = htpasswd\nhtpasswd_filename = {users}\nhtpasswd_encryption = plain\n\
             [storage]\nfilesystem_folder = {store}\n\
             [rights]\ntype = owner_only\n\
             [logging]\nlevel = warning\n",
            users = dir.join("users").display(),
            store = dir.join("collections").display(),
        );
        std::fs::write(dir.join("radicale.conf"), config).unwrap();
        let radicale = py.with_file_name("radicale");
        let child = Command::new(radicale)
            .arg("--config")
            .arg(dir.join("radicale.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("radicale.log")).unwrap())
            .spawn()
            .expect("start radicale");
        let r = Radicale {
            child,
            port,
            dir: dir.to_path_buf(),
            py: py.to_path_buf(),
        };
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "radicale did not listen on {addr}"
            );
            thread::sleep(Duration::from_millis(50));
        }
        r
    }

    /// The base URL rooms' collections go under.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/{USER}/", self.port)
    }

    /// SIGKILL, then reap.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What the `caldav` client reads of `room`'s collection: its name and events.
    pub fn list(&self, room: &str) -> Value {
        let url = self.url();
        run_python(
            &self.py,
            "caldav_client.py",
            &["list", &url, USER, PASSWORD, room],
        )
    }

    /// [`Radicale::list`], or `None` when the client fails (no such collection yet).
    pub fn try_list(&self, room: &str) -> Option<Value> {
        let mut cmd = Command::new(&self.py);
        cmd.arg(script("caldav_client.py"))
            .args(["list", &self.url(), USER, PASSWORD, room]);
        let run = run_bounded(cmd);
        let last = run.stdout.lines().last().unwrap_or_default();
        (run.code == 0)
            .then(|| serde_json::from_str(last).ok())
            .flatten()
    }

    /// `room`'s events (none while its collection is missing).
    pub fn events(&self, room: &str) -> Vec<Value> {
        self.try_list(room)
            .and_then(|v| v["events"].as_array().cloned())
            .unwrap_or_default()
    }

    /// Adds an event `uid` at `start`..`end` (`YYYY-MM-DDTHH:MM` in Berlin) with the client.
    pub fn add(&self, room: &str, uid: &str, start: &str, end: &str, summary: &str) {
        let url = self.url();
        run_python(
            &self.py,
            "caldav_client.py",
            &[
                "add", &url, USER, PASSWORD, room, uid, ZONE, start, end, summary,
            ],
        );
    }

    /// Rewrites event `uid`'s SUMMARY with the client, every other property kept.
    pub fn retitle(&self, room: &str, uid: &str, summary: &str) {
        let url = self.url();
        run_python(
            &self.py,
            "caldav_client.py",
            &["retitle", &url, USER, PASSWORD, room, uid, summary],
        );
    }

    /// Deletes event `uid` with the client.
    pub fn delete(&self, room: &str, uid: &str) {
        let url = self.url();
        run_python(
            &self.py,
            "caldav_client.py",
            &["delete", &url, USER, PASSWORD, room, uid],
        );
    }
}

impl Drop for Radicale {
    fn drop(&mut self) {
        self.kill9();
        let _ = &self.dir;
    }
}

/// The credentials file (mode 0600) and the floor file in `data`; the `--caldav` arguments.
pub fn caldav_args(data: &Path, radicale: &Radicale) -> Vec<String> {
    let cred = data.join("caldav-credentials");
    std::fs::write(&cred, format!("{USER}:{PASSWORD}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let rooms = data.join("rooms.toml");
    std::fs::write(&rooms, FLOOR).unwrap();
    vec![
        "--rooms".into(),
        rooms.display().to_string(),
        "--caldav".into(),
        radicale.url(),
        "--caldav-credentials".into(),
        cred.display().to_string(),
    ]
}

/// `redmark serve --http` on the Berlin floor syncing with `radicale`, `more` arguments after.
pub fn serve(data: &Path, radicale: &Radicale, more: &[&str]) -> Server {
    let mut args: Vec<String> = vec!["--http".into(), "127.0.0.1:0".into()];
    args.extend(caldav_args(data, radicale));
    args.extend(more.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let s = Server::start(&args, data);
    assert!(!s.stderr().contains(PASSWORD), "password logged");
    s
}

/// The day `days` from today (UTC), as `YYYY-MM-DD`.
pub fn day(days: u32) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let minute = minute_of(now).unwrap() + days * 24 * 60;
    Day::containing(minute).unwrap().to_string()
}

/// The result of `book_room` for `room` on `day` at `start` for `minutes` (anonymous HTTP).
pub fn book(
    addr: SocketAddr,
    room: &str,
    day: &str,
    start: &str,
    minutes: u32,
    title: &str,
) -> Value {
    let args =
        json!({"day": day, "start": start, "minutes": minutes, "room_id": room, "title": title});
    let r = post_mcp(addr, &tool_call(1, "book_room", args, false), &[]);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["result"].clone()
}

/// The id of the booking `r` (a `book_room` result) made in `room`, if it booked there.
pub fn booked_in(r: &Value, room: &str) -> Option<String> {
    let b = &r["structuredContent"]["booking"];
    let here = r["structuredContent"]["booked"] == true && b["room_id"] == room;
    here.then(|| b["id"].as_str().unwrap_or_default().to_owned())
}

/// Cancels booking `id`.
pub fn cancel(addr: SocketAddr, id: &str) {
    let msg = tool_call(1, "cancel_booking", json!({"booking_id": id}), false);
    let r = post_mcp(addr, &msg, &[]).json();
    assert_eq!(r["result"]["isError"], false, "{r}");
}

/// The UID prefix of booking `id`'s event (`bk_N@`).
pub fn uid_of(id: &str) -> String {
    format!("{id}@")
}

/// Waits (at most [`SYNCED_WITHIN`]) until redmark has made `room`'s collection.
pub fn made(radicale: &Radicale, room: &str) {
    let made = until(SYNCED_WITHIN, || radicale.try_list(room).map(|_| ()));
    assert!(made.is_some(), "{room}'s collection was never made");
}

/// Polls `check` every 200 ms until it gives `Some`, for at most `within`.
pub fn until<T>(within: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(t) = check() {
            return Some(t);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(200));
    }
}

/// The event of `events` whose UID starts with `prefix`.
pub fn find<'a>(events: &'a [Value], prefix: &str) -> Option<&'a Value> {
    events
        .iter()
        .find(|e| e["uid"].as_str().is_some_and(|u| u.starts_with(prefix)))
}
