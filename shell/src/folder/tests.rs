//! The folder's pieces together, in one process: who owns, who relays, a stale socket, the
//! owner's socket serving like stdio, a relay taking over from a dead owner.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use redmark_core::engine::{Config, ServerInfo};
use redmark_core::seal::{Key, KeyRing};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::listen::{same_user, serve_folder, FolderSocket};
use super::*;

/// A fresh folder under the temp dir (short: a socket path has a length limit).
fn folder(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rm-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SHORT: Duration = Duration::from_millis(200);

#[test]
fn the_first_owns_the_next_is_told_who_holds_it() {
    let d = folder("own");
    let Ok(Reached::Owner(store)) = reach_blocking(&d, SHORT) else {
        panic!("a free folder is owned")
    };
    // Held, nobody listening: in use, and why nothing answered.
    let Err(e) = reach_blocking(&d, SHORT) else {
        panic!("a held store was opened twice")
    };
    assert!(is_in_use(&e) && e.contains("does not answer"), "{e}");
    drop(store);
    assert!(matches!(reach_blocking(&d, SHORT), Ok(Reached::Owner(_))));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_stale_socket_blocks_no_one() {
    let d = folder("stale");
    // A dead owner's socket file: bound, then its listener gone.
    drop(std::os::unix::net::UnixListener::bind(socket_path(&d)).unwrap());
    assert!(socket_path(&d).exists());
    let Ok(Reached::Owner(_store)) = reach_blocking(&d, SHORT) else {
        panic!("a stale socket kept the free store from its next owner")
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = FolderSocket::bind(&d).expect("the owner binds over the stale file");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(s.path()).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        drop(s);
    });
    assert!(!socket_path(&d).exists(), "removed when dropped");
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owners_socket_serves_like_stdio_and_a_waiting_process_relays_to_it() {
    let d = folder("sock");
    let Ok(Reached::Owner(store)) = reach(&d, SHORT).await else {
        panic!("a free folder is owned")
    };
    let host = Shared::booking(
        redmark_core::booking::DEFAULT_SITE,
        crate::store::redb::RedbBookings::new(store),
        ServerInfo {
            name: "redmark",
            version: "test",
            instructions: None,
        },
        KeyRing::new(Key::new(1, &[7; 32]).unwrap()),
        Config::default(),
    );
    let shutdown = CancellationToken::new();
    let tracker = TaskTracker::new();
    let socket = FolderSocket::bind(&d).unwrap();
    tracker.spawn(serve_folder(
        Arc::clone(&host),
        socket,
        4,
        shutdown.clone(),
        tracker.clone(),
    ));
    let dir = d.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let Ok(Reached::Relay(s)) = reach_blocking(&dir, Duration::from_secs(5)) else {
            panic!("the held store's owner was not reached")
        };
        let mut w = s.try_clone().unwrap();
        writeln!(
            w,
            r#"{{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{{"name":"book_room","arguments":{{"day":"2099-03-04","hour":9,"room_id":"nook"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
        .unwrap();
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(v["id"], "x", "{v}");
    assert_eq!(v["result"]["isError"], false, "{v}");
    shutdown.cancel();
    tracker.close();
    tracker.wait().await;
    assert!(
        !socket_path(&d).exists(),
        "the owner removes its socket when it stops"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A process that finds the store held and someone listening relays only to its own user: an
/// owner of another user (here: this process, taken for someone else) is refused at once,
/// without waiting for the reach's time to pass.
#[test]
fn a_relay_refuses_an_owner_of_another_user() {
    let d = folder("trust");
    let Ok(Reached::Owner(_store)) = reach_blocking(&d, SHORT) else {
        panic!("a free folder is owned")
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _socket = rt.block_on(async { FolderSocket::bind(&d).unwrap() });
    let me = trust::my_uid();
    let start = std::time::Instant::now();
    let Err(e) = reach_as(&d, Duration::from_secs(30), me.wrapping_add(1)) else {
        panic!("relayed to another user's owner")
    };
    assert!(start.elapsed() < Duration::from_secs(30), "refused at once");
    assert!(
        e.contains("refusing to pass messages") && !is_in_use(&e),
        "{e}"
    );
    assert!(
        matches!(reach_as(&d, SHORT, me), Ok(Reached::Relay(_))),
        "its own user's owner is reached"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_socket_of_our_own_is_our_users() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (a, _b) = tokio::net::UnixStream::pair().unwrap();
        assert!(same_user(&a).unwrap());
    });
}
