//! The CalDAV client (RFC 4791 over WebDAV, blocking `ureq`: run it on a blocking thread): a room's collection made when missing, its events listed with their ETags and data, one event written or deleted under a precondition.

use std::time::Duration;

use base64ct::{Base64, Encoding};

/// One request's time, connect to last byte.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of a collection's listing read at most (a longer one fails the room's pass).
pub const MAX_LISTING_BYTES: u64 = 16 * 1024 * 1024;
/// Events of one collection read at most (more fail the room's pass).
pub const MAX_REMOTE_EVENTS: usize = 5000;

/// Why a request to the CalDAV server failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DavError {
    /// It was not reached, or did not answer in [`REQUEST_TIMEOUT`].
    Unreachable(String),
    /// It answered with this status where another was expected.
    Status(&'static str, u16),
    /// Its answer was over [`MAX_LISTING_BYTES`] or [`MAX_REMOTE_EVENTS`].
    TooLarge,
    /// Its answer was not the XML asked for.
    Garbled(String),
}

impl std::fmt::Display for DavError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DavError::Unreachable(e) => write!(f, "unreachable: {e}"),
            DavError::Status(what, s) => write!(f, "{what} answered HTTP {s}"),
            DavError::TooLarge => write!(
                f,
                "a listing over {MAX_LISTING_BYTES} bytes or {MAX_REMOTE_EVENTS} events"
            ),
            DavError::Garbled(e) => write!(f, "an answer that is not WebDAV XML: {e}"),
        }
    }
}

/// What a conditional write came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Done.
    Done,
    /// The precondition failed (another writer was first): the next pass looks again.
    Lost,
}

/// What a `sync-collection` REPORT (RFC 6578) came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Synced {
    /// The changes since the token sent (all events for none), and the token to send next.
    Changes(Changes),
    /// The token sent is no longer valid: sync again from none.
    TokenInvalid,
    /// The server does not offer collection sync: list the collection instead.
    Unsupported,
}

/// The changes a `sync-collection` REPORT reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// The token to send next time.
    pub token: String,
    /// Events new or changed since the token sent.
    pub changed: Vec<Listed>,
    /// Paths of events gone since.
    pub removed: Vec<String>,
}

/// An event resource listed: its path, ETag and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its path (absolute, as the server wrote it).
    pub href: String,
    /// Its ETag.
    pub etag: String,
    /// Its iCalendar text.
    pub data: String,
}

/// A CalDAV server: the base URL (ending in `/`) rooms' collections go under, and the
/// `Authorization` header for its credentials (none without).
pub struct Dav {
    agent: ureq::Agent,
    base: String,
    auth: Option<String>,
}

const PROPFIND_TYPE: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>"#;

/// A `sync-collection` REPORT asking for ETags and data, `{token}` the token (empty: all).
const SYNC: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
<d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level>
<d:prop><d:getetag/><c:calendar-data/></d:prop>
</d:sync-collection>"#;

const QUERY: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
<d:prop><d:getetag/><c:calendar-data/></d:prop>
<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter></c:filter>
</c:calendar-query>"#;

impl Dav {
    /// A client of `base` (made to end in `/`), as `user` with `password` if given.
    pub fn new(base: &str, credentials: Option<(&str, &str)>) -> Dav {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .allow_non_standard_methods(true)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .max_redirects(0)
            .tls_config(crate::platform::tls::config())
            .build()
            .into();
        let mut base = base.to_owned();
        if !base.ends_with('/') {
            base.push('/');
        }
        let auth = credentials.map(|(user, password)| {
            let pair = format!("{user}:{password}");
            format!("Basic {}", Base64::encode_string(pair.as_bytes()))
        });
        Dav { agent, base, auth }
    }

    /// The URL of room `room`'s collection (ending in `/`).
    pub fn collection(&self, room: &str) -> String {
        format!("{}{room}/", self.base)
    }

    /// The URL of `href` (a path the server gave, or a whole URL).
    fn url(&self, href: &str) -> String {
        if href.starts_with("http://") || href.starts_with("https://") {
            return href.to_owned();
        }
        // scheme://host[:port] of the base, then the path.
        let after = self.base.find("://").map_or(0, |i| i + 3);
        let host_end = self.base[after..]
            .find('/')
            .map_or(self.base.len(), |i| after + i);
        format!("{}{href}", &self.base[..host_end])
    }

    /// The path of a URL of the base's server (what hrefs in listings are).
    pub fn path(&self, url: &str) -> String {
        let after = url.find("://").map_or(0, |i| i + 3);
        url[after..]
            .find('/')
            .map_or("/".to_owned(), |i| url[after + i..].to_owned())
    }

    /// Sends `method` to `url` with `headers` and `body`: its status and body (bounded).
    fn send(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<(u16, String), DavError> {
        let mut req = ureq::http::Request::builder().method(method).uri(url);
        if let Some(auth) = &self.auth {
            req = req.header("Authorization", auth);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(body.to_owned())
            .map_err(|e| DavError::Unreachable(e.to_string()))?;
        let mut resp = self
            .agent
            .run(req)
            .map_err(|e| DavError::Unreachable(e.to_string()))?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(MAX_LISTING_BYTES)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => DavError::TooLarge,
                e => DavError::Unreachable(e.to_string()),
            })?;
        Ok((status, text))
    }

    /// Makes room `room`'s collection, named `name`, unless it is there.
    pub fn ensure(&self, room: &str, name: &str) -> Result<(), DavError> {
        let url = self.collection(room);
        let depth0 = [("Depth", "0"), ("Content-Type", "application/xml")];
        match self.send("PROPFIND", &url, &depth0, PROPFIND_TYPE)?.0 {
            207 => return Ok(()),
            404 => {}
            s => return Err(DavError::Status("PROPFIND", s)),
        }
        let mut display = String::new();
        xml_escape(name, &mut display);
        let body = format!(
            r#"<?xml version="1.0" encoding="utf-8"?>
<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>
<d:displayname>{display}</d:displayname>
<c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set>
</d:prop></d:set></c:mkcalendar>"#
        );
        let ct = [("Content-Type", "application/xml")];
        match self.send("MKCALENDAR", &url, &ct, &body)?.0 {
            // 405: made meanwhile by another instance.
            200 | 201 | 405 => Ok(()),
            s => Err(DavError::Status("MKCALENDAR", s)),
        }
    }

    /// Every event of room `room`'s collection.
    pub fn list(&self, room: &str) -> Result<Vec<Listed>, DavError> {
        let url = self.collection(room);
        let headers = [
            ("Depth", "1"),
            ("Content-Type", "application/xml; charset=utf-8"),
        ];
        let (status, text) = self.send("REPORT", &url, &headers, QUERY)?;
        if status != 207 {
            return Err(DavError::Status("REPORT calendar-query", status));
        }
        multistatus(&text)
    }

    /// The changes of room `room`'s collection since `token` (RFC 6578; empty: every event).
    pub fn sync(&self, room: &str, token: &str) -> Result<Synced, DavError> {
        let url = self.collection(room);
        let headers = [
            ("Depth", "1"),
            ("Content-Type", "application/xml; charset=utf-8"),
        ];
        let mut escaped = String::new();
        xml_escape(token, &mut escaped);
        let body = SYNC.replace("{token}", &escaped);
        let (status, text) = self.send("REPORT", &url, &headers, &body)?;
        synced(status, &text, token)
    }

    /// Writes `data` at `href`: new (`if_match` `None`: `If-None-Match: *`) or over version
    /// `if_match`.
    pub fn put(&self, href: &str, data: &str, if_match: Option<&str>) -> Result<Written, DavError> {
        let cond = match if_match {
            Some(etag) => ("If-Match", etag),
            None => ("If-None-Match", "*"),
        };
        let headers = [("Content-Type", "text/calendar; charset=utf-8"), cond];
        match self.send("PUT", &self.url(href), &headers, data)?.0 {
            200 | 201 | 204 => Ok(Written::Done),
            412 | 409 => Ok(Written::Lost),
            s => Err(DavError::Status("PUT", s)),
        }
    }

    /// Deletes version `etag` of `href` (gone already is done).
    pub fn delete(&self, href: &str, etag: &str) -> Result<Written, DavError> {
        match self
            .send("DELETE", &self.url(href), &[("If-Match", etag)], "")?
            .0
        {
            200 | 204 | 404 => Ok(Written::Done),
            412 => Ok(Written::Lost),
            s => Err(DavError::Status("DELETE", s)),
        }
    }
}

/// `s` escaped as XML character data into `out`.
fn xml_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

/// The DAV: namespace.
const DAV: &str = "DAV:";
/// The CalDAV namespace.
const CALDAV: &str = "urn:ietf:params:xml:ns:caldav";

/// Whether `n` is element `name` of namespace `ns`.
fn is(n: &roxmltree::Node, ns: &str, name: &str) -> bool {
    n.is_element() && n.tag_name().namespace() == Some(ns) && n.tag_name().name() == name
}

/// The text of the first descendant `ns:name` of `n`.
fn text_of(n: &roxmltree::Node, ns: &str, name: &str) -> Option<String> {
    n.descendants()
        .find(|c| is(c, ns, name))
        .map(|c| c.text().unwrap_or("").to_owned())
}

/// A multistatus answer's root (parsed from `text` into `doc`).
fn root<'a, 'i>(doc: &'a roxmltree::Document<'i>) -> Result<roxmltree::Node<'a, 'i>, DavError> {
    let root = doc.root_element();
    if !is(&root, DAV, "multistatus") {
        return Err(DavError::Garbled("no multistatus".into()));
    }
    Ok(root)
}

/// A response's event (href, ETag and data), if it holds one.
fn listed(resp: &roxmltree::Node) -> Option<Listed> {
    Some(Listed {
        href: text_of(resp, DAV, "href")?.trim().to_owned(),
        etag: text_of(resp, DAV, "getetag")?.trim().to_owned(),
        data: text_of(resp, CALDAV, "calendar-data")?,
    })
}

/// The event resources of a multistatus answer (those with a 200 propstat holding data).
pub fn multistatus(text: &str) -> Result<Vec<Listed>, DavError> {
    let doc = roxmltree::Document::parse(text).map_err(|e| DavError::Garbled(e.to_string()))?;
    let mut out = Vec::new();
    for resp in root(&doc)?.children().filter(|n| is(n, DAV, "response")) {
        let Some(l) = listed(&resp) else { continue };
        if out.len() == MAX_REMOTE_EVENTS {
            return Err(DavError::TooLarge);
        }
        out.push(l);
    }
    Ok(out)
}

/// The changes of a `sync-collection` answer: its token, events with data, and hrefs whose
/// response is a 404 (gone).
pub fn changes(text: &str) -> Result<Changes, DavError> {
    let doc = roxmltree::Document::parse(text).map_err(|e| DavError::Garbled(e.to_string()))?;
    let root = root(&doc)?;
    let token = root
        .children()
        .find(|n| is(n, DAV, "sync-token"))
        .and_then(|n| n.text())
        .ok_or_else(|| DavError::Garbled("no sync-token".into()))?;
    let mut out = Changes {
        token: token.trim().to_owned(),
        ..Changes::default()
    };
    for resp in root.children().filter(|n| is(n, DAV, "response")) {
        if out.changed.len() + out.removed.len() == MAX_REMOTE_EVENTS {
            return Err(DavError::TooLarge);
        }
        let gone = resp
            .children()
            .find(|n| is(n, DAV, "status"))
            .and_then(|n| n.text())
            .is_some_and(|s| s.contains(" 404"));
        match (gone, text_of(&resp, DAV, "href")) {
            (true, Some(href)) => out.removed.push(href.trim().to_owned()),
            _ => out.changed.extend(listed(&resp)),
        }
    }
    Ok(out)
}

/// What a `sync-collection` REPORT answered with `status` and `body` says, asked with
/// `token`: a token the server no longer knows is its `valid-sync-token` precondition (RFC
/// 6578, 403 or 409); no collection sync is its `supported-report` one (RFC 3253, 403), 405 or
/// 501. Anything else (401, 404, 429, 5xx) fails this pass only, to be tried again.
fn synced(status: u16, body: &str, token: &str) -> Result<Synced, DavError> {
    match status {
        207 => changes(body).map(Synced::Changes),
        405 | 501 => Ok(Synced::Unsupported),
        403 if body.contains("supported-report") => Ok(Synced::Unsupported),
        403 | 409 if !token.is_empty() && body.contains("valid-sync-token") => {
            Ok(Synced::TokenInvalid)
        }
        s => Err(DavError::Status("REPORT sync-collection", s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_with_any_prefixes_and_odd_entries() {
        let text = r#"<?xml version="1.0"?>
<multistatus xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
 <response><href>/cal/atrium/a.ics</href><propstat><prop><getetag>"1"</getetag>
  <C:calendar-data>BEGIN:VCALENDAR&#13;
END:VCALENDAR&#13;
</C:calendar-data></prop><status>HTTP/1.1 200 OK</status></propstat></response>
 <response><href>/cal/atrium/</href><propstat><prop><getetag>"c"</getetag></prop></propstat></response>
</multistatus>"#;
        let l = multistatus(text).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].href, "/cal/atrium/a.ics");
        assert_eq!(l[0].etag, "\"1\"");
        assert_eq!(l[0].data, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n");
        for junk in [
            "",
            "<x/>",
            "<multistatus",
            "<!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>",
        ] {
            assert!(multistatus(junk).is_err(), "{junk}");
        }
    }

    #[test]
    fn sync_changes_with_the_token_changed_and_gone() {
        let text = r#"<?xml version='1.0' encoding='utf-8'?>
<multistatus xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><sync-token>http://radicale.org/ns/sync/b8</sync-token><response><href>/redmark/atrium/e1%40x.ics</href><status>HTTP/1.1 404 Not Found</status></response><response><href>/redmark/atrium/e2%40x.ics</href><propstat><prop><getetag>"e4"</getetag><C:calendar-data>BEGIN:VCALENDAR
END:VCALENDAR
</C:calendar-data></prop><status>HTTP/1.1 200 OK</status></propstat></response></multistatus>"#;
        let c = changes(text).unwrap();
        assert_eq!(c.token, "http://radicale.org/ns/sync/b8");
        assert_eq!(c.removed, vec!["/redmark/atrium/e1%40x.ics".to_string()]);
        assert_eq!(c.changed.len(), 1);
        assert_eq!(c.changed[0].etag, "\"e4\"");
        let none = text.replace(
            "<sync-token>http://radicale.org/ns/sync/b8</sync-token>",
            "",
        );
        assert!(changes(&none).is_err(), "a sync answer without a token");
    }

    #[test]
    fn urls_of_hrefs_and_the_collection() {
        let d = Dav::new("http://127.0.0.1:5232/redmark", Some(("u", "p")));
        assert_eq!(
            d.collection("atrium"),
            "http://127.0.0.1:5232/redmark/atrium/"
        );
        assert_eq!(
            d.url("/redmark/atrium/x.ics"),
            "http://127.0.0.1:5232/redmark/atrium/x.ics"
        );
        assert_eq!(
            d.path("http://127.0.0.1:5232/redmark/atrium/"),
            "/redmark/atrium/"
        );
        assert_eq!(d.auth.as_deref(), Some("Basic dTpw"));
        let anonymous = Dav::new("http://127.0.0.1:5232/redmark", None);
        assert_eq!(anonymous.auth, None, "no credentials: no Authorization");
        let mut s = String::new();
        xml_escape("A & <B>", &mut s);
        assert_eq!(s, "A &amp; &lt;B&gt;");
    }

    /// Only the preconditions RFC 6578 and RFC 3253 name drop the token or collection sync;
    /// any other refusal fails the pass and keeps both.
    #[test]
    fn a_sync_refusal_is_read_by_its_precondition() {
        let invalid = r#"<error xmlns="DAV:"><valid-sync-token/></error>"#;
        let unsupported = r#"<error xmlns="DAV:"><supported-report/></error>"#;
        let synced = |status, body, token| match synced(status, body, token) {
            Ok(Synced::TokenInvalid) => "token invalid",
            Ok(Synced::Unsupported) => "unsupported",
            Ok(Synced::Changes(_)) => "changes",
            Err(_) => "failed",
        };
        assert_eq!(synced(403, invalid, "t1"), "token invalid");
        assert_eq!(synced(409, invalid, "t1"), "token invalid");
        assert_eq!(synced(403, unsupported, ""), "unsupported");
        assert_eq!(synced(501, "", ""), "unsupported");
        assert_eq!(synced(405, "", "t1"), "unsupported");
        for status in [401, 403, 404, 409, 429, 500, 503] {
            assert_eq!(synced(status, "", "t1"), "failed", "{status}");
            assert_eq!(synced(status, "", ""), "failed", "{status}");
        }
    }
}
