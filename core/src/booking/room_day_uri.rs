//! The spelling of a room's day as a resource URI, `redmark://rooms/{room}/{day}`: written as a read answers it and a change is announced under it, read back to a room and the UTC span of its day (what a `subscriptions/listen` stream follows).

use core::fmt;

use super::floor::Floor;
use super::span::{Day, Span};
use super::zone::day_span;

/// What every room-day URI starts with; the room's id and the day (`YYYY-MM-DD`, the floor's
/// wall clock) follow, separated by `/`.
pub const ROOM_DAY_PREFIX: &str = "redmark://rooms/";

/// The URI of room `.0`'s day `.1` as a read answers it (the room's id, the ISO day):
/// `redmark://rooms/nook/2026-12-07`; what a change of that day is announced under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoomDayUri<'a>(pub &'a str, pub Day);

impl fmt::Display for RoomDayUri<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{ROOM_DAY_PREFIX}{}/{}", self.0, self.1)
    }
}

/// The room id and the day `uri` names, if it is a room-day URI as [`RoomDayUri`] writes it
/// (the room not looked up; no alias, no day word).
pub fn room_day(uri: &str) -> Option<(&str, Day)> {
    let rest = uri.strip_prefix(ROOM_DAY_PREFIX)?;
    let (room, day) = rest.rsplit_once('/')?;
    let room = Some(room).filter(|r| !r.is_empty() && !r.contains('/'))?;
    Some((room, Day::parse(day)?))
}

/// The room `uri` names on `floors` and the UTC minutes of its day on that floor's clock:
/// any booking of that room overlapping the span changes the resource.
pub fn watched<'u>(floors: &[Floor<'_>], uri: &'u str) -> Option<(&'u str, Span)> {
    let (room, day) = room_day(uri)?;
    let floor = floors
        .iter()
        .find(|f| f.rooms.iter().any(|r| r.id == room))?;
    Some((room, day_span(floor.zone, day)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::DEFAULT_FLOOR;

    #[test]
    fn the_uri_of_a_room_day_reads_back() {
        let day = Day::parse("2026-12-07").unwrap();
        let uri = std::format!("{}", RoomDayUri("nook", day));
        assert_eq!(uri, "redmark://rooms/nook/2026-12-07");
        assert_eq!(room_day(&uri), Some(("nook", day)));
        for bad in [
            "redmark://rooms/r1/2026-13-07",
            "redmark://rooms//2026-12-07",
            "redmark://rooms/a/b/2026-12-07",
            "redmark://rooms/r1",
            "file:///rooms/r1/2026-12-07",
        ] {
            assert_eq!(room_day(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_room_on_the_floor_is_watched_for_its_whole_day() {
        let room = DEFAULT_FLOOR.rooms[0].id;
        let uri = std::format!("{ROOM_DAY_PREFIX}{room}/2026-12-07");
        let (r, span) = watched(&[DEFAULT_FLOOR], &uri).unwrap();
        assert_eq!(r, room);
        assert_eq!(span.minutes(), 24 * 60);
        let nowhere = std::format!("{ROOM_DAY_PREFIX}no-such-room/2026-12-07");
        assert_eq!(watched(&[DEFAULT_FLOOR], &nowhere), None);
    }
}
