//! Sets `cfg(pg_tools)` when PostgreSQL's server binaries are installed, so the PostgreSQL
//! store tests run (see `emit_pg_cfg`), and lays out the release binary's code with the
//! functions a serving process runs side by side (see `emit_function_order`).

include!("../tests/src/pg_tools.rs");

fn main() {
    emit_pg_cfg("../tests/src/pg_tools.rs");
    emit_function_order();
}

/// The functions a server runs (`link/hot-functions.txt`, written by
/// `scripts/order-functions.py`), placed first in `.text` by the linker. The kernel maps a
/// binary's code 64 KiB around each page it faults in, so code a server runs scattered over
/// the whole binary made nearly all of it resident; grouped, the resident code is about the
/// code it runs. Only where the linker is known to be LLD, which has `--symbol-ordering-file`
/// (Rust's default on x86_64-unknown-linux-gnu since 1.90), and only in release builds; a name
/// the binary no longer has (after a toolchain or dependency change) is skipped, so a stale
/// list costs only the layout. Relative relocations are packed there too.
/// `REDMARK_NO_FUNCTION_ORDER=1` builds without either (to compare layouts).
fn emit_function_order() {
    const LIST: &str = "link/hot-functions.txt";
    println!("cargo::rerun-if-changed={LIST}");
    println!("cargo::rerun-if-env-changed=REDMARK_NO_FUNCTION_ORDER");
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let flags = env("CARGO_ENCODED_RUSTFLAGS");
    let other_linker = flags.contains("linker") || flags.contains("fuse-ld");
    if env("TARGET") != "x86_64-unknown-linux-gnu"
        || env("PROFILE") != "release"
        || other_linker
        || std::env::var_os("RUSTC_LINKER").is_some()
        || std::env::var_os("REDMARK_NO_FUNCTION_ORDER").is_some()
        || !rustc_links_with_lld()
    {
        return;
    }
    let list = std::path::Path::new(&env("CARGO_MANIFEST_DIR")).join(LIST);
    if list.is_file() {
        println!(
            "cargo::rustc-link-arg-bin=redmark=-Wl,--symbol-ordering-file={}",
            list.display()
        );
        println!("cargo::rustc-link-arg-bin=redmark=-Wl,--no-warn-symbol-ordering");
    }
    // Relative relocations packed (RELR): 146 KiB of `.rela.dyn`, read whole by the dynamic
    // linker at every start, become 6 KiB. Needs glibc 2.36 where the binary runs, so only
    // when the glibc it is built against has it (the binary then requires it).
    if glibc_at_least(2, 36) {
        println!("cargo::rustc-link-arg-bin=redmark=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the build machine's glibc (`getconf GNU_LIBC_VERSION`) is `major.minor` or newer.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    output("getconf", "GNU_LIBC_VERSION")
        .and_then(|text| {
            Some(at_least(
                text.trim().strip_prefix("glibc ")?,
                (major, minor),
            ))
        })
        .unwrap_or(false)
}

/// Whether this rustc links x86_64-unknown-linux-gnu with its LLD by default (1.90 and later).
fn rustc_links_with_lld() -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    output(&rustc, "-vV")
        .and_then(|text| {
            let version = text.lines().find_map(|l| l.strip_prefix("release: "))?;
            Some(at_least(version, (1, 90)))
        })
        .unwrap_or(false)
}

/// What `program arg` prints, if it runs.
fn output(program: &str, arg: &str) -> Option<String> {
    let out = std::process::Command::new(program).arg(arg).output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether a dotted version (`2.36`, `1.95.0-nightly`) is at least `want`.
fn at_least(version: &str, want: (u32, u32)) -> bool {
    let mut parts = version
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= want
}
