//! The files `redmark serve` reads: `--rooms` (the floor) and `--tokens` (HTTP principals);
//! and where bookings live (`--store` or `REDMARK_STORE`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use redmark_core::booking::{Floor, Room};
use redmark_core::limits::{MAX_PRINCIPAL, MAX_ROOMS, MAX_ROOM_ID};
use serde::Deserialize;
use sha2::{Digest, Sha256};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomsFile {
    room: Vec<RoomEntry>,
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
    })
}

/// A TOML error as `line N: message`, without the snippet of the file `toml` quotes by
/// default (in a tokens file, that snippet is a secret).
fn located(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    match e.span() {
        Some(span) => {
            let end = span.start.min(text.len());
            let line = 1 + text.as_bytes()[..end]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            format!("line {line}: {message}")
        }
        None => message.to_string(),
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

/// Bearer tokens → principals, looked up by the token's SHA-256 (no early-exit comparison of
/// secrets).
pub struct Tokens {
    by_hash: HashMap<[u8; 32], Vec<u8>>,
}

impl Tokens {
    /// Loads a tokens file (TOML, one `principal = "token"` a line):
    ///
    /// ```toml
    /// alice = "a-long-random-secret"
    /// bob = "another-long-random-secret"
    /// ```
    pub fn load(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if let Ok(Some(_)) = crate::platform::files::shared_mode(path) {
            tracing::warn!(
                "{} is readable by others; run chmod 600 on it",
                path.display()
            );
        }
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn parse(text: &str) -> Result<Tokens, String> {
        // A generic table first, and the types checked by hand: the parser's messages name no
        // values, while serde's "invalid type" messages would quote the (secret) value.
        let table: toml::Table = toml::from_str(text).map_err(|e| located(text, &e))?;
        let mut by_hash = HashMap::new();
        for (principal, token) in table {
            let Some(token) = token.as_str() else {
                return Err(format!(
                    "the token of {principal:?} is not a string (write principal = \"token\")"
                ));
            };
            if token.len() < 16 {
                return Err(format!(
                    "the token of {principal:?} is shorter than 16 characters"
                ));
            }
            if principal.is_empty() || principal.len() + 5 > MAX_PRINCIPAL {
                return Err(format!(
                    "principal {principal:?}: 1 to {} bytes",
                    MAX_PRINCIPAL - 5
                ));
            }
            let p = format!("http:{principal}").into_bytes();
            if by_hash
                .insert(Sha256::digest(token.as_bytes()).into(), p)
                .is_some()
            {
                return Err(format!("two principals share the token of {principal:?}"));
            }
        }
        if by_hash.is_empty() {
            return Err("no tokens".into());
        }
        Ok(Tokens { by_hash })
    }

    /// The principal a bearer token stands for.
    pub fn principal(&self, token: &str) -> Option<&[u8]> {
        let h: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.by_hash.get(&h).map(Vec::as_slice)
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
    }

    #[test]
    fn tokens_map_to_principals() {
        let t = Tokens::parse("alice = \"0123456789abcdef-a\"\nbob = \"0123456789abcdef-b\"\n")
            .unwrap();
        assert_eq!(t.principal("0123456789abcdef-a"), Some(&b"http:alice"[..]));
        assert_eq!(t.principal("0123456789abcdef-b"), Some(&b"http:bob"[..]));
        assert_eq!(t.principal("nope"), None);
        assert!(Tokens::parse("alice = \"short\"").is_err());
        assert!(Tokens::parse("a = \"0123456789abcdef\"\nb = \"0123456789abcdef\"").is_err());
    }

    #[test]
    fn a_malformed_tokens_file_never_echoes_a_token() {
        let secret = "s3cr3t-t0ken-0123456789";
        for text in [
            format!("alice = \"0123456789abcdef-a\"\nbob = \"{secret}\n"),
            format!("alice = \"0123456789abcdef-a\"\nbob = {secret}\n"),
            format!("alice = \"0123456789abcdef-a\"\nbob = \"{secret}\" junk\n"),
            format!("alice = \"0123456789abcdef-a\"\nbob = [\"{secret}\"]\n"),
            "alice = \"0123456789abcdef-a\"\nbob = 1234567890123456789\n".to_string(),
        ] {
            let e = Tokens::parse(&text).err().expect("an error");
            assert!(!e.contains(secret), "{e}");
            assert!(!e.contains("1234567890123456789"), "{e}");
            assert!(!e.contains("0123456789abcdef-a"), "{e}");
            assert!(e.contains("line 2") || e.contains("\"bob\""), "{e}");
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
