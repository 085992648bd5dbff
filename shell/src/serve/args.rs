//! The command line of `redmark serve`: its flags and the long help that explains them.

use std::net::SocketAddr;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Transports (combine freely; stdio is the default when neither --tcp nor --http is given):
  redmark serve                           stdio, for an MCP client's config
  redmark serve --tcp 127.0.0.1:7070      newline-delimited JSON-RPC over TCP
  redmark serve --http 127.0.0.1:8080     Streamable HTTP at http://127.0.0.1:8080/mcp
  Port 0 picks a free port. Each listener prints `redmark: listening <tcp|http> <addr>` on
  stderr once bound. Logs go to stderr only (REDMARK_LOG=debug for more).

Principals (state minted for one fails for another): stdio and TCP clients are the local
user (TCP binds loopback addresses only and, on Linux, serves only connections from
processes of the server's own user; elsewhere that check is missing and --tcp is refused
unless --tcp-any-local-user says any local process may act as you, see docs/platforms.md); HTTP clients are named by --tokens (Authorization:
Bearer), or by OAuth access tokens from --auth-issuer (their iss and sub; see docs/oauth.md), or
are all one anonymous principal without either (a warning is logged). On loopback,
HTTP requests whose Host is not localhost/127.0.0.1/[::1] get 403; on any listener so do
requests whose Origin is not the Host itself (a page on another port is another site), and a
POST /mcp that is not Content-Type: application/json gets 415. A non-loopback
--http address is refused unless --tokens is given (there the Host/Origin guard cannot stop DNS
rebinding, so bearer tokens must); put TLS in front of it.

Operating (docs/operators.md, Health and metrics): each --http listener also answers GET
/healthz, to anyone (no token): 200 while the store answers a read within 2 s, else 503, never
a booking; and GET /metrics (Prometheus text format 0.0.4) to whoever may POST /mcp. `redmark
backup --data DIR OUT` copies the bookings while this server serves them.

Calendars (docs/calendars.md): each --http listener serves the floor as iCalendar feeds, GET
/calendars/rooms/ROOM.ics, /calendars/mine.ics and /calendars/rooms/ROOM/freebusy.ics (31 days
back to 366 ahead, at most 2000 bookings), to a caller of /mcp or with the feed key in the URLs
GET /calendars/ lists; rotating the sealing key, or with --tokens changing a token, revokes them.
--caldav URL keeps each room in step with the calendar collection URL/ROOM/ on a CalDAV server
(made if missing), every 3 s and right after a booking: redmark's bookings (31 days back to 366
ahead) are written there, and an event someone else puts in a room's collection books its slot,
unless a booking redmark acknowledged holds it: then that event is marked cancelled with the
reason. --caldav-credentials FILE holds user:password (one line, mode 0600). While the server is
unreachable booking goes on; the outage is logged when it starts and ends, and the next pass
catches up.

Live changes (docs/live.md): a 2026-07-28 client follows rooms' days with subscriptions/listen
(redmark://rooms/ROOM/YYYY-MM-DD, at most 32 a stream) and gets notifications/resources/updated
when a booking there changes on any instance; over HTTP the stream is an event stream with a
keep-alive comment every --keep-alive seconds; over stdio and TCP its lines come between answers.

Limits: a message (line or POST body) holds at most 16384 bytes; a longer line gets a -32600
error without id and the connection goes on; a longer POST body gets HTTP 413 with that error.
A TCP or HTTP client that takes no bytes of an answer for 30 s (--write-timeout) is
disconnected; HTTP request headers and bodies must each arrive within 30 s, and idle keep-alive connections close after 30 s.

Connections (--max-connections per listener): over HTTP a new connection at the cap takes the
place of another (one unused for a second first, one nothing has authenticated on first;
then one of whoever holds the most), and is refused only when every connection has a request
of its principal in flight. With --tokens or --auth-issuer a connection counts
against the principal of its latest request: one principal holds at most
--max-connections-per-principal, by default half of --max-connections (a request beyond that gets 503 with Retry-After, and that connection
closes), connections no request has authenticated yet at most three quarters (32 per
address). Without either, every HTTP client is one principal and no share applies; TCP
clients are all the local user, bounded by --max-connections and --idle-timeout alone.

Keys: REDMARK_KEY (32 to 64 bytes as 64 to 128 hex digits) overrides the key file
DIR/sealing-keys; REDMARK_OLD_KEYS (comma-separated hex) keeps older keys verifying. Without
REDMARK_KEY a random key is created on first start (mode 0600); --rotate-key adds a new one and
keeps the previous ones for verifying. A key file that group or others can read is refused
(run chmod 600 on it).

Bookings: DIR/bookings.redb (redb, fsynced before a booking is acknowledged); DIR/store-id
marks a folder that holds a store. One process holds it at a time and serves the folder's
other processes on DIR/redmark.sock (Unix; mode 0600, the same user only; on Windows a second
process on DIR is refused: point the hosts at one --http server instead): a further stdio
`redmark serve` on DIR passes its messages to it, and when it exits or is killed one of them
takes over (a request in flight then gets a -32603 error: never acknowledged, safe to retry).
`redmark call` without a transport flag uses the same DIR, through the socket while a server
holds it (see its --help). Every start says on stderr which DIR it
uses; started by hand in a terminal, it also says that it speaks MCP on stdin/stdout (stdout
carries nothing else) and how to stop it. The store is checked at start: in full (redb's
checksums, every record) where redb says the last shutdown was not clean, otherwise what redb's
open reads (`redmark check` checks in full on request). A damaged store, or one missing or empty
where DIR/store-id says there was one, is refused with one line saying what to do (restore it
from a copy; --repair lets redb roll a damaged file back to its last intact commit; deleting
store-id starts afresh). A request that meets damage while serving gets a -32603 error and is
logged. --store postgres://USER:PASS@HOST/DB
(or REDMARK_STORE) keeps bookings in PostgreSQL instead, shared by any number of instances
(give them the same keys); the schema is created at start; while the database is unreachable
requests get -32603 and the instance reconnects by itself. The password is never logged.

Exit: EOF on stdin (when serving stdio), SIGINT or SIGTERM (Ctrl-C, Ctrl-Break or closing the
console on Windows): stop accepting, finish the requests in flight, exit 0.";

/// Options of `redmark serve`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct ServeArgs {
    /// Serve TCP (newline-delimited JSON-RPC, many clients) on this loopback address; repeatable
    #[arg(long, value_name = "ADDR", value_parser = socket_addr)]
    pub tcp: Vec<SocketAddr>,
    /// Serve TCP where the peer-user check is missing (not Linux): any local process that
    /// reaches the port then acts as you (on Linux the check stays on)
    #[arg(long)]
    pub tcp_any_local_user: bool,
    /// Serve Streamable HTTP (POST /mcp) on this address; repeatable (a non-loopback address
    /// needs --tokens or --auth-issuer)
    #[arg(long, value_name = "ADDR", value_parser = socket_addr)]
    pub http: Vec<SocketAddr>,
    /// Serve stdio as well when --tcp or --http is given (EOF on stdin then stops everything)
    #[arg(long)]
    pub stdio: bool,
    /// Directory of the sealing keys and the bookings [default: the platform's data directory,
    /// e.g. ~/.local/share/redmark for the floor, redmark-NAME beside it for an app named NAME];
    /// several stdio servers may share one (see Bookings below)
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// The floor of rooms, TOML `[[room]]` entries with id, name, seats, aliases, level,
    /// equipment; or a site: `[[building]]` tables (id, name, time_zone, ...) with
    /// `[[building.room]]` entries, up to 16 buildings of 512 rooms [default: the built-in
    /// floor: The Atrium, Studio B, The Nook]
    #[arg(long, value_name = "FILE")]
    pub rooms: Option<PathBuf>,
    /// HTTP bearer tokens, TOML lines `principal = "token"` (those under an `[operators]` table
    /// are the floor's operators: they cancel any booking, read every title and booking_trail);
    /// without it every HTTP client is one anonymous principal
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// AUTH (crate::auth): OAuth 2.1 resource server on --http.
    #[command(flatten)]
    pub auth: crate::auth::AuthArgs,
    /// Where bookings live: a postgres:// or postgresql:// URL (one database shared by any
    /// number of instances), or the folder of bookings.redb [default: REDMARK_STORE, else
    /// --data]
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Serve the conformance-suite fixtures instead of the booking floor
    #[arg(long)]
    pub fixtures: bool,
    /// Make a new sealing key current before serving (older keys keep verifying)
    #[arg(long)]
    pub rotate_key: bool,
    /// Run redb's repair on a damaged DIR/bookings.redb (rolling it back to its last intact
    /// commit), say what it did, then serve as usual
    #[arg(long)]
    pub repair: bool,
    /// Most connections open at once per TCP or HTTP listener (and on the data folder's socket);
    /// more are closed on accept, except that over HTTP a newcomer takes another connection's
    /// place, and with --tokens or --auth-issuer one principal holds at most
    /// --max-connections-per-principal (see Connections below)
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_connections: usize,
    /// With --tokens or --auth-issuer, most connections one principal may hold on an HTTP
    /// listener; its request on one more is answered 503 [default: half of --max-connections]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_principal: Option<u32>,
    /// Close a TCP connection that completes no message for this many seconds (0: never)
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub idle_timeout: u64,
    /// Close a TCP or HTTP connection whose client takes no bytes of an answer for this many
    /// seconds (a client that sends and never reads)
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub write_timeout: u64,
    /// Keep each room in step with the calendar collection URL/ROOM/ on this CalDAV server
    /// (two-way; see Calendars below)
    #[arg(long, value_name = "URL")]
    pub caldav: Option<String>,
    /// The file of the --caldav server's user:password (one line, not readable by others)
    #[arg(long, value_name = "FILE", requires = "caldav")]
    pub caldav_credentials: Option<PathBuf>,
    /// Send an idle subscriptions/listen stream over HTTP a keep-alive comment every this many
    /// seconds (proxies close quiet connections; the stream itself never times out)
    #[arg(long, value_name = "SECS", default_value_t = crate::transport::live::DEFAULT_KEEP_ALIVE.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub keep_alive: u64,
    /// How long a requestState (an open question) stays valid, seconds
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub state_ttl: u32,
}

/// An `--http` or `--tcp` address; a bare port is refused with the address to write instead.
fn socket_addr(s: &str) -> Result<SocketAddr, String> {
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    Err(match s.parse::<u16>() {
        Ok(port) => format!(
            "a port alone is not an address: write 127.0.0.1:{port} (loopback) or [::1]:{port}"
        ),
        Err(_) => {
            "not an address: write IP:PORT, e.g. 127.0.0.1:8080 or [::1]:8080 (no host names)"
                .to_owned()
        }
    })
}

/// A server of its own: the program's command line is `redmark serve`'s options.
#[derive(clap::Parser)]
#[command(
    version,
    about = "An MCP server on redmark's shell (the options of `redmark serve`)."
)]
struct OwnServer {
    #[command(flatten)]
    serve: ServeArgs,
}

impl ServeArgs {
    /// The options from this program's command line (exits with clap's help or error
    /// otherwise): for a server of its own built on the shell.
    pub fn from_command_line() -> ServeArgs {
        <OwnServer as clap::Parser>::parse().serve
    }
}

#[cfg(test)]
mod tests {
    use super::socket_addr;

    #[test]
    fn a_bare_port_says_which_address_to_write() {
        let e = socket_addr("8080").unwrap_err();
        assert!(e.contains("write 127.0.0.1:8080"), "{e}");
        assert!(socket_addr("localhost:8080")
            .unwrap_err()
            .contains("IP:PORT"));
        assert_eq!(
            socket_addr("127.0.0.1:8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
    }
}
