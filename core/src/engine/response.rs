//! The JSON-RPC frame of every response the engine writes: the `{"jsonrpc":"2.0","id":…`
//! head, and the whole error response around an [`RpcError`].

use super::error::RpcError;
use crate::wire::json::Value;
use crate::wire::write::Writer;

/// Writes `{"jsonrpc":"2.0","id":…` (id omitted when unknown), leaving the object open.
pub(super) fn write_head(w: &mut Writer<'_>, id: Option<Value<'_>>) {
    w.begin_object().key("jsonrpc").string("2.0");
    if let Some(id) = id {
        w.key("id").raw(id.raw());
    }
}

/// Writes the error response `e` to the request with `id` (none when unknown).
pub(super) fn write_error(w: &mut Writer<'_>, id: Option<Value<'_>>, e: &RpcError<'_>) {
    write_head(w, id);
    w.key("error");
    e.write(w);
    w.end_object();
}
