//! `redmark serve`: the booking floor (or the conformance fixtures) over stdio, TCP and
//! Streamable HTTP at once, all through one engine host ([`crate::host`]; each connection owns
//! its engine).
//!
//! Principals (state minted for one fails for another):
//! - stdio: the local user (`local`) — whoever launched the process.
//! - TCP: binds loopback addresses only, and its clients are the local user too (`local`):
//!   a loopback port is reachable only from this machine, and on Linux a connection is served
//!   only if the connecting socket belongs to the server's own uid (`/proc/net/tcp`), so
//!   another user of the machine cannot act as this one. For anything remote or multi-user
//!   use `--http` with `--tokens`.
//! - HTTP: `Authorization: Bearer` tokens mapped by `--tokens FILE` (`http:<name>`); without a
//!   file (loopback only), a connection from the server's own uid (the same kernel check as
//!   TCP's; Linux) is the local user (`local`: the booking page and `redmark call` are the
//!   person at the terminal), any other `http:anonymous`, and a warning is logged.

mod args;
pub mod config;
pub mod release;
mod zone;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use redmark_core::booking::{Floor, DEFAULT_SITE};
use redmark_core::engine::{Config, ServerInfo};
use redmark_core::fixtures::Fixtures;
use redmark_core::seal::KeyRing;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::tokens::Tokens;
use crate::calendar::caldav;
use crate::data::{self, keys};
use crate::fault::panics;
use crate::host::{Hosted, HostedBooking, Shared};
use crate::platform::signals::Signals;
use crate::store::{pg, redb};
use crate::transport::stream::StreamLimits;
use crate::transport::{http, listen, share, stdio, tcp};
pub use args::ServeArgs;

pub use crate::store::redb::STORE_FILE;

/// Runs the server.
pub fn run(args: ServeArgs) -> ExitCode {
    let env = std::env::var(config::STORE_ENV).ok();
    let choice = config::store_choice(args.store.as_deref(), env.as_deref());
    on_runtime(start(args, choice, None::<fn() -> Fixtures>))
}

/// Serves the apps `make` builds (one per connection) as `redmark serve` serves the booking
/// floor: every transport, flag and default, sealing keys in the data folder — its own, by
/// default ([`app_data_dir`]). The flags of the booking floor (`--store`, `--rooms`,
/// `--fixtures`, `--repair`) are refused.
pub fn run_app<A: Hosted>(
    args: ServeArgs,
    make: impl Fn() -> A + Send + Sync + 'static,
) -> ExitCode {
    on_runtime(start(args, config::StoreChoice::Redb(None), Some(make)))
}

/// Runs `start` on the main runtime: tokio's work-stealing scheduler, a worker per core
/// (every connection, the PostgreSQL workers).
fn on_runtime(start: impl std::future::Future<Output = Result<(), String>>) -> ExitCode {
    init_tracing();
    panics::install_hook();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    let outcome = rt.block_on(start);
    // Blocking stdin reads never return on their own: do not wait for them.
    rt.shutdown_timeout(Duration::from_millis(500));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

fn fail(msg: String) -> ExitCode {
    eprintln!("redmark serve: {msg}");
    ExitCode::FAILURE
}

/// Logs to stderr at `REDMARK_LOG`'s levels (`info` when unset): a level (`debug`), targets
/// with levels (`redmark=debug,warn`), or `off`. An unreadable value is said and ignored.
fn init_tracing() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = match std::env::var("REDMARK_LOG") {
        Ok(spec) => spec.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("redmark: REDMARK_LOG={spec:?} ignored ({e}); logging at info");
            Targets::new().with_default(LevelFilter::INFO)
        }),
        Err(_) => Targets::new().with_default(LevelFilter::INFO),
    };
    // fmt's own filter stops at info unless told otherwise: `filter` decides.
    let _ = tracing_subscriber::fmt()
        .with_max_level(LevelFilter::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .finish()
        .with(filter)
        .try_init();
}

/// Opens what `args` names (bookings where `choice` says) and serves until EOF or a signal:
/// the booking floor, or the apps `app` makes.
async fn start<A: Hosted>(
    args: ServeArgs,
    choice: config::StoreChoice,
    app: Option<impl Fn() -> A + Send + Sync + 'static>,
) -> Result<(), String> {
    for a in &args.tcp {
        if !a.ip().is_loopback() {
            return Err(format!(
                "--tcp {a}: TCP clients act as the local user, so TCP binds loopback only; \
                 use --http with --tokens to serve other machines"
            ));
        }
    }
    if let Some(a) = args.tcp.first() {
        if !crate::platform::TCP_PEER_CHECK && !args.tcp_any_local_user {
            return Err(format!(
                "--tcp {a}: on this platform redmark cannot tell which user a TCP connection \
                 comes from (the peer-user check is Linux-only), so any local process could book \
                 as you; add --tcp-any-local-user to accept that, or use stdio, or --http with \
                 --tokens (docs/platforms.md)"
            ));
        }
    }
    for a in &args.http {
        if !a.ip().is_loopback() && args.tokens.is_none() && args.auth.auth_issuer.is_none() {
            return Err(format!(
                "--http {a}: a non-loopback address needs --tokens or --auth-issuer (off loopback the Host/Origin \
                 guard cannot tell a rebound browser page from a client, so only bearer tokens \
                 keep other sites out)"
            ));
        }
    }
    // Read the files named on the command line before touching the data directory, so a
    // typo creates no keys and no store.
    let tokens = match &args.tokens {
        Some(f) => Some(Arc::new(Tokens::load(f)?)),
        None => None,
    };
    // CALDAV (crate::calendar::caldav): its URL and credentials file.
    let mut caldav = match &args.caldav {
        Some(url) => Some(caldav::Config::load(
            url,
            args.caldav_credentials.as_deref(),
        )?),
        None => None,
    };
    if caldav.is_some() && args.fixtures {
        return Err("--caldav belongs to the booking floor, not --fixtures".into());
    }
    // AUTH (crate::auth): the issuer's metadata and keys, fetched off the runtime.
    if args.auth.auth_issuer.is_some() && args.http.is_empty() {
        return Err(
            "--auth-issuer applies to --http only (stdio and TCP clients are the local user)"
                .into(),
        );
    }
    let auth = args.auth.clone();
    let oauth = tokio::task::spawn_blocking(move || crate::auth::OAuth::setup(&auth))
        .await
        .map_err(|e| format!("--auth-issuer: {e}"))??
        .map(Arc::new);
    let config = Config {
        state_ttl_s: args.state_ttl,
        ..Config::default()
    };
    if let Some(make) = app {
        if args.store.is_some() || args.rooms.is_some() || args.fixtures || args.repair {
            return Err(
                "--store, --rooms, --fixtures and --repair belong to the booking floor; \
                        this server hosts its own tools"
                    .into(),
            );
        }
        if args.caldav.is_some() {
            return Err("--caldav belongs to the booking floor".into());
        }
        // One app made here only to read its name: the default folder is named after it.
        let dir = app_data_dir(args.data.as_deref(), make().info().name)?;
        let data = open_keys(dir, args.rotate_key)?;
        eprintln!(
            "redmark: data folder {} ({})",
            data.dir.display(),
            keys_said(&data)
        );
        let host = Shared::new(make, data.ring, config);
        return serve(host, &args, tokens, oauth, None).await;
    }
    let floor = match &args.rooms {
        Some(f) => config::load_rooms(f)?,
        None => DEFAULT_SITE,
    };
    let dir = data_dir(args.data.as_deref())?;
    // The store first: a refused store leaves nothing else behind (no new key file) and is
    // the only line printed.
    let mut owner = None;
    let store = match (&choice, args.fixtures) {
        (_, true) => None,
        (config::StoreChoice::Postgres(url), false) => Some(Bookings::Pg(
            pg::PgStore::open(url).await?,
            pg::describe(url),
        )),
        (config::StoreChoice::Redb(at), false) => {
            let at = at.as_deref().unwrap_or(&dir);
            // FOLDER (crate::folder): a store another process holds is reached through it.
            match crate::folder::open_or_relay(at, args.repair, may_relay(&args)).await? {
                crate::folder::Opened::Relayed => return Ok(()),
                crate::folder::Opened::Store(store, stdio) => {
                    owner = Some(crate::folder::Owner {
                        at: at.to_path_buf(),
                        stdio,
                    });
                    Some(Bookings::Redb(
                        store,
                        at.join(STORE_FILE).display().to_string(),
                    ))
                }
            }
        }
    };
    let data = open_keys(dir, args.rotate_key)?;
    // Said on every start, whatever REDMARK_LOG is: where this server's state lives.
    let keys = keys_said(&data);
    let Some(store) = store else {
        eprintln!("redmark: data folder {} ({keys})", data.dir.display());
        let host = Shared::new(|| Fixtures, data.ring, config);
        return serve(host, &args, tokens, oauth, None).await;
    };
    let folder = data.dir.display().to_string();
    let booked = |at: &str| eprintln!("redmark: data folder {folder} (bookings in {at}, {keys})");
    match store {
        Bookings::Redb(store, at) => {
            booked(&at);
            let store = redb::RedbBookings::new(store);
            if let Some(timer) = release::timer(floor, &store) {
                tokio::spawn(timer);
            }
            if let Some(sync) = caldav
                .take()
                .and_then(|c| caldav::syncer(floor, &store, &data.ring, c))
            {
                tokio::spawn(sync);
            }
            let host = booking_host(floor, store, data.ring, config);
            serve(host, &args, tokens, oauth, owner).await
        }
        Bookings::Pg(store, at) => {
            booked(&at);
            if let Some(timer) = release::timer(floor, &store) {
                tokio::spawn(timer);
            }
            if let Some(sync) = caldav
                .take()
                .and_then(|c| caldav::syncer(floor, &store, &data.ring, c))
            {
                tokio::spawn(sync);
            }
            let host = booking_host(floor, store, data.ring, config);
            serve(host, &args, tokens, oauth, None).await
        }
    }
}

/// Where the sealing keys came from, as every start says it.
fn keys_said(data: &Data) -> String {
    if data.keys_from_env {
        "sealing keys from REDMARK_KEY".to_owned()
    } else {
        format!("sealing keys in {}", keys::KEY_FILE)
    }
}

/// FOLDER: whether this `serve` may relay to the process holding its store (stdio only:
/// TCP and HTTP listeners, a repair or a key rotation need the store itself).
fn may_relay(args: &ServeArgs) -> Result<(), &'static str> {
    if !args.tcp.is_empty() || !args.http.is_empty() {
        return Err(
            "a --tcp or --http server needs the store itself (several stdio servers \
                    share one folder; point TCP and HTTP clients at one server)",
        );
    }
    if args.repair || args.rotate_key {
        return Err("--repair and --rotate-key need the store itself: stop the other process");
    }
    Ok(())
}

/// The store `serve` opened, and where it is (no password).
enum Bookings {
    Redb(redb::RedbStore, String),
    Pg(pg::PgStore, String),
}

/// The data directory `--data` names, or the platform's (e.g. `~/.local/share/redmark`).
pub fn data_dir(data: Option<&Path>) -> Result<PathBuf, String> {
    match data {
        Some(d) => Ok(d.to_path_buf()),
        None => Ok(dirs::data_dir()
            .ok_or("no platform data directory; pass --data DIR")?
            .join("redmark")),
    }
}

/// The data directory of an app served by [`run_app`]: `--data`, else the platform's data
/// directory's `redmark-NAME` (NAME: the app's `ServerInfo` name, characters other than
/// letters, digits, `-`, `_` and `.` made `-`), never the booking floor's keys and store.
pub fn app_data_dir(data: Option<&Path>, name: &str) -> Result<PathBuf, String> {
    if let Some(d) = data {
        return Ok(d.to_path_buf());
    }
    let safe: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '-',
        })
        .collect();
    if safe.chars().all(|c| c == '.' || c == '-') {
        return Err(format!(
            "this app's name {name:?} cannot name its data folder; pass --data DIR"
        ));
    }
    Ok(dirs::data_dir()
        .ok_or("no platform data directory; pass --data DIR")?
        .join(format!("redmark-{safe}")))
}

/// The data directory, opened: where it is, its sealing keys and where they came from.
pub struct Data {
    /// The directory.
    pub dir: PathBuf,
    /// The key ring.
    pub ring: KeyRing,
    /// Whether the keys came from `REDMARK_KEY` rather than the key file.
    pub keys_from_env: bool,
}

/// Opens the sealing keys of the data directory `dir` (created mode 0700 if missing; keys
/// created on first start, rotated first if `rotate`; `REDMARK_KEY` overrides them). Shared by
/// `redmark serve` and the in-process server of `redmark call`.
pub fn open_keys(dir: PathBuf, rotate: bool) -> Result<Data, String> {
    keys::ensure_dir(&dir)?;
    data::check_folder(&dir)?;
    let loaded = keys::load(&dir, rotate)?;
    tracing::info!("sealing keys: {}", loaded.source);
    Ok(Data {
        dir,
        ring: loaded.ring,
        keys_from_env: std::env::var_os("REDMARK_KEY").is_some(),
    })
}

/// The booking floor's host over a bookings store (redb: [`data::open_store`] made
/// [`RedbBookings`](redb::RedbBookings); or PostgreSQL). Shared by `redmark serve` and the
/// in-process server of `redmark call`.
pub fn booking_host<S: crate::store::Bookings>(
    floor: &'static [Floor<'static>],
    store: S,
    ring: KeyRing,
    config: Config,
) -> Arc<Shared<HostedBooking<S>>>
where
    HostedBooking<S>: Hosted,
{
    let info = ServerInfo {
        name: "redmark",
        version: env!("CARGO_PKG_VERSION"),
        instructions: Some(
            "Books meeting rooms. Use list_rooms to see rooms, book_room to book one hour \
             (it asks which room when a hint fits several), cancel_booking to cancel.",
        ),
    };
    Shared::booking(floor, store, info, ring, config)
}

/// Serves `shared` on every transport asked for until EOF on stdio or a signal.
async fn serve<A: Hosted>(
    shared: Arc<Shared<A>>,
    args: &ServeArgs,
    tokens: Option<Arc<Tokens>>,
    oauth: Option<Arc<crate::auth::OAuth>>,
    mut owner: Option<crate::folder::Owner>,
) -> Result<(), String> {
    let signals = Signals::install();
    let shutdown = CancellationToken::new();
    let tracker = TaskTracker::new();
    let idle = (args.idle_timeout > 0).then(|| Duration::from_secs(args.idle_timeout));
    let limits = StreamLimits {
        idle,
        write_timeout: Some(Duration::from_secs(args.write_timeout)),
    };
    if !args.http.is_empty() && tokens.is_none() && oauth.is_none() {
        tracing::warn!("no --tokens file: every HTTP client is the one anonymous principal");
    }
    // Bind everything first, so a bad address fails before anything is served.
    let mut tcp = Vec::new();
    for a in &args.tcp {
        let l = listen(*a).map_err(|e| format!("cannot listen on tcp {a}: {e}"))?;
        eprintln!(
            "redmark: listening tcp {}",
            l.local_addr().map_err(|e| e.to_string())?
        );
        tcp.push(l);
    }
    let mut web = Vec::new();
    for a in &args.http {
        web.push(http::bind(*a).await?);
    }
    for l in tcp {
        let t = tracker.clone();
        tracker.spawn(tcp::serve_tcp(
            Arc::clone(&shared),
            l,
            args.max_connections,
            limits,
            shutdown.clone(),
            t,
        ));
    }
    for l in web {
        let cfg = http::HttpConfig {
            tokens: tokens.clone(),
            oauth: oauth.clone(),
            max_conns: args.max_connections,
            per_principal: args.max_connections_per_principal.map_or_else(
                || share::default_principal_share(args.max_connections),
                |n| n as usize,
            ),
            read_timeout: Duration::from_secs(30),
            grace: Duration::from_secs(10),
            write_timeout: Duration::from_secs(args.write_timeout),
            keep_alive: Duration::from_secs(args.keep_alive),
        };
        tracker.spawn(http::serve_http(
            Arc::clone(&shared),
            l,
            cfg,
            shutdown.clone(),
        ));
    }
    let stdio = args.stdio || (args.tcp.is_empty() && args.http.is_empty());
    if stdio && std::io::stdin().is_terminal() {
        // Started by hand: without this the server just sits there. stdout stays the protocol.
        eprintln!(
            "redmark: speaking MCP (newline-delimited JSON-RPC) on stdin/stdout; an MCP client \
             usually starts this command itself. Ctrl-D (end of input) or Ctrl-C stops it."
        );
    }
    // FOLDER (crate::folder): the data folder's other processes reach this one's store.
    let handed = owner.as_mut().and_then(|o| o.stdio.take());
    if let Some(o) = owner {
        let (shared, shutdown) = (Arc::clone(&shared), shutdown.clone());
        let max = args.max_connections;
        tracker.spawn(crate::folder::serve_owner(
            shared,
            o,
            max,
            shutdown,
            tracker.clone(),
        ));
    }
    if stdio {
        let (shared, shutdown) = (Arc::clone(&shared), shutdown.clone());
        let ends = handed.unwrap_or_else(stdio::StdioEnds::open);
        // On the tracker like every connection: shutdown waits for the request in flight.
        tracker.spawn(async move {
            stdio::serve_stdio_on(shared, ends, shutdown.clone()).await;
            // The client that launched us is gone: stop everything.
            shutdown.cancel();
        });
    }
    tracker.close();
    signals.wait(&shutdown).await;
    shutdown.cancel();
    // In-flight requests finish (each connection task completes the message it is on).
    if tokio::time::timeout(Duration::from_secs(15), tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("shutdown: some connections did not finish in 15 s");
    }
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_gets_a_data_folder_of_its_own() {
        let floor = data_dir(None).unwrap();
        let lunch = app_data_dir(None, "lunch").unwrap();
        assert_eq!(lunch.parent(), floor.parent());
        assert_eq!(lunch.file_name().unwrap(), "redmark-lunch");
        let odd = app_data_dir(None, "../Lunch counter").unwrap();
        assert_eq!(odd.file_name().unwrap(), "redmark-..-Lunch-counter");
        assert!(app_data_dir(None, "/").is_err());
        let given = Path::new("/tmp/x");
        assert_eq!(app_data_dir(Some(given), "lunch").unwrap(), given);
    }
}
