//! `x-mcp-header` mirrors only a string, number or boolean.
use redmark_core::typed::Args;

#[derive(Args)]
struct Tags {
    #[arg(header = "Tags")]
    tags: [u8; 4],
}

fn main() {}
