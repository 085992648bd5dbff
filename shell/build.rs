//! Sets `cfg(pg_tools)` when PostgreSQL's server binaries are installed, so the PostgreSQL
//! store tests run (see `emit_pg_cfg`).

include!("../tests/src/pg_tools.rs");

fn main() {
    emit_pg_cfg("../tests/src/pg_tools.rs");
}
