//! The files `redmark serve` reads: `--rooms` (the floor; `--tokens` is `auth/tokens.rs`);
//! and where bookings live (`--store` or `REDMARK_STORE`).

use std::path::{Path, PathBuf};

use redmark_core::booking::{
    Floor, Room, TimeOfDay, Utc, Zone, DEFAULT_GRID, DEFAULT_MAX_MINUTES, MAX_MINUTES,
};
use redmark_core::limits::{MAX_ROOMS, MAX_ROOM_ID};
use serde::Deserialize;

use super::zone::named_zone;
use crate::auth::tokens::located;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomsFile {
    /// Minutes of the floor's booking grid (5, 10, 15, 30 or 60).
    #[serde(default = "default_grid")]
    grid_minutes: u16,
    /// The longest booking, in minutes (a whole number of grid steps, at most a day).
    #[serde(default = "default_max_minutes")]
    max_minutes: u16,
    /// The floor's IANA time zone (`Europe/Berlin`); UTC when not given.
    time_zone: Option<String>,
    /// When bookings may start and must end, `"07:00-20:00"`; any time when not given.
    opening_hours: Option<String>,
    /// Whether everyone sees the titles of others' bookings (default: only "booked").
    #[serde(default)]
    public_titles: bool,
    room: Vec<RoomEntry>,
}

fn default_grid() -> u16 {
    DEFAULT_GRID
}

fn default_max_minutes() -> u16 {
    DEFAULT_MAX_MINUTES
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomEntry {
    id: String,
    name: String,
    seats: u16,
    #[serde(default)]
    aliases: Vec<String>,
}

/// Loads a floor from TOML:
///
/// ```toml
/// time_zone = "Europe/Berlin"  # optional: the floor's wall clock (default UTC)
/// opening_hours = "07:00-20:00" # optional: bookings start and end within (default any time)
/// grid_minutes = 15        # optional: 5, 10, 15, 30 or 60 (default 15)
/// max_minutes = 480        # optional: the longest booking (default 8 hours)
/// public_titles = true     # optional: others see booking titles (default: only "booked")
///
/// [[room]]
/// id = "atrium"            # 1-24 bytes, unique
/// name = "The Atrium"
/// seats = 24
/// aliases = ["the big room"]
/// ```
///
/// The floor lives for the whole process, so its strings are leaked once.
pub fn load_rooms(path: &Path) -> Result<Floor<'static>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_rooms(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse_rooms(text: &str) -> Result<Floor<'static>, String> {
    let file: RoomsFile = toml::from_str(text).map_err(|e| located(text, &e))?;
    if file.room.is_empty() || file.room.len() > MAX_ROOMS {
        return Err(format!("a floor has 1 to {MAX_ROOMS} [[room]] entries"));
    }
    if ![5, 10, 15, 30, 60].contains(&file.grid_minutes) {
        return Err(format!(
            "grid_minutes = {}: give 5, 10, 15, 30 or 60",
            file.grid_minutes
        ));
    }
    let max = file.max_minutes;
    if max == 0 || u32::from(max) > MAX_MINUTES || !max.is_multiple_of(file.grid_minutes) {
        return Err(format!(
            "max_minutes = {max}: a whole number of grid steps ({} minutes), at most {MAX_MINUTES}",
            file.grid_minutes
        ));
    }
    let zone: &'static dyn Zone = match file.time_zone.as_deref() {
        None => &Utc,
        Some(name) => Box::leak(Box::new(named_zone(name)?)),
    };
    let open = file
        .opening_hours
        .as_deref()
        .map(opening_hours)
        .transpose()?;
    let mut rooms = Vec::new();
    for r in file.room {
        if r.id.is_empty() || r.id.len() > MAX_ROOM_ID || r.id.chars().any(char::is_whitespace) {
            return Err(format!(
                "room id {:?}: 1 to {MAX_ROOM_ID} bytes, no spaces",
                r.id
            ));
        }
        if rooms.iter().any(|x: &Room<'_>| x.id == r.id) {
            return Err(format!("room id {:?} appears twice", r.id));
        }
        let aliases: Vec<&'static str> = r.aliases.into_iter().map(leak).collect();
        rooms.push(Room {
            id: leak(r.id),
            name: leak(r.name),
            seats: r.seats,
            aliases: Box::leak(aliases.into_boxed_slice()),
        });
    }
    Ok(Floor {
        rooms: Box::leak(rooms.into_boxed_slice()),
        grid: file.grid_minutes,
        max_minutes: max,
        zone,
        open,
        public_titles: file.public_titles,
    })
}

/// `"07:00-20:00"`: when the floor opens and closes (`24:00` is the midnight that ends the day).
fn opening_hours(s: &str) -> Result<(TimeOfDay, TimeOfDay), String> {
    let time = |t: &str| match t.trim() {
        "24:00" => Some(TimeOfDay::END_OF_DAY),
        t => TimeOfDay::parse(t),
    };
    match s.split_once('-').map(|(a, b)| (time(a), time(b))) {
        Some((Some(open), Some(close))) if open < close => Ok((open, close)),
        _ => Err(format!(
            "opening_hours = {s:?}: give when the floor opens and closes, e.g. \"07:00-20:00\""
        )),
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The environment variable that names the store when `--store` is not given.
pub const STORE_ENV: &str = "REDMARK_STORE";

/// Where bookings live.
#[derive(Debug, PartialEq, Eq)]
pub enum StoreChoice {
    /// redb, in this folder (`--data` unless `--store PATH` names another).
    Redb(Option<PathBuf>),
    /// PostgreSQL at this URL (it may hold a password: never log it, see `pg::describe`).
    Postgres(String),
}

/// Where bookings live: `--store` if given, else `REDMARK_STORE` (`env`), else redb in
/// `--data`. A `postgres://` or `postgresql://` URL selects PostgreSQL; a path names the folder
/// of the redb file.
pub fn store_choice(flag: Option<&str>, env: Option<&str>) -> StoreChoice {
    match flag.or(env).filter(|s| !s.is_empty()) {
        None => StoreChoice::Redb(None),
        Some(s) if crate::store::pg::is_url(s) => StoreChoice::Postgres(s.to_owned()),
        Some(s) => StoreChoice::Redb(Some(PathBuf::from(s))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rooms_parse_and_validate() {
        let f = parse_rooms(
            "[[room]]\nid = \"a\"\nname = \"A\"\nseats = 3\naliases = [\"the big room\"]\n\
             [[room]]\nid = \"b\"\nname = \"B\"\nseats = 9\n",
        )
        .unwrap();
        assert_eq!(f.rooms.len(), 2);
        assert_eq!(f.matching("big room"), 0b01);
        assert!(parse_rooms("[[room]]\nid = \"a\"\nname = \"A\"\nseats = 3\n[[room]]\nid = \"a\"\nname = \"B\"\nseats = 1\n").is_err());
        assert!(parse_rooms("room = []").is_err());
        assert!(parse_rooms("[[room]]\nid = \"a b\"\nname = \"A\"\nseats = 3\n").is_err());
        assert_eq!((f.grid, f.max_minutes), (15, 480), "the defaults");
        let one = "[[room]]\nid = \"a\"\nname = \"A\"\nseats = 3\n";
        let f = parse_rooms(&format!("grid_minutes = 30\nmax_minutes = 120\n{one}")).unwrap();
        assert_eq!((f.grid, f.max_minutes), (30, 120));
        assert_eq!(f.zone.name(), "UTC", "old floor files mean UTC");
        assert!(!f.public_titles, "titles are private unless the file says");
        let public = parse_rooms(&format!("public_titles = true\n{one}")).unwrap();
        assert!(public.public_titles);
        let f = parse_rooms(&format!("time_zone = \"Europe/Berlin\"\n{one}")).unwrap();
        assert_eq!(f.zone.name(), "Europe/Berlin");
        let e = parse_rooms(&format!("time_zone = \"Berlin\"\n{one}")).unwrap_err();
        assert!(e.contains("time_zone = \"Berlin\""), "{e}");
        assert_eq!(f.open, None, "open all day unless the file says");
        let f = parse_rooms(&format!("opening_hours = \"7:30-24:00\"\n{one}")).unwrap();
        assert_eq!(f.open, Some((TimeOfDay(450), TimeOfDay::END_OF_DAY)));
        for bad in ["20:00-07:00", "07:00", "7-25"] {
            let e = parse_rooms(&format!("opening_hours = \"{bad}\"\n{one}")).unwrap_err();
            assert!(e.contains("opening_hours"), "{bad}: {e}");
        }
        for bad in [
            "grid_minutes = 7",
            "max_minutes = 100",
            "max_minutes = 0",
            "max_minutes = 1500",
        ] {
            let e = parse_rooms(&format!("{bad}\n{one}")).unwrap_err();
            assert!(e.contains(bad.split(' ').next().unwrap()), "{bad}: {e}");
        }
    }

    #[test]
    fn the_store_comes_from_the_flag_then_the_environment() {
        let url = "postgres://u:secret@db:5432/redmark";
        assert_eq!(store_choice(None, None), StoreChoice::Redb(None));
        assert_eq!(store_choice(None, Some("")), StoreChoice::Redb(None));
        assert_eq!(
            store_choice(None, Some(url)),
            StoreChoice::Postgres(url.into())
        );
        assert_eq!(
            store_choice(Some("/srv/b"), Some(url)),
            StoreChoice::Redb(Some("/srv/b".into()))
        );
        let other = "postgresql://db/x";
        assert_eq!(
            store_choice(Some(other), None),
            StoreChoice::Postgres(other.into())
        );
        let named = super::super::pg::describe(url);
        assert_eq!(named, "postgres://u@db:5432/redmark");
        assert!(!named.contains("secret"));
    }

    #[test]
    fn rooms_errors_name_the_line() {
        let e = parse_rooms("[[room]]\nid = \"a\"\nname = \"A\"\nseats = \"many\"\n").unwrap_err();
        assert!(e.starts_with("line 4: "), "{e}");
    }
}
