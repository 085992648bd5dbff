// extend_meeting in rmcp (the official Rust SDK): #[tool] + schemars for the arguments,
// peer.elicit::<T>() for the question. For comparison only: not built here (rmcp, tokio,
// serde, schemars and their heap are not the core's dependencies); written against rmcp's
// documented API (tool_router/tool/tool_handler, Parameters, elicit_safe!, Peer::elicit).
use std::sync::{Arc, Mutex};

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, Content, ServerInfo};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{ElicitationError, RequestContext};
use rmcp::{elicit_safe, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct ExtendArgs {
    /// The room whose panel this is
    #[schemars(length(max = 24))]
    room: String,
    /// How many minutes longer
    #[schemars(range(min = 5, max = 120))]
    minutes: u16,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Confirm {
    /// Yes, extend it
    #[serde(default = "yes")]
    confirm: bool,
}
fn yes() -> bool {
    true
}
elicit_safe!(Confirm);

struct Meeting {
    title: String,
    ends: u16,
    next_starts: Option<u16>,
}

#[derive(Clone)]
struct Panel {
    room: String,
    meeting: Arc<Mutex<Meeting>>,
    tool_router: ToolRouter<Self>,
}

fn hhmm(m: u16) -> String {
    format!("{:02}:{:02}", m / 60, m % 60)
}

#[tool_router]
impl Panel {
    #[tool(
        description = "Extends this room's meeting by some minutes, once the user has confirmed the new end time.",
        annotations(title = "Extend the meeting", idempotent_hint = false)
    )]
    async fn extend_meeting(
        &self,
        Parameters(a): Parameters<ExtendArgs>,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let fail = |m: String| Ok(CallToolResult::error(vec![Content::text(m)]));
        if a.room != self.room {
            return fail(format!(
                "This is the panel of '{}', not of '{}'.",
                self.room, a.room
            ));
        }
        let (title, from, limit) = {
            let m = self.meeting.lock().unwrap();
            (m.title.clone(), m.ends, m.next_starts.unwrap_or(24 * 60))
        };
        let to = from + a.minutes;
        if to > limit {
            return fail(format!(
                "'{title}' can run until {} at most, not {}.",
                hhmm(limit),
                hhmm(to)
            ));
        }
        // The request stays open while the user answers: the quote lives in this future.
        let answer = cx
            .peer
            .elicit::<Confirm>(format!("Extend '{title}' until {}?", hhmm(to)))
            .await;
        let mut m = self.meeting.lock().unwrap();
        match answer {
            Ok(Some(Confirm { confirm: true })) if m.ends == from => {
                m.ends = to;
                Ok(CallToolResult::success(vec![Content::text(format!(
                    "Extended '{title}' until {}.",
                    hhmm(to)
                ))]))
            }
            Ok(Some(Confirm { confirm: true })) => fail(format!(
                "'{title}' changed: it now ends at {}. Not extended.",
                hhmm(m.ends)
            )),
            Ok(_) | Err(ElicitationError::UserDeclined | ElicitationError::UserCancelled) => {
                Ok(CallToolResult::success(vec![Content::text(format!(
                    "Not extended: '{title}' still ends at {}.",
                    hhmm(m.ends)
                ))]))
            }
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }
}

#[tool_handler]
impl ServerHandler for Panel {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::default()
    }
}
