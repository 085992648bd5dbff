//! The command line of `redmark call` and `redmark tools`: their options, help texts, exit
//! statuses, and the reading of `--url` and of the tool's arguments.

use serde_json::{Map, Value};

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
--scratch runs a throwaway floor in memory instead (nothing is kept). While a redmark serve holds
the data folder, call books through it (its socket DIR/redmark.sock, Unix); a folder held by
another call that is still asking is waited for (up to --timeout, at most 30 s).

An --url server behind an identity provider (docs/oauth.md) takes an access token: --token TOKEN,
REDMARK_TOKEN, --token-command CMD (the first line it prints), or --client-id ID with
--client-secret or REDMARK_CLIENT_SECRET (the client-credentials grant, from the authorization
server the server's metadata names; --scope to ask for less than every scope it lists).

Arguments are KEY=VALUE; VALUE is read as JSON when it parses as JSON (hour=9 is a number,
notify=true a boolean, tags='[\"a\"]' an array) and as a string otherwise (day=2099-09-17,
room_hint=\"the big room\"). To force a string that looks like JSON, quote it as JSON inside
shell quotes: booking_id='\"3\"' is the string \"3\" (booking_id=3 is the number 3). When the
tool refuses a value that reads both ways (start=9 where it wants text, hour=09 where it wants a
number), the pairs are typed by the tool's schema and the call is made once more. --arguments
JSON gives the whole object; KEY=VALUE pairs override it. A tool the server does not have is answered with the names close to it.

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
  1  tool error          the tool reported an error (isError: true; its text is printed)
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
    /// Spawn an MCP server and talk newline-delimited JSON over its stdin/stdout (the command
    /// line runs through `sh -c`; on Windows `cmd.exe /C`).
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
    /// With --url: run this command (`sh -c`; on Windows `cmd.exe /C`) and send the first line
    /// it prints as the token
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
    /// The in-process server's floor from TOML, as `redmark serve --rooms` (its rooms, time
    /// zone, grid; or a site's buildings) [default: the built-in floor]
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stdio", "tcp", "url"])]
    pub rooms: Option<std::path::PathBuf>,
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

/// Whether a KEY=VALUE value reads two ways: as JSON (`9`, `true`) or as a number written
/// the way people do (`09`), where the tool's schema may want text.
pub fn reads_two_ways(v: &str) -> bool {
    serde_json::from_str::<Value>(v).is_ok_and(|j| !j.is_string() && !j.is_object())
        || (v.len() > 1 && v.starts_with('0') && v.bytes().all(|b| b.is_ascii_digit()))
}

/// `v` as the schema's `type` wants it: text for a string, `09` as 9 for an integer, else
/// as [`parse_arguments`] reads it.
pub fn typed(v: &str, ty: &Value) -> Value {
    match ty.as_str() {
        Some("string") => Value::String(v.to_owned()),
        Some("integer") => v
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(v.to_owned())),
        _ => serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned())),
    }
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
    fn values_that_read_two_ways_follow_the_schema() {
        assert!(reads_two_ways("9") && reads_two_ways("09") && reads_two_ways("true"));
        assert!(!reads_two_ways("9:30") && !reads_two_ways("2026-09-17") && !reads_two_ways("x"));
        assert_eq!(typed("9", &json!("string")), json!("9"));
        assert_eq!(typed("09", &json!("integer")), json!(9));
        assert_eq!(typed("nine", &json!("integer")), json!("nine"));
        assert_eq!(typed("9", &Value::Null), json!(9));
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
}
