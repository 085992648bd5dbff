//! A booking's trail: who changed it, when, over which transport and on which instance, kept by
//! the store in the same write as the change, and the operators' `booking_trail` tool.

use core::fmt;

use heapless::Vec;

use crate::engine::Via;
use crate::limits::TRAIL_SHOWN;

/// Who changes a booking, when and how: kept with the change in the booking's trail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Actor {
    /// The principal's stored holder hash ([`Holder`](super::store::Holder)).
    pub holder: [u8; 8],
    /// Whether it acted as an operator (any booking, not only its own).
    pub operator: bool,
    /// Whether it acted on an answer: the call came back with the server's question answered
    /// (its `requestState`), e.g. a room picked in the form or a cancel confirmed.
    pub on_answer: bool,
    /// The call's clock, unix seconds.
    pub at: u64,
    /// Its transport.
    pub via: Via,
    /// The serving instance (0: not said).
    pub instance: u32,
}

impl Actor {
    /// `holder` itself, a plain user with nothing else said (a store's own test, a caller
    /// without a clock).
    pub const fn holder(holder: [u8; 8]) -> Actor {
        Actor {
            holder,
            operator: false,
            on_answer: false,
            at: 0,
            via: Via::Unknown,
            instance: 0,
        }
    }

    /// The floor itself releasing a no-show at unix time `at` on `instance` (no principal, no
    /// transport: the host's timer).
    pub const fn floor(at: u64, instance: u32) -> Actor {
        Actor {
            at,
            instance,
            ..Actor::holder([0; 8])
        }
    }
}

/// What one change did to a booking. New kinds are added at the end, with the next code: stored codes never change meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// Booked.
    Made,
    /// Cancelled.
    Cancelled,
    /// Its end moved, as written before extended and ended were told apart (read, no longer
    /// written).
    Resized,
    /// Its holder checked in (`check_in`).
    CheckedIn,
    /// Released: nobody checked in within the floor's window (the actor is the instance that
    /// released it).
    Released,
    /// Its end moved later (`extend_booking`).
    Extended,
    /// Its end moved earlier (`end_booking`): the rest given back.
    Ended,
}

impl Change {
    /// Its stored code.
    pub const fn code(self) -> u8 {
        match self {
            Change::Made => 1,
            Change::Cancelled => 2,
            Change::Resized => 3,
            Change::CheckedIn => 4,
            Change::Released => 5,
            Change::Extended => 6,
            Change::Ended => 7,
        }
    }

    /// The change that moves a booking's end `from` → `to`: extended or ended early.
    pub fn end_moved(from: super::span::Minute, to: super::span::Minute) -> Change {
        if to > from {
            Change::Extended
        } else {
            Change::Ended
        }
    }

    /// The change a stored code stands for (`None`: a code from a newer release).
    pub const fn from_code(code: u8) -> Option<Change> {
        match code {
            1 => Some(Change::Made),
            2 => Some(Change::Cancelled),
            3 => Some(Change::Resized),
            4 => Some(Change::CheckedIn),
            5 => Some(Change::Released),
            6 => Some(Change::Extended),
            7 => Some(Change::Ended),
            _ => None,
        }
    }

    /// How the trail says it.
    fn verb(self) -> &'static str {
        match self {
            Change::Made => "made",
            Change::Cancelled => "cancelled",
            Change::Resized => "moved its end",
            Change::CheckedIn => "checked in",
            Change::Released => "released (nobody checked in)",
            Change::Extended => "extended",
            Change::Ended => "ended early",
        }
    }
}

/// One change in a booking's trail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// What it did.
    pub change: Change,
    /// Who, when, how.
    pub by: Actor,
}

/// Bytes of a stored [`Step`] (redb's and PostgreSQL's value).
pub const STEP_BYTES: usize = 23;

impl Step {
    /// The step as stored: code, holder, flags (1: operator, 2: on an answer), time, transport,
    /// instance.
    pub fn to_bytes(&self) -> [u8; STEP_BYTES] {
        let mut b = [0; STEP_BYTES];
        b[0] = self.change.code();
        b[1..9].copy_from_slice(&self.by.holder);
        b[9] = u8::from(self.by.operator) | u8::from(self.by.on_answer) << 1;
        b[10..18].copy_from_slice(&self.by.at.to_le_bytes());
        b[18] = self.by.via.code();
        b[19..23].copy_from_slice(&self.by.instance.to_le_bytes());
        b
    }

    /// A stored step (`None`: not one this release wrote, e.g. a newer change kind).
    pub fn from_bytes(b: &[u8]) -> Option<Step> {
        let b: &[u8; STEP_BYTES] = b.try_into().ok()?;
        let mut holder = [0; 8];
        holder.copy_from_slice(&b[1..9]);
        let mut at = [0; 8];
        at.copy_from_slice(&b[10..18]);
        let mut instance = [0; 4];
        instance.copy_from_slice(&b[19..23]);
        Some(Step {
            change: Change::from_code(b[0])?,
            by: Actor {
                holder,
                operator: b[9] & 1 != 0,
                on_answer: b[9] & 2 != 0,
                at: u64::from_le_bytes(at),
                via: Via::from_code(b[18]),
                instance: u32::from_le_bytes(instance),
            },
        })
    }
}

/// A booking's trail as read: its latest changes, oldest first.
pub type Trail = Vec<Step, TRAIL_SHOWN>;

/// Keeps the latest [`TRAIL_SHOWN`] of `steps` (oldest first) in a [`Trail`].
pub fn latest(steps: impl IntoIterator<Item = Step>) -> Trail {
    let mut t = Trail::new();
    for s in steps {
        if t.is_full() {
            t.remove(0);
        }
        // Cannot fail: one was made free above.
        let _ = t.push(s);
    }
    t
}

/// One step as the trail tool says it: `made by 0123456789abcdef at … over http on instance 7`.
pub struct Said<'a>(pub &'a Step);

impl fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by = &self.0.by;
        let floor = self.0.change == Change::Released;
        f.write_str(self.0.change.verb())?;
        if !floor {
            f.write_str(" by ")?;
            if by.operator {
                f.write_str("an operator ")?;
            }
            for b in by.holder {
                write!(f, "{b:02x}")?;
            }
        }
        if by.on_answer {
            f.write_str(" after answering a question")?;
        }
        match super::span::minute_of(by.at).filter(|_| by.at >= super::span::CLOCK_SET_FROM) {
            Some(m) => write!(f, " at {}", super::zone::Rfc3339(m, &super::zone::Utc))?,
            None => f.write_str(" at an unset clock")?,
        }
        let via = match by.via {
            Via::Unknown if floor => "",
            Via::Unknown => " over an unsaid transport",
            Via::Stdio => " over stdio",
            Via::Tcp => " over tcp",
            Via::Http => " over http",
            Via::Legacy => " over the 2025-11-25 bridge",
        };
        f.write_str(via)?;
        if by.instance != 0 {
            write!(f, " on instance {}", by.instance)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_round_trip_their_bytes_and_unknown_kinds_are_skipped() {
        let s = Step {
            change: Change::Cancelled,
            by: Actor {
                holder: [1, 2, 3, 4, 5, 6, 7, 8],
                operator: true,
                on_answer: true,
                at: 1_790_000_000,
                via: Via::Http,
                instance: 4242,
            },
        };
        assert_eq!(Step::from_bytes(&s.to_bytes()), Some(s));
        let mut newer = s.to_bytes();
        newer[0] = 200;
        assert_eq!(Step::from_bytes(&newer), None);
        assert_eq!(Step::from_bytes(&newer[..5]), None);
    }

    #[test]
    fn the_latest_steps_are_kept() {
        let s = |at| Step {
            change: Change::Made,
            by: Actor {
                at,
                ..Actor::holder([0; 8])
            },
        };
        let t = latest((0..TRAIL_SHOWN as u64 + 3).map(s));
        assert_eq!(t.len(), TRAIL_SHOWN);
        assert_eq!(t[0], s(3));
    }
}
