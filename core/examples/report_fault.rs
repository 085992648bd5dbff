//! The serde path: `report_fault` takes its arguments as a plain `#[derive(Deserialize)]`
//! struct that also derives `Args` with `#[args(serde)]`, so the schema, the checks and their
//! messages are the derive's while serde-json-core reads the values (no heap; the room an
//! owned `heapless::String`, escapes decoded). A library, so it builds bare-metal.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
use heapless::String;
use redmark_core::prelude::*;
use serde::Deserialize;

/// What is broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Choices, Deserialize)]
#[serde(rename_all = "snake_case")] // the values `Choices` gives the variants
pub enum Fault {
    /// The projector or the screen
    Projector,
    /// Too hot or too cold
    Heating,
    /// Something else
    Other,
}

/// `report_fault`'s arguments, as a serde user writes them.
#[derive(Args, Deserialize)]
#[args(serde)]
pub struct Report<'a> {
    /// The room, as its sign spells it
    room: String<24>,
    /// What is broken
    fault: Fault,
    /// Anything the caretaker should know
    #[arg(max_len = 80)]
    #[serde(borrow)]
    note: Option<&'a str>,
    /// How many people it stops from working
    #[arg(min = 1, max = 50)]
    #[serde(default = "one")]
    people: u8,
}

/// Nobody said how many: one.
fn one() -> u8 {
    1
}

/// A building's fault log: the last report.
#[derive(Default)]
pub struct Caretaker {
    pub last: Option<(String<24>, Fault, u8)>,
}

#[app]
impl App for Caretaker {
    /// Reports a fault in a meeting room to the caretaker.
    #[tool(title = "Report a fault")]
    async fn report_fault(&mut self, a: Report<'_>, _call: &Call, reply: Reply) -> Replied {
        let note = a.note.unwrap_or("no note");
        let (room, fault, people) = (&a.room, a.fault.value(), a.people);
        let done = complete!(reply, "Reported in {room}: {fault} ({people}; {note}).");
        self.last = Some((a.room, a.fault, a.people));
        done
    }
}
