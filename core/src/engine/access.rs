//! What the host vouches for about a caller besides its principal: its role and transport.

/// How a caller reached the server, as its host says (kept in a booking's trail).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Via {
    /// Not said (a panel, a test).
    #[default]
    Unknown,
    /// Standard input and output.
    Stdio,
    /// `--tcp` lines.
    Tcp,
    /// Streamable HTTP.
    Http,
    /// The 2025-11-25 bridge.
    Legacy,
}

impl Via {
    /// Its stored code (a trail's, a seated principal's).
    pub const fn code(self) -> u8 {
        match self {
            Via::Unknown => 0,
            Via::Stdio => 1,
            Via::Tcp => 2,
            Via::Http => 3,
            Via::Legacy => 4,
        }
    }

    /// The transport a stored code stands for (an unknown code: [`Via::Unknown`]).
    pub const fn from_code(code: u8) -> Via {
        match code {
            1 => Via::Stdio,
            2 => Via::Tcp,
            3 => Via::Http,
            4 => Via::Legacy,
            _ => Via::Unknown,
        }
    }
}

/// The caller's role and transport, filled by the host: an operator runs the floor (cancels
/// any booking, reads every title and the trail).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// Whether the caller is an operator.
    pub operator: bool,
    /// Its transport.
    pub via: Via,
    /// The serving instance (e.g. its process id; 0: not said).
    pub instance: u32,
}

impl Access {
    /// A plain user over an unsaid transport: what a host that knows no roles passes.
    pub const USER: Access = Access {
        operator: false,
        via: Via::Unknown,
        instance: 0,
    };
}
