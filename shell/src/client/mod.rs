//! `redmark call` and `redmark tools`: the client side of the red mark.
//!
//! `call` sends `tools/call`, and when the server answers `input_required` it answers every
//! question (from the command line or a form in the terminal) and calls again with a new id,
//! the same arguments, the `inputResponses` and the `requestState` echoed byte for byte —
//! against any 2026-07-28 server: in-process (default: the booking floor on the data folder of
//! `redmark serve`, or in memory with `--scratch`), `--stdio`, `--tcp` or `--url`. A stream
//! server that does not understand the first 2026-07-28 call may be a 2025-11-25 one: this file
//! then hands the call to `legacy` (spec §7).
//!
//! The rooms: `args` (the command line), `mrtr` (requests and the MRTR loop), `answer`,
//! `prompt` and `form` (who answers a question, the terminal form, its schema), `transport`
//! (2026-07-28 only: in-process, lines, HTTP), `legacy` (the 2025-11-25 session on top of the
//! stream transports), `trace` (`--trace`). None of them imports from this file.

mod answer;
mod args;
mod form;
mod grant;
mod legacy;
mod mrtr;
mod prompt;
mod shell;
mod suggest;
mod token;
mod trace;
mod transport;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value};

pub use args::{CallArgs, ToolsArgs};

use answer::{Answers, Presets};
use args::{exit, parse_arguments, ServerArgs};
use legacy::{Bridge, HttpSessions};
use mrtr::{Attempt, Called, Failure, Outcome, Session};
use redmark_core::booking::{Floor, DEFAULT_SITE};
use redmark_core::engine::Config;
use trace::{set_tracing, tracing};
use transport::http::Http;
use transport::in_process::InProcess;
use transport::lines::Lines;
use transport::{Transport, TransportError, PROTOCOL_VERSION};

use crate::serve;

/// Prints a line on stdout; a closed stdout (`| head`) ends the output quietly, not in a panic.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// The server in this process when no transport flag is given, and its floor.
enum Local<'a> {
    /// The booking floor on a data folder (`--data`, or the default one of `redmark serve`).
    Data(Option<&'a Path>, &'static [Floor<'static>]),
    /// A floor in memory.
    Scratch(&'static [Floor<'static>]),
}

/// The server `connect` reached.
enum Server {
    /// One in this process: it speaks 2026-07-28.
    Here(Box<dyn Transport>),
    /// One over a stream (`--stdio`, `--tcp`, `--url`): it may turn out to speak 2025-11-25.
    There(Box<dyn Bridge>),
}

impl Server {
    /// The 2026-07-28 transport to it.
    fn transport(&mut self) -> &mut dyn Transport {
        match self {
            Server::Here(t) => t.as_mut(),
            Server::There(b) => b.as_mut(),
        }
    }
}

fn connect(s: &ServerArgs, local: Local<'_>) -> Result<Server, Failure> {
    set_tracing(s.trace);
    let timeout = Duration::from_secs(s.timeout.max(1));
    Ok(match (&s.stdio, &s.tcp, &s.url) {
        (Some(cmd), _, _) => Server::There(Box::new(Lines::spawn(cmd, timeout)?)),
        (_, Some(addr), _) => Server::There(Box::new(Lines::connect(addr, timeout)?)),
        (_, _, Some(url)) => Server::There(Box::new(HttpSessions::over(
            Http::new(url, timeout)?.with_bearer(token::bearer(s, url)?),
        ))),
        _ => match local {
            Local::Scratch(floor) => Server::Here(Box::new(InProcess::scratch(floor)?)),
            Local::Data(dir, floor) => Server::Here(on_data(dir, floor, timeout)?),
        },
    })
}

/// Calls the tool; a first request not understood as 2026-07-28 sends a stream transport's
/// call to a 2025-11-25 session instead (spec §7), when the server speaks that.
fn call(
    server: &mut Server,
    tool: &str,
    arguments: &Map<String, Value>,
    answerer: &mut Answers,
    max_rounds: usize,
) -> Result<Called, Failure> {
    let mut session = Session::new(server.transport());
    let attempt = session.call_tool(tool, arguments, answerer, max_rounds)?;
    let next_id = session.next_id();
    match attempt {
        Attempt::Done(called) => Ok(called),
        Attempt::NotUnderstood(first) => match server {
            Server::There(bridge) => {
                match legacy::call(bridge.as_mut(), next_id, tool, arguments, answerer)? {
                    Some(called) => Ok(called),
                    None => first.into_final(),
                }
            }
            Server::Here(_) => first.into_final(),
        },
    }
}

/// The booking floor on a data folder: in this process, set up exactly as `redmark serve`
/// does, or (FOLDER, crate::folder) through the process that holds the folder's store, waiting
/// at most `timeout` (and [`crate::folder::REACH_WAIT`]) for it.
fn on_data(
    dir: Option<&Path>,
    floor: &'static [Floor<'static>],
    timeout: Duration,
) -> Result<Box<dyn Transport>, Failure> {
    crate::fault::panics::install_hook();
    let io = |m: String| Failure::Transport(TransportError::Io(m));
    let dir = serve::data_dir(dir).map_err(io)?;
    let wait = timeout.min(crate::folder::REACH_WAIT);
    let store = match crate::folder::reach_blocking(&dir, wait) {
        Ok(crate::folder::Reached::Owner(store)) => store,
        Ok(crate::folder::Reached::Relay(sock)) => {
            if tracing() {
                eprintln!(
                    "(through the redmark process serving {}, on {})",
                    dir.display(),
                    crate::folder::socket_path(&dir).display()
                );
            }
            return Ok(Box::new(Lines::over_socket(sock, timeout)?));
        }
        Err(e) if crate::folder::is_in_use(&e) => {
            return Err(io(format!(
                "{e}\n  reach a server with --tcp HOST:PORT or --url http://HOST:PORT/mcp if it \
                 listens on one, or stop it; --scratch runs a throwaway floor, --data DIR \
                 another folder"
            )))
        }
        Err(e) => return Err(io(e)),
    };
    let data = serve::open_keys(dir, false).map_err(io)?;
    let store = crate::store::redb::RedbBookings::new(store);
    let host = serve::booking_host(floor, store, data.ring, Config::default());
    if tracing() {
        eprintln!("(in-process server on {})", data.dir.display());
    }
    Ok(Box::new(InProcess::new(&host).map_err(Failure::Transport)?))
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

/// Whether a tool error refuses an argument given as a KEY=VALUE pair that reads two ways.
fn mistyped(result: &Value, pairs: &[String]) -> bool {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    result["isError"] == true
        && pairs
            .iter()
            .filter_map(|p| p.split_once('='))
            .any(|(k, v)| {
                args::reads_two_ways(v) && text.starts_with(&format!("Invalid argument '{k}'"))
            })
}

/// `arguments` with each KEY=VALUE pair that reads two ways (`start=9`, `hour=09`) typed as
/// the tool's schema says (one tools/list).
fn retyped(
    server: &mut Server,
    tool: &str,
    mut arguments: Map<String, Value>,
    pairs: &[String],
) -> Map<String, Value> {
    let two_ways: Vec<(&str, &str)> = pairs
        .iter()
        .filter_map(|p| p.split_once('='))
        .filter(|(_, v)| args::reads_two_ways(v))
        .collect();
    if two_ways.is_empty() {
        return arguments;
    }
    let Some(types) = suggest::argument_types(server.transport(), tool) else {
        return arguments;
    };
    for (k, v) in two_ways {
        if let Some(ty) = types.get(k) {
            arguments.insert(k.to_owned(), args::typed(v, ty));
        }
    }
    arguments
}

/// Whether a tool result has text content (printed as the result).
fn has_text(result: &Value) -> bool {
    result
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|b| b.get("text").is_some()))
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
    let floor = match args.rooms.as_deref().map(serve::config::load_rooms) {
        None => DEFAULT_SITE,
        Some(Ok(floor)) => floor,
        Some(Err(e)) => return fail(Failure::Usage(e)),
    };
    let local = if args.scratch {
        Local::Scratch(floor)
    } else {
        Local::Data(args.data.as_deref(), floor)
    };
    // Kept until the end: a stdio server is stopped and an HTTP session ended after printing.
    let mut server = match connect(&args.server, local) {
        Ok(s) => s,
        Err(f) => return fail(f),
    };
    let mut called = call(
        &mut server,
        &args.tool,
        &arguments,
        &mut answerer,
        args.max_rounds,
    );
    // A KEY=VALUE pair read the other way than the tool's schema wants (`start=9` sent as a
    // number): type the pairs by the schema and call once more; the refusal changed nothing.
    if let Ok(Called {
        outcome: Outcome::Complete(result),
        ..
    }) = &called
    {
        if mistyped(result, &args.args) {
            let again = retyped(&mut server, &args.tool, arguments.clone(), &args.args);
            if again != arguments {
                called = call(
                    &mut server,
                    &args.tool,
                    &again,
                    &mut answerer,
                    args.max_rounds,
                );
            }
        }
    }
    for w in answerer.unused() {
        eprintln!("redmark: warning: {w}");
    }
    if let (Ok(_), Some(w)) = (&called, answerer.refused_here_only()) {
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
            let hint = suggest::is_unknown_tool(&e)
                .then(|| suggest::did_you_mean(server.transport(), &args.tool))
                .flatten()
                .map(|h| format!(" — {h}"))
                .unwrap_or_default();
            eprintln!("redmark: {}{hint}", describe_error(&e));
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
                // The tool's own words are the one line; exit status 1 says it was an error.
                if !args.json && !has_text(&result) {
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
    let mut server = match connect(&args.server, Local::Scratch(DEFAULT_SITE)) {
        Ok(s) => s,
        Err(f) => return fail(f),
    };
    let mut session = Session::new(server.transport());
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

    #[test]
    fn a_data_folder_held_without_a_socket_is_named_with_a_way_out() {
        let dir = std::env::temp_dir().join(format!("redmark-inuse-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let short = Duration::from_millis(100);
        let held = on_data(Some(&dir), DEFAULT_SITE, short).unwrap();
        let Err(Failure::Transport(e)) = on_data(Some(&dir), DEFAULT_SITE, short) else {
            panic!("a second open of one data folder succeeded")
        };
        let e = e.to_string();
        assert!(e.contains(" is in use "), "{e}");
        assert!(e.contains("redmark call") && e.contains("--scratch"), "{e}");
        drop(held);
        assert!(
            on_data(Some(&dir), DEFAULT_SITE, short).is_ok(),
            "free again once closed"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
