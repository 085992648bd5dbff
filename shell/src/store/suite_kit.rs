//! What the store suite (`suite.rs`) and each store's own tests build their bookings from: the
//! suite's day, its slots and spans, a seeded draw, a runtime.

use redmark_core::booking::{
    Booking, Commit, Day, Minute, NewBooking, RoomId, Span, StoreError, Title,
};

/// The suite's day.
pub(crate) const DAY: Day = Day {
    year: 2026,
    month: 12,
    day: 3,
};

/// Draws below `n` from xorshift64*, seeded by `seed`: the same requests every run.
pub(crate) fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (seed + 1);
    move |n| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// Hour `hour` of the suite's day.
pub(crate) fn slot(hour: u8) -> Span {
    Span::hour(DAY, hour)
}

/// Minute `m` of the suite's day (past 1440: the days after).
pub(crate) fn at(m: Minute) -> Minute {
    DAY.first_minute() + m
}

/// A booking of `room` for the whole hour `hour` of the suite's day.
pub(crate) fn new(room: &str, hour: u8, holder: u8, nonce: u8) -> NewBooking {
    NewBooking {
        room: RoomId::try_from(room).unwrap(),
        span: slot(hour),
        title: Title::new(),
        attendees: 3,
        holder: [holder; 8],
        nonce: [nonce; 8],
    }
}

/// A booking of `room` from minute `start` to `end` of the suite's day.
pub(crate) fn span(room: &str, start: Minute, end: Minute, nonce: u8) -> NewBooking {
    NewBooking {
        span: Span::new(at(start), at(end)).unwrap(),
        title: Title::try_from("Design review").unwrap(),
        ..new(room, 0, 5, nonce)
    }
}

pub(crate) fn created(c: Result<Commit, StoreError>) -> Booking {
    match c {
        Ok(Commit::Created(b)) => b,
        other => panic!("expected a new booking, got {other:?}"),
    }
}

/// A runtime for the store's workers and the callers.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
