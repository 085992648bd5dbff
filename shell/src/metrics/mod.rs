//! The server's counters for Prometheus (`GET /metrics`, text format 0.0.4): requests by
//! method and outcome, questions asked and answered, bookings made and cancelled, group-commit
//! sizes, store latency, connections open.
//!
//! One set per process ([`metrics`]), kept by the `prometheus` crate: its counters, gauges and
//! histograms are atomics (a histogram's `observe` too), so counting takes no lock. Its
//! labelled families find a child under a lock, so every child the request path touches is
//! looked up once and kept: the fixed ones when the set is made, a request's (method, outcome)
//! pair the first time it is seen ([`OnceLock`], at most 12 × 12 of them), so only pairs that
//! happened are exposed.

mod classify;

use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};
use redmark_core::booking::{Booking, Commit, StoreError};

use classify::{Action, Outcome, CODES, METHODS};

/// The media type of the text exposition format.
pub const CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

/// Outcomes a request is counted under: result, input_required, notification, then an error
/// per code of [`CODES`] and one for any other code.
const OUTCOMES: usize = 3 + CODES.len() + 1;

/// Upper bounds of the group-commit histogram: writes per transaction, up to
/// [`MAX_GROUP`](crate::store::redb::MAX_GROUP).
const GROUP_BUCKETS: [f64; 11] = [
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

/// Upper bounds of the store-latency histogram, seconds (a redb read takes microseconds, a
/// fsynced commit milliseconds, PostgreSQL a network round trip or more).
const STORE_BUCKETS: [f64; 15] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// Where a connection came in, the `transport` label of the connections gauge.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    Tcp,
    Http,
    /// The data folder's socket (`DIR/redmark.sock`: relays and `redmark call`).
    Folder,
}

impl Transport {
    const ALL: [Transport; 3] = [Transport::Tcp, Transport::Http, Transport::Folder];

    fn label(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Http => "http",
            Transport::Folder => "folder",
        }
    }
}

/// The process's counters.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    /// The children of `requests` seen so far, by method and outcome.
    seen: [[OnceLock<IntCounter>; OUTCOMES]; METHODS.len()],
    asked: IntCounter,
    /// `redmark_questions_answered_total` by [`Action::ALL`].
    answered: [IntCounter; 4],
    made: IntCounter,
    cancelled: IntCounter,
    group: Histogram,
    reads: Histogram,
    commits: Histogram,
    /// Open connections by [`Transport::ALL`] (an HTTP listener's shares: [`ListenerShares`]).
    connections: [IntGauge; 3],
    /// Open `subscriptions/listen` streams, every transport.
    listens: IntGauge,
}

/// The process's counters, made on first use.
pub fn metrics() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    &METRICS
}

/// One open connection or listen stream, counted until dropped.
pub struct Open(IntGauge);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Metrics {
    fn new() -> Metrics {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "redmark_requests_total",
                "Messages the engine answered, by JSON-RPC method and outcome (result, \
                 input_required, notification, or error with its code); a 2025-11-25 request \
                 counts as the 2026-07-28 request it became",
            ),
            &["method", "outcome", "code"],
        )
        .expect("valid metric");
        let asked = IntCounter::new(
            "redmark_questions_asked_total",
            "Questions tools asked (entries of inputRequests in input_required results)",
        )
        .expect("valid metric");
        let answers = IntCounterVec::new(
            Opts::new(
                "redmark_questions_answered_total",
                "Answers clients sent (entries of inputResponses on retries that were not \
                 refused), by action",
            ),
            &["action"],
        )
        .expect("valid metric");
        let bookings = IntCounterVec::new(
            Opts::new(
                "redmark_bookings_total",
                "Bookings made, and cancellations the store applied (a replayed confirmation \
                 counts again)",
            ),
            &["change"],
        )
        .expect("valid metric");
        let group = Histogram::with_opts(
            HistogramOpts::new(
                "redmark_group_commit_writes",
                "Durable writes (bookings and cancellations) per group-commit transaction",
            )
            .buckets(GROUP_BUCKETS.to_vec()),
        )
        .expect("valid metric");
        let store = HistogramVec::new(
            HistogramOpts::new(
                "redmark_store_seconds",
                "Time the store took: a read, or a group commit (durable when it ends)",
            )
            .buckets(STORE_BUCKETS.to_vec()),
            &["op"],
        )
        .expect("valid metric");
        let connections = IntGaugeVec::new(
            Opts::new(
                "redmark_connections_open",
                "Connections open, by transport (tcp, http, folder: the data folder's socket)",
            ),
            &["transport"],
        )
        .expect("valid metric");
        let listens = IntGauge::new(
            "redmark_listen_streams_open",
            "subscriptions/listen streams open, on every transport",
        )
        .expect("valid metric");
        let info = IntGaugeVec::new(
            Opts::new("redmark_build_info", "The running redmark's version"),
            &["version"],
        )
        .expect("valid metric");
        info.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
        let collectors: [Box<dyn prometheus::core::Collector>; 9] = [
            Box::new(requests.clone()),
            Box::new(asked.clone()),
            Box::new(answers.clone()),
            Box::new(bookings.clone()),
            Box::new(group.clone()),
            Box::new(store.clone()),
            Box::new(connections.clone()),
            Box::new(listens.clone()),
            Box::new(info),
        ];
        for c in collectors {
            registry.register(c).expect("distinct metric names");
        }
        Metrics {
            registry,
            requests,
            seen: std::array::from_fn(|_| std::array::from_fn(|_| OnceLock::new())),
            asked,
            answered: Action::ALL.map(|a| answers.with_label_values(&[a.label()])),
            made: bookings.with_label_values(&["made"]),
            cancelled: bookings.with_label_values(&["cancelled"]),
            group,
            reads: store.with_label_values(&["read"]),
            commits: store.with_label_values(&["commit"]),
            connections: Transport::ALL.map(|t| connections.with_label_values(&[t.label()])),
            listens,
        }
    }

    /// Counts a message the engine answered: `request` its bytes (`None`: over-long), `answer`
    /// what the engine wrote, `responded` whether that holds a response.
    pub fn request(&self, request: Option<&[u8]>, answer: &[u8], responded: bool) {
        let method = classify::method_of(request);
        let outcome = classify::outcome_of(answer, responded);
        let column = match outcome {
            Outcome::Result => 0,
            Outcome::InputRequired => 1,
            Outcome::Notification => 2,
            Outcome::Error(code) => 3 + classify::code_index(code),
        };
        self.seen[method][column]
            .get_or_init(|| {
                let (outcome, code) = match column {
                    0 => ("result", String::new()),
                    1 => ("input_required", String::new()),
                    2 => ("notification", String::new()),
                    c => (
                        "error",
                        CODES
                            .get(c - 3)
                            .map_or_else(|| "other".to_owned(), i64::to_string),
                    ),
                };
                self.requests
                    .with_label_values(&[METHODS[method], outcome, &code])
            })
            .inc();
        if outcome == Outcome::InputRequired {
            self.asked.inc_by(classify::questions_asked(answer) as u64);
        }
        let taken = matches!(outcome, Outcome::Result | Outcome::InputRequired);
        if let (true, Some(request)) = (taken && METHODS[method] == "tools/call", request) {
            classify::answers(request, |a| self.answered[a as usize].inc());
        }
    }

    /// Counts one group commit of `writes` writes that took `took`.
    pub fn group_committed(&self, writes: usize, took: Duration) {
        self.group.observe(writes as f64);
        self.commits.observe(took.as_secs_f64());
    }

    /// Counts a booking made durable, if `commit` made one.
    pub fn committed(&self, commit: &Result<Commit, StoreError>) {
        if let Ok(Commit::Created(_)) = commit {
            self.made.inc();
        }
    }

    /// Counts a booking cancelled, if `cancel` found one (again, when it already was).
    pub fn cancelled(&self, cancel: &Result<Option<Booking>, StoreError>) {
        if let Ok(Some(_)) = cancel {
            self.cancelled.inc();
        }
    }

    /// Counts one store read that took `took`.
    pub fn store_read(&self, took: Duration) {
        self.reads.observe(took.as_secs_f64());
    }

    /// Counts a connection open on `transport` until the returned guard is dropped.
    pub fn connection(&self, transport: Transport) -> Open {
        open(&self.connections[transport as usize])
    }

    /// Counts a listen stream open until the returned guard is dropped.
    pub fn listen_stream(&self) -> Open {
        open(&self.listens)
    }

    /// Everything, in the text exposition format 0.0.4.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Err(e) = TextEncoder::new().encode_utf8(&self.registry.gather(), &mut text) {
            tracing::error!("metrics: {e}");
        }
        text
    }
}

/// `gauge` one higher until the guard is dropped.
fn open(gauge: &IntGauge) -> Open {
    gauge.inc();
    Open(gauge.clone())
}

/// How the HTTP listener that answers `/metrics` shares its connections among principals
/// (`transport/share.rs`), read when scraped: counts only, so no principal's name reaches
/// another principal's scrape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListenerShares {
    /// `--max-connections`.
    pub max_connections: usize,
    /// Connections one principal may hold (`None`: every client is one principal).
    pub principal_share: Option<usize>,
    /// Open connections no request has authenticated yet (all open ones:
    /// `redmark_connections_open`).
    pub unauthenticated: usize,
    /// Principals holding at least one connection.
    pub principals: usize,
    /// The most connections one principal holds.
    pub largest: usize,
    /// New connections closed on accept since the start (no place, none could be taken).
    pub refused: u64,
    /// Connections closed to make room for a newcomer since the start.
    pub replaced: u64,
    /// Requests refused (503) because their principal held its share, since the start.
    pub over_share: u64,
}

impl ListenerShares {
    /// Appends these as metric families in the text format.
    pub fn render(&self, text: &mut String) {
        use std::fmt::Write as _;
        let gauges = [
            (
                "max_connections",
                "Connections the listener holds at most (--max-connections)",
                Some(self.max_connections),
            ),
            (
                "principal_share",
                "Connections one principal may hold (absent: one principal)",
                self.principal_share,
            ),
            (
                "connections_unauthenticated",
                "Open connections no request has authenticated yet",
                Some(self.unauthenticated),
            ),
            (
                "principals",
                "Principals holding at least one connection",
                Some(self.principals),
            ),
            (
                "largest_principal_connections",
                "The most connections one principal holds",
                Some(self.largest),
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(v) = value {
                let _ = write!(text, "# HELP redmark_http_{name} {help}\n# TYPE redmark_http_{name} gauge\nredmark_http_{name} {v}\n");
            }
        }
        let counters = [
            (
                "refused_total",
                "New connections closed on accept: no place, none could be taken",
                self.refused,
            ),
            (
                "replaced_total",
                "Connections closed to make room for a newcomer",
                self.replaced,
            ),
            (
                "over_share_total",
                "Requests answered 503: their principal held its share",
                self.over_share,
            ),
        ];
        for (name, help, v) in counters {
            let _ = write!(text, "# HELP redmark_http_connections_{name} {help}\n# TYPE redmark_http_connections_{name} counter\nredmark_http_connections_{name} {v}\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample whose line starts with `prefix`.
    fn sample(text: &str, prefix: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix)?.trim().parse().ok())
            .unwrap_or(0.0)
    }

    #[test]
    fn a_request_moves_its_method_and_outcome_and_the_questions() {
        let m = Metrics::new();
        let asked = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"room":{}}}}"#;
        let call =
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"book_room"}}"#;
        m.request(Some(call), asked, true);
        let retry = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"inputResponses":{"room":{"action":"accept","content":{}}}}}"#;
        let done = br#"{"jsonrpc":"2.0","id":8,"result":{"resultType":"complete"}}"#;
        m.request(Some(retry), done, true);
        let refused =
            br#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Invalid requestState"}}"#;
        m.request(Some(retry), refused, true);
        m.request(
            None,
            br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}"#,
            true,
        );
        let text = m.render();
        let at = |p: &str| sample(&text, p);
        assert_eq!(
            at(r#"redmark_requests_total{code="",method="tools/call",outcome="input_required"}"#),
            1.0,
            "{text}"
        );
        assert_eq!(
            at(r#"redmark_requests_total{code="",method="tools/call",outcome="result"}"#),
            1.0
        );
        assert_eq!(
            at(r#"redmark_requests_total{code="-32602",method="tools/call",outcome="error"}"#),
            1.0
        );
        assert_eq!(
            at(r#"redmark_requests_total{code="-32600",method="unreadable",outcome="error"}"#),
            1.0
        );
        assert_eq!(at("redmark_questions_asked_total"), 1.0);
        assert_eq!(
            at(r#"redmark_questions_answered_total{action="accept"}"#),
            1.0,
            "the refused retry's answer is not counted"
        );
        assert!(!text.contains("method=\"tools/list\""), "only pairs seen");
        let open = m.connection(Transport::Http);
        assert_eq!(
            sample(&m.render(), r#"redmark_connections_open{transport="http"}"#),
            1.0
        );
        drop(open);
        assert_eq!(
            sample(&m.render(), r#"redmark_connections_open{transport="http"}"#),
            0.0
        );
        let stream = m.listen_stream();
        assert_eq!(sample(&m.render(), "redmark_listen_streams_open"), 1.0);
        drop(stream);
        assert_eq!(sample(&m.render(), "redmark_listen_streams_open"), 0.0);
    }
}
