//! The terminal form: "Answer it? (Y/n)" as one key, then each field with arrow keys for
//! choices and checks before anything is sent.

use std::io::Write as _;

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal;
use inquire::validator::Validation;
use inquire::{Confirm, InquireError, MultiSelect, Select, Text};
use serde_json::{Map, Value};

use super::form::{check_count, check_text, Field, Form, Kind};
use super::mrtr::{Failure, Reply};

/// Maps a prompt's refusal: Esc or Ctrl-C at the form cancels.
fn refused(e: InquireError) -> Result<Option<Reply>, Failure> {
    match e {
        InquireError::OperationCanceled | InquireError::OperationInterrupted => {
            Ok(Some(Reply::Cancel))
        }
        InquireError::NotTTY => Err(Failure::NeedInput(
            "the terminal went away while asking".into(),
        )),
        e => Err(Failure::NeedInput(format!(
            "cannot ask in the terminal: {e}"
        ))),
    }
}

/// Shows the form in the terminal. Fields already answered on the command line are not asked.
pub fn ask(key: &str, form: &Form, mut content: Map<String, Value>) -> Result<Reply, Failure> {
    eprintln!();
    eprintln!(
        "\x1b[1;31m●\x1b[0m \x1b[1m{}\x1b[0m  \x1b[2m(question '{key}')\x1b[0m",
        form.message
    );
    match answer_it()? {
        Go::Form => {}
        Go::Decline => return Ok(Reply::Decline),
        Go::Cancel => return Ok(Reply::Cancel),
    }
    for f in &form.fields {
        if content.contains_key(&f.name) {
            continue;
        }
        match ask_field(f) {
            Ok(Some(v)) => {
                content.insert(f.name.clone(), v);
            }
            Ok(None) => {}
            Err(e) => {
                if let Some(r) = refused(e)? {
                    return Ok(r);
                }
            }
        }
    }
    form.check(&content)
        .map_err(|e| Failure::Usage(format!("answer to '{key}': {e}")))?;
    Ok(Reply::Accept(content))
}

/// What to do with a question.
#[derive(Debug, PartialEq)]
enum Go {
    Form,
    Decline,
    Cancel,
}

/// The key pressed at "Answer it?": y or Enter fills in the form, n declines, Esc or Ctrl-C
/// (or Ctrl-D) cancels; anything else is not an answer. Ctrl-J is Enter too: an Enter typed
/// before raw mode began reaches us as the line discipline's `\n`, which raw mode reads so.
fn go_for(key: &KeyEvent) -> Option<Go> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('c' | 'd') if ctrl => Some(Go::Cancel),
        KeyCode::Char('j') if ctrl => Some(Go::Form),
        _ if ctrl => None,
        KeyCode::Enter | KeyCode::Char('y' | 'Y') => Some(Go::Form),
        KeyCode::Char('n' | 'N') => Some(Go::Decline),
        KeyCode::Esc => Some(Go::Cancel),
        _ => None,
    }
}

/// Leaves raw mode when dropped (on every return path, and on a panic).
struct RawMode;

impl RawMode {
    fn on() -> std::io::Result<RawMode> {
        terminal::enable_raw_mode()?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

/// "Answer it? (Y/n)", read as a single key (inquire's Confirm waits for Enter, so `n` alone
/// would do nothing while the footer says it declines).
fn answer_it() -> Result<Go, Failure> {
    const PROMPT: &str = "\x1b[32m?\x1b[0m Answer it? \x1b[2m(Y/n)\x1b[0m";
    let cannot = |e: std::io::Error| Failure::NeedInput(format!("cannot ask in the terminal: {e}"));
    let mut err = std::io::stderr();
    let go = {
        // Raw before the prompt shows: an Enter typed as soon as it shows would otherwise
        // reach the line discipline as `\n`, which raw mode then reads as Ctrl-J.
        let _raw = RawMode::on().map_err(cannot)?;
        write!(
            err,
            "{PROMPT}  \x1b[36m[y/Enter: fill in the form · n: decline · Esc: cancel]\x1b[0m "
        )
        .and_then(|()| err.flush())
        .map_err(cannot)?;
        loop {
            if let Event::Key(k) = event::read().map_err(cannot)? {
                if let Some(go) = go_for(&k) {
                    break go;
                }
            }
        }
    };
    let said = match go {
        Go::Form => "Yes",
        Go::Decline => "No",
        Go::Cancel => "Cancelled",
    };
    // Redraw the line with the answer, as inquire does for its prompts.
    let _ = writeln!(
        err,
        "\r\x1b[2K\x1b[32m>\x1b[0m Answer it? \x1b[36m{said}\x1b[0m"
    );
    Ok(go)
}

fn help(f: &Field, extra: &str) -> String {
    let mut h = String::new();
    if let Some(d) = &f.description {
        h += d;
        h += " · ";
    }
    if !f.required {
        h += "optional · ";
    }
    h += extra;
    h
}

/// One field; `Ok(None)` leaves an optional field out.
fn ask_field(f: &Field) -> Result<Option<Value>, InquireError> {
    let label = f.label().to_owned();
    match &f.kind {
        Kind::Choice { options, default } => {
            let mut labels: Vec<String> = options.iter().map(|o| o.to_string()).collect();
            if !f.required {
                labels.push("(leave empty)".into());
            }
            let start = default
                .as_ref()
                .and_then(|d| options.iter().position(|o| &o.value == d))
                .unwrap_or(0);
            let h = help(f, "↑↓ move · Enter picks · type to filter · Esc cancels");
            let picked = Select::new(&label, labels)
                .with_starting_cursor(start)
                .with_help_message(&h)
                .raw_prompt()?;
            Ok(options
                .get(picked.index)
                .map(|o| Value::String(o.value.clone())))
        }
        Kind::Multi {
            options,
            min_items,
            max_items,
            default,
        } => {
            let labels: Vec<String> = options.iter().map(|o| o.to_string()).collect();
            let pre: Vec<usize> = default
                .iter()
                .filter_map(|d| options.iter().position(|o| &o.value == d))
                .collect();
            let (min, max) = (*min_items, *max_items);
            let h = help(f, "Space toggles · Enter sends · Esc cancels");
            let picked = MultiSelect::new(&label, labels)
                .with_default(&pre)
                .with_help_message(&h)
                .with_validator(move |l: &[inquire::list_option::ListOption<&String>]| {
                    Ok(match check_count(l.len() as u64, min, max) {
                        Ok(()) => Validation::Valid,
                        Err(e) => Validation::Invalid(e.into()),
                    })
                })
                .raw_prompt()?;
            let values: Vec<Value> = picked
                .iter()
                .filter_map(|p| options.get(p.index))
                .map(|o| Value::String(o.value.clone()))
                .collect();
            if values.is_empty() && !f.required {
                return Ok(None);
            }
            Ok(Some(Value::Array(values)))
        }
        Kind::Boolean { default } => {
            let h = help(f, "type y or n, then Enter · Esc cancels");
            let mut c = Confirm::new(&label).with_help_message(&h);
            if let Some(d) = default {
                c = c.with_default(*d);
            }
            Ok(Some(Value::Bool(c.prompt()?)))
        }
        Kind::Text {
            min_len,
            max_len,
            format,
            default,
        } => {
            let (min, max, fmt, required) = (*min_len, *max_len, format.clone(), f.required);
            let h = help(f, &format!("{} · Esc cancels", f.expects()));
            let init = default.clone().unwrap_or_default();
            let text = Text::new(&label)
                .with_initial_value(&init)
                .with_help_message(&h)
                .with_validator(move |s: &str| {
                    if s.is_empty() && !required {
                        return Ok(Validation::Valid);
                    }
                    Ok(match check_text(s, min, max, fmt.as_deref()) {
                        Ok(()) => Validation::Valid,
                        Err(e) => Validation::Invalid(e.into()),
                    })
                })
                .prompt()?;
            if text.is_empty() && !f.required {
                return Ok(None);
            }
            Ok(Some(Value::String(text)))
        }
        Kind::Number { default, .. } => {
            let field = f.clone();
            let h = help(f, &format!("{} · Esc cancels", f.expects()));
            let init = default.as_ref().map(|d| d.to_string()).unwrap_or_default();
            let text = Text::new(&label)
                .with_initial_value(&init)
                .with_help_message(&h)
                .with_validator(move |s: &str| {
                    if s.trim().is_empty() && !field.required {
                        return Ok(Validation::Valid);
                    }
                    Ok(match field.parse(s) {
                        Ok(_) => Validation::Valid,
                        Err(e) => Validation::Invalid(e.into()),
                    })
                })
                .prompt()?;
            if text.trim().is_empty() && !f.required {
                return Ok(None);
            }
            // The validator accepted it, so it parses.
            Ok(f.parse(&text).ok())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_it_is_one_key() {
        use crossterm::event::KeyEvent;
        let k = |c: KeyCode| go_for(&KeyEvent::new(c, KeyModifiers::NONE));
        let ctrl = |c: char| go_for(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
        assert_eq!(k(KeyCode::Char('n')), Some(Go::Decline));
        assert_eq!(k(KeyCode::Char('N')), Some(Go::Decline));
        assert_eq!(k(KeyCode::Char('y')), Some(Go::Form));
        assert_eq!(k(KeyCode::Enter), Some(Go::Form));
        assert_eq!(k(KeyCode::Esc), Some(Go::Cancel));
        assert_eq!(ctrl('c'), Some(Go::Cancel));
        assert_eq!(ctrl('d'), Some(Go::Cancel));
        assert_eq!(ctrl('j'), Some(Go::Form), "an early Enter, read raw");
        assert_eq!(ctrl('n'), None);
        assert_eq!(k(KeyCode::Char('x')), None);
        assert_eq!(k(KeyCode::Up), None);
    }
}
