//! A header name is a token after `Mcp-Param-`.
use redmark_core::typed::Args;

#[derive(Args)]
struct Region<'a> {
    #[arg(header = "Region Name")]
    region: &'a str,
}

fn main() {}
