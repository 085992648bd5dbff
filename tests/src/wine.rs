//! The Windows build under Wine: `redmark.exe` cross-built once per test process (`cargo build
//! -p redmark --target x86_64-pc-windows-gnu`, mingw-w64's linker) and staged in
//! `target/wine/` with a Wine prefix of its own; plus, only when the installed Wine lacks it,
//! the stand-in `bcryptprimitives.dll` (tests/wine/bcryptprimitives.c) that Rust's std needs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

/// The Rust target of the Windows build.
pub const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";

/// `redmark.exe`, staged (built once per test process).
pub fn windows_exe() -> PathBuf {
    static EXE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    EXE.get_or_init(stage)
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A command that runs `exe` (a staged Windows program) under Wine, in the staged prefix, with
/// Wine's own debug output off.
pub fn wine(exe: &Path) -> Command {
    let mut cmd = Command::new("wine");
    cmd.arg(exe)
        .env("WINEPREFIX", stage_dir().join("prefix"))
        .env("WINEDEBUG", "-all")
        .env_remove("REDMARK_KEY");
    cmd
}

/// `path` as a Windows program under Wine names it (drive Z: is the Unix root; forward
/// slashes, which Windows takes too, so a shell passes it unchanged).
pub fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display())
}

/// `path` as a Windows command line names it for `cmd.exe` (drive Z:, backslashes: cmd takes a
/// forward slash after the drive for a switch).
pub fn windows_cmd_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// Where the staged files live: `target/wine/` of this workspace.
fn stage_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("wine")
}

fn stage() -> Result<PathBuf, String> {
    let built = cross_build()?;
    let dir = stage_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let exe = dir.join("redmark.exe");
    std::fs::copy(&built, &exe).map_err(|e| format!("cannot stage {}: {e}", built.display()))?;
    let dll = dir.join("bcryptprimitives.dll");
    let _ = std::fs::remove_file(&dll);
    if !runs(&exe)? {
        // Wine before 9 has no ProcessPrng (std's randomness): give it the stand-in.
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("wine/bcryptprimitives.c");
        let ok = Command::new("x86_64-w64-mingw32-gcc")
            .args(["-O2", "-shared", "-o"])
            .arg(&dll)
            .arg(&source)
            .arg("-ladvapi32")
            .status()
            .map_err(|e| format!("cannot run x86_64-w64-mingw32-gcc: {e}"))?;
        if !ok.success() || !runs(&exe)? {
            return Err(format!(
                "{} does not start under Wine, even with the stand-in bcryptprimitives.dll",
                exe.display()
            ));
        }
    }
    Ok(exe)
}

/// Whether `redmark.exe --version` runs under Wine.
fn runs(exe: &Path) -> Result<bool, String> {
    let out = wine(exe)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run wine: {e}"))?;
    Ok(out.status.success() && String::from_utf8_lossy(&out.stdout).starts_with("redmark "))
}

/// `cargo build -p redmark --target x86_64-pc-windows-gnu`, warnings as errors (as
/// scripts/cross.sh builds it, so the two share one build); the `.exe` cargo reports.
fn cross_build() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("tests/ has no parent")?;
    let out = Command::new(cargo)
        .current_dir(root)
        .args(["build", "-q", "-p", "redmark", "--bin", "redmark"])
        .args(["--target", WINDOWS_TARGET, "--message-format", "json"])
        .env("RUSTFLAGS", "-D warnings")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build --target {WINDOWS_TARGET} failed: {}",
            out.status
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["target"]["name"] == "redmark")
        .filter_map(|v| v["executable"].as_str().map(PathBuf::from))
        .next_back()
        .ok_or_else(|| "cargo did not report redmark.exe".to_owned())
}
