//! The PostgreSQL side of the store: connections, the schema and its set-up, the prepared
//! statements, and rows read back into bookings.

use redmark_core::booking::{Booking, Minute, NewBooking, RoomId, Span, Status, StoreError, Title};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

/// The advisory lock that serialises schema set-up between instances starting together.
pub(super) const SCHEMA_LOCK: i64 = 0x0072_6564_6d61_726b; // "redmark" in ASCII
/// The schema version this build writes and reads (2: spans, titles, the overlap constraint;
/// 3: check-in and release; 4: series).
pub(super) const SCHEMA_VERSION: i32 = 4;

/// The schema of the release before spans (version 1), idempotent: created as it was, then
/// brought to version 2 by [`SPANS`].
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS redmark_meta (
    key text PRIMARY KEY,
    value integer NOT NULL
);
CREATE TABLE IF NOT EXISTS redmark_bookings (
    id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 4294967295) PRIMARY KEY,
    room text NOT NULL CHECK (octet_length(room) BETWEEN 1 AND 24),
    day date NOT NULL,
    hour smallint NOT NULL CHECK (hour BETWEEN 0 AND 23),
    attendees integer NOT NULL CHECK (attendees BETWEEN 0 AND 65535),
    holder bytea NOT NULL CHECK (octet_length(holder) = 8),
    nonce bytea NOT NULL CHECK (octet_length(nonce) = 8),
    cancelled boolean NOT NULL DEFAULT false,
    UNIQUE (holder, nonce)
);
";

/// The extension the overlap constraint needs (`=` on text inside a GiST index). It ships
/// with PostgreSQL (contrib) and is trusted: a database owner, or any role with CREATE on the
/// database, may create it.
pub(super) const BTREE_GIST: &str = "CREATE EXTENSION IF NOT EXISTS btree_gist";

/// Version 1 to 2 (run once, where the schema is version 1): a booking's span in UTC minutes since 1970 (`start_minute`,
/// `end_minute`, end excluded) and its title; old rows backfilled as their whole hour. The
/// clash rule is the database's: no two active bookings of a room overlap (an exclusion
/// constraint; touching spans do not overlap). `day`/`hour` stay, filled from the start, so
/// an instance of the release before spans still reads them; its inserts (day and hour only)
/// get their span from the trigger, so the constraint covers them too (docs/operators.md).
pub(super) const SPANS: &str = "
ALTER TABLE redmark_bookings
    ADD COLUMN IF NOT EXISTS start_minute integer,
    ADD COLUMN IF NOT EXISTS end_minute integer,
    ADD COLUMN IF NOT EXISTS title text NOT NULL DEFAULT '' CHECK (octet_length(title) <= 48);
UPDATE redmark_bookings
    SET start_minute = (day - DATE '1970-01-01') * 1440 + hour * 60,
        end_minute = (day - DATE '1970-01-01') * 1440 + hour * 60 + 60
    WHERE start_minute IS NULL;
CREATE OR REPLACE FUNCTION redmark_span_or_hour() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.start_minute IS NULL AND NEW.end_minute IS NULL THEN
        NEW.start_minute := (NEW.day - DATE '1970-01-01') * 1440 + NEW.hour * 60;
        NEW.end_minute := NEW.start_minute + 60;
    END IF;
    IF NEW.day IS NULL AND NEW.hour IS NULL THEN
        NEW.day := DATE '1970-01-01' + NEW.start_minute / 1440;
        NEW.hour := NEW.start_minute % 1440 / 60;
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS redmark_span_or_hour ON redmark_bookings;
CREATE TRIGGER redmark_span_or_hour BEFORE INSERT ON redmark_bookings
    FOR EACH ROW EXECUTE FUNCTION redmark_span_or_hour();
ALTER TABLE redmark_bookings
    ALTER COLUMN start_minute SET NOT NULL,
    ALTER COLUMN end_minute SET NOT NULL;
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'redmark_bookings_span') THEN
        ALTER TABLE redmark_bookings ADD CONSTRAINT redmark_bookings_span
            CHECK (start_minute < end_minute);
    END IF;
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'redmark_bookings_no_overlap') THEN
        ALTER TABLE redmark_bookings ADD CONSTRAINT redmark_bookings_no_overlap
            EXCLUDE USING gist (room WITH =, int4range(start_minute, end_minute) WITH &&)
            WHERE (NOT cancelled);
    END IF;
END $$;
DROP INDEX IF EXISTS redmark_bookings_held;
DROP INDEX IF EXISTS redmark_bookings_mine;
CREATE INDEX IF NOT EXISTS redmark_bookings_mine_by_start
    ON redmark_bookings (holder, start_minute, room COLLATE \"C\") WHERE NOT cancelled;
CREATE INDEX IF NOT EXISTS redmark_bookings_room_ends
    ON redmark_bookings (room, end_minute) WHERE NOT cancelled;
";

/// Version 2 to 3 (run once, where the schema is version 2): whether a booking's holder
/// checked in, and whether it was released for want of one. A released row is also
/// `cancelled`, so the overlap constraint frees its time and an instance of the release
/// before reads it as cancelled (docs/operators.md). Its holder still lists it (the second
/// holder index); the release finds the unchecked bookings by start (the third).
pub(super) const CHECK_IN: &str = "
ALTER TABLE redmark_bookings
    ADD COLUMN IF NOT EXISTS released boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS checked_in boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS redmark_bookings_listed_by_start
    ON redmark_bookings (holder, start_minute, room COLLATE \"C\") WHERE NOT cancelled OR released;
CREATE INDEX IF NOT EXISTS redmark_bookings_unchecked
    ON redmark_bookings (start_minute) WHERE NOT cancelled AND NOT checked_in;
";

/// Version 3 to 4 (run once, where the schema is version 3): the series a booking is an
/// occurrence of (its first booking's id; NULL for a single booking, and for every row an
/// instance of the release before writes).
pub(super) const SERIES: &str = "
ALTER TABLE redmark_bookings ADD COLUMN IF NOT EXISTS series bigint;
CREATE INDEX IF NOT EXISTS redmark_bookings_series ON redmark_bookings (series)
    WHERE series IS NOT NULL;
";

/// Which of a series' occurrences (rooms `$1`, starts `$2`, ends `$3`, in order) an active
/// booking overlaps: their indexes from 0.
pub(super) const SERIES_CLASH_SQL: &str = "
SELECT (o.i - 1)::int4 FROM unnest($1::text[], $2::int4[], $3::int4[]) WITH ORDINALITY
    AS o(room, s, e, i)
    WHERE EXISTS (SELECT FROM redmark_bookings b WHERE b.room = o.room AND NOT b.cancelled
        AND int4range(b.start_minute, b.end_minute) && int4range(o.s, o.e))
";

/// Books a series' occurrences (as [`INSERT_MANY_SQL`], each with the base's title,
/// attendees and holder `$4`–`$6`); an occurrence a racing booking took inserts nothing, and
/// then [`SERIES_DROP_SQL`] takes back the rest.
pub(super) const SERIES_INSERT_SQL: &str = "
INSERT INTO redmark_bookings (room, start_minute, end_minute, title, attendees, holder, nonce)
SELECT room, s, e, $4, $5, $6, nonce
    FROM unnest($1::text[], $2::int4[], $3::int4[], $7::bytea[]) AS o(room, s, e, nonce)
ON CONFLICT DO NOTHING
RETURNING id, nonce
";

/// Marks the bookings `$2` occurrences of series `$1`.
pub(super) const SERIES_MARK_SQL: &str =
    "UPDATE redmark_bookings SET series = $1 WHERE id = ANY($2::int8[])";

/// Takes back the bookings `$1` a series inserted before one of its occurrences was refused
/// (in the same transaction: they were never visible).
pub(super) const SERIES_DROP_SQL: &str = "DELETE FROM redmark_bookings WHERE id = ANY($1::int8[])";

/// The ids of series `$1`'s bookings, in start order.
pub(super) const SERIES_IDS_SQL: &str =
    "SELECT id FROM redmark_bookings WHERE series = $1 ORDER BY start_minute, id";

/// Whether series `$1` is one the holder `$2` (or, `$3`, an operator) may cancel.
pub(super) const SERIES_MAY_SQL: &str =
    "SELECT id FROM redmark_bookings WHERE id = $1 AND series = $1 AND (holder = $2 OR $3)";

/// Cancels the active bookings of series `$1` that start at or after `$4` (holder `$2`, or
/// `$3` an operator); their ids.
pub(super) const SERIES_CANCEL_SQL: &str = "
UPDATE redmark_bookings SET cancelled = true, released = false
    WHERE series = $1 AND (holder = $2 OR $3) AND NOT cancelled AND start_minute >= $4
    RETURNING id
";

/// Each booking's trail (additive: an older release never reads it), created idempotently at
/// every start: one row a change, [`Step::to_bytes`](redmark_core::booking::Step::to_bytes) in
/// `step`, in `seq` order.
pub(super) const TRAIL: &str = "
CREATE TABLE IF NOT EXISTS redmark_trail (
    booking_id bigint NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    step bytea NOT NULL,
    PRIMARY KEY (booking_id, seq)
);
";

/// A holder's first active booking after a (start, room) in that order, room ids compared
/// byte by byte (`COLLATE "C"`, as every other store orders them, whatever the database's
/// collation); `redmark_bookings_mine_by_start` serves it.
pub(super) const NEXT_HELD_SQL: &str = "
SELECT id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
    FROM redmark_bookings
    WHERE holder = $1 AND (NOT cancelled OR released)
    AND (start_minute, room COLLATE \"C\") > ($2::int4, $3::text COLLATE \"C\")
    ORDER BY start_minute, room COLLATE \"C\"
    LIMIT 1
";

/// A room's first active booking that ends after a minute: active bookings of a room never
/// overlap, so end order is start order; `redmark_bookings_room_ends` serves it.
pub(super) const NEXT_IN_ROOM_SQL: &str = "
SELECT id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
    FROM redmark_bookings
    WHERE room = $1 AND end_minute > $2 AND NOT cancelled
    ORDER BY end_minute
    LIMIT 1
";

/// Moves the end of a holder's active booking from `$3` to `$4` while no other active booking
/// of the room overlaps the time added (`$3` to `$4` when later; an earlier end adds none).
/// A booking committed after the statement began can still clash: the exclusion constraint
/// then fails the batch, which is retried, and this statement sees it.
pub(super) const SET_END_SQL: &str = "
UPDATE redmark_bookings r SET end_minute = $4
    WHERE r.id = $1 AND r.holder = $2 AND NOT r.cancelled AND r.end_minute = $3
    AND r.start_minute < $4
    AND NOT EXISTS (SELECT FROM redmark_bookings o
        WHERE o.room = r.room AND NOT o.cancelled AND o.id <> r.id
        AND int4range(o.start_minute, o.end_minute) && int4range(LEAST($3, $4), $4))
    RETURNING r.id, r.room, r.start_minute, r.end_minute, r.title, r.attendees, r.holder,
        r.nonce, r.cancelled, r.released, r.checked_in, r.series
";

/// Marks a holder's active booking checked in, keeping trail step `$3` when it changed; one
/// it cannot change (cancelled, released, already checked in) comes back as it stands, from
/// the statement's snapshot.
pub(super) const CHECK_IN_SQL: &str = "
WITH u AS (
    UPDATE redmark_bookings SET checked_in = true
    WHERE id = $1 AND holder = $2 AND NOT cancelled AND NOT checked_in
    RETURNING id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
), t AS (
    INSERT INTO redmark_trail (booking_id, step) SELECT id, $3 FROM u
)
SELECT * FROM u
UNION ALL
SELECT id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
    FROM redmark_bookings WHERE id = $1 AND holder = $2 AND NOT EXISTS (SELECT FROM u)
";

/// Releases one booking due at minute `$1` for a window of `$2` minutes (active, not checked
/// in, `start + window <= now < end`), in one UPDATE: the row is locked (`FOR UPDATE`; one
/// another instance is releasing or checking in is skipped) and the condition checked again
/// on its latest version, so three instances never release a row twice nor one checked in;
/// the release keeps trail step `$3`.
pub(super) const RELEASE_SQL: &str = "
WITH r AS (
    UPDATE redmark_bookings SET cancelled = true, released = true
    WHERE id = (SELECT id FROM redmark_bookings
        WHERE NOT cancelled AND NOT checked_in AND start_minute + $2 <= $1 AND end_minute > $1
        ORDER BY start_minute, id LIMIT 1 FOR UPDATE SKIP LOCKED)
    AND NOT cancelled AND NOT checked_in
    RETURNING id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
), t AS (
    INSERT INTO redmark_trail (booking_id, step) SELECT id, $3 FROM r
)
SELECT * FROM r
";

/// The columns of a booking, in the order [`decode`] reads them.
pub(super) const COLS: &str =
    "id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, \
     checked_in, series";

/// Books, or says who already holds the nonce (kind 1) or the earliest active booking of the
/// room that overlaps (kind 2). The outer reads see the statement's snapshot; a conflict with
/// a transaction committed after it returns no row, and
/// [`commit_one`](super::worker::commit_one) reads again.
pub(super) const COMMIT_SQL: &str = "
WITH ins AS (
    INSERT INTO redmark_bookings (room, start_minute, end_minute, title, attendees, holder, nonce)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT DO NOTHING
    RETURNING id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
)
SELECT 0 AS kind, * FROM ins
UNION ALL
SELECT 1, id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
    FROM redmark_bookings WHERE holder = $6 AND nonce = $7
UNION ALL
(SELECT 2, id, room, start_minute, end_minute, title, attendees, holder, nonce, cancelled, released, checked_in, series
    FROM redmark_bookings WHERE room = $1 AND NOT cancelled
    AND int4range(start_minute, end_minute) && int4range($2, $3)
    ORDER BY start_minute LIMIT 1)
";

/// Books every booking of a batch in one statement, in array order (each row's conflicts are
/// checked against the rows before it, so a later row for a taken span or a used nonce
/// inserts nothing); returns the rows it inserted. Those that inserted nothing are decided one
/// by one with [`COMMIT_SQL`].
pub(super) const INSERT_MANY_SQL: &str = "
INSERT INTO redmark_bookings (room, start_minute, end_minute, title, attendees, holder, nonce)
SELECT room, start_minute, end_minute, title, attendees, holder, nonce
    FROM unnest($1::text[], $2::int4[], $3::int4[], $4::text[], $5::int4[], $6::bytea[],
        $7::bytea[])
    AS b(room, start_minute, end_minute, title, attendees, holder, nonce)
ON CONFLICT DO NOTHING
RETURNING id, holder, nonce
";

/// A connection whose driver runs on its own task.
pub(super) async fn connect(config: &Config) -> Result<Client, tokio_postgres::Error> {
    let (client, conn) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::warn!("booking store connection: {e}");
        }
    });
    Ok(client)
}

/// A worker's connection with its statements prepared once.
pub(super) struct Conn {
    pub(super) client: Client,
    pub(super) s: Statements,
}

/// The statements of one connection, prepared once (borrowed beside its open transaction).
pub(super) struct Statements {
    pub(super) insert_many: Statement,
    pub(super) commit: Statement,
    pub(super) get: Statement,
    pub(super) made_by: Statement,
    pub(super) next_held: Statement,
    pub(super) next_in_room: Statement,
    pub(super) cancel: Statement,
    pub(super) set_end: Statement,
    pub(super) check_in: Statement,
    pub(super) release: Statement,
    pub(super) trail: Statement,
    pub(super) trail_many: Statement,
    pub(super) trail_of: Statement,
    pub(super) series_clash: Statement,
    pub(super) series_insert: Statement,
    pub(super) series_mark: Statement,
    pub(super) series_drop: Statement,
    pub(super) series_ids: Statement,
    pub(super) series_may: Statement,
    pub(super) series_cancel: Statement,
    pub(super) next_in_series: Statement,
}

impl Conn {
    /// Connects (or adopts `client`) and prepares the statements.
    pub(super) async fn open(
        config: &Config,
        client: Option<Client>,
    ) -> Result<Conn, tokio_postgres::Error> {
        let client = match client {
            Some(c) => c,
            None => connect(config).await?,
        };
        let by = |cond: &str| format!("SELECT {COLS} FROM redmark_bookings WHERE {cond}");
        let s = Statements {
            insert_many: client.prepare(INSERT_MANY_SQL).await?,
            commit: client.prepare(COMMIT_SQL).await?,
            get: client.prepare(&by("id = $1")).await?,
            made_by: client.prepare(&by("holder = $1 AND nonce = $2")).await?,
            next_held: client.prepare(NEXT_HELD_SQL).await?,
            next_in_room: client.prepare(NEXT_IN_ROOM_SQL).await?,
            cancel: client
                .prepare(&format!(
                    "UPDATE redmark_bookings SET cancelled = true, released = false WHERE id = $1 \
                     AND (holder = $2 OR $3) AND (NOT cancelled OR released) RETURNING {COLS}"
                ))
                .await?,
            set_end: client.prepare(SET_END_SQL).await?,
            check_in: client.prepare(CHECK_IN_SQL).await?,
            release: client.prepare(RELEASE_SQL).await?,
            trail: client
                .prepare("INSERT INTO redmark_trail (booking_id, step) VALUES ($1, $2)")
                .await?,
            trail_many: client
                .prepare(
                    "INSERT INTO redmark_trail (booking_id, step) \
                     SELECT * FROM unnest($1::int8[], $2::bytea[])",
                )
                .await?,
            trail_of: client
                .prepare(
                    "SELECT step FROM redmark_trail WHERE booking_id = $1 \
                     ORDER BY seq DESC LIMIT $2",
                )
                .await?,
            series_clash: client.prepare(SERIES_CLASH_SQL).await?,
            series_insert: client.prepare(SERIES_INSERT_SQL).await?,
            series_mark: client.prepare(SERIES_MARK_SQL).await?,
            series_drop: client.prepare(SERIES_DROP_SQL).await?,
            series_ids: client.prepare(SERIES_IDS_SQL).await?,
            series_may: client.prepare(SERIES_MAY_SQL).await?,
            series_cancel: client.prepare(SERIES_CANCEL_SQL).await?,
            // `redmark_bookings_series` serves it.
            next_in_series: client
                .prepare(&by("series = $1 AND id > $2 ORDER BY id LIMIT 1"))
                .await?,
        };
        Ok(Conn { client, s })
    }
}

/// Creates or checks the schema, one instance at a time, and brings it to
/// [`SCHEMA_VERSION`] (in one transaction: an instance that fails half-way changed nothing).
pub(super) async fn migrate(client: &mut Client) -> Result<(), String> {
    let e = |e: tokio_postgres::Error| e.to_string();
    let tx = client.transaction().await.map_err(e)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .await
        .map_err(e)?;
    tx.batch_execute(SCHEMA).await.map_err(e)?;
    // A new database starts as version 1 (what [`SCHEMA`] makes), then steps up.
    tx.execute(
        "INSERT INTO redmark_meta (key, value) VALUES ('schema', 1) ON CONFLICT DO NOTHING",
        &[],
    )
    .await
    .map_err(e)?;
    let v: i32 = tx
        .query_one("SELECT value FROM redmark_meta WHERE key = 'schema'", &[])
        .await
        .map_err(e)?
        .get(0);
    if v > SCHEMA_VERSION {
        return Err(format!(
            "its schema is version {v}, newer than this redmark's {SCHEMA_VERSION}: upgrade redmark"
        ));
    }
    tx.batch_execute(TRAIL).await.map_err(e)?;
    if v < 2 {
        tx.batch_execute(BTREE_GIST).await.map_err(no_extension)?;
        tx.batch_execute(SPANS).await.map_err(e)?;
        tx.execute(
            "UPDATE redmark_meta SET value = 2 WHERE key = 'schema'",
            &[],
        )
        .await
        .map_err(e)?;
        tracing::info!("booking store: schema brought to version 2 (spans, titles)");
    }
    if v < 3 {
        tx.batch_execute(CHECK_IN).await.map_err(e)?;
        tx.execute(
            "UPDATE redmark_meta SET value = 3 WHERE key = 'schema'",
            &[],
        )
        .await
        .map_err(e)?;
        tracing::info!("booking store: schema brought to version 3 (check-in, release)");
    }
    if v < 4 {
        tx.batch_execute(SERIES).await.map_err(e)?;
        tx.execute(
            "UPDATE redmark_meta SET value = 4 WHERE key = 'schema'",
            &[],
        )
        .await
        .map_err(e)?;
        tracing::info!("booking store: schema brought to version 4 (series)");
    }
    tx.commit().await.map_err(e)
}

/// Why `CREATE EXTENSION btree_gist` failed, in one line naming what is missing.
fn no_extension(e: tokio_postgres::Error) -> String {
    match e.code() {
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => "the overlap constraint needs the \
            extension btree_gist, and this role may not create it: it needs the CREATE \
            privilege on the database (or to own it); run `CREATE EXTENSION btree_gist;` in \
            the database as its owner once, or `GRANT CREATE ON DATABASE <db> TO <role>;`"
            .into(),
        Some(c) if *c == SqlState::UNDEFINED_FILE || *c == SqlState::UNDEFINED_OBJECT => {
            format!(
                "the overlap constraint needs the extension btree_gist, which this PostgreSQL \
                 server does not have (install its contrib package): {}",
                crate::fault::tidy::one_line(&e.to_string())
            )
        }
        _ => e.to_string(),
    }
}

/// The booking in `row` from column `at` on ([`COLS`]); `Corrupt` if it does not decode.
pub(super) fn decode(row: &Row, at: usize) -> Result<Booking, StoreError> {
    decode_quiet(row, at).ok_or_else(|| {
        tracing::error!("booking store: a row does not decode");
        StoreError::Corrupt
    })
}

pub(super) fn decode_quiet(row: &Row, at: usize) -> Option<Booking> {
    let id: i64 = row.try_get(at).ok()?;
    let room: &str = row.try_get(at + 1).ok()?;
    let start: i32 = row.try_get(at + 2).ok()?;
    let end: i32 = row.try_get(at + 3).ok()?;
    let title: &str = row.try_get(at + 4).ok()?;
    let attendees: i32 = row.try_get(at + 5).ok()?;
    let holder: &[u8] = row.try_get(at + 6).ok()?;
    let nonce: &[u8] = row.try_get(at + 7).ok()?;
    let cancelled: bool = row.try_get(at + 8).ok()?;
    let released: bool = row.try_get(at + 9).ok()?;
    let checked_in: bool = row.try_get(at + 10).ok()?;
    let series: Option<i64> = row.try_get(at + 11).ok()?;
    Some(Booking {
        id: u32::try_from(id).ok()?,
        new: NewBooking {
            room: RoomId::try_from(room).ok()?,
            span: Span::new(u32::try_from(start).ok()?, u32::try_from(end).ok()?)?,
            title: Title::try_from(title).ok()?,
            attendees: u16::try_from(attendees).ok()?,
            holder: holder.try_into().ok()?,
            nonce: nonce.try_into().ok()?,
        },
        status: match (cancelled, released) {
            (true, true) => Status::Released,
            (true, false) => Status::Cancelled,
            (false, _) => Status::Active,
        },
        checked_in,
        series: match series {
            Some(id) => Some(u32::try_from(id).ok()?),
            None => None,
        },
    })
}

/// A minute as PostgreSQL's `integer` (minutes of the years 2000–2999 fit with room to spare;
/// anything larger is clamped and then refused by the span check).
pub(super) fn minute(m: Minute) -> i32 {
    i32::try_from(m).unwrap_or(i32::MAX)
}
