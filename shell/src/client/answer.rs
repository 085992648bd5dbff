//! Who answers a server's questions: `--answer`/`--accept`/`--decline`/`--cancel` from the
//! command line first, then a form in the terminal, and with neither a clear message naming
//! the flag that would answer.

use std::io::Write as _;

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal;
use inquire::validator::Validation;
use inquire::{Confirm, InquireError, MultiSelect, Select, Text};
use serde_json::{Map, Value};

use super::form::{check_count, check_text, Field, Form, Kind};
use super::mrtr::{Answerer, Failure, Reply};

/// Answers given on the command line.
#[derive(Debug, Default, Clone)]
pub struct Presets {
    /// `--answer KEY.FIELD=VALUE`, unsplit on the left of `=`.
    pub answers: Vec<(String, String)>,
    /// `--accept KEY`: accept with the defaults.
    pub accept: Vec<String>,
    /// `--decline KEY`.
    pub decline: Vec<String>,
    /// `--cancel KEY`.
    pub cancel: Vec<String>,
}

impl Presets {
    /// Reads `--answer` values (`KEY.FIELD=VALUE`, or `FIELD=VALUE` for whichever question
    /// alone asks for FIELD, e.g. one a 2025-11-25 server pushes).
    pub fn parse_answers(raw: &[String]) -> Result<Vec<(String, String)>, String> {
        raw.iter()
            .map(|a| match a.split_once('=') {
                Some((lhs, v)) if !lhs.is_empty() && !lhs.starts_with('.') && !lhs.ends_with('.') => {
                    Ok((lhs.to_owned(), v.to_owned()))
                }
                _ => Err(format!(
                    "--answer '{a}': expected KEY.FIELD=VALUE or FIELD=VALUE, e.g. --answer room.room_id=studio-b"
                )),
            })
            .collect()
    }
}

/// Answers from presets, then from the terminal when there is one.
pub struct Answers {
    presets: Presets,
    interactive: bool,
    /// Questions already answered from the command line (a second ask means it was refused).
    answered: Vec<String>,
    /// Every question the server asked, in order, once each.
    asked: Vec<String>,
    /// Every field those questions had.
    asked_fields: Vec<String>,
    /// Fields more than one question of the current round asks for (a bare `FIELD=` does not
    /// answer them).
    ambiguous: Vec<String>,
}

impl Answers {
    /// `interactive`: whether a form may be shown in the terminal.
    pub fn new(presets: Presets, interactive: bool) -> Answers {
        Answers {
            presets,
            interactive,
            answered: Vec::new(),
            asked: Vec::new(),
            asked_fields: Vec::new(),
            ambiguous: Vec::new(),
        }
    }

    /// The command-line answers that matched no question the server asked (a misspelled key,
    /// or nothing was asked), each as a sentence naming the questions that were asked.
    pub fn unused(&self) -> Vec<String> {
        let asked = if self.asked.is_empty() {
            "the server asked no question".to_owned()
        } else {
            let keys: Vec<String> = self.asked.iter().map(|k| format!("'{k}'")).collect();
            format!("the server asked {}", keys.join(", "))
        };
        let was_asked = |k: &str| self.asked.iter().any(|a| a == k);
        let mut unused = Vec::new();
        for (lhs, text) in &self.presets.answers {
            let matched = self.asked.iter().any(|k| {
                lhs.strip_prefix(k.as_str())
                    .is_some_and(|r| r.starts_with('.'))
            }) || (!lhs.contains('.')
                && self.asked_fields.iter().any(|f| f == lhs)
                && !self.ambiguous.iter().any(|f| f == lhs));
            if !matched {
                unused.push(format!(
                    "--answer {lhs}={text} was not used: no question '{}' ({asked})",
                    lhs.split('.').next().unwrap_or(lhs)
                ));
            }
        }
        for (flag, keys) in [
            ("--accept", &self.presets.accept),
            ("--decline", &self.presets.decline),
            ("--cancel", &self.presets.cancel),
        ] {
            for k in keys.iter().filter(|k| !was_asked(k)) {
                unused.push(format!(
                    "{flag} {k} was not used: no question '{k}' ({asked})"
                ));
            }
        }
        unused
    }

    /// The `--answer` values for question `key`, checked and keyed by field.
    fn preset_content(
        &self,
        key: &str,
        form: &Form,
    ) -> Result<(Map<String, Value>, bool), Failure> {
        let mut content = Map::new();
        let mut mentioned = self.presets.accept.iter().any(|k| k == key);
        let prefix = format!("{key}.");
        for (lhs, text) in &self.presets.answers {
            // A bare FIELD answers the one question of the round that has that field.
            let bare = !lhs.contains('.')
                && form.field(lhs).is_some()
                && !self.ambiguous.iter().any(|f| f == lhs);
            let Some(name) = lhs.strip_prefix(&prefix).or(bare.then_some(lhs.as_str())) else {
                continue;
            };
            mentioned = true;
            let Some(field) = form.field(name) else {
                let names: Vec<_> = form.fields.iter().map(|f| f.name.as_str()).collect();
                return Err(Failure::Usage(format!(
                    "--answer {lhs}=…: question '{key}' has no field '{name}' (its fields: {})",
                    names.join(", ")
                )));
            };
            let v = field
                .parse(text)
                .map_err(|e| Failure::Usage(format!("--answer {lhs}={text}: {e}")))?;
            content.insert(field.name.clone(), v);
        }
        Ok((content, mentioned))
    }
}

impl Answerer for Answers {
    fn round(&mut self, questions: &[(String, Form)]) {
        self.ambiguous.clear();
        let mut seen: Vec<&str> = Vec::new();
        for f in questions.iter().flat_map(|(_, form)| &form.fields) {
            if seen.contains(&f.name.as_str()) {
                self.ambiguous.push(f.name.clone());
            }
            seen.push(&f.name);
        }
    }

    fn answer(&mut self, key: &str, form: &Form) -> Result<Reply, Failure> {
        if !self.asked.iter().any(|k| k == key) {
            self.asked.push(key.to_owned());
        }
        for f in &form.fields {
            if !self.asked_fields.contains(&f.name) {
                self.asked_fields.push(f.name.clone());
            }
        }
        if self.presets.cancel.iter().any(|k| k == key) {
            return Ok(Reply::Cancel);
        }
        if self.presets.decline.iter().any(|k| k == key) {
            return Ok(Reply::Decline);
        }
        let (mut content, mentioned) = self.preset_content(key, form)?;
        if mentioned && self.answered.iter().any(|k| k == key) {
            if !self.interactive {
                return Err(Failure::NeedInput(format!(
                    "the server asks '{key}' again after the answer given on the command line, so it did not \
                     accept it: {}",
                    form.message
                )));
            }
            // In a terminal, ask the person instead of resending what was refused.
            return ask(key, form, Map::new());
        }
        if mentioned {
            for f in &form.fields {
                if !content.contains_key(&f.name) {
                    if let Some(d) = f.default_value() {
                        content.insert(f.name.clone(), d);
                    }
                }
            }
            let missing: Vec<&Field> = form
                .fields
                .iter()
                .filter(|f| f.required && !content.contains_key(&f.name))
                .collect();
            if missing.is_empty() {
                form.check(&content)
                    .map_err(|e| Failure::Usage(format!("answer to '{key}': {e}")))?;
                self.answered.push(key.to_owned());
                return Ok(Reply::Accept(content));
            }
            if !self.interactive {
                if self.presets.accept.iter().any(|k| k == key) {
                    return Err(no_defaults(key, form, &missing));
                }
                return Err(need_input(key, form, &missing));
            }
        } else if !self.interactive {
            let missing: Vec<&Field> = form.fields.iter().filter(|f| f.required).collect();
            return Err(need_input(key, form, &missing));
        }
        ask(key, form, content)
    }
}

fn need_input(key: &str, form: &Form, missing: &[&Field]) -> Failure {
    let mut m = format!(
        "the server asks '{key}': {}\nno terminal to ask in; answer on the command line:",
        form.message
    );
    for f in missing {
        m += &format!(
            "\n  --answer {key}.{}=VALUE    ({}: {})",
            f.name,
            f.label(),
            f.expects()
        );
    }
    if missing.is_empty() {
        m += &format!("\n  --accept {key}    (send the form's defaults)");
    }
    m += &format!("\nor --decline {key} / --cancel {key}");
    Failure::NeedInput(m)
}

/// `--accept KEY` for a question with required fields that have no default (and no --answer).
fn no_defaults(key: &str, form: &Form, missing: &[&Field]) -> Failure {
    let names: Vec<String> = missing.iter().map(|f| format!("'{}'", f.name)).collect();
    let (has, them) = if missing.len() == 1 {
        ("has", "it")
    } else {
        ("have", "them")
    };
    let mut m = format!(
        "--accept {key} sends the form's defaults, but the required field{} {} of question \
         '{key}' ({}) {has} no default; give {them} on the command line:",
        if missing.len() == 1 { "" } else { "s" },
        names.join(", "),
        form.message
    );
    for f in missing {
        m += &format!(
            "\n  --answer {key}.{}=VALUE    ({}: {})",
            f.name,
            f.label(),
            f.expects()
        );
    }
    m += &format!("\nor --decline {key} / --cancel {key}");
    Failure::NeedInput(m)
}

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
fn ask(key: &str, form: &Form, mut content: Map<String, Value>) -> Result<Reply, Failure> {
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
/// (or Ctrl-D) cancels; anything else is not an answer.
fn go_for(key: &KeyEvent) -> Option<Go> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('c' | 'd') if ctrl => Some(Go::Cancel),
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
    write!(
        err,
        "{PROMPT}  \x1b[36m[y/Enter: fill in the form · n: decline · Esc: cancel]\x1b[0m "
    )
    .and_then(|()| err.flush())
    .map_err(cannot)?;
    let go = {
        let _raw = RawMode::on().map_err(cannot)?;
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
    use serde_json::json;

    fn form() -> Form {
        Form::parse(
            &json!({"message": "Which room?", "requestedSchema": {"type": "object", "properties": {
            "room_id": {"type": "string", "enum": ["atrium", "studio-b"]},
            "minutes": {"type": "integer", "default": 30}}, "required": ["room_id"]}}),
        )
        .unwrap()
    }

    fn answers(p: Presets) -> Answers {
        Answers::new(p, false)
    }

    #[test]
    fn presets_answer_with_defaults() {
        let p = Presets {
            answers: vec![("room.room_id".into(), "studio-b".into())],
            ..Default::default()
        };
        let r = answers(p).answer("room", &form()).unwrap();
        assert_eq!(
            r,
            Reply::Accept(
                json!({"room_id": "studio-b", "minutes": 30})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
    }

    #[test]
    fn decline_cancel_and_missing() {
        let p = Presets {
            decline: vec!["room".into()],
            ..Default::default()
        };
        assert_eq!(answers(p).answer("room", &form()).unwrap(), Reply::Decline);
        let p = Presets {
            cancel: vec!["room".into()],
            ..Default::default()
        };
        assert_eq!(answers(p).answer("room", &form()).unwrap(), Reply::Cancel);
        let Failure::NeedInput(m) = answers(Presets::default())
            .answer("room", &form())
            .unwrap_err()
        else {
            panic!()
        };
        assert!(
            m.contains("--answer room.room_id=VALUE") && m.contains("--decline room"),
            "{m}"
        );
        let p = Presets {
            accept: vec!["room".into()],
            ..Default::default()
        };
        assert!(matches!(
            answers(p).answer("room", &form()),
            Err(Failure::NeedInput(_))
        ));
    }

    #[test]
    fn a_refused_preset_is_not_resent() {
        let p = Presets {
            answers: vec![("room.room_id".into(), "atrium".into())],
            ..Default::default()
        };
        let mut a = answers(p);
        assert!(matches!(a.answer("room", &form()), Ok(Reply::Accept(_))));
        assert!(
            matches!(a.answer("room", &form()), Err(Failure::NeedInput(m)) if m.contains("again"))
        );
    }

    #[test]
    fn bad_presets_are_usage_errors() {
        let p = Presets {
            answers: vec![("room.room_id".into(), "ballroom".into())],
            ..Default::default()
        };
        assert!(
            matches!(answers(p).answer("room", &form()), Err(Failure::Usage(m)) if m.contains("atrium, studio-b"))
        );
        let p = Presets {
            answers: vec![("room.rooom".into(), "x".into())],
            ..Default::default()
        };
        assert!(
            matches!(answers(p).answer("room", &form()), Err(Failure::Usage(m)) if m.contains("no field 'rooom'"))
        );
        assert!(Presets::parse_answers(&["room".into()]).is_err());
        assert!(Presets::parse_answers(&["room.=x".into()]).is_err());
        assert!(Presets::parse_answers(&[".f=x".into()]).is_err());
    }

    /// `--answer FIELD=VALUE` answers the one question with that field, not two that share it.
    #[test]
    fn a_bare_field_answers_the_only_question_asking_for_it() {
        let p = Presets {
            answers: Presets::parse_answers(&["room_id=atrium".into()]).unwrap(),
            ..Default::default()
        };
        let mut a = answers(p);
        a.round(&[("q1".into(), form())]);
        let Ok(Reply::Accept(c)) = a.answer("q1", &form()) else {
            panic!("not accepted");
        };
        assert_eq!(c["room_id"], "atrium");
        assert!(a.unused().is_empty(), "{:?}", a.unused());
        a.round(&[("a".into(), form()), ("b".into(), form())]);
        assert!(matches!(a.answer("a", &form()), Err(Failure::NeedInput(_))));
    }

    #[test]
    fn accept_without_a_default_names_the_field() {
        let p = Presets {
            accept: vec!["room".into()],
            ..Default::default()
        };
        let Err(Failure::NeedInput(m)) = answers(p).answer("room", &form()) else {
            panic!()
        };
        assert!(
            m.starts_with("--accept room sends the form's defaults")
                && m.contains("'room_id'")
                && m.contains("no default")
                && m.contains("--answer room.room_id=VALUE"),
            "{m}"
        );
    }

    #[test]
    fn unused_presets_name_the_questions_asked() {
        let p = Presets {
            answers: vec![
                ("room.room_id".into(), "atrium".into()),
                ("rooom.room_id".into(), "atrium".into()),
                ("roomy.x".into(), "1".into()),
            ],
            decline: vec!["confirm".into()],
            ..Default::default()
        };
        let mut a = answers(p);
        assert_eq!(
            a.unused().len(),
            4,
            "nothing asked yet: all unused: {:?}",
            a.unused()
        );
        assert!(a.unused()[0].ends_with("(the server asked no question)"));
        a.answer("room", &form()).unwrap();
        let u = a.unused();
        assert_eq!(
            u,
            [
                "--answer rooom.room_id=atrium was not used: no question 'rooom' (the server asked 'room')",
                "--answer roomy.x=1 was not used: no question 'roomy' (the server asked 'room')",
                "--decline confirm was not used: no question 'confirm' (the server asked 'room')",
            ]
        );
    }

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
        assert_eq!(ctrl('n'), None);
        assert_eq!(k(KeyCode::Char('x')), None);
        assert_eq!(k(KeyCode::Up), None);
    }
}
