//! The networked door panel keeps its bookings on the SD card QEMU's `lm3s6965evb` wires to
//! SSI0 beside the OLED (`-drive if=sd,format=raw,file=…`): 256 titled bookings over HTTP,
//! QEMU killed and started again on the same card image, every booking read back by id with
//! its title, and the OLED still drawing on the shared bus; and QEMU killed (SIGKILL) in the
//! middle of a booking, round after round, loses no acknowledged booking and makes none twice.
//!
//! Needs `qemu-system-arm` and the `thumbv7m-none-eabi` target (ignored without them, required
//! by scripts/test-all.sh). Every wait is bounded; every QEMU is killed by its `NetPanel`, and
//! each card image is a file of its own in the temp folder, removed at the end.

use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use redmark_tests::qemu::face::Shot;
use redmark_tests::qemu::net::{HttpAnswer, NetPanel};
use redmark_tests::qemu::{firmware, Build};
use redmark_tests::server::meta;
use serde_json::{json, Value};

/// Bookings the store holds on the card (boards/flash-store `MAX_BOOKINGS`).
const HOLDS: usize = 256;
/// The card image's size: QEMU takes SD cards whose size is a power of two.
const CARD_BYTES: u64 = 1 << 20;

/// A blank card image of its own, removed when dropped.
struct CardImage(PathBuf);

impl CardImage {
    fn new(name: &str) -> CardImage {
        let path =
            std::env::temp_dir().join(format!("redmark-sd-{}-{name}.img", std::process::id()));
        let f = std::fs::File::create(&path).expect("create the card image");
        f.set_len(CARD_BYTES).expect("size the card image");
        CardImage(path)
    }

    /// The networked panel booted with this card, serving.
    fn boot(&self) -> NetPanel {
        let drive = format!("if=sd,format=raw,file={}", self.0.display());
        let p = NetPanel::boot_with(&firmware(Build::NET), &["-drive".to_owned(), drive]);
        assert!(
            p.panel.stderr().contains("store: SD card"),
            "{}",
            p.panel.stderr()
        );
        p
    }
}

impl Drop for CardImage {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn call(id: i64, name: &str, args: Value) -> Value {
    let params =
        json!({"name": name, "arguments": args, "_meta": meta(json!({"elicitation": {}}))});
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn json_of(a: &HttpAnswer) -> Value {
    assert_eq!(a.status, 200, "{a:?}");
    serde_json::from_str(&a.body).unwrap_or_else(|e| panic!("not JSON ({e}): {a:?}"))
}

/// The `i`th booking's title.
fn title(i: usize) -> String {
    format!("Week {} review {i:03}", i / 45)
}

/// `book_room` for the `i`th booking: the atrium, nine hours a day from 08:00 in 2099, titled.
fn book(i: usize) -> Value {
    let day = format!("2099-{:02}-{:02}", 1 + i / 252, 1 + (i % 252) / 9);
    call(
        i as i64 + 1,
        "book_room",
        json!({"day": day, "hour": 8 + i % 9, "room_id": "atrium", "title": title(i)}),
    )
}

/// Books the `i`th booking; its id.
fn booked(p: &NetPanel, i: usize) -> String {
    let r = json_of(&p.post(&book(i)));
    let b = &r["result"]["structuredContent"]["booking"];
    assert_eq!(b["title"], title(i), "booking {i}: {r}");
    b["id"].as_str().expect("booking id").to_owned()
}

/// Booking `id` as the panel names it when asked to cancel it (the form is never answered,
/// so nothing is cancelled); `None` if it has no such booking.
fn named(p: &NetPanel, id: &str) -> Option<String> {
    let r = json_of(&p.post(&call(9000, "cancel_booking", json!({"booking_id": id}))));
    match r["result"]["resultType"].as_str() {
        Some("input_required") => Some(r.to_string()),
        _ => {
            assert_eq!(r["result"]["isError"], true, "{r}");
            None
        }
    }
}

/// Checks booking `bk_{n}` is the `i`th booking, title and all.
fn is_there(p: &NetPanel, n: usize, i: usize) {
    let asked = named(p, &format!("bk_{n}")).unwrap_or_else(|| panic!("bk_{n} lost"));
    assert!(asked.contains(&title(i)), "bk_{n}: {asked}");
}

/// Lit pixels of the OLED's screen now.
fn lit(p: &NetPanel) -> usize {
    let shot = Shot::take(&p.panel, "sd-oled");
    shot.rgb.iter().filter(|&&c| c > 0x20).count()
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn the_networked_panel_keeps_256_titled_bookings_on_its_sd_card_through_a_restart() {
    let card = CardImage::new("restart");
    let p = card.boot();
    let started = Instant::now();
    let ids: Vec<String> = (0..HOLDS).map(|i| booked(&p, i)).collect();
    eprintln!("{HOLDS} bookings over HTTP in {:?}", started.elapsed());
    let r = json_of(&p.post(&book(HOLDS)));
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("store is full"),
        "{r}"
    );
    assert!(lit(&p) > 100, "the OLED draws while the card is in use");
    drop(p);

    // QEMU started again on the same card image: every booking read back.
    let p = card.boot();
    let started = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        let asked = named(&p, id).unwrap_or_else(|| panic!("booking {i} ({id}) lost"));
        assert!(asked.contains(&title(i)), "booking {i}: {asked}");
    }
    eprintln!("read back in {:?}", started.elapsed());
    let r = json_of(&p.post(&book(HOLDS)));
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("store is full"),
        "{r}"
    );
    assert!(lit(&p) > 100, "the OLED draws after the restart");
}

/// Sends the `i`th booking on a connection of its own and kills QEMU (SIGKILL) `after` later,
/// whatever it was doing.
fn kill_while_booking(p: NetPanel, i: usize, after: Duration) {
    let text = book(i).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: book_room\r\nContent-Length: {}\r\n\r\n{text}",
        p.http,
        text.len()
    );
    let mut s = TcpStream::connect(("127.0.0.1", p.http)).expect("connect");
    s.write_all(request.as_bytes()).expect("send the booking");
    thread::sleep(after);
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &p.panel.pid().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    drop(p);
}

#[test]
#[cfg_attr(
    not(panel_tools),
    ignore = "needs qemu-system-arm and the Cortex-M targets (scripts/test-all.sh installs them)"
)]
fn a_kill_in_the_middle_of_a_booking_loses_no_acknowledged_booking_and_doubles_none() {
    let card = CardImage::new("kill");
    // Bookings acknowledged so far (bk_{n + 1} is the nth), and the one in flight, if it
    // was made before the kill.
    let mut acked = 0;
    for (round, after_ms) in [0u64, 2, 5, 10, 20, 25, 30, 35, 40, 80]
        .into_iter()
        .enumerate()
    {
        let p = card.boot();
        // Every acknowledged booking is there once; the one in flight at the last kill
        // either made it (then the next id) or not; nothing after it.
        for n in 1..=acked {
            is_there(&p, n, n - 1);
        }
        let in_flight = acked;
        if let Some(asked) = named(&p, &format!("bk_{}", in_flight + 1)) {
            assert!(asked.contains(&title(in_flight)), "round {round}: {asked}");
            acked += 1;
        }
        if round > 0 {
            let made = if acked > in_flight {
                "made"
            } else {
                "not made"
            };
            eprintln!("round {round}: the booking in flight at the kill was {made}");
        }
        assert_eq!(
            named(&p, &format!("bk_{}", acked + 1)),
            None,
            "round {round}: a booking twice"
        );
        // Its hour is held once: booking it again is refused, not made a second time.
        if acked > in_flight {
            let r = json_of(&p.post(&book(in_flight)));
            assert_eq!(
                r["result"]["structuredContent"]["reason"], "taken",
                "round {round}: {r}"
            );
        }
        for _ in 0..3 {
            assert_eq!(
                booked(&p, acked),
                format!("bk_{}", acked + 1),
                "round {round}"
            );
            acked += 1;
        }
        kill_while_booking(p, acked, Duration::from_millis(after_ms));
    }
    let p = card.boot();
    for n in 1..=acked {
        is_there(&p, n, n - 1);
    }
}
