//! The linker script (`memory.x` + cortex-m-rt's `link.x`). The key and the state lifetime
//! are provisioned by the `redmark-panel` crate's build script.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("write memory.x");
    // cortex-m-rt's "device" feature includes device.x; the handlers are all the default one.
    fs::write(out.join("device.x"), "/* device interrupt handlers: all DefaultHandler */\n")
        .expect("write device.x");
    println!("cargo:rustc-link-search={}", out.display());
    // Here and not only in .cargo/config.toml: a build driven with --manifest-path from
    // another folder ignores that folder's config and would link an empty image.
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}
