//! Who answers a server's questions: `--answer`/`--accept`/`--decline`/`--cancel` from the
//! command line first, then a form in the terminal, and with neither a clear message naming
//! the flag that would answer.

use serde_json::{Map, Value};

use super::form::{Field, Form};
use super::mrtr::{Answerer, Failure, Reply};
use super::prompt::ask;

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
    /// A command-line answer this client's form check refused and sent anyway, so the server
    /// gives its own reason too: (question, this client's reason).
    refused_here: Option<(String, String)>,
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
            refused_here: None,
        }
    }

    /// A command-line answer this client's check refused but the server took: the sentence to
    /// warn with (the two checks disagree).
    pub fn refused_here_only(&self) -> Option<String> {
        self.refused_here.as_ref().map(|(key, local)| {
            format!(
                "{local}, says this client's check, but the server accepted the answer to '{key}'"
            )
        })
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
        &mut self,
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
            let v = match field.parse(text) {
                Ok(v) => v,
                Err(e) if self.interactive => {
                    return Err(Failure::Usage(format!("--answer {lhs}={text}: {e}")))
                }
                Err(e) => {
                    // Sent as written: the server's red mark gives its reason too.
                    self.refused_here =
                        Some((key.to_owned(), format!("--answer {lhs}={text}: {e}")));
                    Value::String(text.clone())
                }
            };
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
            if let Some((_, local)) = self.refused_here.take().filter(|(k, _)| k == key) {
                // Both checks refused it: this client's reason, and the server's red mark.
                return Err(Failure::Usage(format!(
                    "{local}; the server says: {}",
                    form.message
                )));
            }
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
                if let Err(e) = form.check(&content) {
                    let local = format!("answer to '{key}': {e}");
                    if self.interactive {
                        return Err(Failure::Usage(local));
                    }
                    // Sent anyway: the server's red mark says why in its own words (and a
                    // server that takes it shows the two checks disagree).
                    self.refused_here.get_or_insert((key.to_owned(), local));
                }
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

    /// A command-line answer the form check refuses is sent as written, so the server's red
    /// mark comes back: both reasons are then one usage error; a server that takes it anyway
    /// leaves a warning (the two checks disagree).
    #[test]
    fn a_refused_preset_is_sent_for_the_servers_reason_too() {
        let p = Presets {
            answers: vec![("room.room_id".into(), "ballroom".into())],
            ..Default::default()
        };
        let mut a = answers(p.clone());
        assert!(
            matches!(a.answer("room", &form()), Ok(Reply::Accept(c)) if c["room_id"] == "ballroom")
        );
        let mut reask = form();
        reask.message = "Room: 'ballroom' is not one of the options offered.".into();
        let both = a.answer("room", &reask);
        assert!(
            matches!(&both, Err(Failure::Usage(m)) if m.contains("atrium, studio-b")
                && m.contains("the server says: Room: 'ballroom'")),
            "{both:?}"
        );
        let mut taken = answers(p);
        assert!(taken.refused_here_only().is_none());
        let _ = taken.answer("room", &form());
        assert!(taken
            .refused_here_only()
            .is_some_and(|w| w.contains("the server accepted")));
    }

    #[test]
    fn bad_presets_are_usage_errors() {
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
}
