//! `redmark call` against a server we did not write: an `rmcp` (the official Rust SDK) server in
//! its example style (`#[tool_router]`, `#[tool]`, `#[tool_handler]`), serving 2026-07-28
//! stateless requests over TCP from inside this test. Its tool asks a form question through
//! MRTR, so the client's loop is proven against another implementation.

mod client_support;

use std::time::Duration;

use client_support::{cat, redmark, Trace};
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::*;
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use serde_json::json;

#[derive(rmcp::serde::Deserialize, rmcp::schemars::JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
struct PickArgs {
    /// The room in the user's words.
    hint: String,
}

#[derive(Clone)]
struct Desk;

const STATE: &str = "rmcp-desk/round-1 \"quoted\"";

fn question(hint: &str) -> InputRequiredResult {
    let schema = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "room": {"type": "string", "title": "Room", "description": "Which room",
                     "oneOf": [{"const": "atrium", "title": "The Atrium"}, {"const": "studio-b", "title": "Studio B"}]},
            "minutes": {"type": "integer", "title": "Minutes", "minimum": 15, "maximum": 240, "default": 30}
        },
        "required": ["room"]
    }))
    .expect("a valid elicitation schema");
    let ask = InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("'{hint}' could be two rooms. Which?"),
            requested_schema: schema,
        },
    ));
    let mut requests = InputRequests::new();
    requests.insert("pick".to_string(), ask);
    InputRequiredResult::new(Some(requests), Some(STATE.into()))
}

#[tool_router]
impl Desk {
    #[tool(description = "Picks a room, asking which one when the hint is ambiguous")]
    async fn pick_room(
        &self,
        Parameters(args): Parameters<PickArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        match state.as_deref() {
            None => Ok(question(&args.hint).into()),
            Some(STATE) => {
                let answer = responses
                    .as_ref()
                    .and_then(|r| r.get("pick"))
                    .cloned()
                    .unwrap_or_default();
                let text = match answer["action"].as_str() {
                    Some("accept") => format!(
                        "rmcp picked {} for {} minutes",
                        answer["content"]["room"].as_str().unwrap_or("?"),
                        answer["content"]["minutes"]
                    ),
                    Some(other) => format!("rmcp saw {other}"),
                    None => return Err(ErrorData::invalid_params("no answer to 'pick'", None)),
                };
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
            Some(other) => Err(ErrorData::invalid_params(
                format!("requestState changed: {other:?}"),
                None,
            )),
        }
    }
}

#[tool_handler]
impl ServerHandler for Desk {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2026_07_28;
        info
    }
}

/// Serves `Desk` on an ephemeral loopback port, one rmcp service per connection, until the
/// returned runtime is dropped.
fn serve() -> (tokio::runtime::Runtime, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(running) = Desk.serve(stream).await {
                    let _ = running.waiting().await;
                }
            });
        }
    });
    (rt, addr)
}

/// Serves `Desk` over rmcp's own Streamable HTTP server (stateless, 2026-07-28 only) at
/// `http://127.0.0.1:<port>/mcp`, until the returned runtime is dropped.
fn serve_http() -> (tokio::runtime::Runtime, String) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.spawn(async move {
        let service = StreamableHttpService::new(
            || Ok(Desk),
            std::sync::Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default().with_sse_keep_alive(None),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let _ = axum::serve(listener, router).await;
    });
    (rt, url)
}

fn done(rt: tokio::runtime::Runtime) {
    rt.shutdown_timeout(Duration::from_secs(5));
}

#[test]
fn lists_the_rmcp_tools() {
    let (rt, addr) = serve();
    let out = redmark(&cat(&[&["tools", "--json", "--tcp", &addr]]));
    assert_eq!(out.code, 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[0]["name"], "pick_room", "{v}");
    assert_eq!(
        v[0]["inputSchema"]["properties"]["hint"]["type"], "string",
        "{v}"
    );
    done(rt);
}

#[test]
fn answers_an_rmcp_form_and_echoes_its_state() {
    let (rt, addr) = serve();
    let args = cat(&[&[
        "call",
        "--trace",
        "--tcp",
        &addr,
        "--answer",
        "pick.room=studio-b",
        "pick_room",
        "hint=the big room",
    ]]);
    let out = redmark(&args);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        "rmcp picked studio-b for 30 minutes",
        "{out:?}"
    );
    let t = Trace::parse(&out.stderr);
    assert_eq!(t.sent.len(), 2, "{}", out.stderr);
    assert_eq!(t.sent[1].1["params"]["requestState"], STATE);
    done(rt);
}

#[test]
fn declines_an_rmcp_form() {
    let (rt, addr) = serve();
    let out = redmark(&cat(&[&[
        "call",
        "--tcp",
        &addr,
        "--decline",
        "pick",
        "pick_room",
        "hint=big",
    ]]));
    assert_eq!(out.code, 3, "{out:?}");
    assert_eq!(out.stdout.trim(), "rmcp saw decline", "{out:?}");
    let out = redmark(&cat(&[&["call", "--tcp", &addr, "pick_room", "hint=big"]]));
    assert_eq!(out.code, 7, "{out:?}");
    assert!(out.stderr.contains("--answer pick.room=VALUE"), "{out:?}");
    done(rt);
}

#[test]
fn talks_to_rmcps_streamable_http_server() {
    let (rt, url) = serve_http();
    let out = redmark(&cat(&[&["tools", "--json", "--url", &url]]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("\"pick_room\""), "{out:?}");
    let args = cat(&[&[
        "call",
        "--trace",
        "--url",
        &url,
        "--answer",
        "pick.room=atrium",
        "--answer",
        "pick.minutes=45",
        "pick_room",
        "hint=the big room",
    ]]);
    let out = redmark(&args);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        "rmcp picked atrium for 45 minutes",
        "{out:?}"
    );
    assert_eq!(Trace::parse(&out.stderr).sent.len(), 2, "{}", out.stderr);
    done(rt);
}
