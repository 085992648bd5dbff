//! Your first tool that asks: `set_temperature` takes the degrees as a typed argument, asks
//! the user how the fan should run (a form with one select), and sets both once answered.
//! Every schema comes from the types; nothing is allocated. `main` drives it through the
//! engine: the call, the question, the answer. It builds bare-metal too (no `main` there).
#![cfg_attr(target_os = "none", no_std)]
#![forbid(unsafe_code)]
#![allow(missing_docs)]

use redmark_core::engine::{App, Call, CallError, Done, Msg, Reply, ServerInfo, ToolEntry};
use redmark_core::typed::{Args, Choices, Elicited, Question, Round, Tools};
use redmark_core::{complete, fail};

/// The app's tools: one declaration each, from which `tools/list` is written.
#[derive(Clone, Copy, Tools)]
pub enum Tool {
    /// Sets the room's temperature, once the user has said how the fan should run.
    #[tool(name = "set_temperature", title = "Set the temperature", args = SetArgs)]
    #[tool(idempotent)]
    SetTemperature,
}

/// The arguments: the schema, its checks and the typed read all come from here.
#[derive(Args)]
pub struct SetArgs {
    /// Degrees Celsius
    #[arg(min = 16, max = 28)]
    degrees: u8,
}

/// The options of a select: values and titles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Choices)]
pub enum Fan {
    /// Quiet
    Low,
    /// Fast: there sooner
    High,
    /// Let the thermostat decide
    Auto,
}

/// The question: its form, the checks of an answer (and the red mark), and the decode.
#[derive(Question)]
#[question(key = "fan")]
pub struct AskFan {
    /// How the fan runs until the room is there
    #[field(title = "Fan", default = Fan::Auto)]
    fan: Fan,
}

/// A thermostat hosting the tool.
pub struct Thermostat {
    pub degrees: u8,
    pub fan: Fan,
    pub info: ServerInfo,
}

impl App for Thermostat {
    type Tool = Tool;
    fn info(&self) -> ServerInfo {
        self.info
    }
    fn tools(&self) -> &[ToolEntry<Tool>] {
        Tool::TOOLS
    }
    async fn call_tool(
        &mut self,
        _: Tool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        let mut scratch = [0; SetArgs::SCRATCH];
        let degrees = match call.read_args::<SetArgs>(&mut scratch) {
            Ok(SetArgs { degrees }) => degrees,
            Err(e) => return fail!(reply, "{e}"),
        };
        let ask = Msg(format_args!("Set {degrees} °C: how should the fan run?"));
        match reply.question::<AskFan>(call, &ask, &[])? {
            Round::Asked(done) => Ok(done), // the question went out; the answer comes back
            Round::Answered(Elicited::Accepted(AskFan { fan }), r) => {
                (self.degrees, self.fan) = (degrees, fan);
                complete!(r, "Set to {degrees} °C, fan {}.", fan.value())
            }
            Round::Answered(_, r) => complete!(r, "Nothing changed."), // declined or cancelled
        }
    }
}

/// The tool through the engine, as a client would call it (the crate docs' test runs it).
#[cfg(not(target_os = "none"))]
#[allow(dead_code)] // built as a library
fn main() {
    use redmark_core::engine::Config;
    use redmark_core::seal::{Key, KeyRing};
    use redmark_core::wire::json::parse;
    use redmark_core::{Context, Engine};

    let info = ServerInfo {
        name: "thermostat",
        version: "1",
        instructions: None,
    };
    let app = Thermostat {
        degrees: 20,
        fan: Fan::Auto,
        info,
    };
    let keys = KeyRing::new(Key::new(1, &[7; 32]).expect("a 32-byte key"));
    let mut engine = Engine::new(app, keys, Config::default());
    let cx = Context {
        now: 1_800_000_000,
        principal: b"me",
        entropy: [1; 8],
    };
    let call = |more: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"set_temperature",
            "arguments":{{"degrees":22}}{more},"_meta":{{"io.modelcontextprotocol/protocolVersion":
            "2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"elicitation":{{}}}}}}}}}}"#
        )
    };
    let mut out = [0u8; 4096];
    // The first call: the tool asks (an `input_required` result with the form).
    let n = engine.handle(call("").as_bytes(), &cx, &mut out).len;
    let result = parse(&out[..n])
        .ok()
        .and_then(|v| v.get("result"))
        .expect("a result");
    let state = result
        .get("requestState")
        .and_then(|s| s.as_plain_str())
        .expect("a state");
    assert!(result
        .get("inputRequests")
        .and_then(|r| r.get("fan"))
        .is_some());
    // The retry carries the answer and the state back: the tool sets both.
    let answer = format!(
        r#","inputResponses":{{"fan":{{"action":"accept","content":{{"fan":"high"}}}}}},"requestState":"{state}""#
    );
    let n = engine.handle(call(&answer).as_bytes(), &cx, &mut out).len;
    let text = core::str::from_utf8(&out[..n]).expect("UTF-8");
    assert!(text.contains("Set to 22 °C, fan high."), "{text}");
    assert_eq!((engine.app().degrees, engine.app().fan), (22, Fan::High));
}
