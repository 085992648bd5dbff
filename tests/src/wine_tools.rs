// Whether this machine can run the Windows build under Wine (`wine`, mingw-w64's
// `x86_64-w64-mingw32-gcc` and the `x86_64-pc-windows-gnu` Rust target); shared by the build
// script, which sets `cfg(wine_tools)`, and the tests.

/// What the Wine tests need that this machine lacks (empty: they can run).
pub fn wine_missing() -> Vec<String> {
    let runs = |prog: &str, arg: &str| {
        std::process::Command::new(prog)
            .arg(arg)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut missing = Vec::new();
    if !runs("wine", "--version") {
        missing.push("wine".to_owned());
    }
    if !runs("x86_64-w64-mingw32-gcc", "--version") {
        missing.push("x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64)".to_owned());
    }
    let installed = std::process::Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if !installed
        .lines()
        .any(|l| l.trim() == "x86_64-pc-windows-gnu")
    {
        missing.push("rustup target x86_64-pc-windows-gnu".to_owned());
    }
    missing
}

/// For a build script: sets `cfg(wine_tools)` when nothing is missing; otherwise the Wine
/// tests are reported as ignored, and `REDMARK_REQUIRE_WINE=1` (set by `scripts/test-all.sh`)
/// makes the absence a build error so CI cannot skip them.
#[allow(dead_code)]
pub fn emit_wine_cfg(tools_rs: &str) {
    println!("cargo::rustc-check-cfg=cfg(wine_tools)");
    println!("cargo::rerun-if-env-changed=REDMARK_REQUIRE_WINE");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-changed={tools_rs}");
    let missing = wine_missing();
    if missing.is_empty() {
        println!("cargo::rustc-cfg=wine_tools");
    } else if std::env::var_os("REDMARK_REQUIRE_WINE").is_some_and(|v| v == "1") {
        panic!(
            "REDMARK_REQUIRE_WINE=1 but the Wine tests cannot run: missing {} (scripts/cross.sh installs them)",
            missing.join(", ")
        );
    } else {
        println!(
            "cargo::warning=Wine tests will be ignored: missing {} (scripts/cross.sh installs them)",
            missing.join(", ")
        );
    }
}
