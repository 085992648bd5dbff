//! What a tool's author names: `use redmark_core::prelude::*;` (the derives and `#[app]`
//! with the default `derive` feature).

pub use crate::booking::TimeOfDay;
pub use crate::engine::{App, Call, CallError, Done, Msg, Replied, Reply, ServerInfo};
#[cfg(feature = "derive")]
pub use crate::typed::app;
pub use crate::typed::{
    Args, Choices, Elicited, NoArgs, Offer, Pick, Question, Round, Sealed, Text,
};
pub use crate::{answered, complete, fail};
