//! What a live page of the machinery watches: notes the Cacher sends as things
//! happen (an event enters the ring, is dispatched, a watcher starts or ends, a
//! bookmark goes out, a watch is refused with 410), and a view of its state on
//! demand ([`CacherView`]).
//!
//! Upstream has no such thing: kube-apiserver shows its watch cache only through
//! metrics (`apiserver_watch_cache_*`, `apiserver_terminated_watchers_total`) and
//! logs (`Forcing watcher close due to unresponsiveness`). Here the same moments
//! are notes on a broadcast channel, so `/debug/ui` can draw them as they happen.
//!
//! Nobody listening costs one check of the receiver count per note; a note is
//! built only when a page is open ([`Probe::send`] takes a closure).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use apimachinery::watch::EventType;
use serde::Serialize;
use tokio::sync::broadcast;

/// The most watchers a view lists: a projector shows a few dozen cards, and a
/// thousand watchers would make every view large.
pub const WATCHERS_SHOWN: usize = 48;

/// How many notes a slow page may fall behind before it skips some (it then
/// asks for a fresh view).
pub const PROBE_CAPACITY: usize = 4096;

/// The broadcast channel of notes. Cloning shares the channel: one probe serves
/// every Cacher of a server, and its HTTP layer.
#[derive(Clone, Debug)]
pub struct Probe {
    tx: broadcast::Sender<Arc<Note>>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

impl Probe {
    /// A probe nobody listens to yet.
    pub fn new() -> Self {
        Probe {
            tx: broadcast::Sender::new(PROBE_CAPACITY),
        }
    }

    /// Starts listening: every note from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Note>> {
        self.tx.subscribe()
    }

    /// Whether anybody listens.
    pub fn is_watched(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// Sends the note `what` of `resource`, built only if anybody listens.
    pub fn send(&self, resource: &'static str, what: impl FnOnce() -> What) {
        if self.is_watched() {
            let _ = self.tx.send(Arc::new(Note {
                resource,
                at_ms: unix_millis(),
                what: what(),
            }));
        }
    }
}

/// Milliseconds since the Unix epoch, as the page's clock reads them.
pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One moment of the machinery.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    /// The resource (`pods`), or `""` for the server as a whole.
    pub resource: &'static str,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub what: What,
}

/// What happened.
#[derive(Clone, Debug, Serialize)]
#[serde(
    tag = "note",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum What {
    /// An event from etcd entered the watch cache's ring
    /// (`watchCache.processEvent`).
    Entered {
        /// Its type.
        #[serde(serialize_with = "display")]
        event_type: EventType,
        /// `namespace/name`.
        #[serde(serialize_with = "display")]
        key: Arc<str>,
        /// Its resource version: the etcd revision of the change.
        rv: u64,
    },
    /// The dispatcher handed an event to its watchers (`dispatchEvent`).
    Dispatched {
        /// Its type.
        #[serde(serialize_with = "display")]
        event_type: EventType,
        /// `namespace/name`.
        #[serde(serialize_with = "display")]
        key: Arc<str>,
        /// Its resource version.
        rv: u64,
    },
    /// Bookmarks went out at `rv` to the watchers due one.
    Bookmark {
        /// The version they carry.
        rv: u64,
        /// The watchers that got one.
        watchers: Vec<usize>,
    },
    /// A watcher was registered.
    WatcherAdded {
        /// Its number in this Cacher.
        id: usize,
        /// The request's description.
        identifier: String,
    },
    /// A watcher ended.
    WatcherEnded {
        /// Its number in this Cacher.
        id: usize,
        /// Why.
        reason: EndReason,
        /// Events still in its buffer.
        buffered: usize,
    },
    /// A watch asked for a version the ring no longer has: 410 Expired.
    Expired {
        /// The version asked for.
        requested: u64,
        /// The error's message.
        message: String,
    },
    /// The ring changed size (`resizeCacheLocked`).
    Resized {
        /// The capacity before.
        from: usize,
        /// The capacity now.
        to: usize,
    },
    /// The watch cache listed from etcd (a relist replaces its store).
    Relisted {
        /// The list's resource version.
        rv: u64,
    },
    /// An HTTP request was answered (the HTTP layer's note).
    Request {
        /// The verb as the audit log names it (`list`, `watch`, `create`, ...).
        verb: String,
        /// The request's path and query.
        path: String,
        /// The answer's status code.
        code: u16,
        /// The client's user agent, shortened to its product.
        client: String,
    },
}

/// Why a watcher ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EndReason {
    /// Its `timeoutSeconds` passed.
    Timeout,
    /// Its buffer stayed full longer than the time budget allowed: closed as
    /// unresponsive.
    Slow,
    /// The client went away (or stopped reading the stream).
    ClientGone,
    /// The watch cache relisted and closed every watcher.
    Relist,
    /// The Cacher stopped.
    Stopped,
}

impl EndReason {
    /// The reason as a byte, to keep in an atomic.
    pub const fn as_u8(self) -> u8 {
        match self {
            EndReason::Timeout => 1,
            EndReason::Slow => 2,
            EndReason::ClientGone => 3,
            EndReason::Relist => 4,
            EndReason::Stopped => 5,
        }
    }

    /// The reason kept as [`as_u8`](Self::as_u8), if any.
    pub const fn from_u8(value: u8) -> Option<EndReason> {
        match value {
            1 => Some(EndReason::Timeout),
            2 => Some(EndReason::Slow),
            3 => Some(EndReason::ClientGone),
            4 => Some(EndReason::Relist),
            5 => Some(EndReason::Stopped),
            _ => None,
        }
    }
}

/// A Cacher's state as the page draws it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacherView {
    /// The resource.
    pub resource: &'static str,
    /// Whether the cache has listed and serves.
    pub ready: bool,
    /// The cache's resource version.
    pub resource_version: u64,
    /// The ring.
    pub ring: RingView,
    /// The dispatcher's time budget now, in milliseconds (at most 100).
    pub budget_ms: f64,
    /// The most it can save, in milliseconds.
    pub max_budget_ms: f64,
    /// Events dispatched since the start.
    pub events_dispatched: u64,
    /// Watchers closed as unresponsive since the start.
    pub watchers_terminated_slow: u64,
    /// How many watchers are live.
    pub watcher_count: usize,
    /// The live watchers with the fullest buffers (at most
    /// [`WATCHERS_SHOWN`]), in order of their numbers.
    pub watchers: Vec<WatcherView>,
}

/// The watch cache's ring.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RingView {
    /// Its capacity now.
    pub capacity: usize,
    /// The resource version of each event it holds, oldest first.
    pub versions: Vec<u64>,
    /// The oldest version a watch can start from.
    pub oldest_rv: u64,
    /// The newest event's version.
    pub newest_rv: u64,
    /// The time between the oldest and the newest event, in seconds.
    pub window_secs: f64,
    /// How often it changed size.
    pub resizes: u64,
    /// The bounds its size moves between.
    pub lower_bound: usize,
    /// The upper bound.
    pub upper_bound: usize,
}

/// One cacheWatcher.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WatcherView {
    /// Its number in the Cacher.
    pub id: usize,
    /// The request's description (key, label and field selectors).
    pub identifier: String,
    /// The trigger value it is registered under (a pod watch pinned to a node),
    /// if any.
    pub trigger: Option<String>,
    /// Events waiting in its buffer.
    pub buffered: usize,
    /// Its buffer's size.
    pub buffer_capacity: usize,
    /// Bookmarks it has been sent.
    pub bookmarks: u64,
    /// Whether it asked for bookmarks.
    pub allow_bookmarks: bool,
    /// How long it has been open, in seconds.
    pub age_secs: f64,
    /// Seconds until its `timeoutSeconds` ends it, if it has one.
    pub ends_in_secs: Option<f64>,
}

fn display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}
