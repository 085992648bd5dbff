//! A throwaway PostgreSQL cluster for tests and benches: `initdb` in a temporary folder, as the
//! `postgres` user when running as root (PostgreSQL refuses to run as root), `pg_ctl start` on
//! a free loopback port, and `pg_ctl stop` plus removal of the folder on drop.
//!
//! ```no_run
//! let pg = redmark_tests::pg::Cluster::start();
//! let url = pg.url(); // postgres://redmark:…@127.0.0.1:PORT/postgres
//! ```

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::server::TempDir;

pub use crate::pg_tools::pg_bin_dir;

/// The role the cluster is created with.
pub const USER: &str = "redmark";
/// Its password (a test secret: tests check it never reaches a log).
pub const PASSWORD: &str = "pg-test-secret-4d1f";

/// A running (or stopped) throwaway cluster; stopped and removed on drop.
pub struct Cluster {
    dir: TempDir,
    bin: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
}

/// Whether this process runs as root (then PostgreSQL runs as `postgres`).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

impl Cluster {
    /// A cluster when PostgreSQL is installed; without it `None`, after saying the test is
    /// skipped, unless `REDMARK_REQUIRE_PG=1` (set by `scripts/test-all.sh`) makes it a failure.
    /// For tests of crates whose build cannot see `cfg(pg_tools)`.
    pub fn start_or_skip() -> Option<Cluster> {
        if pg_bin_dir().is_some() {
            return Some(Cluster::start());
        }
        assert!(
            std::env::var_os("REDMARK_REQUIRE_PG").is_none_or(|v| v != "1"),
            "REDMARK_REQUIRE_PG=1 but PostgreSQL (initdb, pg_ctl) is not installed"
        );
        eprintln!("skipped: PostgreSQL is not installed (scripts/test-all.sh installs it)");
        None
    }

    /// `initdb` (password auth over TCP) and start; panics with the tool's output on failure.
    pub fn start() -> Cluster {
        let bin = pg_bin_dir().expect("PostgreSQL is not installed (initdb, pg_ctl)");
        let dir = TempDir::new("pg");
        let data = dir.path().join("data");
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).expect("write pwfile");
        if is_root() {
            let st = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(st.success(), "chown of the cluster folder failed");
        }
        let port = free_port();
        let c = Cluster { dir, bin, port };
        let out = c.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                USER.as_ref(),
                "--auth=scram-sha-256".as_ref(),
                "--pwfile".as_ref(),
                pwfile.as_os_str(),
                "--no-sync".as_ref(),
            ],
        );
        assert!(out.status.success(), "initdb: {}", text(&out));
        c.pg_ctl_start();
        c
    }

    /// A URL for the `postgres` database, with the password.
    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// Runs a server tool as the cluster's owner.
    fn run(&self, tool: &str, args: &[&std::ffi::OsStr]) -> Output {
        let exe = self.bin.join(tool);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        cmd.args(args).current_dir(self.dir.path());
        cmd.output().unwrap_or_else(|e| panic!("run {tool}: {e}"))
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `pg_ctl start`, waiting until it accepts connections.
    pub fn pg_ctl_start(&self) {
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{}' \
             -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log");
        let out = self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                self.data().as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-o".as_ref(),
                opts.as_ref(),
                "-w".as_ref(),
                "start".as_ref(),
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start: {}\n{}",
            text(&out),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// `pg_ctl stop -m fast` (connections are closed; in-flight transactions roll back).
    pub fn pg_ctl_stop(&self) {
        let out = self.stop("fast");
        assert!(out.status.success(), "pg_ctl stop: {}", text(&out));
    }

    /// `pg_ctl stop -m MODE`, waiting until it stopped.
    fn stop(&self, mode: &str) -> Output {
        self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                self.data().as_os_str(),
                "-m".as_ref(),
                mode.as_ref(),
                "-w".as_ref(),
                "stop".as_ref(),
            ],
        )
    }

    /// The postmaster's process id (the first line of its `postmaster.pid`), while it runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.data().join("postmaster.pid"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }

    /// Runs SQL with `psql` and returns its unaligned, tuples-only output.
    pub fn psql(&self, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .arg(self.url())
            .output()
            .expect("run psql");
        assert!(out.status.success(), "psql {sql}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The folder of the server binaries (`pgbench` is there too).
    pub fn bin(&self) -> &Path {
        &self.bin
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop("immediate");
    }
}

/// A loopback port free right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
