//! Your first tool that asks: `set_temperature` takes the degrees as a typed argument, asks
//! the user how the fan should run (a form with one select), and sets both once answered.
//! Every schema comes from the types; nothing is allocated. `main` drives it through the
//! engine: the call, the question, the answer. It builds bare-metal too (no `main` there).
#![cfg_attr(target_os = "none", no_std)]
#![forbid(unsafe_code)]
#![allow(missing_docs)]

use redmark_core::prelude::*;

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
}

/// The app's tools, one declaration each: `tools/list`, the checks and the typed read of the
/// arguments all come from the method and its argument type.
#[app]
impl App for Thermostat {
    /// Sets the room's temperature, once the user has said how the fan should run.
    #[tool(title = "Set the temperature", idempotent)]
    async fn set_temperature(&mut self, a: SetArgs, call: &Call, reply: Reply) -> Replied {
        let ask = Msg(format_args!(
            "Set {} °C: how should the fan run?",
            a.degrees
        ));
        let (answer, r) = answered!(reply.question::<AskFan>(call, &ask, &[])?); // asked: the answer comes back
        let Elicited::Accepted(AskFan { fan }) = answer else {
            return complete!(r, "Nothing changed."); // declined or cancelled
        };
        (self.degrees, self.fan) = (a.degrees, fan);
        complete!(r, "Set to {} °C, fan {}.", a.degrees, fan.value())
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

    let app = Thermostat {
        degrees: 20,
        fan: Fan::Auto,
    };
    let keys = KeyRing::new(Key::new(1, &[7; 32]).expect("a 32-byte key"));
    let mut engine = Engine::new(app, keys, Config::default());
    let cx = Context {
        now: 1_800_000_000,
        principal: b"me",
        entropy: [1; 8],
        access: redmark_core::Access::USER,
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
