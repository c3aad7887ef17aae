//! `EmbeddedKv`: an in-process MVCC store with etcd 3.4's observable semantics.
//!
//! Mirrors etcd's `mvcc` package (`kvstore.go`, `key_index.go`,
//! `watchable_store.go`) and the parts of `etcdserver/api/v3rpc/watch.go` a client
//! can see: a global revision that starts at 1 (the first write gets revision 2),
//! per-key history (`create_revision`, `mod_revision`, `version`), compaction, and
//! watchers that replay history from a revision and then stream.
//!
//! ## How watchers are fed
//!
//! etcd keeps each watcher in a *synced* group (fed directly by writes) or an
//! *unsynced* group (a background loop catches it up from the backend); a watcher
//! whose channel is full is moved to the unsynced group, so a writer never blocks
//! and no event is lost. Here every watcher reads the one shared event history
//! itself, at its own pace: a write appends one event and wakes the watchers whose
//! key range it touches ([`Notify`], which keeps a permit, so no wake-up is lost). A
//! slow watcher is simply behind in the history, exactly like etcd's unsynced
//! watcher, and if compaction overtakes it, it is cancelled with `compact_revision`,
//! like etcd. Values are [`Bytes`], so handing an event to a watcher clones
//! reference counts, never the data.
//!
//! ## Memory usage
//!
//! Like etcd, the store keeps every version until [`Kv::compact`]; the apiserver
//! compacts every five minutes (`etcd3::compact`). Compaction drops old versions
//! and the event history before the compacted revision, and gives the spare room
//! back: the history's ring shrinks when it is at most a quarter full, and each
//! key's version list when it is at most half full. A value's bytes are shared
//! (reference counted) by its version and its events, so they are freed when the
//! last of those goes. Whether the process's RSS falls then is the allocator's
//! choice: glibc's malloc keeps freed small blocks for reuse (a later burst reuses
//! them) unless they form whole free pages at the top of a heap.
//!
//! ## Locking
//!
//! Two locks, never held together: the MVCC state ([`RwLock`]) and the watcher
//! registry ([`Mutex`]). A write takes the state lock, releases it, then wakes
//! watchers through the registry.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt;
use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use super::*;

/// etcd's default `--experimental-watch-progress-notify-interval`.
const DEFAULT_PROGRESS_NOTIFY_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// etcd's `watchBatchMaxRevs`: at most this many events in one response.
const DEFAULT_MAX_EVENTS_PER_RESPONSE: usize = 1000;

/// How many history revisions a watcher scans under one read lock before letting
/// writers in.
const SCAN_BUDGET: usize = 16 * 1024;

/// Options of an [`EmbeddedKv`]; mirrors the etcd server flags that change what a
/// client sees.
#[derive(Clone, Debug)]
pub struct EmbeddedKvOptions {
    /// etcd's `--experimental-watch-progress-notify-interval`: how often a watcher
    /// that asked for `progress_notify`, received no event in the last interval
    /// and is up to date gets a progress notification. Default: 10 minutes,
    /// like etcd.
    pub progress_notify_interval: Duration,
    /// etcd's `watchBatchMaxRevs`: at most this many events in one watch response
    /// (at least 1). Default: 1000.
    pub max_events_per_response: usize,
}

impl Default for EmbeddedKvOptions {
    fn default() -> Self {
        EmbeddedKvOptions {
            progress_notify_interval: DEFAULT_PROGRESS_NOTIFY_INTERVAL,
            max_events_per_response: DEFAULT_MAX_EVENTS_PER_RESPONSE,
        }
    }
}

impl EmbeddedKvOptions {
    /// The same options with another progress-notify interval (etcd's
    /// `--experimental-watch-progress-notify-interval`).
    #[must_use]
    pub fn with_progress_notify_interval(mut self, interval: Duration) -> Self {
        self.progress_notify_interval = interval;
        self
    }

    /// The same options with another cap on events per watch response.
    #[must_use]
    pub fn with_max_events_per_response(mut self, max: usize) -> Self {
        self.max_events_per_response = max;
        self
    }
}

// ANCHOR: mvcc_state
/// Every version of one key, oldest first: etcd's `keyIndex` (its generations
/// flattened; a tombstone ends a generation).
#[derive(Debug, Default)]
struct KeyHistory {
    versions: Vec<Version>,
}

/// One version of a key: its state after the write at `mod_revision`; `None` is a
/// tombstone.
#[derive(Debug)]
struct Version {
    mod_revision: i64,
    kv: Option<KeyValue>,
}

/// The MVCC state: etcd's `store` (`currentRev`, `compactMainRev`, the key index and
/// the backend).
#[derive(Debug)]
struct MvccState {
    /// The newest revision; 1 in a fresh store, like etcd.
    current_revision: i64,
    /// Reads and watches before this revision fail (etcd's `compactMainRev`); 0
    /// before compaction.
    compacted_revision: i64,
    /// Key → its versions, in key order (etcd's B-tree `treeIndex`).
    keys: BTreeMap<Bytes, KeyHistory>,
    /// One event per revision, oldest first: revision `history_start()` is
    /// `history[0]`, and the last is `current_revision`. `prev_kv` is always
    /// filled when there was a previous state; watchers that did not ask for it
    /// get it stripped.
    history: VecDeque<KvEvent>,
}
// ANCHOR_END: mvcc_state

impl KeyHistory {
    /// The newest state, if the key exists now.
    fn latest(&self) -> Option<&KeyValue> {
        self.versions.last().and_then(|v| v.kv.as_ref())
    }

    /// The state at `revision`, if the key existed then.
    fn at(&self, revision: i64) -> Option<&KeyValue> {
        let after = self
            .versions
            .partition_point(|v| v.mod_revision <= revision);
        after
            .checked_sub(1)
            .and_then(|i| self.versions.get(i))
            .and_then(|v| v.kv.as_ref())
    }

    // ANCHOR: key_history_compact
    /// Mirrors etcd's `keyIndex.compact`: forgets every version older than `at`,
    /// except the newest version at or before `at` (reads at `at` still need
    /// it), and drops that one too when it is a tombstone. Returns whether the
    /// key has no versions left (the index forgets it).
    fn compact(&mut self, at: i64) -> bool {
        // ANCHOR: ex5-compact-key-history
        let after = self.versions.partition_point(|v| v.mod_revision <= at);
        if let Some(keep) = after.checked_sub(1) {
            let tombstone = self.versions.get(keep).is_some_and(|v| v.kv.is_none());
            let drop_to = if tombstone { keep + 1 } else { keep };
            self.versions.drain(..drop_to);
        }
        self.versions.is_empty()
        // ANCHOR_END: ex5-compact-key-history
    }
    // ANCHOR_END: key_history_compact
}

impl MvccState {
    fn new() -> Self {
        MvccState {
            current_revision: 1,
            compacted_revision: 0,
            keys: BTreeMap::new(),
            history: VecDeque::new(),
        }
    }

    /// The revision of the oldest event still in the history.
    fn history_start(&self) -> i64 {
        self.current_revision + 1 - self.history.len() as i64
    }

    /// The event written at `revision`, if it is still in the history.
    fn event_at(&self, revision: i64) -> Option<&KvEvent> {
        let index = usize::try_from(revision - self.history_start()).ok()?;
        self.history.get(index)
    }

    /// etcd's `rangeKeys` revision checks: 0 (or less) is the newest; newer than the
    /// store is `FutureRevision`; older than the compaction is `Compacted`.
    fn read_revision(&self, requested: i64) -> Result<i64, KvError> {
        if requested > self.current_revision {
            return Err(KvError::FutureRevision {
                current: self.current_revision,
            });
        }
        let revision = if requested <= 0 {
            self.current_revision
        } else {
            requested
        };
        if revision < self.compacted_revision {
            return Err(KvError::Compacted {
                compacted: self.compacted_revision,
            });
        }
        Ok(revision)
    }

    /// Mirrors etcd's `Range` (with `limit + 1` fetched to set `more`).
    fn range(&self, request: &RangeRequest) -> Result<RangeResponse, KvError> {
        let revision = self.read_revision(request.revision)?;
        let limit = usize::try_from(request.limit).unwrap_or(0);
        let mut response = RangeResponse {
            header_revision: self.current_revision,
            ..RangeResponse::default()
        };
        let mut consider = |kv: &KeyValue| {
            response.count += 1;
            if !request.count_only && (limit == 0 || response.kvs.len() < limit) {
                response.kvs.push(kv.clone());
            }
        };
        if request.prefix {
            let start = request.from_key.as_ref().unwrap_or(&request.key);
            let end = match prefix_range_end(&request.key) {
                Some(end) => Bound::Excluded(Bytes::from(end)),
                None => Bound::Unbounded,
            };
            if end_is_after(&end, start) {
                for history in self
                    .keys
                    .range((Bound::Included(start.clone()), end))
                    .map(|(_, h)| h)
                {
                    if let Some(kv) = history.at(revision) {
                        consider(kv);
                    }
                }
            }
        } else if let Some(kv) =
            self.keys.get(&request.key).and_then(|h| h.at(revision))
        {
            consider(kv);
        }
        response.more =
            !request.count_only && limit > 0 && response.count > limit as i64;
        Ok(response)
    }

    /// The key's `mod_revision`, 0 when it does not exist (what etcd compares for a
    /// missing key).
    fn mod_revision_of(&self, key: &[u8]) -> i64 {
        self.keys
            .get(key)
            .and_then(KeyHistory::latest)
            .map_or(0, |kv| kv.mod_revision)
    }

    /// The key's `version`, 0 when it does not exist (what etcd compares for a
    /// missing key).
    fn version_of(&self, key: &[u8]) -> i64 {
        self.keys
            .get(key)
            .and_then(KeyHistory::latest)
            .map_or(0, |kv| kv.version)
    }

    /// Mirrors etcd's `storeTxnWrite.put`: a new revision, the key's next version.
    fn put(&mut self, key: Bytes, value: Bytes) -> (i64, Option<KeyValue>) {
        let revision = self.current_revision + 1;
        let history = self.keys.entry(key.clone()).or_default();
        let prev = history.latest().cloned();
        let kv = KeyValue {
            key,
            value,
            create_revision: prev.as_ref().map_or(revision, |p| p.create_revision),
            mod_revision: revision,
            version: prev.as_ref().map_or(1, |p| p.version + 1),
        };
        history.versions.push(Version {
            mod_revision: revision,
            kv: Some(kv.clone()),
        });
        self.current_revision = revision;
        self.history.push_back(KvEvent {
            kind: KvEventType::Put,
            kv,
            prev_kv: prev.clone(),
        });
        (revision, prev)
    }

    /// Mirrors etcd's `storeTxnWrite.delete`: a tombstone at a new revision, or
    /// nothing (and no new revision) when the key does not exist.
    fn delete(&mut self, key: &Bytes) -> (i64, Option<KeyValue>) {
        let Some(history) = self.keys.get_mut(key) else {
            return (self.current_revision, None);
        };
        let Some(prev) = history.latest().cloned() else {
            return (self.current_revision, None);
        };
        let revision = self.current_revision + 1;
        history.versions.push(Version {
            mod_revision: revision,
            kv: None,
        });
        self.current_revision = revision;
        self.history.push_back(KvEvent {
            kind: KvEventType::Delete,
            kv: KeyValue {
                key: key.clone(),
                value: Bytes::new(),
                create_revision: 0,
                mod_revision: revision,
                version: 0,
            },
            prev_kv: Some(prev.clone()),
        });
        (revision, Some(prev))
    }

    // ANCHOR: compaction
    /// Mirrors etcd's `store.Compact`: reads and watches before `revision` fail from
    /// now on; each key keeps its newest version at or before `revision` (unless
    /// it is a tombstone) and everything after; the event history before
    /// `revision` is dropped.
    fn compact(&mut self, revision: i64) -> Result<(), KvError> {
        if revision <= self.compacted_revision {
            return Err(KvError::Compacted {
                compacted: self.compacted_revision,
            });
        }
        if revision > self.current_revision {
            return Err(KvError::FutureRevision {
                current: self.current_revision,
            });
        }
        self.compacted_revision = revision;
        self.keys.retain(|_, history| {
            let forget = history.compact(revision);
            shrink_if_sparse(&mut history.versions);
            !forget
        });
        let stale = usize::try_from(revision - self.history_start()).unwrap_or(0);
        self.history.drain(..stale.min(self.history.len()));
        if self.history.len() <= self.history.capacity() / 4 {
            self.history.shrink_to_fit();
        }
        Ok(())
    }
    // ANCHOR_END: compaction
}

/// Gives a key's spare version slots back after compaction: a key written twice
/// keeps one version but had room for four (`Vec`'s smallest growth). Only when at
/// most half is used, so a busy key does not shrink and regrow each compaction.
fn shrink_if_sparse(versions: &mut Vec<Version>) {
    if versions.len() <= versions.capacity() / 2 {
        versions.shrink_to_fit();
    }
}

/// Whether a range's end bound lies after its start (an empty or inverted range
/// reads nothing).
fn end_is_after(end: &Bound<Bytes>, start: &Bytes) -> bool {
    match end {
        Bound::Excluded(end) => end > start,
        Bound::Included(end) => end >= start,
        Bound::Unbounded => true,
    }
}

/// What one watcher watches, shared with the writers that wake it.
#[derive(Debug)]
struct WatcherShared {
    key: Bytes,
    prefix: bool,
    /// Woken by a write in range, a progress request, or nothing (a stored permit).
    notify: Notify,
    /// `RequestProgress` was called and not answered yet.
    progress_requested: AtomicBool,
}

impl WatcherShared {
    fn matches(&self, key: &[u8]) -> bool {
        if self.prefix {
            key.starts_with(&self.key)
        } else {
            key == self.key.as_ref()
        }
    }
}

/// The store behind an [`EmbeddedKv`], shared with its open watches.
#[derive(Debug)]
struct Inner {
    state: RwLock<MvccState>,
    watchers: Mutex<HashMap<u64, Arc<WatcherShared>>>,
    next_watcher_id: AtomicU64,
    options: EmbeddedKvOptions,
    /// Cancelled when the [`EmbeddedKv`] is dropped: open watches end with an
    /// error.
    closed: CancellationToken,
}

impl Inner {
    /// Wakes every watcher whose range holds `key` (etcd's `watchableStore.notify`).
    fn notify_watchers(&self, key: &[u8]) {
        for watcher in self.watchers.lock().values() {
            if watcher.matches(key) {
                watcher.notify.notify_one();
            }
        }
    }
}

/// Mirrors etcd's MVCC store (`mvcc.watchableStore`) behind the v3 API, in process:
/// the default [`Kv`] backend.
///
/// Every watcher reads the one shared event history at its own pace, as etcd's
/// *unsynced* watchers catch up from the backend: a slow watcher never blocks a
/// writer and loses no event, and a compaction that overtakes it cancels it with
/// `compact_revision`.
///
/// Dropping it ends every open watch with an [`KvError::Unavailable`] item, like a
/// lost etcd connection.
#[derive(Debug)]
pub struct EmbeddedKv {
    inner: Arc<Inner>,
}

impl Default for EmbeddedKv {
    fn default() -> Self {
        EmbeddedKv::new()
    }
}

impl Drop for EmbeddedKv {
    fn drop(&mut self) {
        self.inner.closed.cancel();
    }
}

impl EmbeddedKv {
    /// A fresh store at revision 1 with etcd's default options, like a new etcd
    /// cluster.
    pub fn new() -> Self {
        EmbeddedKv::with_options(EmbeddedKvOptions::default())
    }

    /// A fresh store with these options.
    pub fn with_options(options: EmbeddedKvOptions) -> Self {
        EmbeddedKv {
            inner: Arc::new(Inner {
                state: RwLock::new(MvccState::new()),
                watchers: Mutex::new(HashMap::new()),
                next_watcher_id: AtomicU64::new(1),
                options,
                closed: CancellationToken::new(),
            }),
        }
    }

    /// The newest revision (etcd's `currentRev`).
    pub fn current_revision(&self) -> i64 {
        self.inner.state.read().current_revision
    }

    /// The revision of the last compaction, 0 before any (etcd's `compactMainRev`).
    pub fn compacted_revision(&self) -> i64 {
        self.inner.state.read().compacted_revision
    }

    /// How many watches are open (for leak tests: dropping a [`KvWatch`] removes its
    /// watcher).
    pub fn watcher_count(&self) -> usize {
        self.inner.watchers.lock().len()
    }

    fn put_now(&self, key: Bytes, value: Bytes) -> (i64, Option<KeyValue>) {
        let result = self.inner.state.write().put(key.clone(), value);
        self.inner.notify_watchers(&key);
        result
    }

    fn delete_now(&self, key: &Bytes) -> (i64, Option<KeyValue>) {
        let (revision, prev) = self.inner.state.write().delete(key);
        if prev.is_some() {
            self.inner.notify_watchers(key);
        }
        (revision, prev)
    }

    fn txn_now(&self, key: Bytes, compare: Compare, op: TxnOp) -> TxnResponse {
        let mut state = self.inner.state.write();
        let holds = match compare {
            Compare::ModRevision(expected) => {
                state.mod_revision_of(&key) == expected
            }
            Compare::Version(expected) => state.version_of(&key) == expected,
        };
        if !holds {
            return TxnResponse {
                succeeded: false,
                header_revision: state.current_revision,
                kv: state.keys.get(&key).and_then(KeyHistory::latest).cloned(),
            };
        }
        let (header_revision, kv, wrote) = match op {
            TxnOp::Put(value) => {
                let (revision, _) = state.put(key.clone(), value);
                (revision, None, true)
            }
            TxnOp::Delete => {
                let (revision, prev) = state.delete(&key);
                let wrote = prev.is_some();
                (revision, prev, wrote)
            }
        };
        drop(state);
        if wrote {
            self.inner.notify_watchers(&key);
        }
        TxnResponse {
            succeeded: true,
            header_revision,
            kv,
        }
    }

    fn open_watch(&self, request: WatchRequest) -> KvWatch {
        let shared = Arc::new(WatcherShared {
            key: request.key,
            prefix: request.prefix,
            notify: Notify::new(),
            progress_requested: AtomicBool::new(false),
        });
        let id = self.inner.next_watcher_id.fetch_add(1, Ordering::Relaxed);
        self.inner.watchers.lock().insert(id, Arc::clone(&shared));
        let next_revision = if request.start_revision > 0 {
            request.start_revision
        } else {
            // etcd's `currentRev + 1`; saturating (the store never gets there).
            self.current_revision().saturating_add(1)
        };
        let progress_ticker = request.progress_notify.then(|| {
            let period = self
                .inner
                .options
                .progress_notify_interval
                .max(Duration::from_millis(1));
            let mut ticker =
                tokio::time::interval_at(Instant::now() + period, period);
            ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
            ticker
        });
        let cursor = WatchCursor {
            inner: Arc::clone(&self.inner),
            shared: Arc::clone(&shared),
            id,
            next_revision,
            prev_kv: request.prev_kv,
            progress_ticker,
            sent_events_since_tick: false,
            progress_due: false,
            finished: false,
        };
        let responses = futures::stream::unfold(cursor, |mut cursor| async move {
            let item = cursor.next_response().await?;
            Some((item, cursor))
        })
        .boxed();
        KvWatch {
            responses,
            progress: Arc::new(EmbeddedProgress {
                watcher: Arc::downgrade(&shared),
            }),
        }
    }
}

/// What a watcher does next, decided under the state's read lock.
#[derive(Debug)]
enum Step {
    /// Send this response.
    Respond(WatchResponse),
    /// Scanned some history without a match; look again (after letting writers in).
    Scanned,
    /// Up to date, nothing to send: wait for a write, a tick or a progress request.
    Wait,
}

/// One open watch reading the shared history: etcd's `watcher` plus the
/// `serverWatchStream` state for it (its progress flag).
#[derive(Debug)]
struct WatchCursor {
    inner: Arc<Inner>,
    shared: Arc<WatcherShared>,
    id: u64,
    /// The first revision not yet scanned (etcd's `watcher.minRev`).
    next_revision: i64,
    prev_kv: bool,
    progress_ticker: Option<Interval>,
    /// etcd's `serverWatchStream.progress[id] == false`: events went out since the
    /// last tick.
    sent_events_since_tick: bool,
    /// A tick found the watcher idle: send a progress notification once up to date.
    progress_due: bool,
    finished: bool,
}

impl Drop for WatchCursor {
    fn drop(&mut self) {
        self.inner.watchers.lock().remove(&self.id);
    }
}

impl WatchCursor {
    /// The next message of the watch, or `None` once it ended.
    async fn next_response(&mut self) -> Option<Result<WatchResponse, KvError>> {
        if self.finished {
            return None;
        }
        let inner = Arc::clone(&self.inner);
        loop {
            let step = {
                let state = inner.state.read();
                self.step(&state)
            };
            match step {
                Step::Respond(response) => {
                    self.finished = response.canceled;
                    return Some(Ok(response));
                }
                Step::Scanned => continue,
                Step::Wait => {}
            }
            let ticker = self.progress_ticker.as_mut();
            tokio::select! {
                biased;
                () = self.inner.closed.cancelled() => {
                    self.finished = true;
                    return Some(Err(KvError::Unavailable(
                        "the embedded kv store was dropped".into(),
                    )));
                }
                () = self.shared.notify.notified() => {}
                () = tick(ticker) => {
                    self.progress_due = !self.sent_events_since_tick;
                    self.sent_events_since_tick = false;
                }
            }
        }
    }

    // ANCHOR: watcher_step
    /// Mirrors etcd's `watchableStore.syncWatchers` for one watcher, plus the
    /// progress rules of `serverWatchStream`: cancel with `compact_revision` if
    /// compaction overtook the watcher; else send the next batch of events in
    /// its range; else, once up to date, answer a progress request or a due tick
    /// with the current revision.
    fn step(&mut self, state: &MvccState) -> Step {
        if self.next_revision < state.compacted_revision {
            return Step::Respond(WatchResponse {
                header_revision: state.current_revision,
                compact_revision: state.compacted_revision,
                canceled: true,
                ..WatchResponse::default()
            });
        }
        let max_events = self.inner.options.max_events_per_response.max(1);
        let (events, scanned_to) = select_events(
            state,
            &self.shared,
            self.next_revision,
            self.prev_kv,
            max_events,
        );
        // Saturating: a watcher past `i64::MAX` has nothing left to scan.
        self.next_revision = scanned_to.saturating_add(1);
        if !events.is_empty() {
            self.sent_events_since_tick = true;
            self.progress_due = false;
            return Step::Respond(WatchResponse {
                header_revision: scanned_to,
                events,
                ..WatchResponse::default()
            });
        }
        if self.next_revision <= state.current_revision {
            return Step::Scanned;
        }
        let requested = self.shared.progress_requested.swap(false, Ordering::AcqRel);
        if requested || std::mem::take(&mut self.progress_due) {
            return Step::Respond(WatchResponse {
                header_revision: state.current_revision,
                ..WatchResponse::default()
            });
        }
        Step::Wait
    }
    // ANCHOR_END: watcher_step
}

/// The events in `watcher`'s range from revision `from` on, oldest first, at most
/// `max_events`, scanning at most [`SCAN_BUDGET`] revisions; and the last revision
/// scanned (`from - 1` when nothing was). `prev_kv` is filled as etcd's watch server
/// fills it: for every event that is not a create, the key's state just before
/// `mod_revision`, when that revision is not compacted. A delete at exactly the
/// compacted revision is skipped, as etcd's compaction loses it.
fn select_events(
    state: &MvccState,
    watcher: &WatcherShared,
    from: i64,
    prev_kv: bool,
    max_events: usize,
) -> (Vec<KvEvent>, i64) {
    let mut events = Vec::new();
    let mut revision = from.max(state.history_start());
    let last = state
        .current_revision
        .min(revision.saturating_add(SCAN_BUDGET as i64 - 1));
    let mut scanned_to = from.saturating_sub(1);
    while revision <= last && events.len() < max_events {
        if let Some(event) = state.event_at(revision)
            && watcher.matches(&event.kv.key)
            && !compacted_away(state, event)
        {
            let keep_prev =
                prev_kv && !event.is_create() && revision > state.compacted_revision;
            events.push(KvEvent {
                kind: event.kind,
                kv: event.kv.clone(),
                prev_kv: if keep_prev {
                    event.prev_kv.clone()
                } else {
                    None
                },
            });
        }
        scanned_to = revision;
        let Some(next) = revision.checked_add(1) else {
            break;
        };
        revision = next;
    }
    (events, scanned_to)
}

/// Whether etcd's compaction removed this event from its backend although the
/// revision is still readable: `keyIndex.compact` keeps the newest revision at or
/// before the compaction point unless it is a tombstone, so a delete at exactly the
/// compacted revision is never replayed.
fn compacted_away(state: &MvccState, event: &KvEvent) -> bool {
    event.kind == KvEventType::Delete
        && event.kv.mod_revision == state.compacted_revision
}

/// Waits for the next tick, or forever when the watch asked for no progress
/// notifications.
async fn tick(ticker: Option<&mut Interval>) {
    match ticker {
        Some(ticker) => {
            ticker.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Mirrors etcd's `Watcher.RequestProgress` for one embedded watch.
#[derive(Debug)]
struct EmbeddedProgress {
    watcher: Weak<WatcherShared>,
}

impl ProgressRequester for EmbeddedProgress {
    fn request_progress(&self) -> BoxFuture<'_, Result<(), KvError>> {
        let result = match self.watcher.upgrade() {
            Some(watcher) => {
                watcher.progress_requested.store(true, Ordering::Release);
                watcher.notify.notify_one();
                Ok(())
            }
            None => Err(KvError::Request("the watch is closed".into())),
        };
        Box::pin(std::future::ready(result))
    }
}

impl Kv for EmbeddedKv {
    fn range(
        &self,
        request: RangeRequest,
    ) -> BoxFuture<'_, Result<RangeResponse, KvError>> {
        let result = self.inner.state.read().range(&request);
        Box::pin(std::future::ready(result))
    }

    fn put(
        &self,
        key: Bytes,
        value: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>> {
        Box::pin(std::future::ready(Ok(self.put_now(key, value))))
    }

    fn delete(
        &self,
        key: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>> {
        Box::pin(std::future::ready(Ok(self.delete_now(&key))))
    }

    fn txn(
        &self,
        key: Bytes,
        compare: Compare,
        op: TxnOp,
    ) -> BoxFuture<'_, Result<TxnResponse, KvError>> {
        Box::pin(std::future::ready(Ok(self.txn_now(key, compare, op))))
    }

    fn compact(&self, revision: i64) -> BoxFuture<'_, Result<(), KvError>> {
        let result = self.inner.state.write().compact(revision);
        if result.is_ok() {
            // Wake every watcher: one that fell behind the compaction must be
            // cancelled now.
            for watcher in self.inner.watchers.lock().values() {
                watcher.notify.notify_one();
            }
        }
        Box::pin(std::future::ready(result))
    }

    fn watch(
        &self,
        request: WatchRequest,
    ) -> BoxFuture<'_, Result<KvWatch, KvError>> {
        Box::pin(async move { Ok(self.open_watch(request)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_secs(10);

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn watch_all(start_revision: i64) -> WatchRequest {
        WatchRequest {
            key: b("/"),
            prefix: true,
            start_revision,
            ..WatchRequest::default()
        }
    }

    async fn next(watch: &mut KvWatch) -> Option<Result<WatchResponse, KvError>> {
        tokio::time::timeout(WAIT, watch.responses.next())
            .await
            .expect("no watch message in time")
    }

    #[test]
    fn key_history_reads_the_version_at_a_revision() {
        let mut state = MvccState::new();
        state.put(b("/k"), b("v1")); // 2
        state.put(b("/other"), b("o")); // 3
        state.put(b("/k"), b("v2")); // 4
        state.delete(&b("/k")); // 5
        state.put(b("/k"), b("v3")); // 6
        let history = state.keys.get(b"/k".as_slice()).expect("key");
        let value_at = |revision| history.at(revision).map(|kv| kv.value.clone());
        assert_eq!(value_at(1), None);
        assert_eq!(value_at(2), Some(b("v1")));
        assert_eq!(value_at(3), Some(b("v1")));
        assert_eq!(value_at(4), Some(b("v2")));
        assert_eq!(value_at(5), None);
        let v3 = history.at(6).expect("v3");
        assert_eq!((v3.create_revision, v3.version), (6, 1), "a new generation");
        assert_eq!(state.history_start(), 2);
        assert_eq!(state.event_at(5).map(|e| e.kind), Some(KvEventType::Delete));
        assert!(state.event_at(1).is_none() && state.event_at(7).is_none());
    }

    mod ex5_compact_key_history {
        use super::*;

        fn versions(history: &KeyHistory) -> Vec<(i64, bool)> {
            history
                .versions
                .iter()
                .map(|v| (v.mod_revision, v.kv.is_some()))
                .collect()
        }

        #[test]
        fn ex5_compact_key_history_and_the_event_history_before_the_revision_go() {
            let mut state = MvccState::new();
            for value in ["1", "2", "3", "4"] {
                state.put(b("/k"), b(value)); // 2..=5
            }
            state.compact(4).expect("compact");
            assert_eq!(state.history_start(), 4);
            assert_eq!(state.history.len(), 2);
            assert!(state.event_at(3).is_none());
            assert_eq!(state.event_at(4).map(|e| e.kv.value.clone()), Some(b("3")));
        }

        #[test]
        fn ex5_compact_key_history_keeps_the_newest_version_at_or_before_the_revision()
         {
            let mut state = MvccState::new();
            state.put(b("/k"), b("v1")); // 2
            state.put(b("/k"), b("v2")); // 3
            state.put(b("/x"), b("x")); // 4
            state.put(b("/k"), b("v3")); // 5
            let mut history = state.keys.remove(b"/k".as_slice()).expect("key");
            assert!(!history.compact(4), "the key still has versions");
            assert_eq!(versions(&history), vec![(3, true), (5, true)]);
            assert_eq!(history.at(4).map(|kv| kv.value.clone()), Some(b("v2")));
            assert!(!history.compact(5));
            assert_eq!(versions(&history), vec![(5, true)]);
        }

        #[test]
        fn ex5_compact_key_history_before_the_first_version_keeps_everything() {
            let mut state = MvccState::new();
            state.put(b("/x"), b("x")); // 2
            state.put(b("/k"), b("v1")); // 3
            let mut history = state.keys.remove(b"/k".as_slice()).expect("key");
            assert!(!history.compact(2));
            assert_eq!(versions(&history), vec![(3, true)]);
        }

        #[test]
        fn ex5_compact_key_history_drops_a_tombstone_at_or_before_the_revision() {
            let mut state = MvccState::new();
            state.put(b("/k"), b("v1")); // 2
            state.delete(&b("/k")); // 3
            state.put(b("/k"), b("v2")); // 4
            state.delete(&b("/k")); // 5
            let mut history = state.keys.remove(b"/k".as_slice()).expect("key");
            assert!(!history.compact(3), "the second generation stays");
            assert_eq!(versions(&history), vec![(4, true), (5, false)]);
            assert!(history.compact(5), "a deleted key is forgotten");
        }

        #[test]
        fn ex5_compact_key_history_forgets_deleted_keys_in_the_store() {
            let mut state = MvccState::new();
            state.put(b("/gone"), b("g")); // 2
            state.delete(&b("/gone")); // 3
            state.put(b("/kept"), b("k")); // 4
            state.compact(4).expect("compact");
            let keys: Vec<_> = state.keys.keys().cloned().collect();
            assert_eq!(keys, vec![b("/kept")]);
            let read = state
                .range(&RangeRequest::prefix("/").at_revision(4))
                .expect("read at the compacted revision");
            assert_eq!(read.count, 1);
        }
    }

    #[tokio::test]
    async fn a_slow_watcher_loses_nothing_and_never_blocks_the_writer() {
        let kv = EmbeddedKv::with_options(
            EmbeddedKvOptions::default().with_max_events_per_response(100),
        );
        let mut watch = kv.watch(watch_all(0)).await.expect("watch");
        // Nobody reads the watch while 10,000 writes go in: none of them waits.
        for i in 0..10_000 {
            kv.put(b(&format!("/k{}", i % 7)), b(&i.to_string()))
                .await
                .expect("put");
        }
        let mut revisions = Vec::new();
        while revisions.len() < 10_000 {
            let response = next(&mut watch).await.expect("open").expect("no error");
            assert!(response.events.len() <= 100, "batches are capped");
            assert!(!response.events.is_empty());
            assert_eq!(
                response.header_revision,
                response.events.last().map_or(0, |e| e.kv.mod_revision)
            );
            revisions.extend(response.events.iter().map(|e| e.kv.mod_revision));
        }
        let expected: Vec<i64> = (2..10_002).collect();
        assert_eq!(revisions, expected);
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_from_the_last_possible_revision_waits_without_overflow() {
        let kv = EmbeddedKv::new();
        let mut watch = kv.watch(watch_all(i64::MAX)).await.expect("watch");
        kv.put(b("/a"), b("1")).await.expect("put");
        // Nothing at or after i64::MAX exists: no response, no panic.
        let waited =
            tokio::time::timeout(Duration::from_secs(60), watch.responses.next())
                .await;
        assert!(waited.is_err(), "{waited:?}");
        // The cursor's arithmetic at the edge saturates instead of wrapping.
        let state = kv.inner.state.read();
        let shared = WatcherShared {
            key: b("/"),
            prefix: true,
            notify: Notify::new(),
            progress_requested: AtomicBool::new(false),
        };
        let (events, scanned_to) = select_events(&state, &shared, i64::MAX, true, 8);
        assert!(events.is_empty());
        assert_eq!(scanned_to, i64::MAX - 1);
    }

    #[tokio::test]
    async fn dropping_a_watch_removes_its_watcher() {
        let kv = EmbeddedKv::new();
        let first = kv.watch(watch_all(0)).await.expect("watch");
        let second = kv.watch(watch_all(0)).await.expect("watch");
        assert_eq!(kv.watcher_count(), 2);
        drop(first);
        assert_eq!(kv.watcher_count(), 1);
        let KvWatch {
            responses,
            progress,
        } = second;
        drop(responses);
        assert_eq!(kv.watcher_count(), 0);
        assert!(
            progress.request_progress().await.is_err(),
            "a closed watch cannot answer"
        );
    }

    #[tokio::test]
    async fn dropping_the_store_ends_open_watches_with_an_error() {
        let kv = EmbeddedKv::new();
        let mut watch = kv.watch(watch_all(0)).await.expect("watch");
        drop(kv);
        assert!(matches!(
            next(&mut watch).await,
            Some(Err(KvError::Unavailable(_)))
        ));
        assert!(next(&mut watch).await.is_none());
    }

    #[test]
    fn compaction_gives_the_spare_room_of_the_history_and_the_keys_back() {
        let mut state = MvccState::new();
        for i in 0..10_000 {
            let key = b(&format!("/k{i}"));
            state.put(key.clone(), b("created"));
            state.put(key, b("updated"));
        }
        let before = state.history.capacity();
        assert!(before >= 20_000);
        let newest = state.current_revision;
        state.compact(newest).expect("compact");
        assert_eq!(state.history.len(), 1, "only the newest event stays");
        assert!(state.history.capacity() < before / 100, "the ring shrank");
        assert!(
            state
                .keys
                .values()
                .all(|history| history.versions.capacity() == 1),
            "each key keeps room for its one version"
        );
        // Every old value is unreferenced: the newest version holds the only copy.
        let kept = state
            .keys
            .get(b"/k0".as_slice())
            .and_then(KeyHistory::latest);
        assert_eq!(kept.map(|kv| kv.value.clone()), Some(b("updated")));
    }

    #[test]
    fn compaction_of_a_deleted_burst_frees_every_byte_it_took() {
        // Measured by the workspace's allocator on this thread: what the store
        // still holds of a burst of 2,000 values of 1 KiB, each written twice and
        // deleted, once compacted past the deletes.
        let mut state = MvccState::new();
        let value = Bytes::from(vec![b'x'; 1024]);
        let held = workspace_allocator::measure(|| {
            for i in 0..2_000 {
                let key = b(&format!("/registry/pods/default/pod-{i:05}"));
                state.put(key.clone(), Bytes::copy_from_slice(&value));
                state.put(key.clone(), Bytes::copy_from_slice(&value));
                state.delete(&key);
            }
            let newest = state.current_revision;
            state.compact(newest).expect("compact");
        });
        assert!(held.bytes_max > 4_000_000, "the burst took {held:?}");
        // Left: the newest delete event (its key and the deleted value, which a
        // watcher at the last revision may still be sent) and the ring's one slot.
        assert!(
            held.bytes_current < 2 * 1024 + 512,
            "{} bytes still held after compaction: {held:?}",
            held.bytes_current
        );
        assert_eq!(state.keys.len(), 0, "every deleted key is forgotten");
    }

    #[tokio::test]
    async fn compaction_cancels_a_watcher_it_overtakes() {
        let kv = EmbeddedKv::with_options(
            EmbeddedKvOptions::default().with_max_events_per_response(1),
        );
        let mut watch = kv.watch(watch_all(0)).await.expect("watch");
        for value in ["1", "2", "3", "4"] {
            kv.put(b("/k"), b(value)).await.expect("put"); // 2..=5
        }
        let first = next(&mut watch).await.expect("open").expect("ok");
        assert_eq!(first.events.len(), 1);
        kv.compact(5).await.expect("compact");
        let cancelled = next(&mut watch).await.expect("open").expect("ok");
        assert_eq!((cancelled.compact_revision, cancelled.canceled), (5, true));
        assert!(next(&mut watch).await.is_none());
    }

    #[tokio::test]
    async fn requested_progress_waits_until_the_watcher_is_up_to_date() {
        let kv = EmbeddedKv::with_options(
            EmbeddedKvOptions::default().with_max_events_per_response(1),
        );
        for value in ["1", "2", "3"] {
            kv.put(b("/k"), b(value)).await.expect("put"); // 2..=4
        }
        let mut watch = kv.watch(watch_all(2)).await.expect("watch");
        watch.progress.request_progress().await.expect("request");
        let mut headers = Vec::new();
        for _ in 0..4 {
            let response = next(&mut watch).await.expect("open").expect("ok");
            headers.push((response.header_revision, response.events.len()));
        }
        assert_eq!(headers, vec![(2, 1), (3, 1), (4, 1), (4, 0)]);
    }

    #[tokio::test(start_paused = true)]
    async fn progress_notifications_come_each_idle_interval() {
        let interval = Duration::from_secs(1);
        let kv = EmbeddedKv::with_options(
            EmbeddedKvOptions::default().with_progress_notify_interval(interval),
        );
        kv.put(b("/elsewhere"), b("x")).await.expect("put"); // 2
        let started = Instant::now();
        let mut watch = kv
            .watch(WatchRequest {
                key: b("/w/"),
                prefix: true,
                progress_notify: true,
                ..WatchRequest::default()
            })
            .await
            .expect("watch");
        let progress = next(&mut watch).await.expect("open").expect("ok");
        assert!(progress.is_progress_notify());
        assert_eq!(progress.header_revision, 2);
        assert_eq!(started.elapsed(), interval);

        // An event in the next interval: that tick sends no progress notification.
        kv.put(b("/w/1"), b("a")).await.expect("put"); // 3
        let event = next(&mut watch).await.expect("open").expect("ok");
        assert_eq!(event.events.len(), 1);
        let quiet =
            tokio::time::timeout(interval + interval / 2, watch.responses.next())
                .await;
        assert!(quiet.is_err(), "no progress right after events: {quiet:?}");
        let progress = next(&mut watch).await.expect("open").expect("ok");
        assert_eq!(progress.header_revision, 3);
        assert_eq!(started.elapsed(), interval * 3);
    }

    #[tokio::test(start_paused = true)]
    async fn no_progress_notifications_unless_asked() {
        let kv = EmbeddedKv::with_options(
            EmbeddedKvOptions::default()
                .with_progress_notify_interval(Duration::from_secs(1)),
        );
        let mut watch = kv.watch(watch_all(0)).await.expect("watch");
        let quiet =
            tokio::time::timeout(Duration::from_secs(5), watch.responses.next())
                .await;
        assert!(quiet.is_err());
    }
}
