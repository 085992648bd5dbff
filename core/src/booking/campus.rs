//! A site of buildings (feature `campus`): which building a call is about (asked when a hint
//! fits rooms in several), equipment, and `list_rooms` across the site in each building's zone.

use heapless::Vec;

use super::answer::{complete, fail, Text};
use super::campus_report::{BuildingTitle, Listed, SiteList, Time, UnknownBuilding};
use super::floor::{on_level, Floor, Mask, Needs};
#[cfg(feature = "public-titles")]
use super::named::{in_the_way, InTheWay, Reader};
use super::report::NotBooked;
use super::room_set::RoomBits;
use super::store::Store;
use super::tools::{BookArgs, ListArgs};
use super::vacancy::free_at;
use super::when::{when, Times};
use crate::engine::{Call, CallError, Done, Msg, Reply};
#[cfg(feature = "public-titles")]
use crate::limits::MAX_NAMED;
use crate::limits::{MAX_BUILDINGS, MAX_LISTED_ROOMS, MAX_ROOMS};
use crate::mrtr::Choice;
use crate::typed::{Elicited, Offer, Pick, Round, Sealed};
use redmark_macros::Question;

/// The building whose id or name is `arg`, ignoring case.
pub(super) fn named_building(site: &[Floor<'_>], arg: &str) -> Option<usize> {
    let arg = arg.trim();
    site.iter()
        .take(MAX_BUILDINGS)
        .position(|b| b.id.eq_ignore_ascii_case(arg) || b.name.eq_ignore_ascii_case(arg))
}

/// The first `n` rooms of `shown`, and how many more there are.
pub(super) fn first_rooms(shown: Mask, n: usize) -> (Mask, u32) {
    let mut kept = Mask::NONE;
    let mut more = 0;
    for i in (0..MAX_ROOMS).filter(|i| shown.has(*i)) {
        if (kept.count() as usize) < n {
            kept = kept.with(i);
        } else {
            more += 1;
        }
    }
    (kept, more)
}

/// Which building a `book_room` call is about.
enum Which<'a> {
    One(usize),
    /// A `building` argument that names none.
    Unknown(&'a str),
    /// Several buildings have rooms the hint fits (bit `i`: building `i`).
    Several(u32),
}

/// The `building` argument; else the building of the exact `room_id`; else those whose rooms
/// fit `room_hint` (one: it; several: asked); else the first.
fn which<'a>(site: &[Floor<'_>], args: &BookArgs<'a>) -> Which<'a> {
    if let Some(b) = args.building {
        return named_building(site, b).map_or(Which::Unknown(b), Which::One);
    }
    let buildings = site.iter().take(MAX_BUILDINGS).enumerate();
    if let Some(id) = args.room_id {
        let at = buildings.clone().find(|(_, b)| b.by_id(id).is_some());
        return Which::One(at.map_or(0, |(i, _)| i));
    }
    let Some(hint) = args.room_hint else {
        return Which::One(0);
    };
    let fit = buildings
        .filter(|(_, b)| !b.matching(hint).is_none())
        .fold(0u32, |bits, (i, _)| bits | 1 << i);
    match fit.count_ones() {
        0 => Which::One(0),
        1 => Which::One(fit.trailing_zeros() as usize),
        _ => Which::Several(fit),
    }
}

/// Which building, when a hint fits rooms in several: asked before the time is read, so the
/// chosen building's clock reads it. `building` takes a building's id, so a client that cannot
/// be asked is told the buildings and to call again with it.
#[derive(Question)]
#[question(key = "building", stand_in = "building")]
struct WhichBuilding {
    /// The building to book in
    #[field(title = "Building")]
    building: Pick<MAX_BUILDINGS>,
}

/// The building question's state: no time yet (one byte, unlike every later state).
const ASKED_BUILDING: u8 = 0xb1;

/// The building a `book_room` call books in (the one its state carries, else [`which`]),
/// asking which first when its hint fits rooms in several; every later question seals the
/// building with its time. The building, the reply still to be given and the building's
/// index; or the call's answer.
#[allow(clippy::type_complexity)] // what a question round comes to, as `ask_which`'s
pub(super) fn building_for<'r, 'w, 'b>(
    site: &[Floor<'r>],
    args: &BookArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'w, 'b>,
) -> Result<Result<(Floor<'r>, Reply<'w, 'b>, u8), Done>, CallError> {
    let sealed = super::when::sealed_building(call).filter(|b| usize::from(*b) < site.len());
    let (at, reply) = match sealed {
        Some(b) => (usize::from(b), reply),
        None => match which(site, args) {
            Which::One(b) => (b, reply),
            Which::Unknown(name) => return Ok(Err(fail(reply, &UnknownBuilding { site, name }))),
            Which::Several(fit) => match ask_building(site, call, reply, args, fit)? {
                Ok(chosen) => chosen,
                Err(done) => return Ok(Err(done)),
            },
        },
    };
    let floor = *site
        .get(at)
        .ok_or(CallError::Internal("no such building"))?;
    Ok(Ok((floor, reply, at as u8)))
}

/// Asks which of the buildings in `fit` the hint means: its index, with the reply still to be
/// given, or the call's answer.
fn ask_building<'w, 'b>(
    site: &[Floor<'_>],
    call: &Call<'_>,
    reply: Reply<'w, 'b>,
    args: &BookArgs<'_>,
    fit: u32,
) -> Result<Result<(usize, Reply<'w, 'b>), Done>, CallError> {
    let chosen = |i: &usize| fit & 1 << i != 0;
    let titles: Vec<BuildingTitle<'_, '_>, MAX_BUILDINGS> = site
        .iter()
        .enumerate()
        .filter(|(i, _)| chosen(i))
        .map(|(_, b)| BuildingTitle(b))
        .collect();
    let offer: Offer<'_, MAX_BUILDINGS> = titles
        .iter()
        .map(|t| Choice {
            value: t.0.id,
            title: t,
        })
        .collect();
    let message = Msg(format_args!(
        "'{}' fits rooms in more than one building. Which building do you mean?",
        Text(args.room_hint.unwrap_or(""))
    ));
    let state = ASKED_BUILDING.seal();
    Ok(
        match reply.question_offering::<WhichBuilding>(call, &message, &state, &offer)? {
            Round::Sent(done) => Err(done),
            Round::Answer(Elicited::Accepted(WhichBuilding { building }), reply) => {
                let at = (0..site.len()).filter(chosen).nth(building.index());
                let at = at.ok_or(CallError::Internal("validated answer names no building"))?;
                Ok((at, reply))
            }
            Round::Answer(Elicited::Declined, reply) => Err(complete(reply, &NotBooked::Declined)),
            Round::Answer(Elicited::Cancelled, reply) => {
                Err(complete(reply, &NotBooked::Cancelled))
            }
        },
    )
}

/// `list_rooms` on a site: the rooms that fit (of one building, or of all, grouped by building
/// and level), each building's time read on its own clock; at most [`MAX_LISTED_ROOMS`].
pub(super) async fn list_site<S: Store>(
    site: &[Floor<'_>],
    store: &mut S,
    args: ListArgs<'_>,
    call: &Call<'_>,
    reply: Reply<'_, '_>,
) -> Result<Done, CallError> {
    let needs = Needs {
        people: args.attendees.unwrap_or(0),
        equipment: args.equipment,
    };
    let only = match args.building {
        None => None,
        Some(name) => match named_building(site, name) {
            Some(b) => Some(b),
            None => return Ok(fail(reply, &UnknownBuilding { site, name })),
        },
    };
    if args.day.is_none() && (args.start.is_some() || args.hour.is_some()) {
        return Ok(fail(
            reply,
            &Text("Give the day too, to see which rooms are free then."),
        ));
    }
    let mut times = [Time::Any; MAX_BUILDINGS];
    let mut listed: Vec<Listed, MAX_LISTED_ROOMS> = Vec::new();
    let mut more = 0;
    // The meetings in the way that the caller may read: its own, or any on a public floor.
    #[cfg(feature = "public-titles")]
    let mut named: Vec<(&str, InTheWay), MAX_NAMED> = Vec::new();
    for (b, floor) in site.iter().enumerate().take(MAX_BUILDINGS) {
        if only.is_some_and(|o| o != b) {
            continue;
        }
        if let Some(d) = args.day {
            times[b] = match when(*floor, d, args.start, args.hour, args.minutes, call.now) {
                // A wall time the clocks repeat: the first of the two, shown with its zone.
                Ok(Times::One(s) | Times::Twice(s, _)) if s.is_past(call.now) => Time::Past(s),
                Ok(Times::One(s) | Times::Twice(s, _)) => Time::At(s),
                Err(why) if site.len() == 1 || only.is_some() => {
                    return Ok(fail(reply, &Msg(format_args!("{why}"))))
                }
                Err(why) => {
                    let msg = format_args!("{}: {why} (or give building)", Text(floor.name));
                    return Ok(fail(reply, &Msg(msg)));
                }
            };
        }
        let fits = floor.mask(|r| needs.fit(r) && on_level(r, args.level));
        let (shown, over) = first_rooms(fits, MAX_LISTED_ROOMS - listed.len());
        more += over;
        let free = match times[b] {
            Time::At(s) => free_at(*floor, store, s, needs, shown).await?,
            _ => Mask::NONE,
        };
        #[cfg(feature = "public-titles")]
        if let Time::At(s) = times[b] {
            let booked = (0..MAX_ROOMS)
                .filter(|i| shown.has(*i) && !free.has(*i))
                .fold(Mask::NONE, |m, i| m.with(i));
            for n in in_the_way(*floor, store, s, booked, &Reader::of(call)).await? {
                if named.push(n).is_err() {
                    break;
                }
            }
        }
        for i in (0..MAX_ROOMS).filter(|i| shown.has(*i)) {
            let entry = Listed {
                building: b as u8,
                room: i as u16,
                free: free.has(i),
            };
            listed
                .push(entry)
                .map_err(|_| CallError::Internal("listed past its bound"))?;
        }
    }
    Ok(complete(
        reply,
        &SiteList {
            site,
            listed: &listed,
            times: &times,
            more,
            narrowed: args.level.is_some() || args.equipment.is_some(),
            now: call.now,
            #[cfg(feature = "public-titles")]
            in_the_way: &named,
        },
    ))
}
