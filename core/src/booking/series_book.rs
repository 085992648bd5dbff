//! `book_room` with `repeat`: which occurrences of the series clash, asked once (skip them,
//! another room for them, or cancel), then the whole series booked in one store operation.

use core::fmt;

use heapless::Vec;

use super::answer::{complete, fail, Text};
use super::floor::{Floor, Here, Needs, Room};
#[cfg(feature = "public-titles")]
use super::named::{InTheWay, Reader};
use super::report::NotBooked;
use super::room_set::RoomBits;
use super::series::{day_of, expand, Occ, Rule, Summary};
use super::span::{Minute, Span};
use super::store::{occupant, NewBooking, Occurrence, SeriesCommit, SeriesIds, Store};
use super::trail::Actor;
use super::vacancy::free_at;
use crate::engine::{Call, CallError, Done, Msg, Reply, Report};
use crate::limits::{MAX_OCCURRENCES, MAX_OFFERED_ROOMS};
use crate::mrtr::Choice;
use crate::typed::{Elicited, Offer, Pick, Round, Sealed};
use crate::wire::write::{Num, Writer};
use redmark_macros::Question;

/// Choices the series question offers: skip, the rooms free at every clash, cancel.
const MAX_SERIES_CHOICES: usize = MAX_OFFERED_ROOMS + 2;
/// Clashing meetings the question names by title (the caller's own, or public); the rest read
/// "taken".
#[cfg(feature = "public-titles")]
const NAMED_CLASHES: usize = 3;

/// What to do with the occurrences that clash: asked only then. No argument stands in (a
/// client that cannot be asked gets `-32021`).
#[derive(Question)]
#[question(key = "series")]
struct SeriesClashes {
    /// Skip the clashing dates, book them in another room, or cancel the whole series
    #[field(title = "The clashing dates")]
    choice: Pick<MAX_SERIES_CHOICES>,
}

/// The same question asked again, when a date was taken between the first and its answer
/// (a question of its own, so its answer is told from the first's).
#[derive(Question)]
#[question(key = "series_again")]
struct SeriesAgain {
    /// Skip the clashing dates, book them in another room, or cancel the whole series
    #[field(title = "The clashing dates")]
    choice: Pick<MAX_SERIES_CHOICES>,
}

/// [`SeriesAgain`]'s key.
const ASKED_AGAIN: &str = "series_again";

/// What a series question's state carries: the first occurrence's span, the occurrences it
/// showed as clashing (bit `i`: occurrence `i`), the room's index on the floor, the building.
type SeriesState = ((Minute, Minute), u64, u16, Here);

/// The series state's first span and room, when this call answers a series question.
pub(super) fn sealed_series<'r>(floor: Floor<'r>, call: &Call<'_>) -> Option<(Span, &'r Room<'r>)> {
    let ((a, b), _, room, _) = SeriesState::unseal(call)?;
    Some((Span::new(a, b)?, floor.rooms.get(usize::from(room))?))
}

/// Why an occurrence clashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    /// It does not.
    Free,
    /// Another booking holds some of it.
    Taken,
    /// It has started.
    Past,
    /// Its wall time does not exist that day.
    Gap,
}

/// Each occurrence's clash, read from the store, and the meetings in the way the caller may
/// read (the first [`NAMED_CLASHES`]).
struct Clashes {
    why: [Why; MAX_OCCURRENCES],
    #[cfg(feature = "public-titles")]
    named: Vec<(u8, InTheWay), NAMED_CLASHES>,
}

impl Clashes {
    /// Whether occurrence `i` could be held in another room (taken here, or free again).
    fn movable(&self, i: usize) -> bool {
        matches!(self.why.get(i), Some(Why::Taken | Why::Free))
    }

    /// The occurrences that clash, as a mask.
    fn mask(&self) -> u64 {
        let on = self
            .why
            .iter()
            .enumerate()
            .filter(|(_, w)| **w != Why::Free);
        on.fold(0, |m, (i, _)| m | 1 << i)
    }
}

/// Reads which of `occ` clash in `room` at `now`.
async fn clashes<S: Store>(
    floor: Floor<'_>,
    store: &mut S,
    call: &Call<'_>,
    room: &str,
    occ: &[Occ],
) -> Result<Clashes, CallError> {
    let mut c = Clashes {
        why: [Why::Free; MAX_OCCURRENCES],
        #[cfg(feature = "public-titles")]
        named: Vec::new(),
    };
    for (i, o) in occ.iter().enumerate() {
        c.why[i] = match *o {
            Occ::Gap(_) => Why::Gap,
            Occ::At(s) if s.is_past(call.now) => Why::Past,
            Occ::At(s) => match occupant(store, room, s).await? {
                None => Why::Free,
                #[cfg_attr(not(feature = "public-titles"), allow(unused_variables))]
                Some(b) => {
                    #[cfg(feature = "public-titles")]
                    if let Some(n) = InTheWay::of(&floor, &b, &Reader::of(call)) {
                        let _ = c.named.push((i as u8, n));
                    }
                    Why::Taken
                }
            },
        };
    }
    let _ = floor;
    Ok(c)
}

/// Books `base` (its first span, room, title, holder and operation) repeated by `rule`, asking
/// once what to do with the occurrences that clash.
#[allow(clippy::too_many_arguments)] // the call's, the room's and the rule's, each needed
pub(super) async fn book_series<'r, S: Store>(
    floor: Floor<'r>,
    store: &mut S,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
    room: &'r Room<'r>,
    base: NewBooking,
    rule: Rule,
    until_arg: &str,
    needs: Needs<'_>,
    here: Here,
) -> Result<Done, CallError> {
    let by = Actor::of_call(call);
    let zone = floor.zone;
    let summary = Summary {
        rule,
        first: base.span,
        zone,
    };
    // A replayed retry of an operation that booked: the same series, whatever was asked.
    if store.made_by(&base.holder, &base.nonce).await?.is_some() {
        if let SeriesCommit::Replayed(series, ids) =
            store.commit_series(&base, "", &[], &by).await?
        {
            let r = SeriesBooked::replayed(summary, room, series, &ids);
            return Ok(complete(reply, &r));
        }
    }
    let occ = match expand(zone, base.span, &rule, until_arg) {
        Ok(o) => o,
        Err(why) => return Ok(fail(reply, &Msg(format_args!("{why}")))),
    };
    let sealed = SeriesState::unseal(call).map(|(_, mask, _, _)| mask);
    // One list of what to book, filled for each attempt (the handling holds it once).
    let mut booked: Vec<Occurrence, MAX_OCCURRENCES> = Vec::new();
    let mut c = clashes(floor, store, call, room.id, &occ).await?;
    if sealed.is_none() && c.mask() == 0 {
        plan(&occ, 0, false, &c, &mut booked);
        match store.commit_series(&base, "", &booked, &by).await? {
            SeriesCommit::Created(series, ids) | SeriesCommit::Replayed(series, ids) => {
                let r = SeriesBooked::new(summary, room, None, series, &ids, &occ, 0);
                return Ok(complete(reply, &r));
            }
            SeriesCommit::Unsupported => return Ok(fail(reply, &Unsupported)),
            // Taken meanwhile: ask about what clashes now.
            SeriesCommit::Taken(_) => c = clashes(floor, store, call, room.id, &occ).await?,
        }
    }
    let mut mask = sealed.unwrap_or_else(|| c.mask());
    // Which question this round asks or reads: the first, or the one asked again when a date
    // was taken between the first and its answer (a second such race is said in words).
    let mut again = call.response(ASKED_AGAIN).is_some();
    let mut reply = reply;
    loop {
        // Another room only for what another room can hold: the taken times, free in it at
        // each.
        let movable = |i: usize| mask & (1 << i) != 0 && c.movable(i);
        let mut others = floor.mask(|r| r.id != room.id && needs.fit(r));
        for (i, o) in occ.iter().enumerate() {
            if let (true, Occ::At(s)) = (movable(i), o) {
                if others.is_none() {
                    break;
                }
                others = free_at(floor, store, *s, needs, others).await?;
            }
        }
        let any_movable = (0..occ.len()).any(movable);
        let rooms: Vec<&Room<'_>, MAX_OFFERED_ROOMS> = if any_movable {
            floor.iter(others).take(MAX_OFFERED_ROOMS).collect()
        } else {
            Vec::new()
        };
        // The question's words and offer live only in this block: nothing of them is held
        // across the store's await below (`dyn Display` is not `Sync`).
        let (pick, answered) = {
            let skip = Msg(format_args!("Skip these dates, book the others"));
            let cancel = Msg(format_args!("Cancel: book nothing"));
            let offer: Offer<'_, MAX_SERIES_CHOICES> = core::iter::once(Choice {
                value: "skip",
                title: &skip as &dyn fmt::Display,
            })
            .chain(rooms.iter().map(|r| Choice {
                value: r.id,
                title: *r as &dyn fmt::Display,
            }))
            .chain(core::iter::once(Choice {
                value: "cancel",
                title: &cancel as &dyn fmt::Display,
            }))
            .collect();
            let message = Question {
                summary: &summary,
                room,
                occ: &occ,
                clashes: &c,
                mask,
                other_free: !rooms.is_empty(),
                any_movable,
                again,
            };
            let index = floor
                .rooms
                .iter()
                .position(|r| r.id == room.id)
                .unwrap_or(0);
            let state = ((base.span.start, base.span.end), mask, index as u16, here).seal();
            let round = if again {
                match reply.question_offering::<SeriesAgain>(call, &message, &state, &offer)? {
                    Round::Sent(done) => Err(done),
                    Round::Answer(Elicited::Accepted(SeriesAgain { choice }), r) => {
                        Ok((Some(choice.index()), r))
                    }
                    Round::Answer(Elicited::Declined, r) => Ok((None, r)),
                    Round::Answer(Elicited::Cancelled, r) => Ok((None, r)),
                }
            } else {
                match reply.question_offering::<SeriesClashes>(call, &message, &state, &offer)? {
                    Round::Sent(done) => Err(done),
                    Round::Answer(Elicited::Accepted(SeriesClashes { choice }), r) => {
                        Ok((Some(choice.index()), r))
                    }
                    Round::Answer(Elicited::Declined, r) => Ok((None, r)),
                    Round::Answer(Elicited::Cancelled, r) => Ok((None, r)),
                }
            };
            match round {
                Ok(answered) => answered,
                Err(done) => return Ok(done),
            }
        };
        reply = answered;
        let other = match pick {
            Some(0) => None,
            Some(p) if p <= rooms.len() => rooms.get(p - 1).copied(),
            _ => return Ok(complete(reply, &NotBooked::Cancelled)),
        };
        let moved = plan(&occ, mask, other.is_some(), &c, &mut booked);
        if booked.is_empty() {
            return Ok(fail(
                reply,
                &Text("Nothing booked: every date of the series clashes."),
            ));
        }
        let other_id = other.map_or("", |r| r.id);
        match store.commit_series(&base, other_id, &booked, &by).await? {
            SeriesCommit::Created(series, ids) | SeriesCommit::Replayed(series, ids) => {
                let r = SeriesBooked::new(summary, room, other, series, &ids, &occ, mask);
                let r = SeriesBooked { moved, ..r };
                return Ok(complete(reply, &r));
            }
            SeriesCommit::Unsupported => return Ok(fail(reply, &Unsupported)),
            // Taken since the question: asked again with what clashes now.
            SeriesCommit::Taken(_) if !again => {
                c = clashes(floor, store, call, room.id, &occ).await?;
                mask = c.mask();
                again = true;
            }
            SeriesCommit::Taken(_) => {
                return Ok(fail(
                    reply,
                    &Text(
                        "Not booked: some of those dates were taken meanwhile, so nothing was \
                         booked. Call book_room again to see what clashes now.",
                    ),
                ))
            }
        }
    }
}

/// Fills `booked` with what to book of `occ`: every occurrence outside `mask`, and those in it
/// that another room can hold when `elsewhere` (there); the occurrences moved, as a mask.
fn plan(
    occ: &[Occ],
    mask: u64,
    elsewhere: bool,
    c: &Clashes,
    booked: &mut Vec<Occurrence, MAX_OCCURRENCES>,
) -> u64 {
    booked.clear();
    let mut moved = 0u64;
    for (i, o) in occ.iter().enumerate() {
        let Occ::At(span) = *o else { continue };
        let clash = mask & (1 << i) != 0;
        let there = clash && elsewhere && c.movable(i);
        if there {
            moved |= 1 << i;
        }
        if !clash || there {
            let _ = booked.push(Occurrence {
                span,
                elsewhere: there,
            });
        }
    }
    moved
}

/// A store without series.
struct Unsupported;

impl Report for Unsupported {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        f.write_str("Not booked: this server's store keeps no repeating bookings.")
    }
}

/// The question's words: which dates clash and why, and what may be done.
struct Question<'a, 'r> {
    summary: &'a Summary<'a>,
    room: &'a Room<'r>,
    occ: &'a [Occ],
    clashes: &'a Clashes,
    mask: u64,
    other_free: bool,
    any_movable: bool,
    /// Asked again: some dates were taken since the first question.
    again: bool,
}

impl fmt::Display for Question<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.mask.count_ones();
        if self.again {
            f.write_str("Some dates were taken since you answered, so nothing was booked yet. ")?;
        }
        write!(
            f,
            "{} ({} dates) in {}: {} of them cannot be booked there: ",
            self.summary,
            Num(self.occ.len() as i64),
            self.room.name,
            Num(n.into())
        )?;
        let zone = self.summary.zone;
        let mut sep = "";
        for (i, o) in self.occ.iter().enumerate() {
            if self.mask & (1 << i) == 0 {
                continue;
            }
            write!(f, "{sep}{} (", day_of(zone, o))?;
            match self.clashes.why[i] {
                Why::Past => f.write_str("already started")?,
                Why::Gap => {
                    f.write_str("that time does not exist that day: the clocks go forward")?
                }
                Why::Free => f.write_str("free again now")?,
                Why::Taken => {
                    f.write_str("taken")?;
                    #[cfg(feature = "public-titles")]
                    if let Some((_, n)) = self
                        .clashes
                        .named
                        .iter()
                        .find(|(j, _)| usize::from(*j) == i)
                    {
                        write!(f, "{n}")?;
                    }
                }
            }
            f.write_str(")")?;
            sep = ", ";
        }
        f.write_str(". Skip them and book the others")?;
        if self.other_free {
            f.write_str(
                ", book them in another room (only rooms free at all of them are offered)",
            )?;
        } else if self.any_movable {
            f.write_str(" (no other room is free at all of them)")?;
        }
        f.write_str(", or cancel?")
    }
}

/// A series booked: its rule, where, and its bookings' ids.
struct SeriesBooked<'a, 'r> {
    summary: Summary<'a>,
    room: &'a Room<'r>,
    other: Option<&'a Room<'r>>,
    series: u32,
    ids: &'a SeriesIds,
    occ: &'a [Occ],
    /// The occurrences not booked (or, with `moved`, booked in `other`).
    skipped: u64,
    /// The occurrences booked in `other`.
    moved: u64,
}

impl<'a, 'r> SeriesBooked<'a, 'r> {
    fn new(
        summary: Summary<'a>,
        room: &'a Room<'r>,
        other: Option<&'a Room<'r>>,
        series: u32,
        ids: &'a SeriesIds,
        occ: &'a [Occ],
        skipped: u64,
    ) -> Self {
        let gaps = occ
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o, Occ::Gap(_)));
        let skipped = gaps.fold(skipped, |m, (i, _)| m | 1 << i);
        SeriesBooked {
            summary,
            room,
            other,
            series,
            ids,
            occ,
            skipped,
            moved: 0,
        }
    }

    fn replayed(summary: Summary<'a>, room: &'a Room<'r>, series: u32, ids: &'a SeriesIds) -> Self {
        SeriesBooked {
            summary,
            room,
            other: None,
            series,
            ids,
            occ: &[],
            skipped: 0,
            moved: 0,
        }
    }
}

impl Report for SeriesBooked<'_, '_> {
    fn text(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        write!(f, "Booked {}", self.summary)?;
        let zone = self.summary.zone;
        if let (Some(first), Some(last)) = (self.occ.first(), self.occ.last()) {
            write!(
                f,
                ", {} from {} to {}",
                Num(self.occ.len() as i64),
                day_of(zone, first),
                day_of(zone, last)
            )?;
        }
        write!(f, ", in {}", self.room.name)?;
        let mut sep = "; except ";
        for (i, o) in self.occ.iter().enumerate() {
            let (moved, skipped) = (self.moved & 1 << i != 0, self.skipped & 1 << i != 0);
            if moved || skipped {
                write!(f, "{sep}{} (", day_of(zone, o))?;
                match (self.other, moved) {
                    (Some(r), true) => write!(f, "in {}", r.name)?,
                    _ => f.write_str("skipped")?,
                }
                f.write_str(")")?;
                sep = ", ";
            }
        }
        write!(
            f,
            " — series bk_{}, {} bookings:",
            Num(self.series.into()),
            Num(self.ids.len() as i64)
        )?;
        for id in self.ids {
            write!(f, " bk_{}", Num((*id).into()))?;
        }
        f.write_str(".")
    }
    fn has_structured(&self) -> bool {
        true
    }
    fn structured(&self, w: &mut Writer<'_>) {
        w.begin_object().key("booked").bool(true);
        w.key("series")
            .string_fmt(format_args!("bk_{}", Num(self.series.into())));
        w.key("room_id").string(self.room.id);
        w.key("bookings").begin_array();
        for id in self.ids {
            w.string_fmt(format_args!("bk_{}", Num((*id).into())));
        }
        w.end_array();
        let zone = self.summary.zone;
        for (key, mask) in [
            ("skipped", self.skipped & !self.moved),
            ("moved", self.moved),
        ] {
            w.key(key).begin_array();
            for (i, o) in self.occ.iter().enumerate() {
                if mask & 1 << i != 0 {
                    w.string_fmt(format_args!("{}", day_of(zone, o)));
                }
            }
            w.end_array();
        }
        w.end_object();
    }
}
