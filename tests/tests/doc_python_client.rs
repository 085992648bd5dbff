//! docs/python-client.md, as printed: its Python block (the official Python SDK 2.3, installed
//! by scripts/sdk-peer.sh in `target/sdk-peers/venv`) books against `redmark serve --http`,
//! answering the question on its stdin, and prints the session the page shows.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redmark_tests::server::{Server, TempDir, WAIT};

/// The page, from the repository.
fn doc() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/python-client.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text between the line `open` and the next line that is exactly "```".
fn fenced(doc: &str, open: &str) -> String {
    let mut lines = doc.lines().skip_while(|l| *l != open);
    assert!(lines.next().is_some(), "no {open} block in the page");
    let body: Vec<&str> = lines.take_while(|l| *l != "```").collect();
    body.join("\n") + "\n"
}

/// The session shown after `$ python book.py`: the indented lines up to the first blank one.
fn session(doc: &str) -> Vec<String> {
    doc.lines()
        .skip_while(|l| l.trim() != "$ python book.py")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.strip_prefix("    ").unwrap_or(l).to_owned())
        .collect()
}

#[test]
fn the_python_client_in_the_docs_books_as_printed() {
    let Some(py) = redmark_tests::peers::python_sdk_2_3("REDMARK_REQUIRE_OAUTH") else {
        return;
    };
    let page = doc();
    let data = TempDir::new("doc-python");
    let script = data.path().join("book.py");
    std::fs::write(&script, fenced(&page, "```python")).unwrap();
    let s = Server::start(&["--http", "127.0.0.1:0"], data.path());
    let url = format!("http://{}/mcp", s.http[0]);

    // The session as the page shows it, the typed answer being stdin (not echoed).
    let shown = session(&page);
    let (at, typed) = shown
        .iter()
        .enumerate()
        .find_map(|(i, l)| {
            l.strip_prefix("Number (Enter to decline): ")
                .map(|t| (i, t))
        })
        .expect("the page shows the answer typed");
    let mut want = shown[..at].join("\n") + "\nNumber (Enter to decline): ";
    want += &(shown[at + 1..].join("\n") + "\n");

    let mut cmd = Command::new(py);
    cmd.arg(&script).arg(&url);
    let (code, stdout, stderr) = run_with_input(cmd, &format!("{typed}\n"));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, want, "{stderr}");
}

/// Runs `cmd` with `input` on its stdin, waiting at most [`WAIT`]: its exit code, stdout and
/// stderr.
fn run_with_input(mut cmd: Command, input: &str) -> (Option<i32>, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().expect("stdout")));
    let err = read(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran longer than {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().expect("stdout"), err.join().expect("stderr"));
    (status.code(), out, err)
}
