//! `redmark serve` as a command: its help, flags that combine in one process, the floor file,
//! the fixtures switch, sealing keys on disk and their rotation, and refusals.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use redmark_tests::server::{
    discover, post_mcp, redmark_bin, retry, run_bounded, tool_call, Server, TempDir, TEST_KEY,
};
use serde_json::json;

/// `redmark ARGS` without REDMARK_KEY (plus `env`), bounded: whether it succeeded, and
/// stdout followed by stderr.
fn run(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(redmark_bin());
    cmd.args(args)
        .env_remove("REDMARK_KEY")
        .envs(env.iter().copied());
    let out = run_bounded(cmd);
    (out.code == 0, format!("{}{}", out.stdout, out.stderr))
}

#[test]
fn help_explains_every_flag() {
    let (ok, top) = run(&["--help"], &[]);
    assert!(ok, "{top}");
    for cmd in ["serve", "call", "tools"] {
        assert!(top.contains(cmd), "redmark --help names {cmd}:\n{top}");
    }
    let (ok, help) = run(&["serve", "--help"], &[]);
    assert!(ok, "{help}");
    for flag in [
        "--tcp",
        "--http",
        "--stdio",
        "--data",
        "--rooms",
        "--tokens",
        "--fixtures",
        "--rotate-key",
        "--max-connections",
        "--idle-timeout",
        "--state-ttl",
        "REDMARK_KEY",
        "16384",
        "SIGTERM",
    ] {
        assert!(
            help.contains(flag),
            "redmark serve --help explains {flag}:\n{help}"
        );
    }
}

#[test]
fn transports_combine_in_one_process_over_one_engine() {
    let data = TempDir::new("combine");
    let mut s = Server::start(
        &["--stdio", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        data.path(),
    );
    let mut tcp = s.tcp_client();
    let r = tcp.request(&tool_call(
        1,
        "book_room",
        json!({"day":"2099-12-22","hour":9,"room_id":"nook"}),
        false,
    ));
    assert_eq!(r["result"]["isError"], false, "{r}");
    // The booking made over TCP is seen over HTTP and stdio: one engine, one store.
    let list = tool_call(2, "list_rooms", json!({"day":"2099-12-22","hour":9}), false);
    let r = post_mcp(s.http[0], &list, &[]).json();
    let nook = &r["result"]["structuredContent"]["rooms"][2];
    assert_eq!(
        (nook["id"].as_str(), nook["free"].as_bool()),
        (Some("nook"), Some(false)),
        "{r}"
    );
    let mut stdio = s.stdio();
    let r = stdio.request(&list);
    assert_eq!(
        r["result"]["structuredContent"]["rooms"][2]["free"], false,
        "{r}"
    );
    // EOF on stdin stops the whole process.
    drop(stdio);
    let st = s.wait_exit().expect("exit after stdin EOF");
    assert!(st.success());
}

#[test]
fn rooms_file_and_fixtures() {
    let data = TempDir::new("rooms");
    let rooms = data.path().join("rooms.toml");
    std::fs::write(
        &rooms,
        "[[room]]\nid = \"loft\"\nname = \"The Loft\"\nseats = 30\naliases = [\"the big room\"]\n\
         [[room]]\nid = \"den\"\nname = \"The Den\"\nseats = 6\naliases = [\"the big room\"]\n",
    )
    .unwrap();
    let s = Server::start(
        &["--tcp", "127.0.0.1:0", "--rooms", rooms.to_str().unwrap()],
        data.path(),
    );
    let mut c = s.tcp_client();
    let r = c.request(&tool_call(
        1,
        "book_room",
        json!({"day":"2099-12-23","hour":9,"room_hint":"the big room"}),
        true,
    ));
    let options = r["result"]["inputRequests"]["room"]["params"]["requestedSchema"]["properties"]
        ["room_id"]["oneOf"]
        .to_string();
    assert!(
        options.contains("loft") && options.contains("den") && !options.contains("atrium"),
        "{r}"
    );
    drop(s);

    let bad = data.path().join("bad.toml");
    std::fs::write(&bad, "[[room]]\nid = \"a\"\nname = \"A\"\nseats = 1\n[[room]]\nid = \"a\"\nname = \"B\"\nseats = 2\n").unwrap();
    let d = data.path().to_str().unwrap();
    let (ok, text) = run(
        &[
            "serve",
            "--data",
            d,
            "--tcp",
            "127.0.0.1:0",
            "--rooms",
            bad.to_str().unwrap(),
        ],
        &[("REDMARK_KEY", TEST_KEY)],
    );
    assert!(!ok && text.contains("appears twice"), "{text}");

    let fx = TempDir::new("fixtures");
    let s = Server::start(&["--tcp", "127.0.0.1:0", "--fixtures"], fx.path());
    let r = s.tcp_client().request(&discover(1));
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "redmark-fixtures",
        "{r}"
    );
}

#[test]
fn key_file_is_private_and_rotation_keeps_old_state_valid() {
    let data = TempDir::new("keys");
    let ask = tool_call(
        1,
        "book_room",
        json!({"day":"2099-12-24","hour":9,"room_hint":"the big room"}),
        true,
    );
    let s = Server::start_with(&["--tcp", "127.0.0.1:0"], data.path(), &[]);
    let r = s.tcp_client().request(&ask);
    let state = r["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string();
    drop(s);
    let key_file = data.path().join("sealing-keys");
    let mode = std::fs::metadata(&key_file)
        .expect("key file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "key file mode {mode:o}");

    // After a rotation the old state still opens (and new state is sealed with the new key).
    let s = Server::start_with(&["--tcp", "127.0.0.1:0", "--rotate-key"], data.path(), &[]);
    let mut c = s.tcp_client();
    let answer = json!({"room": {"action":"accept","content":{"room_id":"atrium"}}});
    let r = c.request(&retry(&ask, 2, answer.clone(), &state));
    assert_eq!(r["result"]["isError"], false, "{r}");
    // (Another hour: at 09:00 only Studio B is free now, and a hint with one free room is
    // booked without a question.)
    let ask_10 = tool_call(
        3,
        "book_room",
        json!({"day":"2099-12-24","hour":10,"room_hint":"the big room"}),
        true,
    );
    let new_state = c.request(&ask_10)["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(
        new_state[..3],
        state[..3],
        "the token header names the new key's id"
    );
    drop(c);
    drop(s);

    // REDMARK_KEY overrides the file: the file's state no longer opens.
    let s = Server::start(&["--tcp", "127.0.0.1:0"], data.path());
    let r = s.tcp_client().request(&retry(&ask, 3, answer, &new_state));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    drop(s);

    let d = data.path().to_str().unwrap();
    let (ok, text) = run(
        &["serve", "--data", d, "--tcp", "127.0.0.1:0"],
        &[("REDMARK_KEY", "abcd")],
    );
    assert!(!ok && text.contains("REDMARK_KEY"), "{text}");
    let (ok, text) = run(
        &["serve", "--data", d, "--tcp", "0.0.0.0:0"],
        &[("REDMARK_KEY", TEST_KEY)],
    );
    assert!(!ok && text.contains("loopback"), "{text}");
}

#[test]
fn non_loopback_http_needs_tokens() {
    let data = TempDir::new("http-any");
    let d = data.path().join("fresh");
    let d = d.to_str().unwrap();
    let (ok, text) = run(
        &["serve", "--data", d, "--http", "0.0.0.0:0"],
        &[("REDMARK_KEY", TEST_KEY)],
    );
    assert!(!ok && text.contains("--tokens"), "{text}");
    assert!(
        !text.contains("listening"),
        "refused before binding: {text}"
    );
    assert!(
        !std::path::Path::new(d).exists(),
        "refused before creating the data directory"
    );
    let (ok, help) = run(&["serve", "--help"], &[]);
    assert!(ok, "{help}");
    assert!(help.contains("non-loopback"), "{help}");
}

#[test]
fn a_key_file_others_can_read_is_refused() {
    let data = TempDir::new("keys-mode");
    drop(Server::start_with(
        &["--tcp", "127.0.0.1:0"],
        data.path(),
        &[],
    ));
    let key_file = data.path().join("sealing-keys");
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let d = data.path().to_str().unwrap();
    let (ok, text) = run(&["serve", "--data", d, "--tcp", "127.0.0.1:0"], &[]);
    assert!(!ok, "{text}");
    assert!(text.contains("chmod 600") && text.contains("644"), "{text}");
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    drop(Server::start_with(
        &["--tcp", "127.0.0.1:0"],
        data.path(),
        &[],
    ));
}

#[test]
fn bad_tokens_or_rooms_files_fail_before_keys_or_store_exist() {
    let data = TempDir::new("early");
    let tokens = data.path().join("tokens.toml");
    std::fs::write(&tokens, "alice = \"0123456789abcdef-secret\nbob = 1\n").unwrap();
    let rooms = data.path().join("rooms.toml");
    std::fs::write(&rooms, "[[room]]\nid = \"a\"\n").unwrap();
    let fresh = data.path().join("fresh");
    let d = fresh.to_str().unwrap();
    for (flag, file) in [("--tokens", &tokens), ("--rooms", &rooms)] {
        let (ok, text) = run(
            &[
                "serve",
                "--data",
                d,
                "--tcp",
                "127.0.0.1:0",
                flag,
                file.to_str().unwrap(),
            ],
            &[],
        );
        assert!(!ok, "{text}");
        assert!(text.contains("line "), "{text}");
        assert!(!text.contains("0123456789abcdef-secret"), "{text}");
        assert!(!fresh.exists(), "{flag}: nothing created in --data");
    }
}
