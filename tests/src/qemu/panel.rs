//! One UART panel under QEMU: boot it with its UART0 on a pipe, send it lines and read its
//! replies with bounded waits, reset it over QMP, read its semihosting diagnostics, and kill
//! it when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::rpc::time_answer;
use super::{require_qemu, Board, LM3S6965EVB, REPLY_TIMEOUT, TEST_TIME, TEST_TIME_KEY};

/// A socket path for one QEMU's QMP (machine control) in this process.
fn qmp_path() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "redmark-qmp-{}-{}.sock",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// One running panel under QEMU.
pub struct Panel {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    qmp: PathBuf,
}

impl Panel {
    /// Boots `image` on the first board ([`LM3S6965EVB`]).
    pub fn boot(image: &Path) -> Panel {
        Panel::boot_on(LM3S6965EVB, image)
    }

    /// Boots `image` on `board`, with a QMP socket for [`Panel::reset`]. The panel counts its
    /// boots in its own flash: nothing about the boot comes from the host.
    pub fn boot_on(board: Board, image: &Path) -> Panel {
        Panel::boot_with(board, image, &[])
    }

    /// [`Panel::boot_on`] with more QEMU arguments (a network card, say).
    pub fn boot_with(board: Board, image: &Path, extra: &[String]) -> Panel {
        require_qemu();
        let qmp = qmp_path();
        let _ = std::fs::remove_file(&qmp);
        let mut child = Command::new("qemu-system-arm")
            .args([
                "-M", board.name, "-display", "none", "-serial", "stdio", "-monitor", "none",
            ])
            .args(["-semihosting-config", "enable=on,target=native", "-qmp"])
            .arg(format!("unix:{},server=on,wait=off", qmp.display()))
            .args(extra)
            .arg("-kernel")
            .arg(image)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start qemu-system-arm");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut stderr_pipe = child.stderr.take().expect("stderr");
        let (tx, replies) = mpsc::channel();
        let stderr = Arc::new(Mutex::new(String::new()));
        let out_reader = thread::spawn(move || loop {
            let mut line = Vec::new();
            match stdout.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    }
                    if tx
                        .send(String::from_utf8_lossy(&line).into_owned())
                        .is_err()
                    {
                        return;
                    }
                }
            }
        });
        let sink = stderr.clone();
        let err_reader = thread::spawn(move || {
            let mut buf = [0u8; 1024];
            loop {
                match stderr_pipe.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => sink
                        .lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n])),
                }
            }
        });
        Panel {
            child,
            stdin,
            replies,
            stderr,
            readers: vec![out_reader, err_reader],
            qmp,
        }
    }

    /// Resets the emulated board (QMP `system_reset`: the reset button, not a new QEMU) and
    /// waits until the firmware is up again. The UART stays connected.
    pub fn reset(&mut self) {
        let ups = self.boots();
        self.qmp(&[r#"{"execute":"system_reset"}"#]);
        let end = Instant::now() + REPLY_TIMEOUT;
        while self.boots() == ups {
            assert!(
                Instant::now() < end,
                "the panel did not come back up after a reset:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Runs QMP commands (JSON objects, e.g. `{"execute":"screendump",...}`) on a fresh QMP
    /// connection, in order; fails the test on an error; each one's `return` line.
    pub fn qmp(&self, commands: &[&str]) -> Vec<String> {
        let mut conn = None;
        let end = Instant::now() + REPLY_TIMEOUT;
        while conn.is_none() && Instant::now() < end {
            conn = UnixStream::connect(&self.qmp).ok();
            if conn.is_none() {
                thread::sleep(Duration::from_millis(20));
            }
        }
        let conn = conn.unwrap_or_else(|| panic!("no QMP socket at {}", self.qmp.display()));
        conn.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut w = conn;
        let mut line = String::new();
        reader.read_line(&mut line).expect("QMP greeting");
        let mut returns = Vec::new();
        for cmd in [r#"{"execute":"qmp_capabilities"}"#].iter().chain(commands) {
            writeln!(w, "{cmd}").expect("QMP write");
            loop {
                line.clear();
                reader.read_line(&mut line).expect("QMP reply");
                assert!(!line.contains("\"error\""), "QMP {cmd}: {line}");
                if line.contains("\"return\"") {
                    returns.push(line.clone());
                    break;
                }
            }
        }
        returns.remove(0);
        returns
    }

    /// How many times the firmware came up (its `up:` diagnostic line).
    pub fn boots(&self) -> usize {
        self.stderr().matches("redmark-panel: up: ").count()
    }

    /// The boot epoch of the latest boot, as the firmware reported it: waits until the latest
    /// `up:` line has its whole number (the `,` after it has arrived), since the line reaches
    /// stderr a piece at a time and a reader can see its start alone.
    pub fn epoch(&self) -> Option<u32> {
        const UP: &str = "redmark-panel: up: epoch ";
        self.poll_stderr(REPLY_TIMEOUT, |err| {
            // The latest one, not anchored at a line's start: a reset can cut a line short.
            let at = err.rfind(UP)?;
            let (number, _) = err[at + UP.len()..].split_once(',')?;
            number.parse().ok()
        })
    }

    /// Writes raw bytes to the UART.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(bytes)
            .and_then(|_| stdin.flush())
            .expect("write to the panel's UART");
    }

    /// Writes one line (a newline is added).
    pub fn send(&mut self, line: &str) {
        let mut b = Vec::with_capacity(line.len() + 1);
        b.extend_from_slice(line.as_bytes());
        b.push(b'\n');
        self.send_raw(&b);
    }

    /// Tells the panel the time `t` (unix seconds) as its host would: `redmark/timeChallenge`,
    /// then `redmark/time` tagged with [`TEST_TIME_KEY`]; returns the answer line.
    pub fn tell_time(&mut self, t: u64) -> String {
        let challenge = self.exchange(
            r#"{"jsonrpc":"2.0","id":"time-challenge","method":"redmark/timeChallenge"}"#,
        );
        let nonce = serde_json::from_str::<serde_json::Value>(&challenge)
            .ok()
            .and_then(|v| v["result"]["nonce"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no nonce in the time challenge's answer: {challenge}"));
        let line = time_answer(&nonce, t, TEST_TIME_KEY);
        self.exchange(&line)
    }

    /// [`Panel::tell_time`] with [`TEST_TIME`]; fails the test unless the panel took it.
    pub fn set_time(&mut self) {
        let r = self.tell_time(TEST_TIME);
        assert!(
            r.contains(r#""clock":"#),
            "the panel did not take the time: {r}"
        );
    }

    /// A writer for the UART that another thread can own (for pipelined runs).
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin open")
    }

    /// The next line from the UART, waiting at most [`REPLY_TIMEOUT`]; fails the test with
    /// the panel's diagnostics otherwise.
    pub fn recv(&mut self) -> String {
        match self.replies.recv_timeout(REPLY_TIMEOUT) {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "no reply from the panel within {REPLY_TIMEOUT:?}; its stderr:\n{}",
                    self.stderr()
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!(
                    "the panel's UART closed (QEMU exited: {:?}); its stderr:\n{}",
                    self.child.try_wait(),
                    self.stderr()
                )
            }
        }
    }

    /// The next line if one arrives within `wait`.
    pub fn try_recv(&mut self, wait: Duration) -> Option<String> {
        self.replies.recv_timeout(wait).ok()
    }

    /// Sends a line and returns the next line.
    pub fn exchange(&mut self, line: &str) -> String {
        self.send(line);
        self.recv()
    }

    /// QEMU's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// CPU time QEMU has used so far (user + system), from /proc (Linux).
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .expect("read /proc/<qemu>/stat");
        // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
        let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
        // USER_HZ is 100 on Linux.
        Duration::from_millis(ticks * 10)
    }

    /// What QEMU wrote on stderr so far (semihosting diagnostics, QEMU's own warnings).
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits up to `wait` for stderr to contain `needle`.
    pub fn wait_stderr(&self, needle: &str, wait: Duration) -> bool {
        self.poll_stderr(wait, |err| err.contains(needle).then_some(()))
            .is_some()
    }

    /// Looks at stderr with `found` every 20 ms for up to `wait`, until it finds something.
    fn poll_stderr<T>(&self, wait: Duration, found: impl Fn(&str) -> Option<T>) -> Option<T> {
        let end = Instant::now() + wait;
        loop {
            let got = found(&self.stderr());
            if got.is_some() || Instant::now() >= end {
                return got;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Ends QEMU and returns everything it wrote on stderr.
    pub fn finish(mut self) -> String {
        self.stop();
        self.stderr()
    }

    fn stop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let _ = std::fs::remove_file(&self.qmp);
    }
}

impl Drop for Panel {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The deepest stack the firmware reported (`stack high-water N bytes (boot B, serving S)` on
/// semihosting).
pub fn stack_high_water(stderr: &str) -> Option<usize> {
    stderr
        .lines()
        .filter_map(|l| {
            l.strip_prefix("redmark-panel: stack high-water ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .max()
}
