//! How the door-panel firmware refuses to build: without a sealing key, with a bad one, and
//! with anything that allocates. Needs the `thumbv7m-none-eabi` target (not QEMU).

use redmark_tests::qemu::{cargo_firmware, TEST_KEY};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_release_build_without_a_key_fails_and_says_how_to_set_one() {
    let out = cargo_firmware(&[], None, None);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "built without REDMARK_PANEL_KEY:\n{err}"
    );
    assert!(err.contains("REDMARK_PANEL_KEY is not set"), "{err}");
    assert!(
        err.contains("REDMARK_PANEL_KEY=$(openssl rand -hex 32)"),
        "says how: {err}"
    );
    assert!(
        err.contains("--features dev-key"),
        "names the explicit development option: {err}"
    );
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_short_or_malformed_key_is_refused() {
    for (key, why) in [(&TEST_KEY[..62], "31 bytes"), ("zz", "not valid hex")] {
        let out = cargo_firmware(&[], Some(key), None);
        let err = stderr(&out);
        assert!(!out.status.success(), "built with key {key:?}:\n{err}");
        assert!(err.contains(why), "{key:?}: {err}");
    }
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn the_development_key_is_used_only_when_asked_for() {
    let out = cargo_firmware(&["--features", "dev-key"], None, None);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("published development key"), "warns: {err}");
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn anything_that_allocates_fails_to_link() {
    let out = cargo_firmware(&["--features", "alloc-canary"], Some(TEST_KEY), None);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "the allocating canary linked:\n{err}"
    );
    assert!(err.contains("no global memory allocator found"), "{err}");
}
