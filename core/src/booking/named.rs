//! Who reads a meeting's title: its organiser always, others only on a floor with public titles.

use core::fmt;

use heapless::Vec;

use super::floor::{Floor, Mask};
#[cfg(feature = "public-titles")]
use super::span::Span;
#[cfg(feature = "day-schedule")]
use super::span::{Day, Minute};
#[cfg(feature = "public-titles")]
use super::store::occupant;
use super::store::{holder, Booking, Holder, Store, Title};
#[cfg(feature = "day-schedule")]
use super::time_of_day::TimeOfDay;
#[cfg(feature = "day-schedule")]
use super::zone::{day_span, wall};
use crate::engine::{Call, CallError};
use crate::limits::MAX_NAMED;
use crate::wire::write::Writer;

/// Whether every principal reads the titles of others' bookings on `floor`.
fn public(floor: &Floor<'_>) -> bool {
    #[cfg(feature = "public-titles")]
    return floor.public_titles;
    #[cfg(not(feature = "public-titles"))]
    {
        let _ = floor;
        false
    }
}

/// Who reads: the caller's holder, and whether it is an operator (who reads every title).
#[derive(Clone, Copy, Debug)]
pub(super) struct Reader {
    holder: Holder,
    operator: bool,
}

impl Reader {
    /// The caller of `call`.
    pub(super) fn of(call: &Call<'_>) -> Reader {
        Reader {
            holder: holder(call.principal),
            operator: cfg!(feature = "operators") && call.access.operator,
        }
    }
}

/// `Some(yours)` when the principal `me` may read `b`'s title (its own, any to an operator, or
/// any on a floor whose titles are public); `None` when `b` is only "booked" to it.
pub(super) fn readable(floor: &Floor<'_>, b: &Booking, me: &Reader) -> Option<bool> {
    let yours = b.new.holder == me.holder;
    (yours || me.operator || public(floor)).then_some(yours)
}

/// Whether the principal holding `me` (an operator or not) reads `b`'s title on `floor`, as every
/// tool decides it: `Some(yours)`, or `None` when `b` is only "booked" to it (a host's calendar
/// feed asks this).
pub fn title_readable(floor: &Floor<'_>, b: &Booking, me: Holder, operator: bool) -> Option<bool> {
    let reader = Reader {
        holder: me,
        operator: cfg!(feature = "operators") && operator,
    };
    readable(floor, b, &reader)
}

/// The meeting holding a room, as `list_rooms` and a taken room's answer name it: a title the
/// caller may read (never its organiser, whom the store knows only as a keyed hash).
#[cfg(feature = "public-titles")]
#[derive(Debug)]
pub(super) struct InTheWay {
    title: Title,
    yours: bool,
}

#[cfg(feature = "public-titles")]
impl InTheWay {
    /// `b` named for the caller holding `me`: `None` when it has no title or one the caller
    /// may not read.
    pub(super) fn of(floor: &Floor<'_>, b: &Booking, me: &Reader) -> Option<InTheWay> {
        let yours = readable(floor, b, me)?;
        (!b.new.title.is_empty()).then(|| InTheWay {
            title: b.new.title.clone(),
            yours,
        })
    }

    /// `"in_the_way": {"title": …, "yours": …}`, a member of the object being written.
    pub(super) fn write(&self, w: &mut Writer<'_>) {
        w.key("in_the_way").begin_object();
        w.key("title").string(&self.title);
        w.key("yours").bool(self.yours).end_object();
    }
}

/// ` by "Design review"`, or ` by your "Design review"`.
#[cfg(feature = "public-titles")]
impl fmt::Display for InTheWay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.yours { " by your \"" } else { " by \"" })?;
        f.write_str(&self.title)?;
        f.write_str("\"")
    }
}

/// An [`InTheWay`]'s words when there is one, else nothing.
#[cfg(feature = "public-titles")]
pub(super) struct Named<'a>(pub(super) Option<&'a InTheWay>);

#[cfg(feature = "public-titles")]
impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(m) => fmt::Display::fmt(m, f),
            None => Ok(()),
        }
    }
}

/// The meetings in the way in the rooms of `booked` during `span` that the caller holding `me`
/// may read, by room id: at most [`MAX_NAMED`] (the rooms after those show only "booked").
#[cfg(feature = "public-titles")]
pub(super) async fn in_the_way<'r, S: Store>(
    floor: Floor<'r>,
    store: &mut S,
    span: Span,
    booked: Mask,
    me: &Reader,
) -> Result<Vec<(&'r str, InTheWay), MAX_NAMED>, CallError> {
    let mut named = Vec::new();
    for r in floor.iter(booked) {
        if named.is_full() {
            break;
        }
        let Some(b) = occupant(store, r.id, span).await? else {
            continue;
        };
        if let Some(n) = InTheWay::of(&floor, &b, me) {
            let _ = named.push((r.id, n));
        }
    }
    Ok(named)
}

/// A booking `day_schedule` names: the caller's own (titled or not), or another's title on a
/// floor whose titles are public; its times cut to the day, on the floor's clock.
#[cfg(feature = "day-schedule")]
pub(super) struct Meeting<'r> {
    pub(super) room: &'r str,
    pub(super) from: TimeOfDay,
    pub(super) to: TimeOfDay,
    pub(super) title: Title,
    pub(super) yours: bool,
}

/// The meetings one `day_schedule` answer names, in floor order and then start order: at most
/// [`MAX_NAMED`]; `unnamed` counts those past it (still shown as booked times).
#[cfg(feature = "day-schedule")]
pub(super) struct Meetings<'r> {
    pub(super) listed: Vec<Meeting<'r>, MAX_NAMED>,
    pub(super) unnamed: u16,
}

/// The meetings of the rooms in `shown` on `day` that the caller holding `me` may read.
#[cfg(feature = "day-schedule")]
pub(super) async fn meetings<'r, S: Store>(
    floor: Floor<'r>,
    store: &mut S,
    day: Day,
    shown: Mask,
    me: &Reader,
) -> Result<Meetings<'r>, CallError> {
    let first = day_span(floor.zone, day);
    let at = |m: Minute| {
        let minute = wall(floor.zone, m).saturating_sub(day.first_minute());
        TimeOfDay(minute.min(24 * 60) as u16)
    };
    let mut found = Meetings {
        listed: Vec::new(),
        unnamed: 0,
    };
    for r in floor.iter(shown) {
        let mut from = first.start;
        while let Some(b) = store.next_in_room(r.id, from).await? {
            let s = b.new.span;
            // Only forward, within the day: a store that answered otherwise would walk for ever.
            if s.end <= from || s.start >= first.end {
                break;
            }
            from = s.end;
            let Some(yours) = readable(&floor, &b, me) else {
                continue;
            };
            if !yours && b.new.title.is_empty() {
                continue;
            }
            let meeting = Meeting {
                room: r.id,
                from: at(s.start.max(first.start)),
                to: at(s.end.min(first.end)),
                title: b.new.title,
                yours,
            };
            if found.listed.push(meeting).is_err() {
                found.unnamed = found.unnamed.saturating_add(1);
            }
        }
    }
    Ok(found)
}

#[cfg(feature = "day-schedule")]
impl Meetings<'_> {
    /// The meetings of `room`, in order.
    fn of<'a>(&'a self, room: &'a str) -> impl Iterator<Item = &'a Meeting<'a>> {
        self.listed.iter().filter(move |m| m.room == room)
    }

    /// A line for each meeting of `room`: `  09:30–10:15 "Design review" (yours)`.
    pub(super) fn text(&self, f: &mut dyn fmt::Write, room: &str) -> fmt::Result {
        for m in self.of(room) {
            write!(f, "  {}–{}", m.from, m.to)?;
            if !m.title.is_empty() {
                f.write_str(" \"")?;
                f.write_str(&m.title)?;
                f.write_str("\"")?;
            }
            f.write_str(if m.yours { " (yours)\n" } else { "\n" })?;
        }
        Ok(())
    }

    /// `"meetings": [{"start", "end", "title", "yours"}]` in `room`'s object, when it has any.
    pub(super) fn structured(&self, w: &mut Writer<'_>, room: &str) {
        if self.of(room).next().is_none() {
            return;
        }
        w.key("meetings").begin_array();
        for m in self.of(room) {
            w.begin_object()
                .key("start")
                .string_fmt(format_args!("{}", m.from));
            w.key("end").string_fmt(format_args!("{}", m.to));
            if !m.title.is_empty() {
                w.key("title").string(&m.title);
            }
            w.key("yours").bool(m.yours).end_object();
        }
        w.end_array();
    }

    /// What was left unnamed, if anything: a line of text.
    pub(super) fn unnamed_text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        if self.unnamed == 0 {
            return Ok(());
        }
        writeln!(
            f,
            "{} more bookings are shown as booked times only (an answer names at most {}; \
             list_bookings lists all of yours).",
            self.unnamed, MAX_NAMED
        )
    }
}
