// Where the browser tests' Chromium and ChromeDriver are: std only, so `tests/build.rs`
// `include!`s it and the `browser` helpers use it at run time.

/// Chromium and ChromeDriver: `REDMARK_CHROMIUM` / `REDMARK_CHROMEDRIVER`, else `chromium` and
/// `chromedriver` on `PATH` (Debian's packages put them in /usr/bin).
pub fn browser_paths() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let find = |var: &str, name: &str| -> Option<std::path::PathBuf> {
        if let Some(p) = std::env::var_os(var) {
            let p = std::path::PathBuf::from(p);
            return p.is_file().then_some(p);
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    };
    Some((
        find("REDMARK_CHROMIUM", "chromium")?,
        find("REDMARK_CHROMEDRIVER", "chromedriver")?,
    ))
}

/// For a build script: sets `cfg(browser_tools)` when [`browser_paths`] finds both, so the
/// browser tests run; otherwise they are reported as ignored with the reason, and
/// `REDMARK_REQUIRE_BROWSER=1` (set by `scripts/test-all.sh`) makes the absence a build error
/// so CI cannot skip them.
#[allow(dead_code)]
pub fn emit_browser_cfg(tools_rs: &str) {
    println!("cargo::rustc-check-cfg=cfg(browser_tools)");
    println!("cargo::rerun-if-env-changed=REDMARK_REQUIRE_BROWSER");
    println!("cargo::rerun-if-env-changed=REDMARK_CHROMIUM");
    println!("cargo::rerun-if-env-changed=REDMARK_CHROMEDRIVER");
    println!("cargo::rerun-if-changed={tools_rs}");
    if let Some((chromium, driver)) = browser_paths() {
        println!("cargo::rerun-if-changed={}", chromium.display());
        println!("cargo::rerun-if-changed={}", driver.display());
        println!("cargo::rustc-cfg=browser_tools");
    } else if std::env::var_os("REDMARK_REQUIRE_BROWSER").is_some_and(|v| v == "1") {
        panic!(
            "REDMARK_REQUIRE_BROWSER=1 but chromium and chromedriver are not installed \
             (scripts/browser.sh installs them)"
        );
    } else {
        println!(
            "cargo::warning=browser tests will be ignored: chromium/chromedriver not found \
             (scripts/browser.sh installs them; scripts/test-all.sh runs it)"
        );
    }
}
