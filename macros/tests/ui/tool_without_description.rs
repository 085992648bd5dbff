//! A tool needs a description for the model: its doc comment.
use redmark_core::typed::{Args, Tools};

#[derive(Args)]
struct NoArgs;

#[derive(Clone, Copy, Tools)]
enum MyTools {
    #[tool(name = "ping", args = NoArgs)]
    Ping,
}

fn main() {}
