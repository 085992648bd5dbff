//! Whom a process on a shared data folder trusts (issue 40, item 3): a folder other users may
//! write to is refused at start, and a relay never passes its client's messages to a process
//! of another user that holds the store's lock and listens on the folder's socket.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use redmark_tests::server::{redmark_bin, run_bounded, tool_call, Server, TempDir, WAIT};
use serde_json::{json, Value};

/// The answer the fake owner gives every request.
const FAKE: &str = "Booked by the FAKE owner";

/// What the fake owner prints once it holds the lock and listens.
const FAKE_READY: &str = "fake owner listening";

/// The fake owner's uid and gid (`nobody`).
const NOBODY: u32 = 65534;

#[test]
fn a_data_folder_others_can_write_is_refused_naming_the_chmod() {
    for mode in [0o770, 0o707, 0o1777] {
        let data = TempDir::new("loose-folder");
        std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        for sub in ["serve", "call"] {
            let mut cmd = Command::new(redmark_bin());
            cmd.arg(sub).arg("--data").arg(data.path());
            if sub == "call" {
                cmd.args(["book_room", "day=2099-06-01", "hour=9", "room_id=nook"]);
            }
            let run = run_bounded(cmd);
            assert_ne!(run.code, 0, "mode {mode:o}, {sub}: {run:?}");
            let p = data.path().display().to_string();
            let said = run
                .stderr
                .lines()
                .find(|l| l.contains(&format!("chmod 700 {p}")))
                .unwrap_or_else(|| panic!("mode {mode:o}, {sub}: no chmod said: {run:?}"));
            assert!(said.contains("other users can write"), "{said}");
            assert!(
                !data.path().join("bookings.redb").exists(),
                "nothing opened"
            );
        }
    }
    // Group-readable is not writable: served.
    let data = TempDir::new("readable-folder");
    std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(0o750)).unwrap();
    let mut cmd = Command::new(redmark_bin());
    cmd.arg("serve").arg("--data").arg(data.path());
    let run = run_bounded(cmd);
    assert_eq!(run.code, 0, "{run:?}");
}

/// A process of another user (`nobody`) that holds the store's lock and listens on the
/// folder's socket is refused by a relay, whether the store file is its own or the user's
/// (then only the socket's peer credentials tell). Needs root to run the fake owner as
/// `nobody`, so it is ignored by default; as root run it with
/// `cargo test -p redmark-tests --test serve_folder_owner -- --ignored a_relay_refuses`
/// (it fails, rather than passing vacuously, when run without root or setpriv).
#[test]
#[ignore = "needs root and setpriv: run as root with `cargo test -p redmark-tests --test serve_folder_owner -- --ignored a_relay_refuses`"]
fn a_relay_refuses_an_owner_of_another_user() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false);
    assert!(
        root,
        "needs root, to run the fake owner as another user (nobody)"
    );
    assert!(
        Command::new("setpriv").arg("--version").output().is_ok(),
        "needs setpriv (util-linux), to run the fake owner as another user (nobody)"
    );
    // Built before any fake owner starts (the build may take longer than it lives).
    redmark_bin();
    let failed: Vec<String> = [false, true]
        .into_iter()
        .filter_map(|ours| refused_with_store(ours).err())
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// One case of [`a_relay_refuses_an_owner_of_another_user`]: the store file the fake owner
/// locks is ours (`store_is_ours`) or its own.
fn refused_with_store(store_is_ours: bool) -> Result<(), String> {
    let data = TempDir::new("fake-owner");
    std::os::unix::fs::chown(data.path(), Some(NOBODY), Some(NOBODY)).unwrap();
    if store_is_ours {
        let store = data.path().join("bookings.redb");
        std::fs::File::create(&store).unwrap();
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let mut fake = start_fake_owner(data.path());
    let mut relay = Server::start_with(&[], data.path(), &[]);
    let mut c = relay.stdio();
    c.send(&tool_call(
        1,
        "book_room",
        json!({"day": "2099-06-01", "hour": 9, "room_id": "nook"}),
        false,
    ));
    let case = format!("store file ours: {store_is_ours}");
    let answered = c.try_recv_line(WAIT);
    let _ = fake.kill();
    let _ = fake.wait();
    match answered {
        Ok(None) => {}
        Ok(Some(l)) => {
            let l = String::from_utf8_lossy(&l);
            return Err(format!("{case}: relayed to another user's process: {l}"));
        }
        Err(_) => return Err(format!("{case}: neither refused nor answered")),
    }
    let st = relay.wait_exit().expect("the relay exits");
    let err = relay.stderr();
    if st.success() || !err.contains(&format!("uid {NOBODY}")) {
        return Err(format!("{case}: {st}: {err}"));
    }
    Ok(())
}

/// Runs [`fake_owner_process`] as `nobody` on `dir`, once it holds the lock and listens.
fn start_fake_owner(dir: &Path) -> std::process::Child {
    let exe = std::env::current_exe().expect("the test binary");
    let id = NOBODY.to_string();
    let mut child = Command::new("setpriv")
        .args([
            &format!("--reuid={id}"),
            &format!("--regid={id}"),
            "--clear-groups",
        ])
        .arg(exe)
        .args(["fake_owner_process", "--exact", "--ignored", "--nocapture"])
        .env("REDMARK_FAKE_OWNER_DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run setpriv");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.contains(FAKE_READY) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(WAIT).expect("the fake owner did not start");
    child
}

/// The fake owner (run by [`start_fake_owner`] as another user; without
/// `REDMARK_FAKE_OWNER_DIR` it does nothing): takes the store's lock in that folder, listens on
/// its socket and answers every line with [`FAKE`], until its stdin closes (its test ended) or
/// for at most ten times [`WAIT`].
#[test]
#[ignore = "the fake owner of a_relay_refuses_an_owner_of_another_user, run by it"]
fn fake_owner_process() {
    let Some(dir) = std::env::var_os("REDMARK_FAKE_OWNER_DIR") else {
        return;
    };
    let dir = Path::new(&dir);
    let store = dir.join("bookings.redb");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&store)
        .or_else(|_| std::fs::File::open(&store))
        .expect("open the store file");
    f.try_lock().expect("take the store's lock");
    let listener = std::os::unix::net::UnixListener::bind(dir.join("redmark.sock")).expect("bind");
    println!("{FAKE_READY}");
    thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
    let deadline = Instant::now() + 10 * WAIT;
    listener.set_nonblocking(true).unwrap();
    while Instant::now() < deadline {
        let Ok((s, _)) = listener.accept() else {
            thread::sleep(Duration::from_millis(20));
            continue;
        };
        s.set_nonblocking(false).unwrap();
        thread::spawn(move || {
            let mut w = s.try_clone().unwrap();
            for line in BufReader::new(s).lines().map_while(Result::ok) {
                let id =
                    serde_json::from_str::<Value>(&line).map_or(Value::Null, |v| v["id"].clone());
                let answer = json!({"jsonrpc":"2.0","id":id,"result":{
                    "content":[{"type":"text","text":FAKE}],"isError":false}});
                let _ = writeln!(w, "{answer}");
            }
        });
    }
}
