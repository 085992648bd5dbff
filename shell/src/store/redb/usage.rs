//! What a store's file holds, as `redmark check` says it: each table's entries, its pages and
//! how full its leaves are, and how much of the file is pages in use rather than free ones
//! redb reuses (docs/benchmarks.md reads a filled store this way).

use std::fmt::Write as _;

use redb::{Database, ReadableTableMetadata, TableHandle};

use super::errors::text;

/// A line for each table holding entries, then one for the file of `file_bytes` bytes.
pub(super) fn usage(db: &Database, file_bytes: u64) -> Result<String, String> {
    let write = db.begin_write().map_err(text)?;
    let stats = write.stats().map_err(text)?;
    write.abort().map_err(text)?;
    let page = stats.page_size() as u64;
    let tx = db.begin_read().map_err(text)?;
    let mut out = String::new();
    for table in tx.list_tables().map_err(text)? {
        let t = tx.open_untyped_table(table.clone()).map_err(text)?;
        let entries = t.len().map_err(text)?;
        if entries == 0 {
            continue;
        }
        let s = t.stats().map_err(text)?;
        let _ = writeln!(
            out,
            "  {}: {entries} entries on {} (their data fills {} % of the leaves)",
            table.name(),
            pages(s.leaf_pages() + s.branch_pages()),
            percent(s.stored_bytes(), s.leaf_pages() * page),
        );
    }
    let used = stats.allocated_pages() * page;
    let _ = write!(
        out,
        "  the file: {} MiB, {} MiB of it pages in use ({} pages of {page} bytes); the rest \
         free pages redb reuses",
        mib(file_bytes),
        mib(used),
        stats.allocated_pages(),
    );
    Ok(out)
}

/// "1 page", "2 pages".
fn pages(n: u64) -> String {
    format!("{n} page{}", if n == 1 { "" } else { "s" })
}

/// `part` as a whole percentage of `whole` (0 of nothing).
fn percent(part: u64, whole: u64) -> u64 {
    (part * 100).checked_div(whole).unwrap_or(0)
}

/// `bytes` in MiB with one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::backends::InMemoryBackend;
    use redb::TableDefinition;

    const T: TableDefinition<u32, &[u8]> = TableDefinition::new("bookings");
    const EMPTY: TableDefinition<u32, u32> = TableDefinition::new("empty");

    /// Each table holding entries gets its line with its count, an empty one none, and the
    /// file's line counts the pages in use.
    #[test]
    fn a_line_for_each_table_holding_entries_and_one_for_the_file() {
        let db = Database::builder()
            .create_with_backend(InMemoryBackend::new())
            .unwrap();
        let tx = db.begin_write().unwrap();
        {
            let mut t = tx.open_table(T).unwrap();
            for i in 0..1000u32 {
                t.insert(i, &[7u8; 40][..]).unwrap();
            }
            tx.open_table(EMPTY).unwrap();
        }
        tx.commit().unwrap();
        let said = usage(&db, 3 * 1024 * 1024).unwrap();
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), 2, "{said}");
        assert!(
            lines[0].starts_with("  bookings: 1000 entries on "),
            "{said}"
        );
        let fill: u64 = lines[0]
            .split("fills ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a fill percentage");
        assert!((30..=100).contains(&fill), "{said}");
        assert!(lines[1].starts_with("  the file: 3.0 MiB, "), "{said}");
        assert!(!said.contains("empty"), "{said}");
    }

    #[test]
    fn a_percentage_of_nothing_is_zero() {
        assert_eq!(percent(5, 0), 0);
        assert_eq!(percent(1, 3), 33);
    }
}
