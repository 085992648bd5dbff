//! The JSON view: validation never panics, and navigation of what validates never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = redmark_core::wire::parse(data) {
        let mut scratch = [0u8; 64];
        for (k, val) in v.members() {
            let _ = k.as_str(&mut scratch);
            let _ = (val.as_i64(), val.as_f64(), val.items().count());
        }
        let _ = v.get("id").map(|id| id.chars().count());
    }
});
