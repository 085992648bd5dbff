//! The shell as a library: `shell/examples/lunch.rs`, a non-booking tool served with
//! `redmark::serve::run_app`, answers over stdio and over Streamable HTTP, asks only when it
//! must, and is driven end to end by `redmark call`.

use std::process::Command;

use redmark_tests::server::{example_bin, redmark_bin, run_bounded, Server, TempDir, TEST_KEY};

/// `redmark call ARGS…` with the test key kept out of the caller's environment.
fn call(args: &[&str]) -> redmark_tests::server::Run {
    let mut cmd = Command::new(redmark_bin());
    cmd.arg("call").args(args).env_remove("REDMARK_KEY");
    run_bounded(cmd)
}

#[test]
fn lunch_over_stdio_asks_only_when_it_must() {
    let data = TempDir::new("lunch-stdio");
    let server = format!(
        "{} --data {}",
        example_bin("lunch").display(),
        data.path().display()
    );
    let named = call(&["--stdio", &server, "order_lunch", "dish=soup"]);
    assert_eq!(named.code, 0, "{}", named.stderr);
    assert!(
        named.stdout.contains("Ordered: Pumpkin soup."),
        "{}",
        named.stdout
    );

    let asked = call(&[
        "--stdio",
        &server,
        "--answer",
        "dish.dish=pasta",
        "order_lunch",
    ]);
    assert_eq!(asked.code, 0, "{}", asked.stderr);
    assert!(
        asked.stdout.contains("Ordered: Pasta al pesto."),
        "{}",
        asked.stdout
    );

    let declined = call(&["--stdio", &server, "--decline", "dish", "order_lunch"]);
    assert_eq!(declined.code, 3, "declined: {}", declined.stderr);
    assert!(
        declined.stdout.contains("you said no"),
        "{}",
        declined.stdout
    );

    // The shell's own checks: an unknown argument is refused before the tool runs.
    let bad = call(&["--stdio", &server, "order_lunch", "drink=tea"]);
    assert_ne!(bad.code, 0, "{}", bad.stdout);
}

#[test]
fn lunch_over_http_with_the_shells_flags() {
    let data = TempDir::new("lunch-http");
    let server = Server::start_program(
        Command::new(example_bin("lunch")),
        &["--http", "127.0.0.1:0"],
        data.path(),
        &[("REDMARK_KEY", TEST_KEY)],
    );
    let url = format!("http://{}/mcp", server.http[0]);
    let tools = {
        let mut cmd = Command::new(redmark_bin());
        cmd.args(["tools", "--url", &url]);
        run_bounded(cmd)
    };
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert!(tools.stdout.contains("order_lunch"), "{}", tools.stdout);
    assert!(!tools.stdout.contains("book_room"), "{}", tools.stdout);

    let asked = call(&["--url", &url, "--answer", "dish.dish=salad", "order_lunch"]);
    assert_eq!(asked.code, 0, "{}", asked.stderr);
    assert!(
        asked.stdout.contains("Ordered: Greek salad."),
        "{}",
        asked.stdout
    );

    // The booking floor's flags are refused for a server of its own.
    let refused = {
        let mut cmd = Command::new(example_bin("lunch"));
        cmd.args(["--data"])
            .arg(data.path())
            .args(["--rooms", "x.toml"]);
        run_bounded(cmd)
    };
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("belong to the booking floor"),
        "{}",
        refused.stderr
    );
}

#[test]
fn lunch_keeps_its_own_data_folder_by_default() {
    // No --data: the platform's data directory (XDG_DATA_HOME here) gets `redmark-lunch`,
    // apart from the booking floor's `redmark`. Stdin is closed, so it says so and stops.
    let home = TempDir::new("lunch-default");
    let mut cmd = Command::new(example_bin("lunch"));
    cmd.env("XDG_DATA_HOME", home.path())
        .env_remove("REDMARK_KEY");
    let said = run_bounded(cmd);
    assert_eq!(said.code, 0, "{}", said.stderr);
    let own = home.path().join("redmark-lunch");
    assert!(
        said.stderr
            .contains(&format!("redmark: data folder {} (", own.display())),
        "{}",
        said.stderr
    );
    assert!(own.join("sealing-keys").is_file());
    assert!(!home.path().join("redmark").exists(), "the floor's folder");
}
