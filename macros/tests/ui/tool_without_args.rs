//! A tool takes its arguments as a type: a method without one is told the shape.
use redmark_core::prelude::*;

struct Ping;

#[app]
impl App for Ping {
    /// Answers pong.
    #[tool]
    fn ping(&mut self, _: &Call, reply: Reply) -> Replied {
        complete!(reply, "pong")
    }
}

fn main() {}
