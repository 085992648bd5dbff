//! What a person at the door sees, under QEMU: an SNTP responder on the host side of QEMU's user
//! network for the panel's wall clock (the panel asks 10.0.2.2:[`SNTP_PORT`], which QEMU's slirp
//! hands to the host's loopback at that port).

use std::net::UdpSocket;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::firmware_with_sntp;

/// The loopback UDP port of the tests' SNTP responder (fixed: it is built into the image).
pub const SNTP_PORT: u16 = 40123;
/// The SNTP server the test image is provisioned with.
pub const SNTP_SERVER: &str = "10.0.2.2:40123";
/// Seconds from 1900 (NTP) to 1970 (unix).
const NTP_TO_UNIX: i64 = 2_208_988_800;

/// The networked image provisioned with [`SNTP_SERVER`].
pub fn sntp_firmware() -> PathBuf {
    firmware_with_sntp(SNTP_SERVER)
}

/// An SNTP server on 127.0.0.1:[`SNTP_PORT`] answering the host's time shifted by
/// seconds ([`SntpResponder::answer`]), or nothing while silent. One at a time per process (the
/// port is fixed): it holds a lock while it lives. Dropping it stops it.
pub struct SntpResponder {
    shift: Arc<AtomicI64>,
    silent: Arc<AtomicBool>,
    answered: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    _one: MutexGuard<'static, ()>,
}

static ONE: Mutex<()> = Mutex::new(());

impl SntpResponder {
    /// Starts it, silent.
    pub fn start() -> SntpResponder {
        let one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        let socket = UdpSocket::bind(("127.0.0.1", SNTP_PORT))
            .unwrap_or_else(|e| panic!("bind the SNTP responder on 127.0.0.1:{SNTP_PORT}: {e}"));
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let (shift, silent) = (Arc::new(AtomicI64::new(0)), Arc::new(AtomicBool::new(true)));
        let (answered, stop) = (
            Arc::new(AtomicU32::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (sh, si, an, st) = (
            shift.clone(),
            silent.clone(),
            answered.clone(),
            stop.clone(),
        );
        let thread = thread::spawn(move || {
            let mut buf = [0u8; 512];
            while !st.load(Ordering::Relaxed) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                if n < 48 || buf[0] & 7 != 3 || si.load(Ordering::Relaxed) {
                    continue;
                }
                let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
                let t = now.as_secs() as i64 + sh.load(Ordering::Relaxed) + NTP_TO_UNIX;
                let mut a = [0u8; 48];
                a[0] = 0x24; // LI 0, version 4, mode 4 (server)
                a[1] = 2; // stratum
                a[24..32].copy_from_slice(&buf[40..48]); // originate = the request's transmit
                for at in [32, 40] {
                    a[at..at + 4].copy_from_slice(&(t as u32).to_be_bytes());
                }
                if socket.send_to(&a, from).is_ok() {
                    an.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        SntpResponder {
            shift,
            silent,
            answered,
            stop,
            thread: Some(thread),
            _one: one,
        }
    }

    /// Answers from now on with the host's time shifted by `seconds`.
    pub fn answer(&self, seconds: i64) {
        self.shift.store(seconds, Ordering::Relaxed);
        self.silent.store(false, Ordering::Relaxed);
    }

    /// How many answers it has sent.
    pub fn answered(&self) -> u32 {
        self.answered.load(Ordering::Relaxed)
    }
}

impl Drop for SntpResponder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The host's clock, unix seconds.
pub fn host_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A screenshot: `width` × `height` RGB pixels, 8 bits each.
#[derive(Clone, PartialEq, Eq)]
pub struct Shot {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

/// A rectangle of a [`Shot`] left out of comparisons (x, y, width, height, in its pixels).
pub type Region = (u32, u32, u32, u32);

/// Where the panel draws its clock's digits ("HH:MM", 5 glyphs of 8×8 from the bottom left of
/// the 128×64 screen), in the screendump's pixels (QEMU shows each pixel 4×4).
pub const CLOCK_DIGITS: Region = (0, 56 * 4, 5 * 8 * 4, 8 * 4);

impl Shot {
    /// QEMU's `screendump` of the panel's screen (through QMP), read from its PPM.
    pub fn take(panel: &super::Panel, name: &str) -> Shot {
        let dir = super::repo_root()
            .join("target")
            .join("panel")
            .join("shots");
        std::fs::create_dir_all(&dir).expect("make target/panel/shots");
        let ppm = dir.join(format!("{name}-{}.ppm", std::process::id()));
        let cmd = format!(
            r#"{{"execute":"screendump","arguments":{{"filename":{}}}}}"#,
            serde_json::Value::from(ppm.display().to_string())
        );
        panel.qmp(&[&cmd]);
        let bytes = std::fs::read(&ppm).expect("read the screendump");
        let _ = std::fs::remove_file(&ppm);
        Shot::from_ppm(&bytes).expect("a P6 PPM of 8-bit samples")
    }

    /// A binary PPM (`P6`, maxval 255) as QEMU writes it.
    pub fn from_ppm(b: &[u8]) -> Option<Shot> {
        let mut fields = Vec::new();
        let mut at = 0;
        while fields.len() < 4 {
            while b.get(at)?.is_ascii_whitespace() {
                at += 1;
            }
            let start = at;
            while !b.get(at)?.is_ascii_whitespace() {
                at += 1;
            }
            fields.push(std::str::from_utf8(&b[start..at]).ok()?.to_owned());
        }
        let (w, h): (u32, u32) = (fields[1].parse().ok()?, fields[2].parse().ok()?);
        let rgb = b.get(at + 1..)?.to_vec();
        (fields[0] == "P6" && fields[3] == "255" && rgb.len() == (w * h * 3) as usize).then_some(
            Shot {
                width: w,
                height: h,
                rgb,
            },
        )
    }

    /// Writes it as an RGB PNG.
    pub fn save_png(&self, path: &std::path::Path) {
        let file = std::fs::File::create(path)
            .unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().expect("PNG header");
        w.write_image_data(&self.rgb).expect("PNG data");
    }

    /// Reads an RGB PNG written by [`Shot::save_png`].
    pub fn load_png(path: &std::path::Path) -> Option<Shot> {
        let file = std::fs::File::open(path).ok()?;
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .ok()?;
        let mut rgb = vec![0; reader.output_buffer_size()?];
        let info = reader.next_frame(&mut rgb).ok()?;
        rgb.truncate(info.buffer_size());
        (info.color_type == png::ColorType::Rgb && info.bit_depth == png::BitDepth::Eight)
            .then_some(Shot {
                width: info.width,
                height: info.height,
                rgb,
            })
    }

    /// How many pixels differ from `other`'s outside `ignored` (every pixel if the sizes differ).
    pub fn differing(&self, other: &Shot, ignored: Region) -> usize {
        if (self.width, self.height) != (other.width, other.height) {
            return (self.width * self.height) as usize;
        }
        let (ix, iy, iw, ih) = ignored;
        let mut n = 0;
        for y in 0..self.height {
            for x in 0..self.width {
                if (ix..ix + iw).contains(&x) && (iy..iy + ih).contains(&y) {
                    continue;
                }
                let at = ((y * self.width + x) * 3) as usize;
                if self.rgb[at..at + 3] != other.rgb[at..at + 3] {
                    n += 1;
                }
            }
        }
        n
    }
}

/// The golden screenshots' folder: docs/ (docs/panel.md shows them).
pub fn golden_path(name: &str) -> PathBuf {
    super::repo_root()
        .join("docs")
        .join(format!("panel-face-{name}.png"))
}

/// Whether this run retakes the golden screenshots (`REDMARK_RETAKE_SCREENS=1`, what
/// scripts/panel-screenshots.sh sets) instead of comparing with them.
pub fn retaking() -> bool {
    std::env::var_os("REDMARK_RETAKE_SCREENS").is_some_and(|v| v == "1")
}

/// Takes screendumps until one matches the golden `name` outside the clock's digits (the face
/// redraws a few times a second) or `within` passes; fails with the last one saved as a PNG
/// under target/panel/shots. When [`retaking`], saves a shot taken a second from now (the
/// face has redrawn by then) as the new golden instead.
pub fn expect_screen(panel: &super::Panel, name: &str, within: Duration) {
    let golden = golden_path(name);
    let end = std::time::Instant::now() + within;
    if retaking() {
        // The face redraws within its look interval (250 ms); give it a second.
        thread::sleep(Duration::from_secs(1));
        Shot::take(panel, name).save_png(&golden);
        return;
    }
    let want = Shot::load_png(&golden).unwrap_or_else(|| {
        panic!(
            "no golden {} (scripts/panel-screenshots.sh)",
            golden.display()
        )
    });
    loop {
        let got = Shot::take(panel, name);
        let off = got.differing(&want, CLOCK_DIGITS);
        if off == 0 {
            return;
        }
        if std::time::Instant::now() >= end {
            let actual = super::repo_root()
                .join("target")
                .join("panel")
                .join("shots")
                .join(format!("{name}-actual.png"));
            got.save_png(&actual);
            panic!(
                "the screen is not {} ({off} pixels differ outside the clock); it is {}\n{}",
                golden.display(),
                actual.display(),
                panel.stderr()
            );
        }
        thread::sleep(Duration::from_millis(200));
    }
}
