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
/// [`SntpResponder::shift`] seconds, or nothing while silent. One at a time per process (the
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
