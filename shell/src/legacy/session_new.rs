//! How a legacy session starts: nothing asked yet, and whether its `initialize` says the app
//! serves resources (the MCP App's `ui://` document).

use super::super::question_wait;
use super::Session;

impl Default for Session {
    fn default() -> Self {
        Session::serving(false)
    }
}

impl Session {
    /// A session whose `initialize` says resources are served when `resources`.
    pub fn serving(resources: bool) -> Self {
        Session {
            legacy: None,
            tickets: Vec::new(),
            calls: Vec::new(),
            next_ticket: 0,
            next_call: 0,
            next_question: 0,
            wait: question_wait(),
            resources,
        }
    }
}
