//! The derives of `redmark_core::typed` from the outside: the schema an `Args` struct
//! writes (with a `Choices` enum joined in at compile time), its checks and its zero-copy read;
//! a `Question`'s form (every field kind) and the decode of an answer, with the red mark of a
//! wrong one; a `Sealed` state's encoding.

use redmark_core::mrtr::{Form, Reason};
use redmark_core::typed::{Args, Choices, Date, Picks, Question, Scratch, Sealed, Text};
use redmark_core::wire::json::parse;
use redmark_core::wire::Writer;
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Choices)]
enum Size {
    /// Up to 4 people
    Small,
    #[choice(value = "big", title = "Up to 12 people")]
    Large,
}

#[derive(Args, Debug)]
#[allow(dead_code)] // read through Debug
struct Order<'a> {
    /// Where it goes
    #[arg(max_len = 8, header = "Room")]
    room: &'a str,
    /// How big
    size: Size,
    #[arg(min = 1, max = 9)]
    count: Option<u8>,
    when: Option<Date>,
    urgent: Option<bool>,
}

#[test]
fn args_write_their_schema_at_compile_time() {
    let schema: Value = serde_json::from_str(Order::SCHEMA).unwrap();
    assert_eq!(
        schema,
        json!({"type":"object","properties":{
            "room":{"type":"string","maxLength":8,"x-mcp-header":"Room","description":"Where it goes"},
            "size":{"type":"string","oneOf":[{"const":"small","title":"Up to 4 people"},
                {"const":"big","title":"Up to 12 people"}],"description":"How big"},
            "count":{"type":"integer","minimum":1,"maximum":9},
            "when":{"type":"string","format":"date"},
            "urgent":{"type":"boolean"}},
            "required":["room","size"],"additionalProperties":false})
    );
    assert_eq!(Order::NAMES, ["room", "size", "count", "when", "urgent"]);
    assert_eq!(Order::HEADERS[0].header, "Room");
    assert_eq!(Order::SCRATCH, 32);
}

fn read(json: &str) -> Result<String, String> {
    let v = parse(json.as_bytes()).unwrap();
    let mut buf = [0u8; Order::SCRATCH];
    Order::check_and_read(Some(v), &mut Scratch::new(&mut buf))
        .map(|o| format!("{o:?}"))
        .map_err(|e| e.to_string())
}

#[test]
fn args_are_checked_then_read_without_a_copy() {
    assert_eq!(
        read(r#"{"room":"n\u00e9ok","size":"big","count":3,"when":"2030-01-07","urgent":true}"#),
        Ok(r#"Order { room: "néok", size: Large, count: Some(3), when: Some(Date { year: 2030, month: 1, day: 7 }), urgent: Some(true) }"#.into())
    );
    assert_eq!(
        read(r#"{"room":"a","size":"medium"}"#),
        Err("Invalid argument 'size': 'medium' is not one of the options offered.".into())
    );
    assert_eq!(
        read(r#"{"room":"a","size":"big","count":10}"#),
        Err("Invalid argument 'count': 10 is more than the maximum, 9.".into())
    );
    assert_eq!(
        read(r#"{"room":"a","sise":"big"}"#),
        Err("Unknown argument 'sise'; did you mean 'size'?".into())
    );
    assert_eq!(
        read(r#"{"room":"a","size":"big","size":"small"}"#),
        Err("Invalid arguments: see the tool's inputSchema.".into()),
        "a duplicated argument is refused"
    );
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Choices)]
enum Extra {
    Projector,
    Whiteboard,
    Coffee,
}

#[derive(Question, Debug)]
#[question(key = "details")]
struct Details<'a> {
    /// Shown on the door
    #[field(title = "Title", min_len = 1, max_len = 40)]
    title: Text<'a>,
    #[field(title = "Contact", format = "email")]
    contact: Option<Text<'a>>,
    #[field(title = "People", min = 1, max = 12, default = 2)]
    people: u8,
    #[field(title = "Size", default = Size::Large)]
    size: Size,
    #[field(title = "Extras", max_items = 2, default = [Extra::Coffee])]
    extras: Picks<Extra>,
    #[field(title = "Day")]
    day: Option<Date>,
    #[field(title = "Public")]
    public: bool,
    #[field(title = "Budget", min = 0.5, max = 100, default = 20)]
    budget: Option<f64>,
}

fn form() -> Form<'static> {
    Form {
        message: &"Details?",
        fields: Details::FIELDS,
        mark: None,
    }
}

#[test]
fn a_question_writes_every_field_kind() {
    let mut buf = [0u8; 2048];
    let mut w = Writer::new(&mut buf);
    form().write_params(&mut w);
    let n = w.finish().unwrap();
    let v: Value = serde_json::from_slice(&buf[..n]).unwrap();
    let props = &v["requestedSchema"]["properties"];
    assert_eq!(
        props["title"],
        json!({"type":"string","title":"Title","description":"Shown on the door","minLength":1,"maxLength":40})
    );
    assert_eq!(props["contact"]["format"], "email");
    assert_eq!(
        props["people"],
        json!({"type":"integer","title":"People","minimum":1,"maximum":12,"default":2})
    );
    assert_eq!(props["size"]["default"], "big");
    assert_eq!(
        props["extras"],
        json!({"type":"array","title":"Extras","maxItems":2,"items":{"anyOf":[
            {"const":"projector","title":"projector"},{"const":"whiteboard","title":"whiteboard"},
            {"const":"coffee","title":"coffee"}]},"default":["coffee"]})
    );
    assert_eq!(props["day"]["format"], "date");
    assert_eq!(
        props["budget"],
        json!({"type":"number","title":"Budget","minimum":0.5,"maximum":100,"default":20})
    );
    assert_eq!(
        v["requestedSchema"]["required"],
        json!(["title", "people", "size", "extras", "public"])
    );
    assert_eq!(Details::KEY, "details");
}

#[test]
fn an_answer_decodes_into_the_type_or_gets_a_red_mark() {
    let content = parse(
        br#"{"title":"Retro","people":4,"size":"small","extras":["coffee","projector"],"public":false,"day":"2030-02-03"}"#,
    )
    .unwrap();
    assert!(form().validate(content).is_ok());
    let d = Details::decode(content, &[]).unwrap();
    assert!(d.title == "Retro" && d.contact.is_none() && d.people == 4 && !d.public);
    assert_eq!(d.size, Size::Small);
    assert!(d.extras.has(Extra::Coffee) && d.extras.has(Extra::Projector));
    assert!(!d.extras.has(Extra::Whiteboard));
    assert_eq!(d.day.map(|d| d.day), Some(3));
    assert_eq!(d.budget, None);
    let with_budget =
        parse(br#"{"title":"R","people":4,"size":"big","extras":[],"public":true,"budget":12.5}"#)
            .unwrap();
    assert!(form().validate(with_budget).is_ok());
    assert_eq!(
        Details::decode(with_budget, &[]).unwrap().budget,
        Some(12.5)
    );
    let too_cheap =
        parse(br#"{"title":"R","people":4,"size":"big","extras":[],"public":true,"budget":0.25}"#)
            .unwrap();
    let bad = form().validate(too_cheap).unwrap_err();
    assert_eq!(
        bad.to_string(),
        "Budget: 0.25 is less than the minimum, 0.5."
    );

    let too_many = parse(
        br#"{"title":"Retro","people":4,"size":"small","extras":["coffee","projector","whiteboard"],"public":false}"#,
    )
    .unwrap();
    let bad = form().validate(too_many).unwrap_err();
    assert_eq!((bad.field.name, bad.reason), ("extras", Reason::TooMany));
    assert_eq!(
        bad.to_string(),
        "Extras: [\"coffee\",\"projector\",\"whiteboard\"] picks more than 2."
    );
    let unknown =
        parse(br#"{"title":"Retro","people":4,"size":"small","extras":["tea"],"public":true}"#)
            .unwrap();
    let bad = form().validate(unknown).unwrap_err();
    assert_eq!((bad.field.name, bad.reason), ("extras", Reason::NotOffered));
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Sealed)]
struct Round2 {
    step: u8,
    at: u32,
    done: bool,
    tag: [u8; 3],
}

#[test]
fn sealed_state_is_fixed_size_and_round_trips() {
    let s = Round2 {
        step: 2,
        at: 0x0102_0304,
        done: true,
        tag: *b"abc",
    };
    assert_eq!(Round2::SIZE, 9);
    let bytes = s.seal();
    assert_eq!(&*bytes, &[2, 1, 2, 3, 4, 1, b'a', b'b', b'c']);
    assert_eq!(Round2::take(&bytes), Some(s));
    assert_eq!(Round2::take(&bytes[..8]), None);
    let mut other = bytes.to_vec();
    other[5] = 7; // not a bool
    assert_eq!(Round2::take(&other), None);
}

#[test]
fn choices_name_their_variants() {
    assert_eq!(Size::Large.value(), "big");
    assert_eq!(
        Size::named(parse(br#""small""#).unwrap()),
        Some(Size::Small)
    );
    assert_eq!(Size::named(parse(br#""tiny""#).unwrap()), None);
}
