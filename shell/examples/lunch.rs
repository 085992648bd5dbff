//! Your own tool on the shell: `order_lunch` asks which dish only when the call names none,
//! and is served with every transport, flag and default of `redmark serve`. The dishes are
//! known only at run time (the day's menu), so the question offers them as a `Pick`: the form,
//! the checks of an answer, the red mark and the typed decode, as for any typed question.
//!
//! ```text
//! cargo run -p redmark --example lunch -- --http 127.0.0.1:8080      # also stdio
//! redmark call --url http://127.0.0.1:8080/mcp order_lunch            # asks which dish
//! redmark call --stdio 'target/debug/examples/lunch' order_lunch dish=soup
//! ```

use std::process::ExitCode;

use redmark::core::mrtr::Choice;
use redmark::core::prelude::*;

/// Most dishes one day's menu has.
const MAX_DISHES: usize = 8;

/// The day's menu: (value, what the user sees).
const MENU: [(&str, &str); 3] = [
    ("soup", "Pumpkin soup"),
    ("salad", "Greek salad"),
    ("pasta", "Pasta al pesto"),
];

/// `order_lunch`'s arguments.
#[derive(Args)]
struct LunchArgs<'a> {
    /// The dish, e.g. "soup" (asked when not on the menu or not given)
    #[arg(max_len = 8)]
    dish: Option<&'a str>,
}

/// Which dish: one of the menu's, offered at run time.
#[derive(Question)]
#[question(key = "dish")]
struct WhichDish {
    #[field(title = "Dish")]
    dish: Pick<MAX_DISHES>,
}

/// The lunch counter: no store, nothing held between calls.
struct Lunch;

#[app]
impl App for Lunch {
    fn info(&self) -> ServerInfo {
        ServerInfo {
            name: "lunch",
            version: "1.0.0",
            instructions: None,
        }
    }

    /// Orders lunch for the meeting; asks which dish when none is given.
    #[tool(title = "Order lunch", idempotent)]
    async fn order_lunch(&mut self, a: LunchArgs<'_>, call: &Call, reply: Reply) -> Replied {
        if let Some((_, dish)) = MENU.iter().find(|(v, _)| Some(*v) == a.dish) {
            return complete!(reply, "Ordered: {dish}.");
        }
        let menu: Offer<MAX_DISHES> = MENU
            .iter()
            .map(|(value, title)| Choice { value, title })
            .collect();
        let round = reply.question_offering::<WhichDish>(call, &"Which dish?", &[], &menu)?;
        match answered!(round) {
            (Elicited::Accepted(WhichDish { dish }), r) => match menu.get(dish) {
                Some(dish) => complete!(r, "Ordered: {}.", dish.title),
                None => Err(CallError::Internal("a picked dish off the menu")),
            },
            (Elicited::Declined, r) => complete!(r, "No lunch ordered: you said no."),
            (Elicited::Cancelled, r) => complete!(r, "No lunch ordered: dismissed."),
        }
    }
}

redmark::hosted!(Lunch);

fn main() -> ExitCode {
    redmark::serve::run_app(redmark::ServeArgs::from_command_line(), || Lunch)
}
