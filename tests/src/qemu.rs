//! The door-panel firmware under QEMU: build it once per configuration, boot it with its UART0
//! on a pipe, and talk newline-delimited JSON-RPC to it exactly as a stdio client would.
//!
//! Every wait is bounded, and a [`Panel`] kills its QEMU when dropped (also when a test
//! panics). A missing `qemu-system-arm` or Cortex-M target fails loudly: CI installs them.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub mod face;
pub mod net;
pub mod sdk;

/// A QEMU board and its firmware crate (`boards/<name>`, QEMU machine `<name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    /// The crate's folder under `boards/` and QEMU's `-M` machine.
    pub name: &'static str,
    /// The firmware's Rust target.
    pub target: &'static str,
}

/// TI LM3S6965 (Cortex-M3): flash under QEMU is SRAM standing in for it (see its README).
pub const LM3S6965EVB: Board = Board {
    name: "lm3s6965evb",
    target: "thumbv7m-none-eabi",
};
/// BBC micro:bit, nRF51822 (Cortex-M0, 16 KiB RAM): flash through the emulated NVMC.
pub const MICROBIT: Board = Board {
    name: "microbit",
    target: "thumbv6m-none-eabi",
};
/// Every board.
pub const BOARDS: [Board; 2] = [LM3S6965EVB, MICROBIT];

/// The first board's machine (what single-board tests drive).
pub const BOARD: &str = LM3S6965EVB.name;
/// The first board's Rust target.
pub const TARGET: &str = LM3S6965EVB.target;
/// A fixed test key (not secret): 32 bytes of hex.
pub const TEST_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";
/// A fixed test time key (`REDMARK_PANEL_TIME_KEY`, not secret): 32 bytes of hex.
pub const TEST_TIME_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
/// The time a test tells a UART panel: 2026-09-01T00:00:00Z, before every day the tests book.
pub const TEST_TIME: u64 = 1_788_220_800;
/// Longest wait for one reply; generous because CI machines are slow, never a speed check.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// How to provision a firmware image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Build {
    /// The board.
    pub board: Board,
    /// `REDMARK_PANEL_STATE_TTL`, seconds (None: the firmware's default).
    pub state_ttl_s: Option<u32>,
    /// The networked image (feature `net`: MCP over Ethernet instead of the UART).
    pub net: bool,
}

impl Build {
    /// The first board's image as shipped (default requestState lifetime).
    pub const STANDARD: Build = Build::standard(LM3S6965EVB);
    /// The first board's networked image (`--features net`).
    pub const NET: Build = Build {
        board: LM3S6965EVB,
        state_ttl_s: None,
        net: true,
    };

    /// `board`'s image as shipped.
    pub const fn standard(board: Board) -> Build {
        Build {
            board,
            state_ttl_s: None,
            net: false,
        }
    }

    fn file_name(&self) -> String {
        let net = if self.net { "-net" } else { "" };
        match self.state_ttl_s {
            None => format!("{}{net}-standard", self.board.name),
            Some(t) => format!("{}{net}-ttl{t}", self.board.name),
        }
    }
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The first board crate's folder.
pub fn board_dir() -> PathBuf {
    board_dir_of(LM3S6965EVB)
}

/// A board crate's folder.
pub fn board_dir_of(board: Board) -> PathBuf {
    repo_root().join("boards").join(board.name)
}

/// Fails the test with a clear message unless `qemu-system-arm` runs.
pub fn require_qemu() {
    match Command::new("qemu-system-arm").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "qemu-system-arm --version failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "qemu-system-arm is not installed ({e}); the panel tests need it:\n    \
             apt-get install -y --no-install-recommends qemu-system-arm\n\
             and the firmware target:\n    rustup target add {TARGET}"
        ),
    }
}

/// Builds (once per process and configuration) the firmware and returns the ELF image.
pub fn firmware(build: Build) -> PathBuf {
    type Images = HashMap<Build, Arc<OnceLock<Result<PathBuf, String>>>>;
    static BUILT: OnceLock<Mutex<Images>> = OnceLock::new();
    let cell = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(build)
        .or_default()
        .clone();
    cell.get_or_init(|| cargo_build(build, None, None))
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Serializes firmware builds in this process: they share one target folder (the
/// dependencies are built once; a configuration change only relinks the firmware) and each
/// image is copied out before the next build can overwrite it.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// `cargo build --release` of the firmware (more `args` after it) in the shared test target
/// folder, with `REDMARK_PANEL_KEY` and `REDMARK_PANEL_STATE_TTL` as given (None: unset) and
/// `REDMARK_PANEL_TIME_KEY` the test time key.
/// Builds run one at a time in this process.
pub fn cargo_firmware(args: &[&str], key: Option<&str>, state_ttl_s: Option<u32>) -> Output {
    let _one_at_a_time = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    cargo_firmware_locked(LM3S6965EVB, args, key, state_ttl_s, None, None)
}

fn firmware_target_dir() -> PathBuf {
    repo_root().join("target").join("panel").join("tests")
}

fn cargo_firmware_locked(
    board: Board,
    args: &[&str],
    key: Option<&str>,
    state_ttl_s: Option<u32>,
    sntp: Option<&str>,
    zone: Option<&str>,
) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(board_dir_of(board))
        .args([
            "build",
            "--release",
            "--target",
            board.target,
            "--manifest-path",
        ])
        .arg(board_dir_of(board).join("Cargo.toml"))
        .arg("--target-dir")
        .arg(firmware_target_dir())
        .args(args)
        // The outer `cargo test` must not steer the firmware build.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    match key {
        Some(k) => cmd.env("REDMARK_PANEL_KEY", k),
        None => cmd.env_remove("REDMARK_PANEL_KEY"),
    };
    match state_ttl_s {
        Some(t) => cmd.env("REDMARK_PANEL_STATE_TTL", t.to_string()),
        None => cmd.env_remove("REDMARK_PANEL_STATE_TTL"),
    };
    cmd.env("REDMARK_PANEL_TIME_KEY", TEST_TIME_KEY);
    match sntp {
        Some(a) => cmd.env("REDMARK_PANEL_SNTP", a),
        None => cmd.env_remove("REDMARK_PANEL_SNTP"),
    };
    match zone {
        Some(z) => cmd
            .args(["--features", "zone"])
            .env("REDMARK_PANEL_ZONE", z),
        None => cmd.env_remove("REDMARK_PANEL_ZONE"),
    };
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run cargo: {e}"))
}

/// The networked image (`Build::NET`) provisioned with an SNTP server (`REDMARK_PANEL_SNTP`,
/// e.g. `10.0.2.2:40123`), built once per process.
pub fn firmware_with_sntp(server: &'static str) -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| cargo_build(Build::NET, Some(server), None))
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The networked image with an SNTP server and the floor's zone compiled in (feature `zone`,
/// `REDMARK_PANEL_ZONE`, e.g. `Europe/Berlin`), built once per process.
pub fn firmware_with_sntp_in_zone(server: &'static str, zone: &'static str) -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| cargo_build(Build::NET, Some(server), Some(zone)))
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn cargo_build(build: Build, sntp: Option<&str>, zone: Option<&str>) -> Result<PathBuf, String> {
    let _one_at_a_time = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let features: &[&str] = if build.net {
        &["--features", "net"]
    } else {
        &[]
    };
    let out = cargo_firmware_locked(
        build.board,
        features,
        Some(TEST_KEY),
        build.state_ttl_s,
        sntp,
        zone,
    );
    if !out.status.success() {
        return Err(format!(
            "building the {} panel firmware failed (is the target installed? rustup target add {}):\n{}",
            build.board.name,
            build.board.target,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let panel = repo_root().join("target").join("panel");
    let target_dir = firmware_target_dir();
    let built = target_dir
        .join(build.board.target)
        .join("release")
        .join("redmark-panel");
    let sntp = if sntp.is_some() { "-sntp" } else { "" };
    let zone = if zone.is_some() { "-zone" } else { "" };
    let image = panel.join(format!(
        "redmark-panel-{}{sntp}{zone}.elf",
        build.file_name()
    ));
    let partial = image.with_extension(format!("elf.{}", std::process::id()));
    std::fs::copy(&built, &partial)
        .and_then(|_| std::fs::rename(&partial, &image))
        .map_err(|e| format!("copying {} to {}: {e}", built.display(), image.display()))?;
    Ok(image)
}

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

/// The `redmark/time` request for challenge `nonce` (16 hex digits) and time `t`, tagged with
/// `key_hex`: `HMAC-SHA256(key, "redmark-panel time v1" ‖ nonce ‖ t as 8 bytes BE)`.
pub fn time_answer(nonce: &str, t: u64, key_hex: &str) -> String {
    use hmac::{Hmac, Mac};
    let bytes = |h: &str| -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
            .collect()
    };
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&bytes(key_hex)).expect("HMAC key");
    mac.update(b"redmark-panel time v1");
    mac.update(&bytes(nonce));
    mac.update(&t.to_be_bytes());
    let tag: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        r#"{{"jsonrpc":"2.0","id":"time","method":"redmark/time","params":{{"t":{t},"tag":"{tag}"}}}}"#
    )
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
