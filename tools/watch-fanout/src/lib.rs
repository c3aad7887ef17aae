//! `watch-fanout`: the watch load tool. Opens N watches on pods against any
//! Kubernetes API server, drives W writes per second for D seconds, and measures how
//! long each write takes to reach every watcher.
//!
//! It plays the part of upstream's scalability tests for the watch cache (the
//! `watch-list`/`kube-apiserver` load in `perf-tests/clusterloader2`, and the
//! cacher's `BenchmarkWatch*` benches), reduced to one question: *with N watchers,
//! how long after the API server acknowledges a write does every watcher have it?*
//!
//! # How a run goes
//! ```text
//! prefill (optional) ──► list (one resourceVersion) ──► open N watches from it, wait for all 200s
//!   ──► W writes/s for D s: create pod k (seq 2k), then merge-patch it (seq 2k+1)
//!   ──► drain until every expected event arrived (bounded) ──► stop watches ──► delete pods
//! ```
//!
//! - **Established** means the watch's HTTP response started (`200` and headers).
//!   Every watch starts from the same list's resourceVersion, so no event is missed
//!   even if a server registers the watcher late; the server does it before the
//!   headers anyway.
//! - **Each write** stamps the annotation [`SEQ_ANNOTATION`] with `<run>:<seq>`; the
//!   time the response's headers arrive is the write's *acknowledgement*.
//! - **Each watch** reads raw HTTP body frames and splits them into lines itself (no
//!   JSON decoding on the hot path, no kube watch machinery in between): a line's
//!   receipt time is the time its frame arrived, and its sequence number is found
//!   with a byte search. Latency = receipt − ack. An event can arrive before the
//!   writer saw its own response; such events count in `received_before_ack` with
//!   latency 0.
//! - **With `node_selector`**, pod k runs on `node-(k % nodes)` and watcher i
//!   watches with the field selector `spec.nodeName=node-(i % nodes)`, as kubelets
//!   do: each event is for only `watchers / nodes` watchers.
//!
//! # Bounds
//! At most [`MAX_WATCHERS`] watchers, [`MAX_DURATION`], [`MAX_WRITES_PER_SECOND`]
//! and [`MAX_PREFILL`]; every phase has a timeout; the server must be on loopback
//! unless `allow_remote` is set. Each watch is one TCP connection, so the open-file
//! limit (`ulimit -n`) must exceed the watcher count; [`run`] checks
//! `/proc/self/limits` first and says what to do.
//!
//! # Memory usage
//! One acknowledgement slot (8 bytes) per write, one shared latency histogram (about
//! 10 KiB), and per watcher only the events that arrived before their
//! acknowledgement was recorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use apimachinery::util::validation::is_dns1123_label;
use futures::StreamExt;
use http_body_util::BodyExt;
use hyper::{Method, Request, StatusCode, Uri};
use kube::client::Body;
use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The most watchers a run may open.
pub const MAX_WATCHERS: usize = 20_000;
/// The longest write phase.
pub const MAX_DURATION: Duration = Duration::from_secs(600);
/// The highest write rate.
pub const MAX_WRITES_PER_SECOND: u32 = 10_000;
/// The most pods a run may create before it starts (to measure memory with many
/// objects).
pub const MAX_PREFILL: usize = 200_000;
/// The annotation every write stamps: `<run>:<seq>`.
pub const SEQ_ANNOTATION: &str = "watch-fanout/seq";
/// [`SEQ_ANNOTATION`] as a JSON key, quotes included.
const SEQ_KEY: &str = "\"watch-fanout/seq\"";
/// The media type of a protobuf watch's `Accept`.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// The label on every pod the tool creates.
pub const APP_LABEL: &str = "watch-fanout";
/// Writes (and prefill creates) in flight at once, at most.
const MAX_WRITES_IN_FLIGHT: usize = 512;
/// Concurrent creates while prefilling, and deletes while cleaning up.
const BULK_CONCURRENCY: usize = 64;
/// Error messages kept for the report.
const KEPT_ERRORS: usize = 8;

/// What a run does. Mirrors the tool's flags; [`FanoutConfig::default`] is a small
/// loopback run.
#[derive(Clone, Debug)]
pub struct FanoutConfig {
    /// The API server, e.g. `http://127.0.0.1:8080`.
    pub server: String,
    /// A bearer token, sent as `Authorization: Bearer …`.
    pub token: Option<String>,
    /// Accept any TLS certificate (kube's rustls `accept_invalid_certs`).
    pub insecure: bool,
    /// Trust the CA certificates in this PEM file for an `https` server (kubectl's
    /// `--certificate-authority`; `mini-apiserver --secure` writes one as
    /// `ca.crt`). Without it, the system's roots.
    pub certificate_authority: Option<std::path::PathBuf>,
    /// Allow a server that is not on loopback.
    pub allow_remote: bool,
    /// The namespace the pods go in.
    pub namespace: String,
    /// How many watches to open.
    pub watchers: usize,
    /// Give each watch a `spec.nodeName` field selector.
    pub node_selector: bool,
    /// How many nodes the pods and watchers are spread over (with `node_selector`).
    pub nodes: usize,
    /// Writes per second.
    pub writes_per_second: u32,
    /// How long to write.
    pub duration: Duration,
    /// The server's pid, to read its resident memory from `/proc/PID/status`.
    pub pid: Option<u32>,
    /// Pods to create before the watches open (not measured; for memory figures).
    pub prefill: usize,
    /// Delete the pods the run created at the end.
    pub cleanup: bool,
    /// Watches being opened at once.
    pub open_concurrency: usize,
    /// How long opening every watch may take.
    pub open_timeout: Duration,
    /// How long to wait, after the last write, for the last events.
    pub drain_timeout: Duration,
    /// Watch in protobuf (`application/vnd.kubernetes.protobuf`, length-prefixed
    /// frames), as client-go does when it prefers protobuf; JSON lines otherwise.
    pub protobuf: bool,
}

impl Default for FanoutConfig {
    fn default() -> Self {
        FanoutConfig {
            server: "http://127.0.0.1:8080".into(),
            token: None,
            insecure: false,
            certificate_authority: None,
            allow_remote: false,
            namespace: "default".into(),
            watchers: 100,
            node_selector: false,
            nodes: 100,
            writes_per_second: 10,
            duration: Duration::from_secs(10),
            pid: None,
            prefill: 0,
            cleanup: true,
            open_concurrency: 256,
            open_timeout: Duration::from_secs(120),
            drain_timeout: Duration::from_secs(10),
            protobuf: false,
        }
    }
}

impl FanoutConfig {
    /// A run against `server` with the other settings at their defaults.
    pub fn new(server: impl Into<String>) -> Self {
        FanoutConfig {
            server: server.into(),
            ..FanoutConfig::default()
        }
    }

    /// The same run with `watchers` watches.
    #[must_use]
    pub fn watchers(mut self, watchers: usize) -> Self {
        self.watchers = watchers;
        self
    }

    /// The same run writing `writes_per_second` for `duration`.
    #[must_use]
    pub fn writes(mut self, writes_per_second: u32, duration: Duration) -> Self {
        self.writes_per_second = writes_per_second;
        self.duration = duration;
        self
    }

    /// The same run with each watch selecting one of `nodes` nodes.
    #[must_use]
    pub fn node_selector(mut self, nodes: usize) -> Self {
        self.node_selector = true;
        self.nodes = nodes;
        self
    }

    /// The same run in `namespace`.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// How many writes the run makes in all.
    pub fn total_writes(&self) -> u64 {
        let millis = u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX);
        u64::from(self.writes_per_second).saturating_mul(millis) / 1000
    }

    /// Checks the bounds and the loopback rule.
    pub fn validate(&self) -> Result<(), FanoutError> {
        let invalid = |message: String| Err(FanoutError::Invalid(message));
        if self.watchers > MAX_WATCHERS {
            return invalid(format!(
                "--watchers {} is over the limit of {MAX_WATCHERS}",
                self.watchers
            ));
        }
        if self.duration > MAX_DURATION {
            return invalid(format!(
                "--duration {}s is over the limit of {}s",
                self.duration.as_secs(),
                MAX_DURATION.as_secs()
            ));
        }
        if self.writes_per_second == 0
            || self.writes_per_second > MAX_WRITES_PER_SECOND
        {
            return invalid(format!(
                "--writes-per-second must be between 1 and {MAX_WRITES_PER_SECOND}, not {}",
                self.writes_per_second
            ));
        }
        if self.prefill > MAX_PREFILL {
            return invalid(format!(
                "--prefill {} is over the limit of {MAX_PREFILL}",
                self.prefill
            ));
        }
        if self.node_selector && self.nodes == 0 {
            return invalid("--nodes must be at least 1".into());
        }
        if self.open_concurrency == 0 {
            return invalid("the open concurrency must be at least 1".into());
        }
        let namespace_errors = is_dns1123_label(&self.namespace);
        if !namespace_errors.is_empty() {
            return invalid(format!(
                "--namespace {:?} is not a DNS label: {}",
                self.namespace,
                namespace_errors.join("; ")
            ));
        }
        let uri: Uri = self.server.parse().map_err(|error| {
            FanoutError::Invalid(format!("--server {:?}: {error}", self.server))
        })?;
        match uri.scheme_str() {
            Some("http" | "https") => {}
            _ => {
                return invalid(format!(
                    "--server {:?} must be http:// or https://",
                    self.server
                ));
            }
        }
        let host = uri.host().unwrap_or("");
        if !self.allow_remote && !is_loopback(host) {
            return invalid(format!(
                "--server {:?} is not on loopback; pass --allow-remote to load a remote server",
                self.server
            ));
        }
        Ok(())
    }
}

/// Whether `host` (as in a URL, IPv6 in brackets) is a loopback address or
/// `localhost`.
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FanoutError {
    /// A flag is out of bounds, or the server is not on loopback.
    #[error("{0}")]
    Invalid(String),
    /// The open-file limit is below what the watches need.
    #[error(
        "{watchers} watches need about {needed} open files, but the limit is {limit}; \
         raise it with `ulimit -n {needed}` (or up to the hard limit, `ulimit -Hn`) in this shell"
    )]
    FdLimit {
        /// Watches asked for.
        watchers: usize,
        /// Files needed.
        needed: u64,
        /// The soft limit.
        limit: u64,
    },
    /// The kube client could not be built.
    #[error("cannot build a client for {server}: {message}")]
    Client {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// A request the run cannot go on without failed (the first list, for example).
    #[error("{what}: {message}")]
    Request {
        /// What was asked.
        what: String,
        /// The answer.
        message: String,
    },
    /// A phase did not finish in time.
    #[error("{0}")]
    Timeout(String),
}

/// Latency figures, in milliseconds.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Largest seen.
    pub max_ms: f64,
}

/// What a run measured. Serialises to the tool's `--json` output.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FanoutReport {
    /// The server loaded.
    pub server: String,
    /// Watches asked for.
    pub watchers: usize,
    /// Watches established.
    pub watches_established: usize,
    /// Nodes the watches select among, when they use the `spec.nodeName` selector.
    pub nodes: Option<usize>,
    /// Writes per second asked for.
    pub writes_per_second: u32,
    /// The write phase asked for, in seconds.
    pub duration_seconds: f64,
    /// Seconds it took to open every watch.
    pub open_seconds: f64,
    /// Seconds from the first write to the last acknowledgement.
    pub write_seconds: f64,
    /// Writes acknowledged.
    pub writes_acked: u64,
    /// Writes that failed.
    pub write_errors: u64,
    /// Pods created before the watches opened.
    pub prefilled: u64,
    /// Events the watchers should have received: for each acknowledged write, the
    /// watches that select its pod.
    pub events_expected: u64,
    /// Events the watchers received for this run's writes.
    pub events_delivered: u64,
    /// `events_delivered / write_seconds`.
    pub events_per_second: f64,
    /// The watch encoding: `json` or `protobuf`.
    pub encoding: String,
    /// Body bytes the watchers received, over the events they received: what
    /// an event costs on the wire.
    pub bytes_per_event: f64,
    /// Acknowledgement → receipt.
    pub latency: Latency,
    /// Events that arrived before the writer had its acknowledgement (counted at 0
    /// ms).
    pub received_before_ack: u64,
    /// Watches that ended (EOF, transport error or an `ERROR` event) before the run
    /// stopped them.
    pub watches_broken: u64,
    /// Every error: failed opens, failed writes, broken watches.
    pub errors: u64,
    /// The first few error messages.
    pub error_samples: Vec<String>,
    /// The server's VmRSS at the start, in KiB.
    pub rss_before_kib: Option<u64>,
    /// The server's VmRSS after the prefill, in KiB.
    pub rss_after_prefill_kib: Option<u64>,
    /// The server's VmRSS at the end of the write phase (watches still open), in
    /// KiB.
    pub rss_after_kib: Option<u64>,
    /// CPU seconds the server used from the first watch opened to the last event
    /// drained (`/proc/PID/stat`; needs `pid`).
    pub server_cpu_seconds: Option<f64>,
    /// CPU seconds this tool used over the same span: when it nears the cores the
    /// machine has, the tool, not the server, is the limit.
    pub tool_cpu_seconds: Option<f64>,
}

impl FanoutReport {
    /// Whether every expected event arrived, and nothing broke or failed.
    pub fn complete(&self) -> bool {
        self.events_delivered >= self.events_expected
            && self.watches_established == self.watchers
            && self.watches_broken == 0
            && self.errors == 0
    }

    /// The report as a two-column text table.
    pub fn table(&self) -> String {
        let kib = |v: Option<u64>| {
            v.map_or("-".to_string(), |v| format!("{:.1} MiB", v as f64 / 1024.0))
        };
        let cpu =
            |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2} s"));
        let rows: Vec<(&str, String)> = vec![
            ("server", self.server.clone()),
            (
                "watchers",
                format!(
                    "{} ({} established)",
                    self.watchers, self.watches_established
                ),
            ),
            (
                "selector",
                self.nodes.map_or("none".to_string(), |n| {
                    format!("spec.nodeName over {n} nodes")
                }),
            ),
            (
                "writes",
                format!(
                    "{} acked, {} failed ({}/s for {}s asked)",
                    self.writes_acked,
                    self.write_errors,
                    self.writes_per_second,
                    self.duration_seconds
                ),
            ),
            ("prefilled pods", self.prefilled.to_string()),
            ("open time", format!("{:.2} s", self.open_seconds)),
            ("write time", format!("{:.2} s", self.write_seconds)),
            (
                "events",
                format!(
                    "{} of {} delivered",
                    self.events_delivered, self.events_expected
                ),
            ),
            ("events/s", format!("{:.0}", self.events_per_second)),
            ("encoding", self.encoding.clone()),
            ("bytes/event", format!("{:.0}", self.bytes_per_event)),
            ("latency p50", format!("{:.2} ms", self.latency.p50_ms)),
            ("latency p99", format!("{:.2} ms", self.latency.p99_ms)),
            ("latency max", format!("{:.2} ms", self.latency.max_ms)),
            ("before ack", self.received_before_ack.to_string()),
            ("watches broken", self.watches_broken.to_string()),
            ("errors", self.errors.to_string()),
            ("server RSS before", kib(self.rss_before_kib)),
            ("server RSS prefilled", kib(self.rss_after_prefill_kib)),
            ("server RSS after", kib(self.rss_after_kib)),
            ("server CPU", cpu(self.server_cpu_seconds)),
            ("tool CPU", cpu(self.tool_cpu_seconds)),
        ];
        let mut out = String::new();
        for (name, value) in rows {
            out.push_str(&format!("{name:<22} {value}\n"));
        }
        for sample in &self.error_samples {
            out.push_str(&format!("{:<22} {sample}\n", "error"));
        }
        out
    }
}

/// Two runs of the same load side by side (`--compare`): one row per figure, and
/// the second server's figure over the first's.
pub fn compare_table(a: &FanoutReport, b: &FanoutReport) -> String {
    let ratio = |x: f64, y: f64| {
        if x > 0.0 {
            format!("{:.2}", y / x)
        } else {
            "-".to_string()
        }
    };
    fn mib(kib: Option<u64>) -> Option<f64> {
        kib.map(|kib| kib as f64 / 1024.0)
    }
    let number = |v: Option<f64>, unit: &str, digits: usize| {
        v.map_or("-".to_string(), |v| format!("{v:.digits$}{unit}"))
    };
    // (figure, how to read it off a report, unit, decimals)
    type Figure = fn(&FanoutReport) -> Option<f64>;
    let rows: [(&str, Figure, &str, usize); 12] = [
        (
            "watches established",
            |r| Some(r.watches_established as f64),
            "",
            0,
        ),
        (
            "events delivered",
            |r| Some(r.events_delivered as f64),
            "",
            0,
        ),
        ("events expected", |r| Some(r.events_expected as f64), "", 0),
        ("events/s", |r| Some(r.events_per_second), "", 0),
        ("latency p50", |r| Some(r.latency.p50_ms), " ms", 2),
        ("latency p99", |r| Some(r.latency.p99_ms), " ms", 2),
        ("latency max", |r| Some(r.latency.max_ms), " ms", 2),
        ("watches broken", |r| Some(r.watches_broken as f64), "", 0),
        ("errors", |r| Some(r.errors as f64), "", 0),
        ("server RSS after", |r| mib(r.rss_after_kib), " MiB", 1),
        ("server CPU", |r| r.server_cpu_seconds, " s", 2),
        ("tool CPU", |r| r.tool_cpu_seconds, " s", 2),
    ];
    let mut out = format!("{:<22} {:>14} {:>14} {:>8}\n", "", "A", "B", "B/A");
    out.push_str(&format!("{:<22} {}\n", "A", a.server));
    out.push_str(&format!("{:<22} {}\n", "B", b.server));
    for (name, figure, unit, digits) in rows {
        let (x, y) = (figure(a), figure(b));
        let r = match (x, y) {
            (Some(x), Some(y)) => ratio(x, y),
            _ => "-".to_string(),
        };
        out.push_str(&format!(
            "{name:<22} {:>14} {:>14} {r:>8}\n",
            number(x, unit, digits),
            number(y, unit, digits)
        ));
    }
    for (label, report) in [("A", a), ("B", b)] {
        for sample in &report.error_samples {
            out.push_str(&format!("{:<22} {sample}\n", format!("error ({label})")));
        }
    }
    out
}

/// A log-linear histogram of microseconds with atomic buckets: exact below 64 µs,
/// then 32 buckets per power of two (about 3 % wide). Shared by every watcher
/// without a lock.
struct Histogram {
    buckets: Vec<AtomicU64>,
    max: AtomicU64,
    count: AtomicU64,
}

const SUB_BUCKETS: u32 = 32;
const EXACT: u64 = 64;

impl Histogram {
    fn new() -> Self {
        let len = EXACT as usize + (64 - 6) * SUB_BUCKETS as usize;
        Histogram {
            buckets: (0..len).map(|_| AtomicU64::new(0)).collect(),
            max: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }

    fn index(micros: u64) -> usize {
        if micros < EXACT {
            return micros as usize;
        }
        let major = 63 - micros.leading_zeros(); // ≥ 6
        let sub = (micros >> (major - 5)) & u64::from(SUB_BUCKETS - 1);
        EXACT as usize + (major as usize - 6) * SUB_BUCKETS as usize + sub as usize
    }

    /// The middle of bucket `index`, in microseconds.
    fn value(index: usize) -> f64 {
        if index < EXACT as usize {
            return index as f64;
        }
        let offset = index - EXACT as usize;
        let major = (offset / SUB_BUCKETS as usize + 6) as u32;
        let sub = (offset % SUB_BUCKETS as usize) as u64;
        let width = 1u64 << (major - 5);
        ((u64::from(SUB_BUCKETS) + sub) * width) as f64 + width as f64 / 2.0
    }

    fn record(&self, micros: u64) {
        if let Some(bucket) = self.buckets.get(Self::index(micros)) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        self.max.fetch_max(micros, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    fn quantile(&self, q: f64) -> f64 {
        let count = self.count.load(Ordering::Relaxed);
        if count == 0 {
            return 0.0;
        }
        let rank = ((count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (index, bucket) in self.buckets.iter().enumerate() {
            seen += bucket.load(Ordering::Relaxed);
            if seen >= rank {
                let max = self.max.load(Ordering::Relaxed) as f64;
                return Self::value(index).min(max);
            }
        }
        self.max.load(Ordering::Relaxed) as f64
    }

    fn latency(&self) -> Latency {
        Latency {
            p50_ms: self.quantile(0.50) / 1000.0,
            p99_ms: self.quantile(0.99) / 1000.0,
            max_ms: self.max.load(Ordering::Relaxed) as f64 / 1000.0,
        }
    }
}

/// What the writer and the watchers share.
struct Shared {
    run: String,
    base: Instant,
    /// Per sequence number: nanoseconds since `base` + 1 of the acknowledgement; 0
    /// until then.
    acks: Vec<AtomicU64>,
    histogram: Histogram,
    delivered: AtomicU64,
    /// The number of deliveries that completes the run; `u64::MAX` until the writes
    /// are done.
    target: AtomicU64,
    complete: Notify,
    before_ack: AtomicU64,
    broken: AtomicU64,
    errors: AtomicU64,
    error_samples: Mutex<Vec<String>>,
    /// Body bytes received by every watch, and their events (bookmarks too).
    bytes_received: AtomicU64,
    events_received: AtomicU64,
    protobuf: bool,
}

impl Shared {
    fn error(&self, message: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut samples = self.error_samples.lock();
        if samples.len() < KEPT_ERRORS {
            samples.push(message);
        }
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_nanos())
            .unwrap_or(u64::MAX)
    }

    fn delivered_one(&self) {
        let before = self.delivered.fetch_add(1, Ordering::AcqRel);
        if before + 1 == self.target.load(Ordering::Acquire) {
            self.complete.notify_one();
        }
    }
}

/// The kind of a watch event line, read from its `"type"` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    Object,
    /// `BOOKMARK`.
    Bookmark,
    /// `ERROR`: the server ends the watch.
    Error,
    /// No recognisable type.
    Unknown,
}

/// Reads a watch line's `"type"` without decoding the line.
pub fn line_kind(line: &[u8]) -> LineKind {
    let Some(at) = memchr::memmem::find(line, b"\"type\"") else {
        return LineKind::Unknown;
    };
    let rest = skip_to_value(&line[at + 6..]);
    if rest.starts_with(b"\"ADDED\"")
        || rest.starts_with(b"\"MODIFIED\"")
        || rest.starts_with(b"\"DELETED\"")
    {
        LineKind::Object
    } else if rest.starts_with(b"\"BOOKMARK\"") {
        LineKind::Bookmark
    } else if rest.starts_with(b"\"ERROR\"") {
        LineKind::Error
    } else {
        LineKind::Unknown
    }
}

/// The next whole event in `buffer` from `start` (a JSON line without its
/// newline, or a protobuf frame without its length) and where the one after it
/// starts; `None` until one has arrived whole.
fn next_event(
    buffer: &[u8],
    start: usize,
    protobuf: bool,
) -> Option<(&[u8], usize)> {
    let rest = &buffer[start..];
    if protobuf {
        let (len, body) = rest.split_first_chunk::<4>()?;
        let len = u32::from_be_bytes(*len) as usize;
        let frame = body.get(..len)?;
        Some((frame, start + 4 + len))
    } else {
        let end = memchr::memchr(b'\n', rest)?;
        Some((&rest[..end], start + end + 1))
    }
}

/// Reads a protobuf watch frame's `type` (field 1 of the `WatchEvent`, first
/// on the wire) without decoding the frame.
pub fn frame_kind(frame: &[u8]) -> LineKind {
    let [0x0a, len, rest @ ..] = frame else {
        return LineKind::Unknown;
    };
    match rest.get(..usize::from(*len)) {
        Some(b"ADDED" | b"MODIFIED" | b"DELETED") => LineKind::Object,
        Some(b"BOOKMARK") => LineKind::Bookmark,
        Some(b"ERROR") => LineKind::Error,
        _ => LineKind::Unknown,
    }
}

/// Skips whitespace, one `:`, and whitespace.
fn skip_to_value(rest: &[u8]) -> &[u8] {
    let rest = trim_start(rest);
    trim_start(rest.strip_prefix(b":").unwrap_or(rest))
}

fn trim_start(mut rest: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r' | b'\n', tail @ ..] = rest {
        rest = tail;
    }
    rest
}

/// Finds `"watch-fanout/seq":"<run>:<seq>"` in a watch line and returns `seq` when
/// the run matches. A byte search, so that a watcher spends microseconds per event,
/// not a JSON decode.
pub fn scan_seq(line: &[u8], run: &str) -> Option<u64> {
    let (rest, protobuf) = match memchr::memmem::find(line, SEQ_KEY.as_bytes()) {
        Some(at) => (skip_to_value(&line[at + SEQ_KEY.len()..]), false),
        // In protobuf the annotation is a map entry: the key, then the value
        // as field 2 (`0x12`, its length).
        None => {
            let at = memchr::memmem::find(line, SEQ_ANNOTATION.as_bytes())?;
            (line.get(at + SEQ_ANNOTATION.len() + 2..)?, true)
        }
    };
    let rest = if protobuf {
        rest
    } else {
        rest.strip_prefix(b"\"")?
    };
    let rest = rest.strip_prefix(run.as_bytes())?;
    let rest = rest.strip_prefix(b":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(rest.get(..digits)?).ok()?.parse().ok()
}

/// The server's resident memory, from `/proc/PID/status` (`VmRSS`, in KiB).
pub fn read_rss_kib(pid: u32) -> Option<u64> {
    read_status_kib(pid, "VmRSS")
}

/// A size in KiB from `/proc/PID/status`: `VmRSS` (resident now), `VmHWM`
/// (the most it has been resident), ...
pub fn read_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

/// The CPU time a process has used, user plus system, in seconds: fields 14 and 15
/// of `/proc/PID/stat` (`utime`, `stime`), in clock ticks of `USER_HZ`, which Linux
/// fixes at 100 for this interface. `pid` `None` reads this process.
pub fn read_cpu_seconds(pid: Option<u32>) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    cpu_seconds_of_stat(&std::fs::read_to_string(path).ok()?)
}

/// [`read_cpu_seconds`] on the text of a `stat` file. The command name (field 2)
/// may hold spaces and parentheses, so fields are counted after its last `)`.
pub fn cpu_seconds_of_stat(stat: &str) -> Option<f64> {
    const USER_HZ: f64 = 100.0;
    let after_name = &stat[stat.rfind(')')? + 1..];
    // After the name, field 3 (state) is the first: utime is field 14, stime 15.
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / USER_HZ)
}

/// This process's soft limit on open files, from `/proc/self/limits`.
pub fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|soft| soft.parse().ok())
}

/// A short random run id, so that runs sharing a namespace do not see each other's
/// writes.
fn run_id() -> String {
    let n: u32 = rand::random();
    format!("r{n:08x}")
}

fn pod_name(run: &str, k: u64) -> String {
    format!("fanout-{run}-{k}")
}

fn pod_body(
    run: &str,
    namespace: &str,
    name: &str,
    seq: Option<u64>,
    node: &str,
) -> Vec<u8> {
    let mut annotations = serde_json::Map::new();
    if let Some(seq) = seq {
        annotations.insert(SEQ_ANNOTATION.into(), format!("{run}:{seq}").into());
    }
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": APP_LABEL},
            "annotations": annotations,
        },
        "spec": {
            "nodeName": node,
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}],
        },
    })
    .to_string()
    .into_bytes()
}

/// The client every request goes through: kube's (rustls, `accept_invalid_certs` for
/// `--insecure`), with its retries off and a bearer token as a plain header.
fn build_client(config: &FanoutConfig) -> Result<kube::Client, FanoutError> {
    let client_error = |message: String| FanoutError::Client {
        server: config.server.clone(),
        message,
    };
    let uri: Uri = config
        .server
        .parse()
        .map_err(|error| client_error(format!("{error}")))?;
    let mut kube_config = kube::Config::new(uri);
    kube_config.default_retry = false;
    kube_config.read_timeout = None;
    kube_config.accept_invalid_certs = config.insecure;
    if let Some(path) = &config.certificate_authority {
        kube_config.root_cert =
            Some(read_certificate_authority(path).map_err(|error| {
                client_error(format!(
                    "--certificate-authority {}: {error}",
                    path.display()
                ))
            })?);
    }
    kube_config.disable_compression = true;
    if let Some(token) = &config.token {
        let value = hyper::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|error| client_error(format!("the token: {error}")))?;
        kube_config
            .headers
            .push((hyper::header::AUTHORIZATION, value));
    }
    kube::Client::try_from(kube_config)
        .map_err(|error| client_error(error.to_string()))
}

/// The DER certificates of a PEM CA file (kube's `root_cert`).
fn read_certificate_authority(
    path: &std::path::Path,
) -> Result<Vec<Vec<u8>>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let pem = std::fs::read(path).map_err(|error| error.to_string())?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .map(|cert| cert.map(|der| der.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| error.to_string())?;
    if certs.is_empty() {
        return Err("no CERTIFICATE in the file".into());
    }
    Ok(certs)
}

fn build_request(
    method: Method,
    path: &str,
    body: Vec<u8>,
    content_type: &str,
) -> Option<Request<Body>> {
    Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::CONTENT_TYPE, content_type)
        .header(hyper::header::ACCEPT, "application/json")
        .body(Body::from(body))
        .ok()
}

/// Sends `request`; on a status other than `expect`, reads the body into the error.
async fn send(
    client: &kube::Client,
    request: Request<Body>,
    expect: &[StatusCode],
) -> Result<hyper::Response<Body>, String> {
    let response = client.send(request).await.map_err(|e| e.to_string())?;
    if expect.contains(&response.status()) {
        return Ok(response);
    }
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
        .unwrap_or_default();
    let message: String = body.chars().take(300).collect();
    Err(format!("{status}: {message}"))
}

/// Sends `request` and reads the whole body.
async fn send_collect(
    client: &kube::Client,
    request: Request<Body>,
    expect: &[StatusCode],
) -> Result<bytes::Bytes, String> {
    let response = send(client, request, expect).await?;
    response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| e.to_string())
}

/// Runs the whole load: see the module docs. Errors are for runs that cannot be
/// made; what goes wrong during a run (failed writes, broken watches) is in the
/// report.
pub async fn run(config: &FanoutConfig) -> Result<FanoutReport, FanoutError> {
    config.validate()?;
    let needed = config.watchers as u64 + 256;
    if let Some(limit) = open_file_limit()
        && limit < needed
    {
        return Err(FanoutError::FdLimit {
            watchers: config.watchers,
            needed,
            limit,
        });
    }
    let client = build_client(config)?;
    let run = run_id();
    let pods_path = format!("/api/v1/namespaces/{}/pods", config.namespace);
    let total_writes = config.total_writes();
    let shared = Arc::new(Shared {
        run: run.clone(),
        base: Instant::now(),
        acks: (0..total_writes).map(|_| AtomicU64::new(0)).collect(),
        histogram: Histogram::new(),
        delivered: AtomicU64::new(0),
        target: AtomicU64::new(u64::MAX),
        complete: Notify::new(),
        before_ack: AtomicU64::new(0),
        broken: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        error_samples: Mutex::new(Vec::new()),
        bytes_received: AtomicU64::new(0),
        events_received: AtomicU64::new(0),
        protobuf: config.protobuf,
    });
    let mut report = FanoutReport {
        server: config.server.clone(),
        watchers: config.watchers,
        nodes: config.node_selector.then_some(config.nodes),
        writes_per_second: config.writes_per_second,
        duration_seconds: config.duration.as_secs_f64(),
        rss_before_kib: config.pid.and_then(read_rss_kib),
        ..FanoutReport::default()
    };

    // Prefill (not measured).
    if config.prefill > 0 {
        report.prefilled =
            prefill(&client, config, &run, &pods_path, &shared).await?;
        report.rss_after_prefill_kib = config.pid.and_then(read_rss_kib);
    }

    // One list gives the resourceVersion every watch starts from.
    let list_path = format!("{pods_path}?limit=1");
    let list =
        build_request(Method::GET, &list_path, Vec::new(), "application/json")
            .ok_or_else(|| FanoutError::Invalid(format!("bad path {list_path}")))?;
    let body = send_collect(&client, list, &[StatusCode::OK])
        .await
        .map_err(|message| FanoutError::Request {
            what: format!("GET {list_path}"),
            message,
        })?;
    let list: serde_json::Value =
        serde_json::from_slice(&body).map_err(|error| FanoutError::Request {
            what: format!("GET {list_path}"),
            message: error.to_string(),
        })?;
    let resource_version = list
        .pointer("/metadata/resourceVersion")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();

    // Open every watch; each reader task runs until `stop`.
    let stop = CancellationToken::new();
    let readers = TaskTracker::new();
    let timeout_seconds =
        (config.duration + config.open_timeout + config.drain_timeout).as_secs()
            + 60;
    let opened_at = Instant::now();
    let server_cpu_start = config.pid.and_then(|pid| read_cpu_seconds(Some(pid)));
    let tool_cpu_start = read_cpu_seconds(None);
    let nodes = if config.node_selector {
        config.nodes
    } else {
        1
    };
    let mut watchers_on_node = vec![0u64; nodes];
    let opens = futures::stream::iter(0..config.watchers)
        .map(|i| {
            // Each watch is a client of its own, with its own connection pool:
            // one HTTP/1.1 connection per watch, as N kubelets are, never a
            // connection shared with the writes or another watch.
            let client = build_client(config);
            let node = i % nodes;
            let mut path = format!(
                "{pods_path}?watch=true&allowWatchBookmarks=true&timeoutSeconds={timeout_seconds}&resourceVersion={resource_version}"
            );
            if config.node_selector {
                path.push_str(&format!("&fieldSelector=spec.nodeName%3Dnode-{node}"));
            }
            let accept = if config.protobuf {
                PROTOBUF
            } else {
                "application/json"
            };
            async move {
                let client = client.map_err(|error| error.to_string())?;
                let mut request =
                    build_request(Method::GET, &path, Vec::new(), "application/json")
                        .ok_or_else(|| format!("bad watch path {path}"))?;
                request.headers_mut().insert(
                    hyper::header::ACCEPT,
                    hyper::header::HeaderValue::from_static(accept),
                );
                let response = send(&client, request, &[StatusCode::OK]).await?;
                Ok::<_, String>((node, response))
            }
        })
        .buffer_unordered(config.open_concurrency);
    let opening = async {
        let mut opens = std::pin::pin!(opens);
        while let Some(opened) = opens.next().await {
            match opened {
                Ok((node, response)) => {
                    if let Some(count) = watchers_on_node.get_mut(node) {
                        *count += 1;
                    }
                    report.watches_established += 1;
                    readers.spawn(read_watch(
                        response.into_body(),
                        Arc::clone(&shared),
                        stop.clone(),
                    ));
                }
                Err(message) => shared.error(format!("opening a watch: {message}")),
            }
        }
    };
    if tokio::time::timeout(config.open_timeout, opening)
        .await
        .is_err()
    {
        stop.cancel();
        readers.close();
        return Err(FanoutError::Timeout(format!(
            "only {} of {} watches were established within {:?}",
            report.watches_established, config.watchers, config.open_timeout
        )));
    }
    report.open_seconds = opened_at.elapsed().as_secs_f64();

    // The write phase.
    let written = write_phase(
        &client,
        config,
        &pods_path,
        &shared,
        &watchers_on_node,
        total_writes,
    )
    .await;
    report.writes_acked = written.acked;
    report.write_errors = written.failed;
    report.write_seconds = written.seconds;
    report.events_expected = written.expected_events;

    // Drain: wait (bounded) until every expected event has arrived.
    shared
        .target
        .store(written.expected_events, Ordering::Release);
    // A broken watch never gets the rest of its events: once one has broken, stop
    // when deliveries have not moved for a second.
    let drain_deadline = tokio::time::Instant::now() + config.drain_timeout;
    let mut last_delivered = u64::MAX;
    let mut last_progress = tokio::time::Instant::now();
    loop {
        let notified = shared.complete.notified();
        let delivered = shared.delivered.load(Ordering::Acquire);
        let now = tokio::time::Instant::now();
        if delivered >= written.expected_events || now >= drain_deadline {
            break;
        }
        if delivered != last_delivered {
            last_delivered = delivered;
            last_progress = now;
        } else if shared.broken.load(Ordering::Acquire) > 0
            && now - last_progress >= Duration::from_secs(1)
        {
            break;
        }
        let wake = drain_deadline.min(now + Duration::from_millis(250));
        let _ = tokio::time::timeout_at(wake, notified).await;
    }
    report.rss_after_kib = config.pid.and_then(read_rss_kib);
    report.server_cpu_seconds = server_cpu_start.and_then(|start| {
        let end = read_cpu_seconds(Some(config.pid?))?;
        Some(end - start)
    });
    report.tool_cpu_seconds =
        tool_cpu_start.and_then(|start| Some(read_cpu_seconds(None)? - start));
    stop.cancel();
    readers.close();
    if tokio::time::timeout(Duration::from_secs(30), readers.wait())
        .await
        .is_err()
    {
        shared.error("the watch readers did not stop within 30 s".into());
    }

    report.events_delivered = shared.delivered.load(Ordering::Acquire);
    report.events_per_second = if report.write_seconds > 0.0 {
        report.events_delivered as f64 / report.write_seconds
    } else {
        0.0
    };
    report.latency = shared.histogram.latency();
    report.encoding = if config.protobuf { "protobuf" } else { "json" }.into();
    let events_received = shared.events_received.load(Ordering::Relaxed);
    report.bytes_per_event = if events_received > 0 {
        shared.bytes_received.load(Ordering::Relaxed) as f64 / events_received as f64
    } else {
        0.0
    };
    report.received_before_ack = shared.before_ack.load(Ordering::Relaxed);
    report.watches_broken = shared.broken.load(Ordering::Relaxed);

    if config.cleanup {
        let pods = written.pods_created + report.prefilled;
        cleanup(
            &client,
            config,
            &run,
            &pods_path,
            written.pods_created,
            report.prefilled,
            &shared,
        )
        .await;
        tracing::info!(pods, "cleaned up");
    }
    report.errors = shared.errors.load(Ordering::Relaxed);
    report.error_samples = shared.error_samples.lock().clone();
    Ok(report)
}

fn prefill_name(run: &str, i: u64) -> String {
    format!("fanout-{run}-pre-{i}")
}

/// Creates `config.prefill` pods (bounded in time: one minute per 10,000).
async fn prefill(
    client: &kube::Client,
    config: &FanoutConfig,
    run: &str,
    pods_path: &str,
    shared: &Shared,
) -> Result<u64, FanoutError> {
    let nodes = if config.node_selector {
        config.nodes
    } else {
        1
    };
    let created = AtomicU64::new(0);
    let creates = futures::stream::iter(0..config.prefill as u64)
        .map(|i| {
            let body = pod_body(
                run,
                &config.namespace,
                &prefill_name(run, i),
                None,
                &format!("node-{}", i % nodes as u64),
            );
            let created = &created;
            async move {
                let Some(request) =
                    build_request(Method::POST, pods_path, body, "application/json")
                else {
                    return;
                };
                match send_collect(
                    client,
                    request,
                    &[StatusCode::CREATED, StatusCode::OK],
                )
                .await
                {
                    Ok(_) => {
                        created.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(message) => {
                        shared.error(format!("prefill create: {message}"))
                    }
                }
            }
        })
        .buffer_unordered(BULK_CONCURRENCY)
        .collect::<()>();
    let bound = Duration::from_secs(60 * (1 + config.prefill as u64 / 10_000));
    tokio::time::timeout(bound, creates).await.map_err(|_| {
        FanoutError::Timeout(format!("the prefill did not finish within {bound:?}"))
    })?;
    Ok(created.load(Ordering::Relaxed))
}

/// What the write phase did.
struct Written {
    acked: u64,
    failed: u64,
    pods_created: u64,
    expected_events: u64,
    seconds: f64,
}

/// Issues writes on schedule: write `s` is due at `s / W` seconds. Even writes
/// create pod `s/2`; odd ones merge-patch it, after its create was acknowledged.
async fn write_phase(
    client: &kube::Client,
    config: &FanoutConfig,
    pods_path: &str,
    shared: &Arc<Shared>,
    watchers_on_node: &[u64],
    total: u64,
) -> Written {
    let rate = f64::from(config.writes_per_second);
    let in_flight = Arc::new(Semaphore::new(MAX_WRITES_IN_FLIGHT));
    let writers = TaskTracker::new();
    let acked = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let created = Arc::new(AtomicU64::new(0));
    let expected = Arc::new(AtomicU64::new(0));
    let last_ack = Arc::new(AtomicU64::new(0));
    let start = tokio::time::Instant::now();
    let tick = Duration::from_secs_f64((1.0 / rate).max(0.001));
    let mut ticker = tokio::time::interval(tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let first = shared.nanos(Instant::now());
    let mut issued = 0u64;
    while issued < total {
        ticker.tick().await;
        let due = ((start.elapsed().as_secs_f64() * rate) as u64 + 1).min(total);
        while issued < due {
            let seq = issued;
            issued += 1;
            if seq % 2 == 1 {
                continue; // the patch of pod seq/2 is issued by its create's task
            }
            let k = seq / 2;
            let node = (k % watchers_on_node.len() as u64) as usize;
            let fan = watchers_on_node.get(node).copied().unwrap_or(0);
            let name = pod_name(&shared.run, k);
            let create = pod_body(
                &shared.run,
                &config.namespace,
                &name,
                Some(seq),
                &format!("node-{node}"),
            );
            let patch_due = (seq + 1 < total)
                .then(|| start + Duration::from_secs_f64((seq + 1) as f64 / rate));
            let patch_path = format!("{pods_path}/{name}");
            let (client, shared, in_flight) =
                (client.clone(), Arc::clone(shared), Arc::clone(&in_flight));
            let (acked, failed, created, expected, last_ack) = (
                Arc::clone(&acked),
                Arc::clone(&failed),
                Arc::clone(&created),
                Arc::clone(&expected),
                Arc::clone(&last_ack),
            );
            let pods_path = pods_path.to_string();
            writers.spawn(async move {
                let ack = |seq: u64| {
                    let now = shared.nanos(Instant::now());
                    if let Some(slot) = shared.acks.get(seq as usize) {
                        slot.store(now.saturating_add(1), Ordering::Release);
                    }
                    acked.fetch_add(1, Ordering::Relaxed);
                    expected.fetch_add(fan, Ordering::Relaxed);
                    last_ack.fetch_max(now, Ordering::Relaxed);
                };
                let Ok(permit) = in_flight.acquire().await else {
                    return;
                };
                let Some(request) = build_request(Method::POST, &pods_path, create, "application/json")
                else {
                    return;
                };
                match send(&client, request, &[StatusCode::CREATED, StatusCode::OK]).await {
                    Ok(response) => {
                        ack(seq);
                        created.fetch_add(1, Ordering::Relaxed);
                        let _ = response.into_body().collect().await;
                    }
                    Err(message) => {
                        failed.fetch_add(1, Ordering::Relaxed);
                        shared.error(format!("create {seq}: {message}"));
                        return;
                    }
                }
                drop(permit);
                let Some(patch_due) = patch_due else {
                    return;
                };
                tokio::time::sleep_until(patch_due).await;
                let Ok(_permit) = in_flight.acquire().await else {
                    return;
                };
                let patch = serde_json::json!({
                    "metadata": {"annotations": {SEQ_ANNOTATION: format!("{}:{}", shared.run, seq + 1)}}
                })
                .to_string()
                .into_bytes();
                let Some(request) =
                    build_request(Method::PATCH, &patch_path, patch, "application/merge-patch+json")
                else {
                    return;
                };
                match send(&client, request, &[StatusCode::OK]).await {
                    Ok(response) => {
                        ack(seq + 1);
                        let _ = response.into_body().collect().await;
                    }
                    Err(message) => {
                        failed.fetch_add(1, Ordering::Relaxed);
                        shared.error(format!("patch {}: {message}", seq + 1));
                    }
                }
            });
        }
    }
    writers.close();
    let bound = config.duration + Duration::from_secs(60);
    if tokio::time::timeout(bound, writers.wait()).await.is_err() {
        shared.error(format!("the writes did not finish within {bound:?}"));
    }
    let last = last_ack.load(Ordering::Relaxed);
    Written {
        acked: acked.load(Ordering::Relaxed),
        failed: failed.load(Ordering::Relaxed),
        pods_created: created.load(Ordering::Relaxed),
        expected_events: expected.load(Ordering::Relaxed),
        seconds: Duration::from_nanos(last.saturating_sub(first)).as_secs_f64(),
    }
}

/// Reads one watch until `stop`: splits body frames into lines, and records each
/// event of this run with the frame's arrival time.
async fn read_watch(mut body: Body, shared: Arc<Shared>, stop: CancellationToken) {
    let mut buffer: Vec<u8> = Vec::with_capacity(4096);
    // Events that arrived before their acknowledgement was recorded: (seq, receipt).
    let mut early: Vec<(u64, u64)> = Vec::new();
    let ended = loop {
        let frame = tokio::select! {
            () = stop.cancelled() => break None,
            frame = body.frame() => frame,
        };
        let data = match frame {
            None => break Some("the watch ended (EOF)".to_string()),
            Some(Err(error)) => break Some(format!("the watch failed: {error}")),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue, // trailers
            },
        };
        let received = shared.nanos(Instant::now());
        shared
            .bytes_received
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        buffer.extend_from_slice(&data);
        let mut start = 0;
        let mut error = None;
        while let Some((line, next)) = next_event(&buffer, start, shared.protobuf) {
            start = next;
            shared.events_received.fetch_add(1, Ordering::Relaxed);
            let kind = if shared.protobuf {
                frame_kind(line)
            } else {
                line_kind(line)
            };
            match kind {
                LineKind::Object => {
                    if let Some(seq) = scan_seq(line, &shared.run) {
                        record(&shared, seq, received, &mut early);
                    }
                }
                LineKind::Bookmark | LineKind::Unknown => {}
                LineKind::Error => {
                    let text: String =
                        String::from_utf8_lossy(line).chars().take(300).collect();
                    error = Some(format!("the watch got an ERROR event: {text}"));
                    break;
                }
            }
        }
        buffer.drain(..start);
        if error.is_some() {
            break error;
        }
    };
    if let Some(reason) = ended {
        shared.broken.fetch_add(1, Ordering::AcqRel);
        shared.error(reason);
        shared.complete.notify_one();
    }
    // Every write has been acknowledged (or has failed) by now: settle the early
    // events.
    for (seq, received) in early {
        let ack = shared
            .acks
            .get(seq as usize)
            .map_or(0, |slot| slot.load(Ordering::Acquire));
        if ack == 0 {
            continue; // a failed write
        }
        let ack = ack - 1;
        if received < ack {
            shared.before_ack.fetch_add(1, Ordering::Relaxed);
        }
        shared.histogram.record(received.saturating_sub(ack) / 1000);
    }
}

fn record(shared: &Shared, seq: u64, received: u64, early: &mut Vec<(u64, u64)>) {
    let Some(slot) = shared.acks.get(seq as usize) else {
        return;
    };
    let ack = slot.load(Ordering::Acquire);
    if ack == 0 {
        early.push((seq, received));
    } else {
        let ack = ack - 1;
        if received < ack {
            shared.before_ack.fetch_add(1, Ordering::Relaxed);
        }
        shared.histogram.record(received.saturating_sub(ack) / 1000);
    }
    shared.delivered_one();
}

/// Deletes the run's pods (bounded: a minute per 10,000).
async fn cleanup(
    client: &kube::Client,
    config: &FanoutConfig,
    run: &str,
    pods_path: &str,
    written: u64,
    prefilled: u64,
    shared: &Shared,
) {
    // Pods k < written/… were created in order of k, but some creates may have
    // failed: delete every name that could exist and ignore 404s.
    let created_names =
        (0..config.total_writes().div_ceil(2)).map(|k| pod_name(run, k));
    let prefill_names = (0..config.prefill as u64).map(|i| prefill_name(run, i));
    let deletes = futures::stream::iter(created_names.chain(prefill_names))
        .map(|name| async move {
            let path = format!("{pods_path}/{name}");
            let Some(request) =
                build_request(Method::DELETE, &path, Vec::new(), "application/json")
            else {
                return;
            };
            if let Err(message) = send_collect(
                client,
                request,
                &[StatusCode::OK, StatusCode::ACCEPTED, StatusCode::NOT_FOUND],
            )
            .await
            {
                shared.error(format!("delete {name}: {message}"));
            }
        })
        .buffer_unordered(BULK_CONCURRENCY)
        .collect::<()>();
    let bound = Duration::from_secs(60 * (1 + (written + prefilled) / 10_000));
    if tokio::time::timeout(bound, deletes).await.is_err() {
        shared.error(format!("the clean-up did not finish within {bound:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_the_sequence_number_of_this_run_only() {
        let line = br#"{"type":"MODIFIED","object":{"metadata":{"annotations":{"watch-fanout/seq":"rabc:42"}}}}"#;
        assert_eq!(line_kind(line), LineKind::Object);
        assert_eq!(scan_seq(line, "rabc"), Some(42));
        assert_eq!(scan_seq(line, "rother"), None);
        let spaced =
            br#"{"type": "ADDED", "object": {"watch-fanout/seq" : "rabc:7"}}"#;
        assert_eq!(line_kind(spaced), LineKind::Object);
        assert_eq!(scan_seq(spaced, "rabc"), Some(7));
        assert_eq!(
            line_kind(br#"{"type":"BOOKMARK","object":{}}"#),
            LineKind::Bookmark
        );
        assert_eq!(
            line_kind(br#"{"type":"ERROR","object":{}}"#),
            LineKind::Error
        );
        assert_eq!(SEQ_KEY, format!("\"{SEQ_ANNOTATION}\""));
    }

    #[test]
    fn protobuf_frames_split_and_scan_as_json_lines_do() {
        use apimachinery::runtime::serializer::protobuf;
        let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "annotations": {SEQ_ANNOTATION: "rabc:42"}}});
        let body = protobuf::encode(&pod).unwrap();
        let mut stream = protobuf::watch_frame("MODIFIED", &body);
        stream.extend(protobuf::watch_frame("BOOKMARK", &body));
        let (frame, next) = next_event(&stream, 0, true).unwrap();
        assert_eq!(frame_kind(frame), LineKind::Object);
        assert_eq!(scan_seq(frame, "rabc"), Some(42));
        assert_eq!(scan_seq(frame, "rother"), None);
        let (frame, end) = next_event(&stream, next, true).unwrap();
        assert_eq!((frame_kind(frame), end), (LineKind::Bookmark, stream.len()));
        // Half a frame is not an event yet.
        assert!(next_event(&stream[..next - 1], 0, true).is_none());
    }

    #[test]
    fn cpu_seconds_are_read_after_the_command_name() {
        // A command name with a space and a parenthesis, as `comm` may hold.
        let stat = "4242 (mini (api) srv) S 1 4242 4242 0 -1 4194560 900 0 0 0 \
                    1234 567 0 0 20 0 9 0 100 1000 200 18446744073709551615";
        assert_eq!(cpu_seconds_of_stat(stat), Some(18.01));
        assert_eq!(cpu_seconds_of_stat("4242 (x) S 1"), None);
        // This process has a stat file and has used some CPU.
        assert!(read_cpu_seconds(None).is_some_and(|s| s >= 0.0));
    }

    #[test]
    fn the_comparison_puts_the_second_over_the_first() {
        let a = FanoutReport {
            server: "http://127.0.0.1:8080".into(),
            events_per_second: 1000.0,
            server_cpu_seconds: Some(4.0),
            ..FanoutReport::default()
        };
        let b = FanoutReport {
            server: "https://127.0.0.1:6443".into(),
            events_per_second: 500.0,
            server_cpu_seconds: Some(10.0),
            ..FanoutReport::default()
        };
        let table = compare_table(&a, &b);
        let row = |name: &str| {
            table
                .lines()
                .find(|line| line.starts_with(name))
                .map(|line| line.split_whitespace().collect::<Vec<_>>())
                .unwrap_or_default()
        };
        assert_eq!(row("events/s"), ["events/s", "1000", "500", "0.50"]);
        assert_eq!(
            row("server CPU"),
            ["server", "CPU", "4.00", "s", "10.00", "s", "2.50"]
        );
        assert_eq!(row("tool CPU").last(), Some(&"-"));
        assert!(table.contains("https://127.0.0.1:6443"));
    }

    #[test]
    fn histogram_quantiles_are_within_a_few_percent() {
        let h = Histogram::new();
        for micros in 1..=10_000u64 {
            h.record(micros);
        }
        let p50 = h.quantile(0.5);
        let p99 = h.quantile(0.99);
        assert!((p50 - 5_000.0).abs() / 5_000.0 < 0.04, "{p50}");
        assert!((p99 - 9_900.0).abs() / 9_900.0 < 0.04, "{p99}");
        assert_eq!(h.latency().max_ms, 10.0);
        for micros in [0, 63, 64, 65, 1 << 20, u64::MAX >> 1] {
            assert!(Histogram::index(micros) < h.buckets.len());
        }
    }

    #[test]
    fn refuses_remote_servers_and_big_runs() {
        assert!(
            FanoutConfig::new("http://127.0.0.1:8080")
                .validate()
                .is_ok()
        );
        assert!(FanoutConfig::new("https://[::1]:6443").validate().is_ok());
        assert!(
            FanoutConfig::new("http://localhost:8080")
                .validate()
                .is_ok()
        );
        assert!(
            FanoutConfig::new("https://10.0.0.1:6443")
                .validate()
                .is_err()
        );
        let mut remote = FanoutConfig::new("https://10.0.0.1:6443");
        remote.allow_remote = true;
        assert!(remote.validate().is_ok());
        assert!(FanoutConfig::default().watchers(20_001).validate().is_err());
        assert!(
            FanoutConfig::default()
                .writes(10, Duration::from_secs(601))
                .validate()
                .is_err()
        );
    }
}
