//! A database of the release before spans (`fixtures/schema-v1.sql`) opened by this one: rows
//! read back as whole hours, the database then refuses overlaps, an old instance's writes
//! still land in the constraint, and a role that may not create `btree_gist` is told so.

use redmark_core::booking::{Actor, Booking, Commit, Day, NewBooking, Span, Status, Store, Title};
use redmark_tests::pg::{Cluster, PASSWORD, USER};

use super::PgStore;
use crate::store::suite::runtime;

fn day(d: u8) -> Day {
    Day {
        year: 2099,
        month: 9,
        day: d,
    }
}

/// What the fixture holds: id, room, day, hour, attendees, nonce byte, status.
const ROWS: [(u32, &str, u8, u8, u16, u8, Status); 4] = [
    (1, "studio-b", 17, 9, 4, 1, Status::Active),
    (2, "atrium", 17, 10, 0, 2, Status::Active),
    (3, "nook", 17, 9, 2, 3, Status::Cancelled),
    (4, "atrium", 18, 23, 12, 4, Status::Active),
];

/// 09:30–10:15 on 2099-09-17 in `room`, operation `nonce`.
fn half_past_nine(room: &str, nonce: u8) -> NewBooking {
    let m = day(17).first_minute() + 9 * 60 + 30;
    NewBooking {
        room: room.try_into().unwrap(),
        span: Span::new(m, m + 45).unwrap(),
        title: Title::try_from("Design review").unwrap(),
        attendees: 3,
        holder: [7; 8],
        nonce: [nonce; 8],
    }
}

#[test]
fn a_database_of_the_release_before_spans_opens_with_every_booking_as_hours() {
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    pg.psql(include_str!("fixtures/schema-v1.sql"));
    let rt = runtime();
    let mut s = rt.block_on(PgStore::open(&pg.url())).unwrap();
    let mut old = Vec::new();
    for (id, room, d, h, attendees, nonce, status) in ROWS {
        let b = rt.block_on(s.get(id)).unwrap().expect("every row is there");
        let want = Booking {
            id,
            new: NewBooking {
                room: room.try_into().unwrap(),
                span: Span::hour(day(d), h),
                title: Title::new(),
                attendees,
                holder: [7; 8],
                nonce: [nonce; 8],
            },
            status,
            checked_in: false,
            series: None,
        };
        assert_eq!(b, want);
        // The same operation again is still that booking.
        assert_eq!(
            rt.block_on(s.commit(&b.new)),
            Ok(Commit::Replayed(b.clone()))
        );
        old.push(b);
    }
    assert_eq!(
        pg.psql("SELECT value FROM redmark_meta WHERE key = 'schema'"),
        "4"
    );
    // 09:30–10:15 overlaps Studio B's 09:00 hour; the Nook's was cancelled.
    assert_eq!(
        rt.block_on(s.commit(&half_past_nine("studio-b", 0xa1))),
        Ok(Commit::Taken(old[0].clone()))
    );
    assert_eq!(
        rt.block_on(s.commit(&half_past_nine("atrium", 0xa2))),
        Ok(Commit::Taken(old[1].clone()))
    );
    let Ok(Commit::Created(nook)) = rt.block_on(s.commit(&half_past_nine("nook", 0xa3))) else {
        panic!("the cancelled hour is free")
    };
    // (Ids come from a sequence that replays above also drew from: only larger.)
    assert!(nook.id > 4, "{}", nook.id);
    // Its day and hour columns are filled for an instance of the release before spans.
    assert_eq!(
        pg.psql(&format!(
            "SELECT to_char(day, 'YYYY-MM-DD'), hour, title FROM redmark_bookings WHERE id = {}",
            nook.id
        )),
        "2099-09-17|9|Design review"
    );
    // A second start changes nothing.
    let mut again = rt.block_on(PgStore::open(&pg.url())).unwrap();
    assert_eq!(rt.block_on(again.get(nook.id)), Ok(Some(nook.clone())));
    // An instance of the release before spans, still running, writes day and hour only (its
    // COMMIT_SQL's insert): the trigger gives the row its span, so the constraint refuses its
    // 10:00 in the Nook (09:30–10:15 holds it) and takes its 11:00.
    let old_insert = |hour: u8, nonce: u8| {
        pg.psql(&format!(
            "WITH ins AS (INSERT INTO redmark_bookings (room, day, hour, attendees, holder, nonce) \
             VALUES ('nook', '2099-09-17'::text::date, {hour}, 1, '\\x0808080808080808', \
             '\\x{n}') ON CONFLICT DO NOTHING RETURNING id) SELECT count(*) FROM ins",
            n = format!("{nonce:02x}").repeat(8)
        ))
    };
    assert_eq!(old_insert(10, 0xc1), "0", "refused: overlaps 09:30–10:15");
    assert_eq!(old_insert(11, 0xc2), "1");
    let eleven = day(17).first_minute() + 11 * 60;
    let b = rt
        .block_on(again.next_in_room("nook", eleven))
        .unwrap()
        .unwrap();
    assert_eq!(
        (b.new.span, b.new.holder),
        (Span::hour(day(17), 11), [8; 8])
    );
    let mut clash = half_past_nine("nook", 0xa4);
    clash.span = Span::new(eleven + 30, eleven + 90).unwrap();
    assert_eq!(rt.block_on(again.commit(&clash)), Ok(Commit::Taken(b)));
}

#[test]
fn without_the_privilege_to_create_btree_gist_startup_fails_naming_it() {
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    pg.psql(
        "CREATE ROLE guest LOGIN PASSWORD 'guest-pw-9c2e'; GRANT CREATE ON SCHEMA public TO guest",
    );
    let url = pg
        .url()
        .replace(&format!("{USER}:{PASSWORD}@"), "guest:guest-pw-9c2e@");
    let rt = runtime();
    let e = rt.block_on(PgStore::open(&url)).err().expect("refused");
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains("btree_gist") && e.contains("CREATE privilege on the database"),
        "{e}"
    );
    // Nothing half-done: the failed start's transaction left no table behind.
    assert_eq!(
        pg.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'redmark%'"),
        "0"
    );
    // Once the owner created it, the same role starts.
    pg.psql("CREATE EXTENSION btree_gist");
    rt.block_on(PgStore::open(&url)).unwrap();
}

/// A database of today's schema (version 2: made here from its own statements) is brought to
/// version 3 with its rows active and not checked in; a released row is `cancelled` too, so
/// an instance of the release before (which reads `cancelled` only) sees its time free.
#[test]
fn a_database_of_schema_2_opens_as_4_and_the_release_before_sees_a_released_row_as_cancelled() {
    use super::sql::{BTREE_GIST, SCHEMA, SPANS};
    let Some(pg) = Cluster::start_or_skip() else {
        return;
    };
    pg.psql(SCHEMA);
    pg.psql(BTREE_GIST);
    pg.psql(SPANS);
    pg.psql("INSERT INTO redmark_meta (key, value) VALUES ('schema', 2)");
    let start = day(17).first_minute() + 9 * 60;
    pg.psql(&format!(
        "INSERT INTO redmark_bookings (room, start_minute, end_minute, title, attendees, holder, \
         nonce) VALUES ('nook', {start}, {}, '', 1, '\\x0707070707070707', '\\x0101010101010101')",
        start + 60
    ));
    let rt = runtime();
    let mut s = rt.block_on(PgStore::open(&pg.url())).unwrap();
    assert_eq!(
        pg.psql("SELECT value FROM redmark_meta WHERE key = 'schema'"),
        "4"
    );
    let b = rt.block_on(s.get(1)).unwrap().unwrap();
    assert_eq!((b.status, b.checked_in), (Status::Active, false));
    let released = rt
        .block_on(s.release_due(start + 10, 10, &Actor::floor(0, 1)))
        .unwrap()
        .unwrap();
    assert_eq!(released.status, Status::Released);
    assert_eq!(
        pg.psql("SELECT cancelled, released, checked_in FROM redmark_bookings WHERE id = 1"),
        "t|t|f"
    );
}
