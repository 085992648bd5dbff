//! Your own tool on the shell: `order_lunch` asks which dish only when the call names none,
//! and is served with every transport, flag and default of `redmark serve`.
//!
//! ```text
//! cargo run -p redmark --example lunch -- --http 127.0.0.1:8080      # also stdio
//! redmark call --url http://127.0.0.1:8080/mcp order_lunch            # asks which dish
//! redmark call --stdio 'target/debug/examples/lunch' order_lunch dish=soup
//! ```

use std::process::ExitCode;

use redmark::core::engine::{
    App, Arg, ArgKind, Call, CallError, Done, Elicited, Msg, Reply, ServerInfo, ToolEntry, ToolInfo,
};
use redmark::core::mrtr::{Choice, Field, FieldKind, Form, Question};

/// The dishes: (value, what the user sees).
const DISHES: [(&str, &str); 3] = [
    ("soup", "Pumpkin soup"),
    ("salad", "Greek salad"),
    ("pasta", "Pasta al pesto"),
];

/// The one tool.
#[derive(Clone, Copy)]
struct OrderLunch;

const TOOLS: &[ToolEntry<OrderLunch>] = &[ToolEntry {
    info: ToolInfo {
        name: "order_lunch",
        title: "Order lunch",
        description: "Orders lunch for the meeting; asks which dish when none is given.",
        input_schema: r#"{"type":"object","properties":{"dish":{"type":"string","enum":["soup","salad","pasta"],"description":"The dish"}},"additionalProperties":false}"#,
        read_only: false,
        destructive: false,
        idempotent: true,
        salient: None,
        answers_need_state: false,
        param_headers: &[],
    },
    tool: OrderLunch,
}];

const ARGS: &[Arg] = &[Arg {
    name: "dish",
    required: false,
    kind: ArgKind::Text(Some(8), None),
}];

/// The lunch counter: no store, nothing held between calls.
struct Lunch;

impl App for Lunch {
    type Tool = OrderLunch;

    fn info(&self) -> ServerInfo {
        ServerInfo {
            name: "lunch",
            version: "1.0.0",
            instructions: None,
        }
    }

    fn tools(&self) -> &[ToolEntry<OrderLunch>] {
        TOOLS
    }

    async fn call_tool(
        &mut self,
        _: OrderLunch,
        call: &Call<'_>,
        reply: Reply<'_, '_>,
    ) -> Result<Done, CallError> {
        if let Err(e) = call.check_args(ARGS) {
            return Ok(reply.fail(&Msg(format_args!("{e}"))));
        }
        let named = call.args.and_then(|a| a.get("dish"));
        let (dish, reply) = match DISHES
            .iter()
            .find(|(v, _)| named.is_some_and(|d| d.eq_str(v)))
        {
            Some(dish) => (dish, reply),
            None => {
                let options: Vec<Choice<'_>> = DISHES
                    .iter()
                    .map(|(value, title)| Choice { value, title })
                    .collect();
                let fields = [Field {
                    name: "dish",
                    title: "Dish",
                    description: None,
                    required: true,
                    kind: FieldKind::Choice {
                        options: &options,
                        default: None,
                    },
                }];
                let form = Form {
                    message: &"Which dish?",
                    fields: &fields,
                    mark: None,
                };
                match reply.elicit(call, &Question { key: "dish", form }, &[])? {
                    Elicited::Accepted(c, reply) => {
                        let chosen = DISHES
                            .iter()
                            .find(|(v, _)| c.get("dish").is_some_and(|d| d.eq_str(v)));
                        (
                            chosen.ok_or(CallError::Internal("validated answer names no dish"))?,
                            reply,
                        )
                    }
                    Elicited::Declined(reply) => {
                        return Ok(reply.complete("No lunch ordered: you said no."))
                    }
                    Elicited::Cancelled(reply) => {
                        return Ok(reply.complete("No lunch ordered: dismissed."))
                    }
                    Elicited::Asked(done) => return Ok(done),
                }
            }
        };
        Ok(reply.complete(&Msg(format_args!("Ordered: {}.", dish.1))))
    }
}

redmark::hosted!(Lunch);

fn main() -> ExitCode {
    redmark::serve::run_app(redmark::ServeArgs::from_command_line(), || Lunch)
}
