// Where PostgreSQL's server binaries are (`initdb`, `pg_ctl`, `postgres`, `pgbench`): std
// only, so the build script (`tests/build.rs`) `include!`s it and the
// `pg` helpers use it at run time.

/// The folder holding `initdb` and `pg_ctl`: the one on `PATH`, else the newest
/// `/usr/lib/postgresql/<version>/bin` (Debian installs them there, off `PATH`).
pub fn pg_bin_dir() -> Option<std::path::PathBuf> {
    let has = |d: &std::path::Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(d) = std::env::split_paths(&path).find(|d| has(d)) {
            // A symlink on PATH (Debian's pg_ctlcluster wrappers) resolves to the real folder.
            let real = std::fs::canonicalize(d.join("initdb")).ok();
            return Some(
                real.and_then(|f| f.parent().map(|p| p.to_path_buf()))
                    .unwrap_or(d),
            );
        }
    }
    let mut versions: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, d)| has(d))
        .collect();
    versions.sort();
    versions.pop().map(|(_, d)| d)
}

/// For a build script: sets `cfg(pg_tools)` when [`pg_bin_dir`] finds PostgreSQL, so its tests
/// run; otherwise they are reported as ignored with the reason, and `REDMARK_REQUIRE_PG=1`
/// (set by `scripts/test-all.sh`) makes the absence a build error so CI cannot skip them.
#[allow(dead_code)]
pub fn emit_pg_cfg(tools_rs: &str) {
    println!("cargo::rustc-check-cfg=cfg(pg_tools)");
    println!("cargo::rerun-if-env-changed=REDMARK_REQUIRE_PG");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-changed={tools_rs}");
    if pg_bin_dir().is_some() {
        println!("cargo::rustc-cfg=pg_tools");
    } else if std::env::var_os("REDMARK_REQUIRE_PG").is_some_and(|v| v == "1") {
        panic!("REDMARK_REQUIRE_PG=1 but PostgreSQL (initdb, pg_ctl) is not installed");
    } else {
        println!(
            "cargo::warning=PostgreSQL tests will be ignored: initdb/pg_ctl not found \
             (scripts/test-all.sh installs postgresql)"
        );
    }
}
