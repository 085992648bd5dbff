//! `redmark call` and `redmark tools`: the client side of the red mark.
//!
//! `call` sends `tools/call`, and when the server answers `input_required` it answers every
//! question (from the command line or a form in the terminal) and calls again with a new id,
//! the same arguments, the `inputResponses` and the `requestState` echoed byte for byte —
//! against any 2026-07-28 server: in-process (default: the booking floor on the data folder of
//! `redmark serve`, or in memory with `--scratch`), `--stdio`, `--tcp` or `--url`.

mod answer;
mod form;
mod legacy;
mod mrtr;
mod token;
mod transport;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};

use answer::{Answers, Presets};
use mrtr::{Failure, Outcome, Session};
use redmark_core::booking::DEFAULT_FLOOR;
use redmark_core::engine::Config;
use transport::{Http, InProcess, Lines, Transport, TransportError};

use crate::serve;

/// Prints a line on stdout; a closed stdout (`| head`) ends the output quietly, not in a panic.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// The protocol revision this client speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// Exit statuses of `redmark call` (also in its `--help`).
pub mod exit {
    /// The tool completed.
    pub const COMPLETE: u8 = 0;
    /// The tool reported an error (`isError: true`).
    pub const TOOL_ERROR: u8 = 1;
    /// Bad command line (clap uses 2 as well).
    pub const USAGE: u8 = 2;
    /// A question was declined.
    pub const DECLINED: u8 = 3;
    /// A question was cancelled.
    pub const CANCELLED: u8 = 4;
    /// The server answered with a JSON-RPC error or broke the protocol.
    pub const PROTOCOL: u8 = 5;
    /// The server could not be reached, or did not answer in time.
    pub const TRANSPORT: u8 = 6;
    /// A question needs an answer, and there is no terminal and no flag giving one.
    pub const NEED_INPUT: u8 = 7;
}

const CALL_HELP: &str = "\
Server: --stdio CMD, --tcp HOST:PORT or --url http://HOST:PORT/mcp name one. Without them, call
runs the booking floor in this process on the data folder of `redmark serve` (--data DIR, by
default the platform's data directory, e.g. ~/.local/share/redmark): the same sealing keys and
the same bookings.redb, so a booking made here is there for the next call and for redmark serve.
--scratch runs a throwaway floor in memory instead (nothing is kept). Only one process at a time
can hold a data folder: while a redmark serve runs on it, reach that server with --tcp or --url
(or stop it, or use --scratch or another --data).

An --url server behind an identity provider (docs/oauth.md) takes an access token: --token TOKEN,
REDMARK_TOKEN, --token-command CMD (the first line it prints), or --client-id ID with
--client-secret or REDMARK_CLIENT_SECRET (the client-credentials grant, from the authorization
server the server's metadata names; --scope to ask for less than every scope it lists).

Arguments are KEY=VALUE; VALUE is read as JSON when it parses as JSON (hour=9 is a number,
notify=true a boolean, tags='[\"a\"]' an array) and as a string otherwise (day=2099-09-17,
room_hint=\"the big room\"). --arguments JSON gives the whole object; KEY=VALUE pairs override it.

Questions (input requests) are answered in the terminal: first \"Answer it? (Y/n)\", one key:
y or Enter fills in the form, n declines, Esc or Ctrl-C cancels; then a form with arrow keys for
choices, checks at each field before anything is sent. Without a terminal, or with --no-input,
answer them on the command line:
  --answer room.room_id=studio-b   field room_id of question 'room' (defaults fill the rest)
  --accept KEY                     accept question KEY with its defaults (every required field
                                   needs a default or an --answer)
  --decline KEY / --cancel KEY     decline or cancel question KEY
An --answer, --accept, --decline or --cancel that matches no question asked is reported on
stderr with the questions that were asked.

Exit status:
  0  complete            the tool completed
  1  tool error          the tool reported an error (isError: true)
  2  usage               bad command line
  3  declined            a question was declined (the server's final answer is still printed)
  4  cancelled           a question was cancelled (likewise)
  5  protocol error      JSON-RPC error response, malformed or unexpected message, an input
                         request this client did not declare, or too many rounds
  6  transport error     cannot start or reach the server (or open the data folder), or no
                         answer in time
  7  input needed        a question with no terminal and no --answer/--accept/--decline/--cancel

Examples:
  redmark call book_room day=2099-09-17 hour=9 room_hint=\"the big room\"
  redmark call --trace --answer room.room_id=studio-b book_room day=2099-09-17 hour=9 room_hint=\"the big room\"
  redmark call cancel_booking booking_id=bk_1
  redmark call --scratch list_rooms
  redmark call --stdio 'redmark serve' list_rooms
  redmark call --url http://127.0.0.1:8080/mcp --json list_rooms";

const TOOLS_HELP: &str = "\
Server: --stdio CMD, --tcp HOST:PORT or --url http://HOST:PORT/mcp name one; without them, the
tools of the built-in booking floor are listed from this process (nothing is opened or stored).

Exit status:
  0  listed
  2  usage               bad command line
  5  protocol error      JSON-RPC error response or a malformed message
  6  transport error     cannot start or reach the server, or no answer in time

Examples:
  redmark tools
  redmark tools --url http://127.0.0.1:8080/mcp --json";

/// Which server to talk to (none of --stdio, --tcp, --url: one in this process).
#[derive(clap::Args, Debug)]
pub struct ServerArgs {
    /// Spawn an MCP server and talk newline-delimited JSON over its stdin/stdout (run with `sh -c`).
    #[arg(long, value_name = "CMD", conflicts_with_all = ["tcp", "url"])]
    pub stdio: Option<String>,
    /// Talk newline-delimited JSON over TCP.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "url")]
    pub tcp: Option<String>,
    /// Talk Streamable HTTP (2026-07-28) to this MCP endpoint, e.g. http://127.0.0.1:8080/mcp
    /// (https:// too).
    #[arg(long, value_name = "URL", value_parser = parse_url)]
    pub url: Option<String>,
    /// Seconds to wait for each response (not for you: forms wait as long as you like).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub timeout: u64,
    /// Print every wire message to stderr (→ sent, ← received).
    #[arg(long)]
    pub trace: bool,
    /// With --url: send this OAuth access token (Authorization: Bearer) [default:
    /// REDMARK_TOKEN]
    #[arg(long, value_name = "TOKEN", requires = "url", conflicts_with_all = ["token_command", "client_id"])]
    pub token: Option<String>,
    /// With --url: run this command (sh -c) and send the first line it prints as the token
    #[arg(
        long,
        value_name = "CMD",
        requires = "url",
        conflicts_with = "client_id"
    )]
    pub token_command: Option<String>,
    /// With --url: get a token by the client-credentials grant, as this client, from the
    /// authorization server the server's metadata names (docs/oauth.md)
    #[arg(long, value_name = "ID", requires = "url")]
    pub client_id: Option<String>,
    /// The secret of --client-id [default: REDMARK_CLIENT_SECRET]
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    pub client_secret: Option<String>,
    /// Scopes to ask for with --client-id (space-separated) [default: those the server lists]
    #[arg(long, value_name = "SCOPES", requires = "client_id")]
    pub scope: Option<String>,
}

/// Options of `redmark call`.
#[derive(clap::Args, Debug)]
#[command(after_help = CALL_HELP)]
pub struct CallArgs {
    /// The tool to call.
    pub tool: String,
    /// Tool arguments, KEY=VALUE (VALUE as JSON when it parses, else a string).
    #[arg(value_name = "KEY=VALUE")]
    pub args: Vec<String>,
    /// The whole arguments object as JSON.
    #[arg(long, value_name = "JSON")]
    pub arguments: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Data folder of the in-process server: keys and bookings, as `redmark serve --data`
    /// [default: the platform's data directory, e.g. ~/.local/share/redmark]
    #[arg(long, value_name = "DIR", conflicts_with_all = ["stdio", "tcp", "url", "scratch"])]
    pub data: Option<std::path::PathBuf>,
    /// Run a throwaway in-process floor in memory (nothing is read or kept)
    #[arg(long, conflicts_with_all = ["stdio", "tcp", "url"])]
    pub scratch: bool,
    /// Answer field FIELD of question KEY (repeatable); FIELD=VALUE answers the one question
    /// that asks for FIELD (e.g. a question a 2025-11-25 server pushes; those are named q1, q2…)
    #[arg(long = "answer", value_name = "[KEY.]FIELD=VALUE")]
    pub answer: Vec<String>,
    /// Accept question KEY with its defaults (repeatable).
    #[arg(long = "accept", value_name = "KEY")]
    pub accept: Vec<String>,
    /// Decline question KEY (repeatable).
    #[arg(long = "decline", value_name = "KEY")]
    pub decline: Vec<String>,
    /// Cancel question KEY (repeatable).
    #[arg(long = "cancel", value_name = "KEY")]
    pub cancel: Vec<String>,
    /// Never show a form, even in a terminal.
    #[arg(long)]
    pub no_input: bool,
    /// Print the final result (or error) as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Most tools/call requests for one call before giving up (at least 1).
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_rounds: usize,
}

/// Options of `redmark tools`.
#[derive(clap::Args, Debug)]
#[command(after_help = TOOLS_HELP)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print the tools as a JSON array on stdout.
    #[arg(long)]
    pub json: bool,
}

static TRACE: AtomicBool = AtomicBool::new(false);

/// Whether `--trace` is on.
pub(crate) fn tracing() -> bool {
    TRACE.load(Ordering::Relaxed)
}

/// Prints one wire message under `--trace`.
pub(crate) fn trace(dir: &str, msg: &str) {
    if tracing() {
        use std::io::Write as _;
        // One write under the lock: the server's forwarded stderr never lands inside a message.
        let _ = std::io::stderr()
            .lock()
            .write_all(format!("{dir} {msg}\n").as_bytes());
    }
}

/// `--url`: an `http://` or `https://` URL (a missing scheme gets a suggestion).
fn parse_url(url: &str) -> Result<String, String> {
    match url.split_once("://") {
        Some(("http" | "https", _)) => Ok(url.to_owned()),
        Some((scheme, _)) => Err(format!(
            "only http:// and https:// URLs are supported ({scheme}:// is not)"
        )),
        None => Err(format!("no scheme; did you mean http://{url}?")),
    }
}

/// The server in this process when no transport flag is given.
enum Local<'a> {
    /// The booking floor on a data folder (`--data`, or the default one of `redmark serve`).
    Data(Option<&'a Path>),
    /// The default floor in memory.
    Scratch,
}

fn connect(s: &ServerArgs, local: Local<'_>) -> Result<Box<dyn Transport>, Failure> {
    TRACE.store(s.trace, Ordering::Relaxed);
    let timeout = Duration::from_secs(s.timeout.max(1));
    let t: Box<dyn Transport> = match (&s.stdio, &s.tcp, &s.url) {
        (Some(cmd), _, _) => Box::new(Lines::spawn(cmd, timeout)?),
        (_, Some(addr), _) => Box::new(Lines::connect(addr, timeout)?),
        (_, _, Some(url)) => Box::new(Http::new(url, timeout)?.with_bearer(token::bearer(s, url)?)),
        _ => match local {
            Local::Scratch => Box::new(InProcess::scratch()?),
            Local::Data(dir) => Box::new(on_data(dir)?),
        },
    };
    Ok(t)
}

/// The booking floor in this process on a data folder, set up exactly as `redmark serve` does.
fn on_data(dir: Option<&Path>) -> Result<InProcess<impl crate::host::Hosted>, Failure> {
    crate::host::panics::install_hook();
    let io = |m: String| Failure::Transport(TransportError::Io(m));
    let dir = serve::data_dir(dir).map_err(io)?;
    let store = serve::open_store(&dir, false).map_err(|e| {
        if e.contains(" is in use ") {
            io(format!(
                "{e}\n  a running `redmark serve` (or another `redmark call` still asking) holds \
                     this data folder: reach that server with --tcp HOST:PORT or --url \
                     http://HOST:PORT/mcp if it listens on one, or stop it; --scratch runs a \
                     throwaway floor, --data DIR another folder"
            ))
        } else {
            io(e)
        }
    })?;
    let data = serve::open_keys(dir, false).map_err(io)?;
    let host = serve::booking_host(DEFAULT_FLOOR, store, data.ring, Config::default());
    if tracing() {
        eprintln!("(in-process server on {})", data.dir.display());
    }
    Ok(InProcess::new(&host))
}

/// Reads `--arguments` and KEY=VALUE pairs into the arguments object.
pub fn parse_arguments(
    whole: Option<&str>,
    pairs: &[String],
) -> Result<Map<String, Value>, String> {
    let mut args = match whole {
        None => Map::new(),
        Some(j) => match serde_json::from_str(j) {
            Ok(Value::Object(m)) => m,
            _ => return Err(format!("--arguments '{j}' is not a JSON object")),
        },
    };
    for p in pairs {
        let Some((k, v)) = p.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err(format!("argument '{p}': expected KEY=VALUE, e.g. hour=9"));
        };
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()));
        args.insert(k.to_owned(), value);
    }
    Ok(args)
}

fn fail(f: Failure) -> ExitCode {
    let (code, msg) = match f {
        Failure::Protocol(m) => (exit::PROTOCOL, format!("protocol error: {m}")),
        Failure::Transport(e) => (exit::TRANSPORT, format!("transport error: {e}")),
        Failure::NeedInput(m) => (exit::NEED_INPUT, m),
        Failure::Usage(m) => (exit::USAGE, m),
        Failure::TooManyRounds(n, keys) => (
            exit::PROTOCOL,
            format!(
                "protocol error: the server still asks ({}) after {n} rounds; giving up (raise --max-rounds?)",
                keys.join(", ")
            ),
        ),
    };
    eprintln!("redmark: {msg}");
    ExitCode::from(code)
}

/// Explains a JSON-RPC error in a sentence.
fn describe_error(e: &Value) -> String {
    let code = e.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    let data = e.get("data");
    let hint = match code {
        -32021 => format!(
            " — the server needs client capabilities this client does not have: {}",
            data.and_then(|d| d.get("requiredCapabilities"))
                .map(Value::to_string)
                .unwrap_or_default()
        ),
        -32022 => format!(
            " — this client speaks {PROTOCOL_VERSION}; the server supports {}",
            data.and_then(|d| d.get("supported"))
                .map(Value::to_string)
                .unwrap_or_default()
        ),
        -32601 => " — the server does not know this method".to_owned(),
        _ => String::new(),
    };
    format!("server error {code}: {message}{hint}")
}

/// Prints a CallToolResult's content for a person.
fn print_result(result: &Value) {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut printed = false;
    for b in blocks {
        let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "text" => out!("{}", b.get("text").and_then(Value::as_str).unwrap_or("")),
            "image" | "audio" => {
                let mime = b.get("mimeType").and_then(Value::as_str).unwrap_or("?");
                let len = b.get("data").and_then(Value::as_str).map_or(0, str::len);
                out!("[{ty} {mime}, {len} base64 characters]");
            }
            "resource_link" => out!(
                "[link {}]",
                b.get("uri").and_then(Value::as_str).unwrap_or("")
            ),
            "resource" => {
                let r = b.get("resource").cloned().unwrap_or(Value::Null);
                out!(
                    "[resource {}]",
                    r.get("uri").and_then(Value::as_str).unwrap_or("")
                );
                if let Some(t) = r.get("text").and_then(Value::as_str) {
                    out!("{t}");
                }
            }
            _ => out!("{b}"),
        }
        printed = true;
    }
    if !printed {
        if let Some(s) = result.get("structuredContent") {
            out!("{}", serde_json::to_string_pretty(s).unwrap_or_default());
        }
    }
}

/// Runs `redmark call`.
pub fn run_call(args: CallArgs) -> ExitCode {
    let arguments = match parse_arguments(args.arguments.as_deref(), &args.args) {
        Ok(a) => a,
        Err(m) => return fail(Failure::Usage(m)),
    };
    let answers = match Presets::parse_answers(&args.answer) {
        Ok(a) => a,
        Err(m) => return fail(Failure::Usage(m)),
    };
    let presets = Presets {
        answers,
        accept: args.accept,
        decline: args.decline,
        cancel: args.cancel,
    };
    let interactive =
        !args.no_input && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut answerer = Answers::new(presets, interactive);
    let local = if args.scratch {
        Local::Scratch
    } else {
        Local::Data(args.data.as_deref())
    };
    let transport = match connect(&args.server, local) {
        Ok(t) => t,
        Err(f) => return fail(f),
    };
    let mut session = Session::new(transport);
    let called = session.call_tool(&args.tool, &arguments, &mut answerer, args.max_rounds);
    for w in answerer.unused() {
        eprintln!("redmark: warning: {w}");
    }
    let called = match called {
        Ok(c) => c,
        Err(f) => return fail(f),
    };
    if tracing() {
        eprintln!(
            "({} tools/call request{})",
            called.rounds,
            if called.rounds == 1 { "" } else { "s" }
        );
    }
    match called.outcome {
        Outcome::Error(e) => {
            if args.json {
                out!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({ "error": e }))
                        .unwrap_or_default()
                );
            }
            eprintln!("redmark: {}", describe_error(&e));
            ExitCode::from(exit::PROTOCOL)
        }
        Outcome::Complete(result) => {
            let is_error = result
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if args.json {
                out!(
                    "{}",
                    serde_json::to_string_pretty(&result).unwrap_or_default()
                );
            } else {
                print_result(&result);
            }
            if called.cancelled {
                ExitCode::from(exit::CANCELLED)
            } else if called.declined {
                ExitCode::from(exit::DECLINED)
            } else if is_error {
                if !args.json {
                    eprintln!("redmark: the tool reported an error");
                }
                ExitCode::from(exit::TOOL_ERROR)
            } else {
                ExitCode::from(exit::COMPLETE)
            }
        }
    }
}

/// Runs `redmark tools`.
pub fn run_tools(args: ToolsArgs) -> ExitCode {
    // tools/list reads no bookings: the built-in floor in memory lists the same tools without
    // creating or locking a data folder.
    let transport = match connect(&args.server, Local::Scratch) {
        Ok(t) => t,
        Err(f) => return fail(f),
    };
    let mut session = Session::new(transport);
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut server = None;
    for _ in 0..100 {
        let mut extra = Map::new();
        if let Some(c) = cursor.take() {
            extra.insert("cursor".into(), c);
        }
        let resp = match session.request("tools/list", extra) {
            Ok(r) => r,
            Err(f) => return fail(f),
        };
        if let Some(e) = resp.msg.get("error") {
            eprintln!("redmark: {}", describe_error(e));
            return ExitCode::from(exit::PROTOCOL);
        }
        let result = resp.msg.get("result").cloned().unwrap_or(Value::Null);
        let Some(page) = result.get("tools").and_then(Value::as_array) else {
            return fail(Failure::Protocol(
                "tools/list result has no tools array".into(),
            ));
        };
        tools.extend(page.iter().cloned());
        server = server.or_else(|| {
            result
                .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
                .cloned()
        });
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    if args.json {
        out!(
            "{}",
            serde_json::to_string_pretty(&Value::Array(tools)).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    if let Some(s) = server {
        let name = s.get("name").and_then(Value::as_str).unwrap_or("?");
        let version = s.get("version").and_then(Value::as_str).unwrap_or("?");
        out!("server: {name} {version}\n");
    }
    for t in &tools {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
        match t.get("title").and_then(Value::as_str) {
            Some(title) => out!("{name} — {title}"),
            None => out!("{name}"),
        }
        if let Some(d) = t.get("description").and_then(Value::as_str) {
            out!("  {d}");
        }
        if let Some(schema) = t.get("inputSchema") {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (p, s) in props {
                    let ty = s
                        .get("type")
                        .map(|t| t.as_str().map_or(t.to_string(), str::to_owned))
                        .unwrap_or_default();
                    let req = if required.contains(&p.as_str()) {
                        " (required)"
                    } else {
                        ""
                    };
                    let desc = s.get("description").and_then(Value::as_str).unwrap_or("");
                    out!("    {p}: {ty}{req}  {desc}");
                }
            }
            out!("  inputSchema: {schema}");
        }
        out!();
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_value_arguments() {
        let pairs = [
            "day=2026-09-17",
            "hour=9",
            "room_hint=the big room",
            "x=true",
            "n=null",
            "e=",
        ]
        .map(str::to_owned);
        let a = parse_arguments(Some(r#"{"hour": 8, "attendees": 3}"#), &pairs).unwrap();
        assert_eq!(
            Value::Object(a),
            json!({"hour": 9, "attendees": 3, "day": "2026-09-17", "room_hint": "the big room", "x": true, "n": null, "e": ""})
        );
        assert!(parse_arguments(None, &["nokey".into()]).is_err());
        assert!(parse_arguments(Some("[1]"), &[]).is_err());
    }

    #[test]
    fn urls_need_the_http_scheme() {
        assert_eq!(
            parse_url("http://127.0.0.1:8080/mcp").unwrap(),
            "http://127.0.0.1:8080/mcp"
        );
        let e = parse_url("127.0.0.1:8080/mcp").unwrap_err();
        assert!(e.contains("did you mean http://127.0.0.1:8080/mcp?"), "{e}");
        assert!(parse_url("https://example.com/mcp").is_ok());
        assert!(parse_url("ftp://example.com/mcp")
            .unwrap_err()
            .contains("only http:// and https://"));
    }

    #[test]
    fn a_data_folder_in_use_is_named_with_a_way_out() {
        let dir = std::env::temp_dir().join(format!("redmark-inuse-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let held = on_data(Some(&dir)).unwrap();
        let Err(Failure::Transport(e)) = on_data(Some(&dir)) else {
            panic!("a second open of one data folder succeeded")
        };
        let e = e.to_string();
        assert!(e.contains(" is in use "), "{e}");
        assert!(
            e.contains("redmark serve") && e.contains("--scratch"),
            "{e}"
        );
        drop(held);
        assert!(on_data(Some(&dir)).is_ok(), "free again once closed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
