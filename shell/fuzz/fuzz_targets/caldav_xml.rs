//! What redmark reads of a CalDAV server's WebDAV answers: a `calendar-query` REPORT's
//! multistatus (`dav::multistatus`) and a `sync-collection` REPORT's (`dav::changes`). The
//! server, or anyone in the middle of a plain-HTTP `--caldav URL`, chooses these bytes: never a
//! panic, and never more events than `MAX_REMOTE_EVENTS`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redmark::calendar::caldav::dav;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(listed) = dav::multistatus(text) {
        assert!(listed.len() <= dav::MAX_REMOTE_EVENTS);
    }
    if let Ok(c) = dav::changes(text) {
        assert!(c.changed.len() + c.removed.len() <= dav::MAX_REMOTE_EVENTS);
    }
});
