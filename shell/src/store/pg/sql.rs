//! The PostgreSQL side of the store: connections, the schema and its set-up, the prepared
//! statements, and rows read back into bookings.

use redmark_core::booking::{Booking, Day, NewBooking, RoomId, Slot, Status, StoreError};
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

/// The advisory lock that serialises schema set-up between instances starting together.
pub(super) const SCHEMA_LOCK: i64 = 0x0072_6564_6d61_726b; // "redmark" in ASCII
/// The schema version this build writes and reads.
pub(super) const SCHEMA_VERSION: i32 = 1;

/// The schema, idempotent (run under [`SCHEMA_LOCK`] at every start).
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
CREATE UNIQUE INDEX IF NOT EXISTS redmark_bookings_held
    ON redmark_bookings (room, day, hour) WHERE NOT cancelled;
CREATE INDEX IF NOT EXISTS redmark_bookings_mine
    ON redmark_bookings (holder, day, hour, room COLLATE \"C\") WHERE NOT cancelled;
";

/// A holder's first active booking after a (day, hour, room) in that order, room ids compared
/// byte by byte (`COLLATE "C"`, as every other store orders them, whatever the database's
/// collation); `redmark_bookings_mine` serves it.
pub(super) const NEXT_HELD_SQL: &str = "
SELECT id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
    FROM redmark_bookings
    WHERE holder = $1 AND NOT cancelled
    AND (day, hour, room COLLATE \"C\") > ($2::text::date, $3::int2, $4::text COLLATE \"C\")
    ORDER BY day, hour, room COLLATE \"C\"
    LIMIT 1
";

/// A room's first active booking of a day from an hour on; `redmark_bookings_held` (room, day,
/// hour) serves it.
pub(super) const NEXT_IN_ROOM_SQL: &str = "
SELECT id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
    FROM redmark_bookings
    WHERE room = $1 AND day = $2::text::date AND hour >= $3 AND NOT cancelled
    ORDER BY hour
    LIMIT 1
";

/// The columns of a booking, in the order [`decode`] reads them.
pub(super) const COLS: &str =
    "id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled";

/// Books, or says who already holds the nonce (kind 1) or the slot (kind 2). The outer reads
/// see the statement's snapshot; a conflict with a transaction committed after it returns no
/// row, and [`commit_one`](super::worker::commit_one) reads again.
pub(super) const COMMIT_SQL: &str = "
WITH ins AS (
    INSERT INTO redmark_bookings (room, day, hour, attendees, holder, nonce)
    VALUES ($1, $2::text::date, $3, $4, $5, $6)
    ON CONFLICT DO NOTHING
    RETURNING id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
)
SELECT 0 AS kind, * FROM ins
UNION ALL
SELECT 1, id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
    FROM redmark_bookings WHERE holder = $5 AND nonce = $6
UNION ALL
SELECT 2, id, room, to_char(day, 'YYYY-MM-DD'), hour, attendees, holder, nonce, cancelled
    FROM redmark_bookings WHERE room = $1 AND day = $2::text::date AND hour = $3
    AND NOT cancelled
";

/// Books every booking of a batch in one statement, in array order (each row's conflicts are
/// checked against the rows before it, so a later row for a taken slot or a used nonce inserts
/// nothing); returns the rows it inserted. Those that inserted nothing are decided one by one
/// with [`COMMIT_SQL`].
pub(super) const INSERT_MANY_SQL: &str = "
INSERT INTO redmark_bookings (room, day, hour, attendees, holder, nonce)
SELECT room, day::date, hour, attendees, holder, nonce
    FROM unnest($1::text[], $2::text[], $3::int2[], $4::int4[], $5::bytea[], $6::bytea[])
    AS b(room, day, hour, attendees, holder, nonce)
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
    pub(super) occupant: Statement,
    pub(super) next_held: Statement,
    pub(super) next_in_room: Statement,
    pub(super) cancel: Statement,
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
            occupant: client
                .prepare(&by(
                    "room = $1 AND day = $2::text::date AND hour = $3 AND NOT cancelled",
                ))
                .await?,
            next_held: client.prepare(NEXT_HELD_SQL).await?,
            next_in_room: client.prepare(NEXT_IN_ROOM_SQL).await?,
            cancel: client
                .prepare(&format!(
                    "UPDATE redmark_bookings SET cancelled = true WHERE id = $1 AND holder = $2 \
                     RETURNING {COLS}"
                ))
                .await?,
        };
        Ok(Conn { client, s })
    }
}

/// Creates or checks the schema, one instance at a time.
pub(super) async fn migrate(client: &mut Client) -> Result<(), String> {
    let e = |e: tokio_postgres::Error| e.to_string();
    let tx = client.transaction().await.map_err(e)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .await
        .map_err(e)?;
    tx.batch_execute(SCHEMA).await.map_err(e)?;
    tx.execute(
        "INSERT INTO redmark_meta (key, value) VALUES ('schema', $1) ON CONFLICT DO NOTHING",
        &[&SCHEMA_VERSION],
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
    tx.commit().await.map_err(e)
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
    let day: &str = row.try_get(at + 2).ok()?;
    let hour: i16 = row.try_get(at + 3).ok()?;
    let attendees: i32 = row.try_get(at + 4).ok()?;
    let holder: &[u8] = row.try_get(at + 5).ok()?;
    let nonce: &[u8] = row.try_get(at + 6).ok()?;
    let cancelled: bool = row.try_get(at + 7).ok()?;
    Some(Booking {
        id: u32::try_from(id).ok()?,
        new: NewBooking {
            room: RoomId::try_from(room).ok()?,
            slot: Slot {
                day: Day::parse(day)?,
                hour: u8::try_from(hour).ok().filter(|h| *h < 24)?,
            },
            attendees: u16::try_from(attendees).ok()?,
            holder: holder.try_into().ok()?,
            nonce: nonce.try_into().ok()?,
        },
        status: if cancelled {
            Status::Cancelled
        } else {
            Status::Active
        },
    })
}
