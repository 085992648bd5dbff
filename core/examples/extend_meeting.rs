//! A tool that is not ours: a door panel's `extend_meeting`, written only against
//! redmark-core's public API, the way a firmware team hosts its own tool on the engine.
//!
//! The panel knows the meeting in its room: its title, when it ends, when the next one
//! starts. A call never extends at once: it asks the user to confirm the new end time
//! (`Reply::elicit`) and seals the times it quoted (4 bytes) in `requestState`. The
//! confirming call reads them back from the verified state, so it extends to exactly what was
//! confirmed, at most once, and refuses if the meeting changed in between — with no store and
//! nothing held on the panel between the two calls.
//!
//! A library-style example (`crate-type = ["lib"]`), so it builds for a bare-metal target:
//! `cargo build -p redmark-core --example extend_meeting --target thumbv7em-none-eabihf`
//! (`scripts/check-no-std.sh` does). A firmware's `main` hosts `Panel` exactly as it hosts
//! the booking app (`redmark_core::serve`); `core/tests/extend_meeting.rs` drives it through
//! the engine (the ask, the accept, the decline).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

use core::fmt;

use redmark_core::engine::{
    App, Arg, ArgKind, Call, CallError, Done, Elicited, Msg, ParamHeader, Reply, ServerInfo,
    ToolEntry, ToolInfo,
};
use redmark_core::mrtr::{Field, FieldKind, Form, Question};
use serde::Deserialize;

/// A time of day on the panel's clock, in minutes since midnight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Minute(pub u16);

/// Minutes in a day: a meeting ends by midnight.
const DAY: u16 = 24 * 60;

impl fmt::Display for Minute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

/// The meeting the panel shows.
#[derive(Clone, Copy, Debug)]
pub struct Meeting {
    /// What it is called on the panel.
    pub title: &'static str,
    /// When it ends.
    pub ends: Minute,
    /// When the room's next meeting starts, if one does today.
    pub next_starts: Option<Minute>,
}

/// The panel's tools (one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PanelTool {
    /// `extend_meeting`.
    ExtendMeeting,
}

/// The panel's tool table.
pub const TOOLS: &[ToolEntry<PanelTool>] = &[ToolEntry {
    info: ToolInfo {
        name: "extend_meeting",
        title: "Extend the meeting",
        description: "Extends the meeting in this room by some minutes, once the user has \
            confirmed the new end time.",
        input_schema: r#"{"type":"object","properties":{"room":{"type":"string","maxLength":24,"x-mcp-header":"Room","description":"The room whose panel this is"},"minutes":{"type":"integer","minimum":5,"maximum":120,"description":"How many minutes longer"}},"required":["room","minutes"],"additionalProperties":false}"#,
        read_only: false,
        destructive: false,
        // Two operations extend twice; one operation's retries extend once (the state).
        idempotent: false,
        // The state is bound to every argument: a confirmation counts for what was asked.
        salient: None,
        answers_need_state: true,
        // An HTTP gateway routes by room: the argument travels as `Mcp-Param-Room` too.
        param_headers: &[ParamHeader {
            argument: "room",
            header: "Room",
        }],
    },
    tool: PanelTool::ExtendMeeting,
}];

/// The arguments, as the schema declares them (checked before anything else).
const ARGS: &[Arg] = &[
    Arg {
        name: "room",
        required: true,
        kind: ArgKind::Text(Some(MAX_ROOM as u16), None),
    },
    Arg {
        name: "minutes",
        required: true,
        kind: ArgKind::Integer(5, 120),
    },
];

/// Longest room id, characters (the schema's `maxLength`).
const MAX_ROOM: usize = 24;
/// Bytes of UTF-8 one character may take.
const UTF8_MAX: usize = 4;

#[derive(Deserialize)]
struct ExtendArgs {
    room: heapless::String<{ MAX_ROOM * UTF8_MAX }>,
    minutes: u16,
}

/// The key of the one question.
const CONFIRM: &str = "confirm";

/// What a call quoted to the user: the meeting's end then, and the end it asked to confirm.
/// Sealed in `requestState` as 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Quote {
    from: Minute,
    to: Minute,
}

impl Quote {
    fn to_bytes(self) -> [u8; 4] {
        let [a, b] = self.from.0.to_be_bytes();
        let [c, d] = self.to.0.to_be_bytes();
        [a, b, c, d]
    }

    /// The quote a verified state carries (`None` without a state).
    fn from_bytes(payload: &[u8]) -> Option<Quote> {
        let [a, b, c, d]: [u8; 4] = payload.try_into().ok()?;
        Some(Quote {
            from: Minute(u16::from_be_bytes([a, b])),
            to: Minute(u16::from_be_bytes([c, d])),
        })
    }
}

/// A door panel hosting `extend_meeting` for its room.
pub struct Panel {
    /// The room's id (what `room` must say).
    pub room: &'static str,
    /// The meeting on the panel now.
    pub meeting: Meeting,
    /// Who the server is.
    pub info: ServerInfo,
}

impl App for Panel {
    type Tool = PanelTool;

    fn info(&self) -> ServerInfo {
        self.info
    }

    fn tools(&self) -> &[ToolEntry<PanelTool>] {
        TOOLS
    }

    async fn call_tool(
        &mut self,
        tool: PanelTool,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        if let Err(e) = call.check_args(ARGS) {
            return Ok(reply.fail(&Msg(format_args!("{e}"))));
        }
        match tool {
            PanelTool::ExtendMeeting => self.extend_meeting(call, reply),
        }
    }
}

impl Panel {
    fn extend_meeting(&mut self, call: &Call<'_>, reply: Reply<'_, '_>) -> Result<Done, CallError> {
        let Ok(args) = call.args::<ExtendArgs>() else {
            return Ok(reply.fail("Invalid arguments: see the tool's inputSchema."));
        };
        if args.room != self.room {
            return Ok(reply.fail(&Msg(format_args!(
                "This is the panel of '{}', not of '{}'.",
                self.room, args.room
            ))));
        }
        let Meeting {
            title,
            ends,
            next_starts,
        } = self.meeting;
        // Asked before: keep to what was quoted. Else quote now.
        let quote = match Quote::from_bytes(call.payload()) {
            Some(q) => q,
            None => {
                let to = ends.0.saturating_add(args.minutes);
                let limit = next_starts.unwrap_or(Minute(DAY));
                if to > limit.0 {
                    return Ok(reply.fail(&Msg(format_args!(
                        "'{title}' can run until {limit} at most, not {}.",
                        Minute(to)
                    ))));
                }
                Quote {
                    from: ends,
                    to: Minute(to),
                }
            }
        };
        let message = Msg(format_args!("Extend '{title}' until {}?", quote.to));
        let fields = [Field {
            name: "confirm",
            title: "Yes, extend it",
            description: None,
            required: true,
            kind: FieldKind::Boolean {
                default: Some(true),
            },
        }];
        let question = Question {
            key: CONFIRM,
            form: Form {
                message: &message,
                fields: &fields,
                mark: None,
            },
        };
        match reply.elicit(call, &question, &quote.to_bytes())? {
            Elicited::Accepted(c, reply)
                if c.get("confirm").and_then(|v| v.as_bool()) == Some(true) =>
            {
                let now = self.meeting.ends;
                if now == quote.from {
                    self.meeting.ends = quote.to;
                } else if now != quote.to {
                    return Ok(reply.fail(&Msg(format_args!(
                        "'{title}' changed while you were asked: it now ends at {now}. \
                         Nothing was extended."
                    ))));
                } // else: this operation's retry, already extended: the same answer.
                Ok(reply.complete(&Msg(format_args!("Extended '{title}' until {}.", quote.to))))
            }
            Elicited::Accepted(_, reply)
            | Elicited::Declined(reply)
            | Elicited::Cancelled(reply) => Ok(reply.complete(&Msg(format_args!(
                "Not extended: '{title}' still ends at {}.",
                self.meeting.ends
            )))),
            Elicited::Asked(done) => Ok(done),
        }
    }
}
