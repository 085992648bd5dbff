//! Building the panel firmware for the tests: one image per board and configuration, built
//! once per process in a shared target folder, one build at a time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

use super::{board_dir_of, repo_root, Board, LM3S6965EVB, TEST_KEY, TEST_TIME_KEY};

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
