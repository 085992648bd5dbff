//! Provisions the panel at build time: the sealing key from `REDMARK_PANEL_KEY` (hex, 32 to 64
//! bytes), the requestState lifetime from `REDMARK_PANEL_STATE_TTL` (seconds, default 300) and,
//! for the networked image, the SNTP server from `REDMARK_PANEL_SNTP` (`a.b.c.d:port`; unset:
//! none, the clock counts from boot); for a UART image the key of the host's time answers from
//! `REDMARK_PANEL_TIME_KEY` (64 hex digits; see `time`).
//! (Each board's own build script supplies its linker script.)

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::exit;

/// The published development key: used only with `--features dev-key`.
const DEV_KEY: &str = "7265646d61726b2d70616e656c2d6465762d6b65792d6e6f742d736563726574";

/// The published development time key ("redmark-panel-dev-time-key-publi"): `dev-key` only.
const DEV_TIME_KEY: &str = "7265646d61726b2d70616e656c2d6465762d74696d652d6b65792d7075626c69";

const HOW: &str = "set REDMARK_PANEL_KEY to the panel's sealing key, 64 to 128 hex digits \
(32 to 64 bytes), e.g.\n    REDMARK_PANEL_KEY=$(openssl rand -hex 32) cargo run --release\n\
or, for a throwaway development image only, build with the published development key:\n    \
cargo run --release --features dev-key";

fn fail(why: &str) -> ! {
    eprintln!("\nerror: {why}\n{HOW}\n");
    println!("cargo:warning={why}");
    exit(1);
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=REDMARK_PANEL_KEY");
    println!("cargo:rerun-if-env-changed=REDMARK_PANEL_STATE_TTL");
    println!("cargo:rerun-if-env-changed=REDMARK_PANEL_SNTP");
    println!("cargo:rerun-if-env-changed=REDMARK_PANEL_ZONE");
    println!("cargo:rerun-if-env-changed=REDMARK_PANEL_TIME_KEY");

    let dev = env::var_os("CARGO_FEATURE_DEV_KEY").is_some();
    let (hex, is_dev) = match env::var("REDMARK_PANEL_KEY") {
        Ok(k) if !k.trim().is_empty() => (k, false),
        _ if dev => {
            println!("cargo:warning=building with the published development key (feature dev-key): not for a real panel");
            (DEV_KEY.to_string(), true)
        }
        _ => fail("REDMARK_PANEL_KEY is not set: the panel has no sealing key"),
    };
    let Some(key) = parse_hex(&hex) else { fail("REDMARK_PANEL_KEY is not valid hex") };
    if !(32..=64).contains(&key.len()) {
        fail(&format!("REDMARK_PANEL_KEY is {} bytes; it must be 32 to 64", key.len()));
    }
    let ttl = match env::var("REDMARK_PANEL_STATE_TTL") {
        Ok(s) => match s.trim().parse::<u32>() {
            Ok(t) if t > 0 => t,
            _ => fail("REDMARK_PANEL_STATE_TTL must be a positive number of seconds"),
        },
        Err(_) => 300,
    };
    let sntp = match env::var("REDMARK_PANEL_SNTP") {
        Ok(s) if !s.trim().is_empty() => match s.trim().parse::<std::net::SocketAddrV4>() {
            Ok(a) => format!("Some(({:?}, {}))", a.ip().octets(), a.port()),
            Err(_) => fail("REDMARK_PANEL_SNTP must be an IPv4 address and port, e.g. 10.0.2.2:123"),
        },
        _ => "None".to_string(),
    };

    let mut src = String::new();
    let _ = writeln!(src, "/// The sealing key (provisioned at build time).");
    let _ = writeln!(src, "pub const KEY: [u8; {}] = {:?};", key.len(), key);
    let _ = writeln!(src, "/// Whether `KEY` is the published development key.");
    let _ = writeln!(src, "pub const KEY_IS_DEV: bool = {is_dev};");
    let _ = writeln!(src, "/// How long a sealed requestState stays valid, seconds.");
    let _ = writeln!(src, "pub const STATE_TTL_S: u32 = {ttl};");
    let _ = writeln!(
        src,
        "/// The SNTP server (address, port) the networked panel sets its clock from; None: no wall clock."
    );
    let _ = writeln!(src, "pub const SNTP: Option<([u8; 4], u16)> = {sntp};");
    if env::var_os("CARGO_FEATURE_NET").is_none() {
        let time_key = time_key(dev);
        let _ = writeln!(
            src,
            "/// The key of the host's time answers (`REDMARK_PANEL_TIME_KEY`), not the sealing key."
        );
        let _ = writeln!(src, "pub const TIME_KEY: [u8; 32] = {time_key:?};");
    }
    if env::var_os("CARGO_FEATURE_ZONE").is_some() {
        let _ = writeln!(src, "/// The floor's zone, its rules read from the tz database at build time.");
        let _ = writeln!(src, "pub static ZONE: redmark_core::booking::Tz = {};", zone());
    }
    fs::write(out.join("provision.rs"), src).expect("write provision.rs");
}

/// `REDMARK_PANEL_TIME_KEY` (64 hex digits) for a UART image, or with `dev-key` and unset the
/// published development time key.
fn time_key(dev: bool) -> [u8; 32] {
    let hex = match env::var("REDMARK_PANEL_TIME_KEY") {
        Ok(k) if !k.trim().is_empty() => k,
        _ if dev => DEV_TIME_KEY.to_string(),
        _ => fail(
            "REDMARK_PANEL_TIME_KEY is not set: the UART panel takes its time only from a host holding its time key \
             (64 hex digits, e.g. $(openssl rand -hex 32); not the sealing key)",
        ),
    };
    match parse_hex(&hex).and_then(|k| <[u8; 32]>::try_from(k).ok()) {
        Some(k) => k,
        None => fail("REDMARK_PANEL_TIME_KEY must be 64 hex digits (32 bytes)"),
    }
}

/// `REDMARK_PANEL_ZONE` (an IANA name such as `Europe/Berlin`) as the expression that builds it.
fn zone() -> String {
    let Ok(name) = env::var("REDMARK_PANEL_ZONE") else {
        fail("feature zone: set REDMARK_PANEL_ZONE to the floor's IANA time zone, e.g. Europe/Berlin")
    };
    let name = name.trim();
    let iana = |c: char| c.is_ascii_alphanumeric() || "/_+-".contains(c);
    if name.is_empty() || !name.chars().all(iana) {
        fail("REDMARK_PANEL_ZONE must be an IANA time zone name, e.g. Europe/Berlin");
    }
    // An unknown name stops the build in jiff's macro, naming it.
    format!("redmark_core::booking::Tz(jiff::tz::get!({name:?}))")
}
