//! The raw watches: N watches on pods, one HTTP/1.1 connection each (a client of
//! its own, as N kubelets are), each reading its stream as watch-fanout's
//! watchers do: body frames split into lines with `memchr`, each line's `"type"`
//! read without decoding the object ([`watch_fanout::line_kind`]).
//!
//! Every watch asks for a timeout longer than the whole run, so none should
//! end: a watch whose stream ends (EOF, a transport error, an `ERROR` event)
//! before the soak stops it is recorded as ended, with when and why. That is what
//! the etcd keepalive bug looked like: etcd closed the server's connection every
//! ~10 s while idle and every watch ended.
//!
//! # Memory usage
//! Per watch: a client (its connection pool), a read buffer of about one
//! frame, and two counters.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use http_body_util::BodyExt as _;
use hyper::{Method, StatusCode, Uri};
use kube::client::Body;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use watch_fanout::{LineKind, line_kind};

use crate::http;

/// Watches being opened at once.
const OPEN_CONCURRENCY: usize = 64;
/// How long opening every watch may take.
pub const OPEN_TIMEOUT: Duration = Duration::from_secs(120);

/// One watch's figures.
#[derive(Debug, Default)]
pub struct WatchSlot {
    /// `ADDED`, `MODIFIED` and `DELETED` events received.
    pub events: AtomicU64,
    /// Whether its stream ended before the soak stopped it.
    pub ended: AtomicBool,
}

/// A watch that ended before its timeout.
#[derive(Clone, Debug)]
pub struct EndedWatch {
    /// Which watch (0-based).
    pub index: usize,
    /// When, since the load started.
    pub at: Duration,
    /// Why: EOF, the transport error, or the `ERROR` event's text.
    pub reason: String,
    /// Events it had received.
    pub events: u64,
}

/// What every watch shares.
#[derive(Debug)]
pub struct Watches {
    /// One per established watch.
    pub slots: Vec<Arc<WatchSlot>>,
    /// Events received by all watches.
    pub events: AtomicU64,
    /// `BOOKMARK` events received by all watches.
    pub bookmarks: AtomicU64,
    /// The watches that ended, in order.
    pub ended: Mutex<Vec<EndedWatch>>,
    /// The time the load started, for [`EndedWatch::at`].
    pub started: Instant,
    stop: CancellationToken,
    readers: TaskTracker,
}

impl Watches {
    /// Opens `count` watches on `path_and_query` of `server`, at most
    /// [`OPEN_CONCURRENCY`] at once, within [`OPEN_TIMEOUT`]; each is read by a
    /// task until [`Watches::stop`]. Fails when any watch cannot be opened.
    pub async fn open(
        server: &Uri,
        path_and_query: &str,
        count: usize,
        started: Instant,
    ) -> Result<Arc<Watches>, String> {
        let opens = futures::stream::iter(0..count)
            .map(|_| async move {
                let client = http::client(server)?;
                let open = http::open(
                    &client,
                    Method::GET,
                    path_and_query,
                    Vec::new(),
                    "application/json",
                    &[StatusCode::OK],
                );
                let response = tokio::time::timeout(http::REQUEST_TIMEOUT, open)
                    .await
                    .map_err(|_| {
                        format!("no answer within {:?}", http::REQUEST_TIMEOUT)
                    })??;
                // The client (its connection) lives as long as the body is read.
                Ok::<_, String>((client, response.into_body()))
            })
            .buffer_unordered(OPEN_CONCURRENCY)
            .collect::<Vec<_>>();
        let opened =
            tokio::time::timeout(OPEN_TIMEOUT, opens)
                .await
                .map_err(|_| {
                    format!(
                        "the {count} watches were not open within {OPEN_TIMEOUT:?}"
                    )
                })?;
        let mut bodies = Vec::with_capacity(count);
        for result in opened {
            bodies
                .push(result.map_err(|error| format!("opening a watch: {error}"))?);
        }
        let watches = Arc::new(Watches {
            slots: (0..count).map(|_| Arc::new(WatchSlot::default())).collect(),
            events: AtomicU64::new(0),
            bookmarks: AtomicU64::new(0),
            ended: Mutex::new(Vec::new()),
            started,
            stop: CancellationToken::new(),
            readers: TaskTracker::new(),
        });
        for (index, (client, body)) in bodies.into_iter().enumerate() {
            let shared = Arc::clone(&watches);
            watches.readers.spawn(async move {
                read_watch(index, body, &shared).await;
                drop(client);
            });
        }
        watches.readers.close();
        Ok(watches)
    }

    /// Watches whose stream has not ended.
    pub fn open_count(&self) -> usize {
        self.slots.len() - self.ended_count()
    }

    /// Watches that ended before their timeout.
    pub fn ended_count(&self) -> usize {
        self.ended.lock().len()
    }

    /// The fewest and the most events one open watch has received.
    pub fn events_range_of_open(&self) -> Option<(u64, u64)> {
        let counts = self
            .slots
            .iter()
            .filter(|slot| !slot.ended.load(Ordering::Acquire))
            .map(|slot| slot.events.load(Ordering::Acquire));
        counts.fold(None, |range, n| match range {
            None => Some((n, n)),
            Some((lo, hi)) => Some((lo.min(n), hi.max(n))),
        })
    }

    /// Ends every watch (closing its connection) and waits for the readers,
    /// within 30 s.
    pub async fn stop(&self) -> Result<(), String> {
        self.stop.cancel();
        tokio::time::timeout(Duration::from_secs(30), self.readers.wait())
            .await
            .map_err(|_| "the watch readers did not stop within 30 s".to_string())
    }
}

/// Reads one watch until it ends or the soak stops it; an end before the stop is
/// recorded in [`Watches::ended`].
async fn read_watch(index: usize, mut body: Body, watches: &Watches) {
    let slot = &watches.slots[index];
    let mut buffer: Vec<u8> = Vec::with_capacity(4096);
    let reason = loop {
        let frame = tokio::select! {
            () = watches.stop.cancelled() => return,
            frame = body.frame() => frame,
        };
        let data = match frame {
            None => break "the stream ended (EOF)".to_string(),
            Some(Err(error)) => break format!("the stream failed: {error}"),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue, // trailers
            },
        };
        buffer.extend_from_slice(&data);
        let mut start = 0;
        let mut error = None;
        while let Some(end) = memchr::memchr(b'\n', &buffer[start..]) {
            let line = &buffer[start..start + end];
            start += end + 1;
            match line_kind(line) {
                LineKind::Object => {
                    slot.events.fetch_add(1, Ordering::AcqRel);
                    watches.events.fetch_add(1, Ordering::Relaxed);
                }
                LineKind::Bookmark => {
                    watches.bookmarks.fetch_add(1, Ordering::Relaxed);
                }
                LineKind::Error => {
                    let text: String =
                        String::from_utf8_lossy(line).chars().take(300).collect();
                    error = Some(format!("an ERROR event: {text}"));
                    break;
                }
                LineKind::Unknown => {}
            }
        }
        buffer.drain(..start);
        if let Some(error) = error {
            break error;
        }
    };
    if watches.stop.is_cancelled() {
        return;
    }
    slot.ended.store(true, Ordering::Release);
    watches.ended.lock().push(EndedWatch {
        index,
        at: watches.started.elapsed(),
        reason,
        events: slot.events.load(Ordering::Acquire),
    });
}
