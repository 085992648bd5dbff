//! A stranger's crate: `docs/writing-a-tool.md`'s `Cargo.toml` lines and `src/main.rs`, as the
//! page writes them, in a crate made by `cargo new` outside the workspace (beside a `redmark`
//! that is this repository), built offline and booked through with `redmark call`.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use redmark_tests::server::{redmark_bin, run_bounded, run_bounded_for, Run, TempDir};
use serde_json::Value;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The fenced blocks of `lang` in the doc's "From `cargo new`" section, in order.
fn doc_blocks(lang: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/writing-a-tool.md")).expect("the doc");
    let section = doc
        .split_once("## From `cargo new`")
        .expect("the doc's section `From cargo new`")
        .1;
    let section = section.split("\n## ").next().unwrap_or(section);
    let fence = format!("```{lang}\n");
    section
        .split(&fence)
        .skip(1)
        .map(|b| b.split_once("```").expect("a closed block").0.to_owned())
        .collect()
}

/// The workspace's target directory as cargo sees it (CARGO_TARGET_DIR and all): the fresh
/// crate builds into it, so the dependencies built for the workspace are reused.
fn target_dir() -> PathBuf {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root())
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .output()
        .expect("cargo metadata");
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    PathBuf::from(meta["target_directory"].as_str().expect("target_directory"))
}

/// A directory outside the workspace holding `redmark` (a link to this repository) and the
/// crate `name` made by `cargo new`, with `deps` as its `[dependencies]` and `path` as its
/// source. Stable between runs, so the path dependencies are not built anew each time.
fn fresh_crate(name: &str, deps: &str, path: &str, source: &str) -> PathBuf {
    let beside = std::env::temp_dir().join(format!("redmark-fresh-crate-{}", whoami()));
    std::fs::create_dir_all(&beside).expect("create the directory beside");
    let link = beside.join("redmark");
    if std::fs::read_link(&link).ok().as_deref() != Some(root().as_path()) {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(root(), &link).expect("link the repository");
    }
    let dir = beside.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let made = Command::new("cargo")
        .current_dir(&beside)
        .args(["new", "-q", "--vcs", "none", name])
        .status()
        .expect("cargo new");
    assert!(made.success(), "cargo new {name}");
    let manifest = dir.join("Cargo.toml");
    let toml = std::fs::read_to_string(&manifest).expect("the new Cargo.toml");
    assert!(
        toml.ends_with("[dependencies]\n"),
        "cargo new wrote: {toml}"
    );
    std::fs::write(&manifest, toml.replace("[dependencies]\n", deps)).expect("Cargo.toml");
    std::fs::write(dir.join(path), source).expect("the source");
    // The versions this repository locks, which are the ones already built and downloaded.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("Cargo.lock");
    dir
}

/// The user's name, so two users' runs do not share a directory.
fn whoami() -> String {
    std::env::var("USER").unwrap_or_else(|_| "user".into())
}

/// How long the docs' crate may take to build: the shell and what of its dependencies the
/// workspace's build does not share with it (ring's build script runs again for a crate outside
/// the workspace, and ring, rustls and ureq compile again), on a busy CI machine.
const BUILD_WAIT: Duration = Duration::from_secs(600);

/// `cargo build --offline` in `dir` into the workspace's target directory, with the
/// workspace's dev profile (the root Cargo.toml's) so most of its dependencies' builds are
/// reused, and without what `cargo test` set for this test (`OUT_DIR`, `CARGO_MANIFEST_DIR`,
/// … : a build script that watches them would run again).
fn build(dir: &Path) -> Run {
    let mut cmd = Command::new("cargo");
    for (var, _) in std::env::vars_os() {
        let var = var.to_string_lossy();
        let set_by_cargo_test = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|p| var.starts_with(p))
            || ["OUT_DIR", "CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR"].contains(&&*var);
        if set_by_cargo_test {
            cmd.env_remove(&*var);
        }
    }
    cmd.current_dir(dir)
        .args(["build", "--offline"])
        .args(["--config", r#"profile.dev.debug="line-tables-only""#])
        .args(["--config", r#"profile.dev.package."*".debug=false"#])
        .env("CARGO_TARGET_DIR", target_dir());
    run_bounded_for(cmd, BUILD_WAIT)
}

/// `redmark call --stdio SERVER ARGS…`.
fn call(server: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new(redmark_bin());
    cmd.args(["call", "--stdio", server])
        .args(args)
        .env_remove("REDMARK_KEY");
    run_bounded(cmd)
}

#[test]
fn the_docs_crate_builds_from_its_cargo_toml_lines_and_books() {
    redmark_bin(); // builds the shell's dependencies the fresh crate reuses
    let deps = doc_blocks("toml");
    let rust = doc_blocks("rust");
    assert_eq!(deps.len(), 1, "one Cargo.toml block: {deps:?}");
    assert!(deps[0].starts_with("[dependencies]\n"), "{}", deps[0]);
    let dir = fresh_crate("desk", &deps[0], "src/main.rs", &rust[0]);

    let built = build(&dir);
    assert_eq!(built.code, 0, "{}", built.stderr);
    let data = TempDir::new("fresh-crate");
    let bin = target_dir().join("debug/desk");
    let server = format!("{} --data {}", bin.display(), data.path().display());
    let booked = call(
        &server,
        &[
            "--answer",
            "confirm.confirm=true",
            "book_desk",
            "name=Ada",
            "desk=3",
        ],
    );
    assert_eq!(booked.code, 0, "{} {}", booked.stdout, booked.stderr);
    assert!(
        booked.stdout.contains("Booked desk 3 for Ada."),
        "{}",
        booked.stdout
    );

    let declined = call(
        &server,
        &["--decline", "confirm", "book_desk", "name=Ada", "desk=3"],
    );
    assert!(
        declined.stdout.contains("Nothing booked"),
        "{}",
        declined.stdout
    );

    // The checks the derive wrote, run before the tool.
    let refused = call(&server, &["book_desk", "name=Ada", "desk=13"]);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    assert!(
        refused.stdout.contains("13 is more than the maximum, 12"),
        "{}",
        refused.stdout
    );
}

#[test]
fn a_crate_with_only_the_macros_is_told_what_to_add() {
    let dir = fresh_crate(
        "macros-only",
        "[dependencies]\nredmark-macros = { path = \"../redmark/macros\" }\n",
        "src/main.rs",
        "#[derive(redmark_macros::Args)]\nstruct A {\n    #[arg(min = 1)]\n    n: u8,\n}\n\nfn main() {}\n",
    );
    let built = build(&dir);
    assert_ne!(built.code, 0, "built without the core: {}", built.stderr);
    assert!(
        built.stderr.contains("need `redmark`") && built.stderr.contains("`redmark-core`"),
        "{}",
        built.stderr
    );
    assert!(
        !built.stderr.contains("redmark_core`"),
        "an error about a path the user never wrote: {}",
        built.stderr
    );
}
