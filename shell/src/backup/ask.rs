//! The client's side of a backup through the data folder's socket: the request, the owner's
//! status line, and the copy's bytes into the caller's file.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::folder::backup::REQUEST;
use crate::store::Snapshot;

/// How long the client waits for each read of the owner's answer (the owner copies the whole
/// store before its first byte).
pub const ANSWER_WAIT: Duration = Duration::from_secs(120);

/// Longest status line of the owner's answer.
const MAX_STATUS: usize = 512;

/// Asks the folder's owner on `conn` for a copy and writes it to `file`.
pub fn ask(mut conn: UnixStream, mut file: File) -> Result<Snapshot, String> {
    let io = |e: io::Error| format!("the server's answer broke off ({e})");
    conn.set_read_timeout(Some(ANSWER_WAIT)).map_err(io)?;
    conn.set_write_timeout(Some(ANSWER_WAIT)).map_err(io)?;
    conn.write_all(REQUEST).map_err(io)?;
    let status = status_line(&mut conn).map_err(io)?;
    let (len, said) = parse_status(&status)?;
    let copied = io::copy(&mut (&mut conn).take(len), &mut file).map_err(io)?;
    if copied != len {
        return Err(format!(
            "the server's copy ended after {copied} of {len} bytes"
        ));
    }
    Ok(said)
}

/// The owner's status line, read a byte at a time (the copy's bytes follow it).
fn status_line(conn: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < MAX_STATUS {
        if conn.read(&mut byte)? == 0 {
            break;
        }
        if byte[0] == b'\n' {
            return Ok(line);
        }
        line.push(byte[0]);
    }
    Ok(line)
}

/// `ok LEN BOOKINGS NEWEST` as the length of the copy and what it holds; `error WHY` as WHY.
fn parse_status(line: &[u8]) -> Result<(u64, Snapshot), String> {
    let text = String::from_utf8_lossy(line);
    if let Some(why) = text.strip_prefix("error ") {
        return Err(format!("the server could not copy its store: {why}"));
    }
    let fields: Vec<&str> = text.split(' ').collect();
    let number = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    match (fields.first(), number(1), number(2), number(3)) {
        (Some(&"ok"), Some(len), Some(bookings), Some(newest)) => Ok((
            len,
            Snapshot {
                bookings,
                newest: u32::try_from(newest).ok().filter(|id| *id > 0),
            },
        )),
        _ => Err(
            "the server serving this folder does not take backups (an older redmark?): \
             update it, or stop it and run redmark backup again"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_says_the_length_and_what_the_copy_holds() {
        assert_eq!(
            parse_status(b"ok 4096 12 15"),
            Ok((
                4096,
                Snapshot {
                    bookings: 12,
                    newest: Some(15)
                }
            ))
        );
        assert_eq!(
            parse_status(b"ok 4096 0 0").map(|(_, s)| s.newest),
            Ok(None)
        );
        let e = parse_status(b"error disk full").unwrap_err();
        assert!(e.ends_with("disk full"), "{e}");
        let e = parse_status(br#"{"jsonrpc":"2.0","error":{"code":-32700}}"#).unwrap_err();
        assert!(e.contains("older redmark"), "{e}");
        assert!(parse_status(b"ok 12").is_err());
    }
}
