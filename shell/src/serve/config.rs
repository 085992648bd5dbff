//! The files `redmark serve` reads: `--rooms` (the floor; `--tokens` is `auth/tokens.rs`);
//! and where bookings live (`--store` or `REDMARK_STORE`).

use std::path::{Path, PathBuf};

use redmark_core::booking::{
    Floor, Room, TimeOfDay, Utc, Zone, DEFAULT_FLOOR, DEFAULT_GRID, DEFAULT_MAX_MINUTES,
    MAX_CHECK_IN_MINUTES, MAX_MINUTES,
};
use redmark_core::limits::{MAX_BUILDINGS, MAX_ROOMS, MAX_ROOM_ID};
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
    /// Minutes after a booking's start by which its holder must check in, else it is released
    /// (every building's; default: no check-in).
    check_in_minutes: Option<u16>,
    /// The rooms of a floor file of one building.
    #[serde(default)]
    room: Vec<RoomEntry>,
    /// A site's buildings (the keys above are their defaults).
    #[serde(default)]
    building: Vec<BuildingEntry>,
}

/// One `[[building]]` of a site: its own id, name, zone, hours, grid and rooms.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildingEntry {
    id: String,
    name: String,
    grid_minutes: Option<u16>,
    max_minutes: Option<u16>,
    time_zone: Option<String>,
    opening_hours: Option<String>,
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
    /// The storey, as people say it ("3", "Ground").
    #[serde(default)]
    level: String,
    /// What the room has ("video", "whiteboard").
    #[serde(default)]
    equipment: Vec<String>,
}

/// Loads a floor, or a site of buildings, from TOML:
///
/// ```toml
/// time_zone = "Europe/Berlin"  # optional: the floor's wall clock (default UTC)
/// opening_hours = "07:00-20:00" # optional: bookings start and end within (default any time)
/// grid_minutes = 15        # optional: 5, 10, 15, 30 or 60 (default 15)
/// max_minutes = 480        # optional: the longest booking (default 8 hours)
/// public_titles = true     # optional: others see booking titles (default: only "booked")
/// check_in_minutes = 10    # optional: unchecked bookings are released this long after their start
///
/// [[room]]
/// id = "atrium"            # 1-24 bytes, unique
/// name = "The Atrium"
/// seats = 24
/// aliases = ["the big room"]
/// level = "3"              # optional: the storey
/// equipment = ["video"]    # optional
/// ```
///
/// or, for a site, `[[building]]` tables (`id`, `name` and, overriding the top-level keys,
/// `time_zone`, `opening_hours`, `grid_minutes`, `max_minutes`), each with `[[building.room]]`
/// entries; room ids are unique across the site.
///
/// The site lives for the whole process, so its strings are leaked once.
pub fn load_rooms(path: &Path) -> Result<&'static [Floor<'static>], String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_rooms(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse_rooms(text: &str) -> Result<&'static [Floor<'static>], String> {
    let mut file: RoomsFile = toml::from_str(text).map_err(|e| located(text, &e))?;
    let public_titles = file.public_titles;
    let check_in = file.check_in_minutes;
    if let Some(m) = check_in.filter(|m| !(1..=MAX_CHECK_IN_MINUTES).contains(m)) {
        return Err(format!(
            "check_in_minutes = {m}: give 1 to {MAX_CHECK_IN_MINUTES} (or leave it out: no check-in)"
        ));
    }
    let defaults = BuildingEntry {
        id: DEFAULT_FLOOR.id.into(),
        name: DEFAULT_FLOOR.name.into(),
        grid_minutes: Some(file.grid_minutes),
        max_minutes: Some(file.max_minutes),
        time_zone: file.time_zone.take(),
        opening_hours: file.opening_hours.take(),
        room: std::mem::take(&mut file.room),
    };
    // A file of one building's [[room]] entries: its errors name no building.
    let one = file.building.is_empty();
    let buildings = match (defaults.room.is_empty(), one) {
        (false, true) => vec![defaults],
        (true, false) if file.building.len() <= MAX_BUILDINGS => file
            .building
            .into_iter()
            .map(|b| BuildingEntry {
                grid_minutes: b.grid_minutes.or(defaults.grid_minutes),
                max_minutes: b.max_minutes.or(defaults.max_minutes),
                time_zone: b.time_zone.or_else(|| defaults.time_zone.clone()),
                opening_hours: b.opening_hours.or_else(|| defaults.opening_hours.clone()),
                ..b
            })
            .collect(),
        _ => {
            return Err(format!(
                "a floor file has [[room]] entries (one building) or 1 to {MAX_BUILDINGS} \
                 [[building]] tables with [[building.room]] entries, not both"
            ))
        }
    };
    let mut site: Vec<Floor<'static>> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for b in buildings {
        if site.iter().any(|x| x.id == b.id) {
            return Err(format!("building id {:?} appears twice", b.id));
        }
        let id = b.id.clone();
        let named = |e: String| match one {
            true => e,
            false => format!("building {id:?}: {e}"),
        };
        site.push(parse_building(b, &mut ids, public_titles).map_err(named)?);
    }
    site.iter_mut().for_each(|f| f.check_in_minutes = check_in);
    Ok(Box::leak(site.into_boxed_slice()))
}

/// One building's floor; `ids` are the room ids of the site so far; `public_titles` the site's.
fn parse_building(
    b: BuildingEntry,
    ids: &mut std::collections::HashSet<String>,
    public_titles: bool,
) -> Result<Floor<'static>, String> {
    if b.id.is_empty() || b.id.len() > MAX_ROOM_ID || b.id.chars().any(char::is_whitespace) {
        return Err(format!(
            "building id {:?}: 1 to {MAX_ROOM_ID} bytes, no spaces",
            b.id
        ));
    }
    if b.room.is_empty() || b.room.len() > MAX_ROOMS {
        return Err(format!(
            "a building has 1 to {MAX_ROOMS} rooms ({}): split it into [[building]] tables",
            b.room.len()
        ));
    }
    let grid = b.grid_minutes.unwrap_or(DEFAULT_GRID);
    if ![5, 10, 15, 30, 60].contains(&grid) {
        return Err(format!("grid_minutes = {grid}: give 5, 10, 15, 30 or 60"));
    }
    let max = b.max_minutes.unwrap_or(DEFAULT_MAX_MINUTES);
    if max == 0 || u32::from(max) > MAX_MINUTES || !max.is_multiple_of(grid) {
        return Err(format!(
            "max_minutes = {max}: a whole number of grid steps ({grid} minutes), at most {MAX_MINUTES}"
        ));
    }
    let zone: &'static dyn Zone = match b.time_zone.as_deref() {
        None => &Utc,
        Some(name) => Box::leak(Box::new(named_zone(name)?)),
    };
    let open = b.opening_hours.as_deref().map(opening_hours).transpose()?;
    let mut rooms = Vec::new();
    for r in b.room {
        if r.id.is_empty() || r.id.len() > MAX_ROOM_ID || r.id.chars().any(char::is_whitespace) {
            return Err(format!(
                "room id {:?}: 1 to {MAX_ROOM_ID} bytes, no spaces",
                r.id
            ));
        }
        if !ids.insert(r.id.clone()) {
            return Err(format!("room id {:?} appears twice", r.id));
        }
        let aliases: Vec<&'static str> = r.aliases.into_iter().map(leak).collect();
        let equipment: Vec<&'static str> = r.equipment.into_iter().map(leak).collect();
        rooms.push(Room {
            id: leak(r.id),
            name: leak(r.name),
            seats: r.seats,
            aliases: Box::leak(aliases.into_boxed_slice()),
            level: leak(r.level),
            equipment: Box::leak(equipment.into_boxed_slice()),
        });
    }
    Ok(Floor {
        id: leak(b.id),
        name: leak(b.name),
        rooms: Box::leak(rooms.into_boxed_slice()),
        grid,
        max_minutes: max,
        zone,
        open,
        public_titles,
        check_in_minutes: None,
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
        .unwrap()[0];
        assert_eq!(f.rooms.len(), 2);
        assert_eq!(f.iter(f.matching("big room")).next().unwrap().id, "a");
        assert!(parse_rooms("[[room]]\nid = \"a\"\nname = \"A\"\nseats = 3\n[[room]]\nid = \"a\"\nname = \"B\"\nseats = 1\n").is_err());
        assert!(parse_rooms("room = []").is_err());
        assert!(parse_rooms("[[room]]\nid = \"a b\"\nname = \"A\"\nseats = 3\n").is_err());
        assert_eq!((f.grid, f.max_minutes), (15, 480), "the defaults");
        let one = "[[room]]\nid = \"a\"\nname = \"A\"\nseats = 3\n";
        let f = parse_rooms(&format!("grid_minutes = 30\nmax_minutes = 120\n{one}")).unwrap()[0];
        assert_eq!((f.grid, f.max_minutes), (30, 120));
        assert_eq!(f.zone.name(), "UTC", "old floor files mean UTC");
        assert!(!f.public_titles, "titles are private unless the file says");
        let public = parse_rooms(&format!("public_titles = true\n{one}")).unwrap()[0];
        assert!(public.public_titles);
        assert_eq!(f.check_in_minutes, None, "no check-in unless the file says");
        let checked = parse_rooms(&format!("check_in_minutes = 10\n{one}")).unwrap()[0];
        assert_eq!(checked.check_in_minutes, Some(10));
        let e = parse_rooms(&format!("check_in_minutes = 0\n{one}"))
            .err()
            .unwrap();
        assert!(e.contains("check_in_minutes = 0: give 1 to 60"), "{e}");
        let f = parse_rooms(&format!("time_zone = \"Europe/Berlin\"\n{one}")).unwrap()[0];
        assert_eq!(f.zone.name(), "Europe/Berlin");
        let e = parse_rooms(&format!("time_zone = \"Berlin\"\n{one}")).unwrap_err();
        assert!(e.contains("time_zone = \"Berlin\""), "{e}");
        assert_eq!(f.open, None, "open all day unless the file says");
        let f = parse_rooms(&format!("opening_hours = \"7:30-24:00\"\n{one}")).unwrap()[0];
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
    fn a_site_is_buildings_each_with_its_zone_levels_and_equipment() {
        let site = parse_rooms(
            "time_zone = \"Europe/Berlin\"\ngrid_minutes = 30\n\
             [[building]]\nid = \"ber\"\nname = \"Berlin HQ\"\n\
             [[building.room]]\nid = \"b1\"\nname = \"B1\"\nseats = 4\nlevel = \"3\"\n\
             equipment = [\"video\"]\n\
             [[building]]\nid = \"nyc\"\nname = \"New York\"\ntime_zone = \"America/New_York\"\n\
             grid_minutes = 15\n\
             [[building.room]]\nid = \"n1\"\nname = \"N1\"\nseats = 8\n",
        )
        .unwrap();
        assert_eq!(site.len(), 2);
        let (ber, nyc) = (&site[0], &site[1]);
        assert_eq!(
            (ber.id, ber.name, ber.zone.name()),
            ("ber", "Berlin HQ", "Europe/Berlin")
        );
        assert_eq!(
            (ber.grid, nyc.grid),
            (30, 15),
            "the top level is each building's default"
        );
        assert_eq!(nyc.zone.name(), "America/New_York");
        assert_eq!(
            (ber.rooms[0].level, ber.rooms[0].equipment),
            ("3", &["video"][..])
        );
        let room = |id: &str, b: &str| {
            format!("[[building]]\nid = \"{b}\"\nname = \"{b}\"\n[[building.room]]\nid = \"{id}\"\nname = \"R\"\nseats = 1\n")
        };
        let e = parse_rooms(&format!("{}{}", room("r", "x"), room("r", "y"))).unwrap_err();
        assert_eq!(e, "building \"y\": room id \"r\" appears twice");
        let e = parse_rooms(&format!("{}{}", room("r", "x"), room("s", "x"))).unwrap_err();
        assert!(e.contains("building id \"x\" appears twice"), "{e}");
        let mars = room("r", "x").replace(
            "[[building.room]]",
            "time_zone = \"Mars/Base\"\n[[building.room]]",
        );
        let e = parse_rooms(&mars).unwrap_err();
        assert!(
            e.starts_with("building \"x\": time_zone = \"Mars/Base\""),
            "{e}"
        );
        let both = format!(
            "{}[[room]]\nid = \"a\"\nname = \"A\"\nseats = 3\n",
            room("r", "x")
        );
        assert!(parse_rooms(&both).unwrap_err().contains("not both"));
        let many: String = (0..=MAX_BUILDINGS)
            .map(|i| room(&format!("r{i}"), &format!("b{i}")))
            .collect();
        assert!(parse_rooms(&many)
            .unwrap_err()
            .contains("[[building]] tables"));
        let big: String = (0..=MAX_ROOMS)
            .map(|i| format!("[[room]]\nid = \"r{i}\"\nname = \"R\"\nseats = 1\n"))
            .collect();
        let e = parse_rooms(&big).unwrap_err();
        assert!(
            e.contains(&format!("a building has 1 to {MAX_ROOMS} rooms")),
            "{e}"
        );
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
