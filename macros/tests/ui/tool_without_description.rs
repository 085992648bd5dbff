//! A tool needs a description for the model: its doc comment.
use redmark_core::prelude::*;

struct Ping;

#[app]
impl App for Ping {
    #[tool(name = "ping")]
    fn ping(&mut self, _: NoArgs, _: &Call, reply: Reply) -> Replied {
        complete!(reply, "pong")
    }
}

fn main() {}
