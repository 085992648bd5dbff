//! The wire layer: reading and writing JSON-RPC 2.0 messages and MCP's per-request `_meta`.

pub mod echo;
pub mod envelope;
pub mod format;
pub mod json;
pub mod lines;
pub mod meta;
mod swar;
pub mod write;

pub use envelope::{Envelope, EnvelopeError};
pub use json::{parse, JsonError, Kind, Value};
pub use lines::{Line, Lines};
pub use meta::{ClientCaps, MetaError, RequestMeta};
pub use write::{Full, Writer};
