//! What the booking page's browser tests wait for: a grid cell's state, the status line, a
//! question's form (each bounded by [`SHOW`]).

pub mod setup;

use std::time::Duration;

use serde_json::json;

use crate::browser::Browser;

/// How long the page may take to show what a test waits for.
pub const SHOW: Duration = Duration::from_secs(30);

/// Waits until the grid's cell for `room` starting at `start` (HH:MM) is in `state` (free,
/// own, booked, past): a free or past step, or a booking's block.
pub fn wait_cell(b: &Browser, room: &str, start: &str, state: &str) {
    b.wait_js(
        &format!("{room} at {start} to be {state}"),
        &format!(
            "const c = document.querySelector('#grid td[data-room=\"{room}\"][data-start=\"{start}\"]');\
             return !!c && c.dataset.state === '{state}' && !document.querySelector('[aria-busy]');"
        ),
        SHOW,
    );
}

/// Waits until `#status` (or `#error`, with `error`) says `text` and the page is done with
/// what it was doing (the floor redrawn); returns what it says.
pub fn wait_says(b: &Browser, id: &str, text: &str) -> String {
    let v = b.wait_js(
        &format!("#{id} to say {text:?}"),
        &format!(
            "const e = document.getElementById('{id}'); const t = e.hidden ? '' : e.textContent;\
             return t.includes({}) && !document.querySelector('[aria-busy]') ? t : null;",
            json!(text)
        ),
        SHOW,
    );
    v.as_str().unwrap_or_default().to_string()
}

/// Waits for the question form under `key` to be shown.
pub fn wait_question(b: &Browser, key: &str) {
    b.wait_js(
        &format!("the question {key:?}"),
        &format!(
            "return !document.getElementById('ask').hidden && \
             !!document.querySelector('form.question[data-key=\"{key}\"]');"
        ),
        SHOW,
    );
}
