//! The dual-era hook of the stdio/TCP loop (`transport/stream.rs`): one [`StreamLegacy`] per
//! connection runs each client line through its [`Session`] and the core, and says which lines
//! to write back; [`StreamLegacy::expired`] wakes the loop when a question has waited too long.

use std::future::Future;
use std::time::Instant;

use super::session::{Action, Session};

/// One stream connection's dual-era state.
#[derive(Default)]
pub struct StreamLegacy {
    session: Session,
}

impl StreamLegacy {
    /// A connection that has not sent `initialize` (yet); `resources`: the app serves them.
    pub fn new(resources: bool) -> Self {
        StreamLegacy {
            session: Session::serving(resources),
        }
    }

    /// Whether `line` goes through [`StreamLegacy::line`] (see [`Session::takes`]); every
    /// other line is a 2026-07-28 one the transport serves itself.
    pub fn takes(&self, line: &[u8]) -> bool {
        self.session.takes(line)
    }

    /// Takes one client line; `run` passes a line to the core and returns its answer (`None`:
    /// nothing to send). Returns the lines to write, in order.
    pub async fn line<F, Fut>(&mut self, line: &[u8], run: F) -> Vec<Vec<u8>>
    where
        F: FnMut(Vec<u8>) -> Fut,
        Fut: Future<Output = Option<Vec<u8>>>,
    {
        let actions = self.session.client_line(line, Instant::now());
        let sent = drive(&mut self.session, actions, run).await;
        sent.into_iter().map(|(line, _, _)| line).collect()
    }

    /// Waits until a pushed question has waited too long, then gives up its call: the lines
    /// to write. Pending forever while no question waits.
    pub async fn expired(&mut self) -> Vec<Vec<u8>> {
        match self.session.next_deadline() {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
        let actions = self.session.tick(Instant::now());
        actions
            .into_iter()
            .filter_map(|a| match a {
                Action::Send { line, .. } => Some(line),
                Action::Core { .. } => None,
            })
            .collect()
    }
}

/// A line for the client: `(line, reply_to, last)` as in [`Action::Send`].
pub type Sent = (Vec<u8>, Option<String>, bool);

/// Carries out `actions` (and those the core's answers lead to): the lines to send, in order.
pub async fn drive<F, Fut>(session: &mut Session, actions: Vec<Action>, mut run: F) -> Vec<Sent>
where
    F: FnMut(Vec<u8>) -> Fut,
    Fut: Future<Output = Option<Vec<u8>>>,
{
    let mut todo: std::collections::VecDeque<Action> = actions.into();
    let mut out = Vec::new();
    while let Some(a) = todo.pop_front() {
        match a {
            Action::Send {
                line,
                reply_to,
                last,
            } => out.push((line, reply_to, last)),
            Action::Core { ticket, line, .. } => {
                let answer = run(line).await.unwrap_or_default();
                let next = session.core_answer(ticket, &answer, Instant::now());
                for (i, n) in next.into_iter().enumerate() {
                    todo.insert(i, n);
                }
            }
        }
    }
    out
}
