//! The protocol versions the engine serves, and how they are written (`server/discover`, the
//! unsupported-version error).

use crate::wire::write::Writer;

/// Protocol versions this engine serves.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28"];

/// Writes [`SUPPORTED_VERSIONS`] as a JSON array.
pub(super) fn write_versions(w: &mut Writer<'_>) {
    w.begin_array();
    SUPPORTED_VERSIONS.iter().for_each(|v| {
        w.string(v);
    });
    w.end_array();
}
