//! How a redb error or a damaged record becomes a store error (logged, then `Io` or `Corrupt`),
//! or the text a refused open or a check says.

use redmark_core::booking::StoreError;

/// A redb error as a store error (logged): `Corrupt` when redb says the file is corrupted.
pub(super) fn fault<E: Into<redb::Error>>(e: E) -> StoreError {
    let e = e.into();
    tracing::error!("booking store: {e}");
    match e {
        redb::Error::Corrupted(_) => StoreError::Corrupt,
        _ => StoreError::Io,
    }
}

/// A redb error as text (what a refused open or a check says).
pub(super) fn text(e: impl Into<redb::Error>) -> String {
    e.into().to_string()
}

/// A damaged record or a broken link between tables: logged, and `Corrupt` to the caller.
pub(super) fn corrupt(why: std::fmt::Arguments<'_>) -> StoreError {
    tracing::error!("booking store: {why}: bookings.redb is damaged");
    StoreError::Corrupt
}
