//! The etcdWatcher: Kubernetes 1.5's `pkg/storage/etcd/etcd_watcher.go`, which turns
//! an etcd v2 watch into a `watch.Interface`.
//!
//! Two tasks and three channels, in the order the events flow (source document 002):
//!
//! ```text
//!  etcd v2 (GET, then long polls ?wait=true&waitIndex=N)
//!     │  etcd_watch            (task 1: the only caller of etcd)
//!     ├── etcd_incoming  mpsc(100): Response ──┐
//!     └── etcd_error     mpsc(1):   ClientError ┤
//!                                              │  translate → send_result → send_add /
//!                                              │            send_modify / send_delete → emit
//!                                              ▼  (task 2)
//!                               outgoing  mpsc(100): WatchEvent<Object>
//!                                              │
//!                                              ▼  result_chan() / into_watch()
//!                                      the consumer (a Reflector)
//! ```
//!
//! | Go (`etcd_watcher.go`, 1.5)       | Rust                                  |
//! |-----------------------------------|---------------------------------------|
//! | `etcdWatcher`                     | [`EtcdWatcher`]                       |
//! | `newEtcdWatcher` + `go etcdWatch` | [`new_etcd_watcher`]                  |
//! | `etcdWatch`                       | `EtcdWatcher::etcd_watch` (private)   |
//! | `etcdGetInitialWatchState`        | `etcd_get_initial_watch_state`        |
//! | `translate`, `sendResult`, …      | private methods of the same names     |
//! | `ResultChan()` / `Stop()`         | [`EtcdWatcher::result_chan`] / [`EtcdWatcher::stop`] |
//! | `storage.HighWaterMark`           | [`HighWaterMark`]                     |
//! | `etcdCache`                       | [`EtcdCache`]                         |
//! | `storage.FilterFunc`, `SimpleFilter` | [`FilterFunc`], [`simple_filter`]  |
//!
//! # Resource versions
//!
//! An object's `metadata.resourceVersion` is the etcd index of the node it came from
//! (`modifiedIndex`); a deleted object carries the delete's index, so a client can
//! resume the watch right after it. Resource version 0 means "the current state
//! first": every existing object arrives as `get` (Added, or Modified for an object
//! updated since its creation, the 1.5 rule of `sendAdd`), then the changes after
//! the GET's `X-Etcd-Index`.
//!
//! # Failure
//!
//! etcd v2 keeps only the last 1000 events. A watch from an older index fails with
//! etcd error 401, which becomes a 410 Expired Status event: the client must list
//! again. Any other failure (etcd down or killed, a bad answer) becomes a 500
//! InternalError event. After the error event the channel closes. A response that
//! cannot be turned into an event (no node, an unknown action, a value that does not
//! decode) is logged and skipped: stopping the watch on a bad value would leave a
//! client that resumes from its resource version stuck before it.
//!
//! # Stopping
//!
//! [`EtcdWatcher::stop`] may come at any time, even before `etcd_watch` has started;
//! it cancels the long poll at once (the connection is dropped). Dropping the
//! [`Watch`] from [`EtcdWatcher::into_watch`] stops the watcher too.
//! [`EtcdWatcher::stop_and_wait`] also waits until both tasks have ended, like Go's
//! `Stop` waiting on `wg`.
//!
//! Upstream: <https://github.com/kubernetes/kubernetes/blob/release-1.5/pkg/storage/etcd/etcd_watcher.go>

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use crate::Watch;
use apimachinery::watch::WatchEvent;
use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::client::{
    ClientError, ECODE_KEY_NOT_FOUND, EtcdClient, GetOptions, Node, Response,
    is_etcd_watch_expired,
};
use crate::StorageError;
use crate::{Object, ResourceInfo, SelectionPredicate};

/// etcd's action for a key created with `prevExist=false` (Go's `EtcdCreate`).
pub const ETCD_CREATE: &str = "create";
/// The action the watcher gives the nodes of its initial GET (Go's `EtcdGet`).
pub const ETCD_GET: &str = "get";
/// etcd's action for an unconditional write (Go's `EtcdSet`).
pub const ETCD_SET: &str = "set";
/// etcd's action for a write with `prevIndex` or `prevValue` (Go's `EtcdCAS`).
pub const ETCD_CAS: &str = "compareAndSwap";
/// etcd's action for a delete (Go's `EtcdDelete`).
pub const ETCD_DELETE: &str = "delete";
/// etcd's action for a delete with `prevIndex` or `prevValue` (Go's `EtcdCAD`).
pub const ETCD_CAD: &str = "compareAndDelete";
/// etcd's action for a key whose TTL ran out (Go's `EtcdExpire`).
pub const ETCD_EXPIRE: &str = "expire";

/// Buffer of `etcd_incoming` and of `outgoing` (Go: "The 100 is mostly arbitrary--we
/// know it goes as high as 50").
pub const CHANNEL_BUFFER: usize = 100;

/// The message of the 410 Expired event, as the apiserver words it.
pub const WATCH_EXPIRED_MESSAGE: &str =
    "The resourceVersion for the provided watch is too old.";

/// Mirrors `storage.FilterFunc`: whether the watch wants an object.
pub type FilterFunc = Arc<dyn Fn(&Object) -> bool + Send + Sync>;

/// Mirrors the 1.5 `includeFunc`: whether a key belongs to the watch (checked before
/// decoding).
pub type IncludeFunc = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Mirrors `TransformFunc`: changes an object after decoding; an error skips the
/// object.
pub type TransformFunc = Arc<dyn Fn(Object) -> Result<Object, String> + Send + Sync>;

/// Mirrors the `emit func(watch.Event)` field: sends one event on. Injectable for
/// testing.
pub(crate) type EmitFunc = Arc<
    dyn for<'a> Fn(&'a EtcdWatcher, WatchEvent<Object>) -> BoxFuture<'a, ()>
        + Send
        + Sync,
>;

/// Mirrors `storage.SimpleFilter(pred)`: the filter of a selection predicate for
/// `info`.
pub fn simple_filter(
    info: ResourceInfo,
    predicate: SelectionPredicate,
) -> FilterFunc {
    if predicate.is_everything() {
        return everything();
    }
    Arc::new(move |obj: &Object| predicate.matches(&info, obj))
}

/// Mirrors `storage.Everything`'s filter: every object passes.
pub fn everything() -> FilterFunc {
    Arc::new(|_: &Object| true)
}

/// Mirrors `storage.HighWaterMark`: the highest queue length seen, updated
/// atomically.
#[derive(Debug, Default)]
pub struct HighWaterMark(AtomicI64);

impl HighWaterMark {
    /// Mirrors `HighWaterMark.Update`: records `current` if it is a new high and
    /// then returns true (the caller logs it); otherwise returns false.
    pub fn update(&self, current: i64) -> bool {
        let mut old = self.0.load(Ordering::Relaxed);
        loop {
            if current <= old {
                return false;
            }
            match self.0.compare_exchange(
                old,
                current,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => old = actual,
            }
        }
    }

    /// The highest value recorded.
    pub fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Mirrors the 1.5 `etcdCache` (the etcd helper's cache of decoded objects by etcd
/// index): an object decoded once at an index is shared by every watcher that sees
/// that index.
///
/// Memory usage: at most `capacity` objects; the oldest insert goes first. Capacity
/// 0 disables it.
#[derive(Debug, Default)]
pub struct EtcdCache {
    capacity: usize,
    entries: Mutex<CacheEntries>,
}

#[derive(Debug, Default)]
struct CacheEntries {
    by_index: HashMap<u64, Arc<Object>>,
    order: VecDeque<u64>,
}

impl EtcdCache {
    /// A cache of at most `capacity` objects.
    pub fn new(capacity: usize) -> Self {
        EtcdCache {
            capacity,
            entries: Mutex::new(CacheEntries::default()),
        }
    }

    /// A cache that keeps nothing.
    pub fn disabled() -> Self {
        EtcdCache::new(0)
    }

    /// Mirrors `etcdCache.getFromCache`: the object decoded at `index`, if kept.
    pub fn get_from_cache(&self, index: u64) -> Option<Arc<Object>> {
        self.entries.lock().by_index.get(&index).cloned()
    }

    /// Mirrors `etcdCache.addToCache`: keeps the object decoded at `index`.
    pub fn add_to_cache(&self, index: u64, obj: Arc<Object>) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock();
        if entries.by_index.insert(index, obj).is_none() {
            entries.order.push_back(index);
        }
        while entries.order.len() > self.capacity {
            if let Some(oldest) = entries.order.pop_front() {
                entries.by_index.remove(&oldest);
            }
        }
    }

    /// How many objects are kept.
    pub fn len(&self) -> usize {
        self.entries.lock().by_index.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Mirrors the `encoding runtime.Codec` field: values are JSON Kubernetes objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonCodec;

impl JsonCodec {
    /// Mirrors `runtime.Decode(codec, data)`.
    pub fn decode(&self, data: &[u8]) -> Result<Object, serde_json::Error> {
        serde_json::from_slice(data)
    }
}

/// Mirrors the `versioner storage.Versioner` field (`APIObjectVersioner`): the
/// resource version of an object is its etcd index.
#[derive(Clone, Copy, Debug, Default)]
pub struct APIObjectVersioner;

impl APIObjectVersioner {
    /// Mirrors `Versioner.UpdateObject`: sets `metadata.resourceVersion` to `index`.
    pub fn update_object(&self, obj: &mut Object, index: u64) {
        obj.metadata.resource_version = Some(index.to_string());
    }
}

/// What [`new_etcd_watcher`] takes besides the client, key and resource version: the
/// arguments of Go's `newEtcdWatcher`.
#[derive(Clone)]
pub struct EtcdWatcherConfig {
    /// Watch a directory recursively (`WatchList`) instead of one key (`Watch`).
    pub list: bool,
    /// Read the initial state through raft (`quorum=true`).
    pub quorum: bool,
    /// Keys to skip before decoding; `None` includes every key.
    pub include: Option<IncludeFunc>,
    /// Which objects the watch wants.
    pub filter: FilterFunc,
    /// Applied to each decoded object.
    pub transform: Option<TransformFunc>,
    /// Decoded objects by index, shareable between watchers.
    pub cache: Arc<EtcdCache>,
}

impl Default for EtcdWatcherConfig {
    fn default() -> Self {
        EtcdWatcherConfig {
            list: false,
            quorum: false,
            include: None,
            filter: everything(),
            transform: None,
            cache: Arc::new(EtcdCache::disabled()),
        }
    }
}

impl fmt::Debug for EtcdWatcherConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdWatcherConfig")
            .field("list", &self.list)
            .field("quorum", &self.quorum)
            .field("include", &self.include.is_some())
            .field("transform", &self.transform.is_some())
            .finish_non_exhaustive()
    }
}

impl EtcdWatcherConfig {
    /// Watch a directory recursively.
    #[must_use]
    pub fn list(mut self, list: bool) -> Self {
        self.list = list;
        self
    }

    /// Read the initial state through raft.
    #[must_use]
    pub fn quorum(mut self, quorum: bool) -> Self {
        self.quorum = quorum;
        self
    }

    /// Keep only objects `filter` accepts.
    #[must_use]
    pub fn filter(mut self, filter: FilterFunc) -> Self {
        self.filter = filter;
        self
    }

    /// Keep only objects a selection predicate selects ([`simple_filter`]).
    #[must_use]
    pub fn predicate(
        self,
        info: ResourceInfo,
        predicate: SelectionPredicate,
    ) -> Self {
        self.filter(simple_filter(info, predicate))
    }

    /// Skip keys `include` rejects.
    #[must_use]
    pub fn include(mut self, include: IncludeFunc) -> Self {
        self.include = Some(include);
        self
    }

    /// Transform each decoded object.
    #[must_use]
    pub fn transform(mut self, transform: TransformFunc) -> Self {
        self.transform = Some(transform);
        self
    }

    /// Share a cache of decoded objects.
    #[must_use]
    pub fn cache(mut self, cache: Arc<EtcdCache>) -> Self {
        self.cache = cache;
        self
    }
}

/// A Go channel kept in the struct, as Go keeps both ends in `etcdWatcher`: the task
/// that produces takes (or uses) the sender, the one that consumes takes the
/// receiver. Dropping the sender is Go's `close(ch)`.
struct Chan<T> {
    sender: Mutex<Option<mpsc::Sender<T>>>,
    receiver: Mutex<Option<mpsc::Receiver<T>>>,
}

impl<T> Chan<T> {
    fn new(buffer: usize) -> Self {
        let (sender, receiver) = mpsc::channel(buffer);
        Chan {
            sender: Mutex::new(Some(sender)),
            receiver: Mutex::new(Some(receiver)),
        }
    }

    /// A handle on the sender, while the channel is open.
    fn sender(&self) -> Option<mpsc::Sender<T>> {
        self.sender.lock().clone()
    }

    /// Takes the sender: its owner closes the channel by dropping it.
    fn take_sender(&self) -> Option<mpsc::Sender<T>> {
        self.sender.lock().take()
    }

    /// Takes the receiver (once).
    fn take_receiver(&self) -> Option<mpsc::Receiver<T>> {
        self.receiver.lock().take()
    }

    /// Go's `close(ch)` for a sender kept here.
    fn close(&self) {
        self.sender.lock().take();
    }
}

// ANCHOR: etcd_watcher_struct
/// Mirrors the 1.5 apiserver's `etcdWatcher`: converts a native etcd v2 watch to a
/// watch (`watch.Interface`).
///
/// Shared by its two tasks (`etcd_watch` and `translate`) through an `Arc`; see the
/// module docs for the data flow. Locking order: each mutex is taken alone, never
/// two at once.
pub struct EtcdWatcher {
    /// High-water mark of `etcd_incoming`'s length, for performance debugging.
    incoming_hwm: HighWaterMark,
    /// High-water mark of `outgoing`'s length.
    outgoing_hwm: HighWaterMark,

    /// Decodes node values (Go's `encoding runtime.Codec`).
    encoding: JsonCodec,
    /// Sets the resource version of decoded objects (Go's `versioner`).
    versioner: APIObjectVersioner,
    /// Applied to each decoded object.
    transform: Option<TransformFunc>,

    /// A recursive watch of a directory.
    list: bool,
    /// Quorum reads for the initial GET.
    quorum: bool,
    /// Keys to skip before decoding.
    include: Option<IncludeFunc>,
    /// Which objects the watch wants.
    filter: FilterFunc,

    /// etcd responses from `etcd_watch` to `translate` (buffer 100, so that the
    /// etcd client is not forced to context switch with every object it gets).
    etcd_incoming: Chan<Response>,
    /// The error that ends `etcd_watch` (buffer 1: there is at most one).
    etcd_error: Chan<ClientError>,

    /// Events from `translate` to the consumer (buffer 100).
    outgoing: Chan<WatchEvent<Object>>,
    /// Closed by `stop`: the user's stop, which also cancels the long poll (Go's
    /// `userStop` and `ctx`/`cancel`).
    user_stop: CancellationToken,
    /// Go's `stopped`, guarded by `stopLock`: one Rust mutex holds both.
    stopped: Mutex<bool>,
    /// Go's `wg`: tracks the two tasks, so that none is leaked.
    wg: TaskTracker,

    /// Sends an event down `outgoing`, giving up on user stop. Injectable for
    /// testing.
    emit: EmitFunc,

    /// Decoded objects by etcd index.
    cache: Arc<EtcdCache>,
}
// ANCHOR_END: etcd_watcher_struct

impl fmt::Debug for EtcdWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdWatcher")
            .field("list", &self.list)
            .field("quorum", &self.quorum)
            .field("incoming_hwm", &self.incoming_hwm.get())
            .field("outgoing_hwm", &self.outgoing_hwm.get())
            .field("stopped", &*self.stopped.lock())
            .finish_non_exhaustive()
    }
}

// ANCHOR: new_etcd_watcher
/// Mirrors `newEtcdWatcher` followed by `go w.etcdWatch(ctx, client, key,
/// resourceVersion)`, as the etcd helper's `Watch` and `WatchList` do: starts the
/// `etcd_watch` and `translate` tasks and returns the watcher. Read the events with
/// [`EtcdWatcher::result_chan`] or [`EtcdWatcher::into_watch`]; stop it with
/// [`EtcdWatcher::stop`].
///
/// `resource_version` 0 starts with the current state (a GET); otherwise the watch
/// delivers the changes after that index.
///
/// Recovery: called outside a Tokio runtime, the watch delivers one 500 error event
/// and ends.
pub fn new_etcd_watcher(
    client: EtcdClient,
    key: impl Into<String>,
    resource_version: u64,
    config: EtcdWatcherConfig,
) -> Arc<EtcdWatcher> {
    let w = Arc::new(EtcdWatcher::new(config, None));
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            // Go adds to `wg` before `go w.translate()`, so that an early Stop still
            // waits.
            w.wg.spawn_on(Arc::clone(&w).translate(), &runtime);
            w.wg.spawn_on(
                Arc::clone(&w).etcd_watch(client, key.into(), resource_version),
                &runtime,
            );
        }
        Err(error) => {
            let status = StorageError::Internal(format!(
                "etcd watcher needs a Tokio runtime: {error}"
            ))
            .to_status();
            if let Some(outgoing) = w.outgoing.take_sender() {
                let _ = outgoing.try_send(WatchEvent::Error(Box::new(status)));
            }
        }
    }
    w.wg.close();
    w
}
// ANCHOR_END: new_etcd_watcher

impl EtcdWatcher {
    /// The struct of `newEtcdWatcher`, without its tasks; `emit` replaces the
    /// default emit function (for tests).
    pub(crate) fn new(config: EtcdWatcherConfig, emit: Option<EmitFunc>) -> Self {
        EtcdWatcher {
            incoming_hwm: HighWaterMark::default(),
            outgoing_hwm: HighWaterMark::default(),
            encoding: JsonCodec,
            versioner: APIObjectVersioner,
            transform: config.transform,
            list: config.list,
            quorum: config.quorum,
            include: config.include,
            filter: config.filter,
            etcd_incoming: Chan::new(CHANNEL_BUFFER),
            etcd_error: Chan::new(1),
            outgoing: Chan::new(CHANNEL_BUFFER),
            user_stop: CancellationToken::new(),
            stopped: Mutex::new(false),
            wg: TaskTracker::new(),
            emit: emit.unwrap_or_else(|| Arc::new(emit_outgoing)),
            cache: config.cache,
        }
    }

    /// Mirrors `ResultChan()`: the channel of events. A Rust receiver has one owner,
    /// so the first call takes it and later calls return `None`.
    pub fn result_chan(&self) -> Option<mpsc::Receiver<WatchEvent<Object>>> {
        self.outgoing.take_receiver()
    }

    /// The events as a stage 3 [`Watch`] (what `watch.Interface` is in this
    /// workspace). Stopping or dropping the watch stops the watcher. Empty if
    /// [`result_chan`](Self::result_chan) was taken before.
    pub fn into_watch(self: Arc<Self>) -> Watch<Object> {
        let Some(receiver) = self.result_chan() else {
            return Watch::from_items([]);
        };
        let guard = StopOnDrop(self);
        Watch::new(futures::stream::unfold(
            (receiver, guard),
            |(mut receiver, guard)| async move {
                let event = receiver.recv().await?;
                Some((Ok(event), (receiver, guard)))
            },
        ))
    }

    /// Mirrors `Stop()`: ends the watch at any time, even before `etcd_watch` has
    /// begun; an open long poll is cancelled at once. Stopping twice does
    /// nothing. Does not wait: see [`stop_and_wait`](Self::stop_and_wait).
    pub fn stop(&self) {
        let mut stopped = self.stopped.lock();
        if !*stopped {
            *stopped = true;
            self.user_stop.cancel();
        }
    }

    /// Mirrors `Stop()` with its `w.wg.Wait()`: stops, then waits until both tasks
    /// have ended, so no call to etcd follows.
    pub async fn stop_and_wait(&self) {
        self.stop();
        self.wg.wait().await;
    }

    /// Whether both tasks have ended.
    pub fn is_finished(&self) -> bool {
        self.wg.is_closed() && self.wg.is_empty()
    }

    /// The high-water marks of `etcd_incoming` and `outgoing`.
    pub fn high_water_marks(&self) -> (i64, i64) {
        (self.incoming_hwm.get(), self.outgoing_hwm.get())
    }

    // ANCHOR: etcd_watch
    /// Mirrors `etcdWatch`: calls etcd and hands what it answers to `translate`.
    /// Every call to etcd comes from here; when it returns, the watcher makes no
    /// more.
    ///
    /// With `resource_version` 0 it first GETs the current state (recursively for a
    /// list), sends each node as a `get` response, and continues from the GET's
    /// `X-Etcd-Index`. Then it long-polls `?wait=true&waitIndex=rv+1` and moves
    /// past each answer's `modifiedIndex`. Errors go to `etcd_error`. Both
    /// channels close when it returns.
    async fn etcd_watch(
        self: Arc<Self>,
        client: EtcdClient,
        key: String,
        resource_version: u64,
    ) {
        // Go: `defer close(w.etcdError)`, `defer close(w.etcdIncoming)`: the senders
        // are ours.
        let (Some(incoming), Some(errors)) = (
            self.etcd_incoming.take_sender(),
            self.etcd_error.take_sender(),
        ) else {
            return;
        };
        // Stop() may have come before this task started; then don't even begin.
        if *self.stopped.lock() {
            return;
        }
        let mut resource_version = resource_version;
        if resource_version == 0 {
            let initial = tokio::select! {
                biased;
                () = self.user_stop.cancelled() => return,
                initial = etcd_get_initial_watch_state(
                    &client, &key, self.list, self.quorum, &incoming,
                ) => initial,
            };
            match initial {
                Ok(latest) => resource_version = latest,
                Err(error) => {
                    let _ = errors.send(error).await;
                    return;
                }
            }
        }
        // ANCHOR_END: etcd_watch

        // ANCHOR: etcd_watch_poll
        // Go's `client.Watcher(key, &WatcherOptions{Recursive: w.list, AfterIndex:
        // rv})`.
        let mut wait_index = resource_version.saturating_add(1);
        loop {
            // Go's `watcher.Next(w.ctx)`: blocks until the next event; stop cancels
            // it.
            let next = tokio::select! {
                biased;
                () = self.user_stop.cancelled() => return,
                next = client.wait(&key, wait_index, self.list) => next,
            };
            let response = match next {
                Ok(Some(response)) => response,
                // etcd ended the poll without an event: ask again from the same
                // index.
                Ok(None) => continue,
                Err(error) => {
                    let _ = errors.send(error).await;
                    return;
                }
            };
            wait_index = match &response.node {
                Some(node) => node.modified_index.saturating_add(1).max(wait_index),
                // Odd, and translate will log it; move on rather than ask for it
                // again.
                None => wait_index.saturating_add(1),
            };
            let sent = tokio::select! {
                biased;
                () = self.user_stop.cancelled() => return,
                sent = incoming.send(response) => sent,
            };
            if sent.is_err() {
                return; // translate has ended
            }
        }
    }
    // ANCHOR_END: etcd_watch_poll

    // ANCHOR: translate
    /// Mirrors `translate`: pulls responses from `etcd_incoming`, converts them with
    /// `send_result`, and pushes events to `outgoing`; ends on an error (after
    /// sending it as an Error event), on user stop, or when `etcd_watch` has
    /// ended. Closes `outgoing` when done.
    ///
    /// Go's `select` picks at random among ready cases; here user stop wins, then
    /// the responses that came before an error are delivered before the error.
    async fn translate(self: Arc<Self>) {
        // Go: `defer close(w.outgoing)`; runs on a panic too.
        let _close_outgoing = CloseOnDrop(&self.outgoing);
        let (Some(mut incoming), Some(mut errors)) = (
            self.etcd_incoming.take_receiver(),
            self.etcd_error.take_receiver(),
        ) else {
            return;
        };
        let mut incoming_open = true;
        loop {
            tokio::select! {
                biased;
                () = self.user_stop.cancelled() => break,
                response = incoming.recv(), if incoming_open => match response {
                    Some(response) => {
                        let queued =
                            i64::try_from(incoming.len()).unwrap_or(i64::MAX);
                        if self.incoming_hwm.update(queued) {
                            // Monitor if this gets backed up, and how much.
                            tracing::debug!(
                                queued,
                                "etcd2 watch: objects queued in incoming channel"
                            );
                        }
                        self.send_result(&response).await;
                    }
                    // Don't return here: wait for etcd_error to give an error or be
                    // closed.
                    None => incoming_open = false,
                },
                error = errors.recv() => {
                    if let Some(error) = error {
                        let status = error_status(&error);
                        let event = WatchEvent::Error(Box::new(status));
                        (self.emit)(&self, event).await;
                    }
                    break;
                }
            }
        }
    }
    // ANCHOR_END: translate

    // ANCHOR: send_result
    /// Mirrors `sendResult`: dispatches a response by its action. Each `send_*`
    /// decodes the node(s), builds the event and emits it. An unknown action is
    /// logged and skipped (as in 1.5, that includes `update`, which the
    /// apiserver never wrote).
    async fn send_result(&self, res: &Response) {
        // ANCHOR: ex5-send-result
        match res.action.as_str() {
            ETCD_CREATE | ETCD_GET => self.send_add(res).await,
            ETCD_SET | ETCD_CAS => self.send_modify(res).await,
            ETCD_DELETE | ETCD_EXPIRE | ETCD_CAD => self.send_delete(res).await,
            other => tracing::error!(action = other, "etcd2 watch: unknown action"),
        }
        // ANCHOR_END: ex5-send-result
    }
    // ANCHOR_END: send_result

    /// Whether `include` (when set) lets `key` through: keys it rejects are skipped
    /// before decoding.
    fn includes(&self, key: &str) -> bool {
        self.include.as_ref().is_none_or(|include| include(key))
    }

    // ANCHOR: send_add
    /// Mirrors `sendAdd`: the node's object, Added, or Modified when the node has
    /// changed since it was created (`modifiedIndex != createdIndex`), if it
    /// passes the filter.
    async fn send_add(&self, res: &Response) {
        let Some(node) = &res.node else {
            tracing::error!(?res, "etcd2 watch: unexpected nil node");
            return;
        };
        if !self.includes(&node.key) {
            return;
        }
        let Some(obj) = self.decode_or_log(node, res) else {
            return;
        };
        if !(self.filter)(&obj) {
            return;
        }
        let event = if node.modified_index != node.created_index {
            WatchEvent::Modified(obj)
        } else {
            WatchEvent::Added(obj)
        };
        (self.emit)(self, event).await;
    }
    // ANCHOR_END: send_add

    // ANCHOR: send_modify
    /// Mirrors `sendModify`: some changes make an object start or stop matching the
    /// filter, so both the new and the previous object are checked. New passes
    /// and old did not: Added; both: Modified; only old: Deleted with the old
    /// object, stamped with this change's index; neither: nothing. A previous
    /// node that does not decode counts as not passing.
    async fn send_modify(&self, res: &Response) {
        // ANCHOR: ex5-send-modify
        let Some(node) = &res.node else {
            tracing::error!(?res, "etcd2 watch: unexpected nil node");
            return;
        };
        if !self.includes(&node.key) {
            return;
        }
        let Some(cur_obj) = self.decode_or_log(node, res) else {
            return;
        };
        let cur_obj_passes = (self.filter)(&cur_obj);
        // Ignore problems reading the old object.
        let old_obj = res
            .prev_node
            .as_ref()
            .filter(|prev| !prev.value.is_empty())
            .and_then(|prev| self.decode_object(prev).ok());
        let old_obj_passes = old_obj.as_ref().is_some_and(|old| (self.filter)(old));
        let event = match (cur_obj_passes, old_obj_passes, old_obj) {
            (true, true, _) => WatchEvent::Modified(cur_obj),
            (true, false, _) => WatchEvent::Added(cur_obj),
            (false, true, Some(old)) => {
                let mut old = Object::clone(&old);
                self.versioner.update_object(&mut old, node.modified_index);
                WatchEvent::Deleted(Arc::new(old))
            }
            // Neither the new nor the old object passes the filter.
            (false, _, _) => return,
        };
        (self.emit)(self, event).await;
        // ANCHOR_END: ex5-send-modify
    }
    // ANCHOR_END: send_modify

    // ANCHOR: send_delete
    /// Mirrors `sendDelete`: Deleted with the previous node's object, stamped with
    /// the index of the delete (so a client can resume right after it), if it
    /// passes the filter.
    async fn send_delete(&self, res: &Response) {
        let Some(prev_node) = &res.prev_node else {
            tracing::error!(?res, "etcd2 watch: unexpected nil prev node");
            return;
        };
        if !self.includes(&prev_node.key) {
            return;
        }
        let mut node = prev_node.clone();
        if let Some(deleted) = &res.node {
            node.modified_index = deleted.modified_index;
        }
        let Some(obj) = self.decode_or_log(&node, res) else {
            return;
        };
        if !(self.filter)(&obj) {
            return;
        }
        (self.emit)(self, WatchEvent::Deleted(obj)).await;
    }
    // ANCHOR_END: send_delete

    /// Mirrors `decodeObject`: the node's object from the cache, or decoded, stamped
    /// with the node's `modifiedIndex` as resource version, transformed, and
    /// cached.
    fn decode_object(&self, node: &Node) -> Result<Arc<Object>, String> {
        if let Some(obj) = self.cache.get_from_cache(node.modified_index) {
            return Ok(obj);
        }
        let mut obj = self
            .encoding
            .decode(node.value.as_bytes())
            .map_err(|e| e.to_string())?;
        self.versioner.update_object(&mut obj, node.modified_index);
        if let Some(transform) = &self.transform {
            obj = transform(obj)?;
        }
        let obj = Arc::new(obj);
        if node.modified_index != 0 {
            self.cache
                .add_to_cache(node.modified_index, Arc::clone(&obj));
        }
        Ok(obj)
    }

    /// `decode_object`, logging a failure: a bad value is skipped, never fatal, or a
    /// client that resumes from its resource version could never get past it.
    fn decode_or_log(&self, node: &Node, res: &Response) -> Option<Arc<Object>> {
        match self.decode_object(node) {
            Ok(obj) => Some(obj),
            Err(error) => {
                tracing::error!(%error, key = %node.key, action = %res.action,
                    "etcd2 watch: failure to decode api object");
                None
            }
        }
    }
}

/// Mirrors the `emit` closure of `newEtcdWatcher`: records the outgoing queue's
/// high-water mark, then sends the event down `outgoing`, giving up on user stop. If
/// the consumer has dropped the channel, the watcher stops.
fn emit_outgoing(w: &EtcdWatcher, event: WatchEvent<Object>) -> BoxFuture<'_, ()> {
    Box::pin(async move {
        let Some(outgoing) = w.outgoing.sender() else {
            return;
        };
        let queued = outgoing.max_capacity().saturating_sub(outgoing.capacity());
        let queued = i64::try_from(queued).unwrap_or(i64::MAX);
        if w.outgoing_hwm.update(queued) {
            // Monitor if this gets backed up, and how much.
            tracing::debug!(
                queued,
                "etcd2 watch: objects queued in outgoing channel"
            );
        }
        tokio::select! {
            biased;
            () = w.user_stop.cancelled() => {}
            sent = outgoing.send(event) => if sent.is_err() {
                w.stop();
            }
        }
    })
}

/// Mirrors the error `switch` in `translate`: etcd's 401 (index cleared) is 410
/// Expired, the client must list again; anything else is 500 InternalError.
pub fn error_status(error: &ClientError) -> Status {
    if is_etcd_watch_expired(error) {
        tracing::info!(%error, "etcd2 watch: the requested index is older than etcd's history");
        StorageError::Expired(WATCH_EXPIRED_MESSAGE.to_string()).to_status()
    } else {
        tracing::warn!(%error, "etcd2 watch failed");
        StorageError::Internal(error.to_string()).to_status()
    }
}

// ANCHOR: etcd_get_initial_watch_state
/// Mirrors `etcdGetInitialWatchState`: GETs `key` (recursively for a list) and sends
/// each node as a `get` response (`convertRecursiveResponse`); returns the index to
/// watch after, the answer's `X-Etcd-Index`. A missing key is no error: nothing is
/// sent, and the index is the error's.
async fn etcd_get_initial_watch_state(
    client: &EtcdClient,
    key: &str,
    recursive: bool,
    quorum: bool,
    incoming: &mpsc::Sender<Response>,
) -> Result<u64, ClientError> {
    let options = GetOptions { recursive, quorum };
    let response = match client.get(key, options).await {
        Ok(response) => response,
        Err(ClientError::Etcd(error)) if error.error_code == ECODE_KEY_NOT_FOUND => {
            return Ok(error.index);
        }
        Err(error) => {
            tracing::error!(
                key,
                %error,
                "etcd2 watch was unable to retrieve the current index"
            );
            return Err(error);
        }
    };
    let mut responses = Vec::new();
    if let Some(node) = &response.node {
        convert_recursive_response(node, &response, &mut responses);
    }
    for response in responses {
        if incoming.send(response).await.is_err() {
            break; // translate has ended
        }
    }
    Ok(response.index)
}
// ANCHOR_END: etcd_get_initial_watch_state

/// Mirrors `convertRecursiveResponse`: one `get` response per key below `node`.
fn convert_recursive_response(
    node: &Node,
    response: &Response,
    out: &mut Vec<Response>,
) {
    if node.dir {
        for child in &node.nodes {
            convert_recursive_response(child, response, out);
        }
        return;
    }
    out.push(Response {
        action: ETCD_GET.to_string(),
        node: Some(Node {
            nodes: Vec::new(),
            ..node.clone()
        }),
        prev_node: None,
        index: response.index,
    });
}

/// Closes a [`Chan`] when dropped, like a deferred `close(ch)`.
struct CloseOnDrop<'a, T>(&'a Chan<T>);

impl<T> Drop for CloseOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Stops the watcher when the stream of [`EtcdWatcher::into_watch`] is dropped.
struct StopOnDrop(Arc<EtcdWatcher>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod test_support {
    use super::*;
    use serde_json::json;

    pub(super) type Recorded = Arc<Mutex<Vec<WatchEvent<Object>>>>;

    /// A watcher without tasks whose emit records the events.
    pub(super) fn recording_watcher(
        config: EtcdWatcherConfig,
    ) -> (EtcdWatcher, Recorded) {
        let events: Recorded = Arc::default();
        let sink = Arc::clone(&events);
        let emit: EmitFunc = Arc::new(move |_w: &EtcdWatcher, event| {
            sink.lock().push(event);
            Box::pin(async {})
        });
        (EtcdWatcher::new(config, Some(emit)), events)
    }

    /// The JSON value etcd would hold for a pod on `node_name`.
    pub(super) fn pod_value(name: &str, node_name: &str) -> String {
        let pod = Object::new(&ResourceInfo::PODS, Some("default"), name)
            .with_data(json!({"spec": {"nodeName": node_name}}));
        serde_json::to_string(&pod).expect("a pod serializes")
    }

    pub(super) fn node(
        name: &str,
        value: &str,
        modified: u64,
        created: u64,
    ) -> Node {
        Node {
            key: format!("/registry/pods/default/{name}"),
            value: value.to_string(),
            modified_index: modified,
            created_index: created,
            ..Node::default()
        }
    }

    pub(super) fn response(
        action: &str,
        node: Option<Node>,
        prev_node: Option<Node>,
    ) -> Response {
        Response {
            action: action.to_string(),
            node,
            prev_node,
            index: 0,
        }
    }

    /// Events as (type, name, resourceVersion, nodeName), for comparisons.
    pub(super) fn describe(
        events: &[WatchEvent<Object>],
    ) -> Vec<(String, String, String, String)> {
        events
            .iter()
            .map(|event| match event.object() {
                Some(obj) => (
                    event.event_type().to_string(),
                    obj.name().to_string(),
                    obj.resource_version().to_string(),
                    obj.field("spec.nodeName")
                        .map(|n| n.into_owned())
                        .unwrap_or_default(),
                ),
                None => (
                    event.event_type().to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                ),
            })
            .collect()
    }

    pub(super) fn ev(
        kind: &str,
        name: &str,
        rv: u64,
        node_name: &str,
    ) -> (String, String, String, String) {
        (
            kind.to_string(),
            name.to_string(),
            rv.to_string(),
            node_name.to_string(),
        )
    }

    /// Only pods on node-1.
    pub(super) fn on_node_1() -> EtcdWatcherConfig {
        let predicate = SelectionPredicate::parse(
            &ResourceInfo::PODS,
            "",
            "spec.nodeName=node-1",
        )
        .expect("a valid selector");
        EtcdWatcherConfig::default().predicate(ResourceInfo::PODS, predicate)
    }
}

/// Exercise ex5-send-result: the action → event mapping.
#[cfg(test)]
mod ex5_send_result {
    use super::test_support::*;
    use super::*;

    #[tokio::test]
    async fn ex5_send_result_get_and_create_are_added_with_the_node_index() {
        let (w, events) = recording_watcher(EtcdWatcherConfig::default());
        let a = pod_value("a", "node-1");
        w.send_result(&response(ETCD_GET, Some(node("a", &a, 4, 4)), None))
            .await;
        w.send_result(&response(
            ETCD_CREATE,
            Some(node("b", &pod_value("b", "n"), 5, 5)),
            None,
        ))
        .await;
        assert_eq!(
            describe(&events.lock()),
            vec![ev("ADDED", "a", 4, "node-1"), ev("ADDED", "b", 5, "n")]
        );
    }

    #[tokio::test]
    async fn ex5_send_result_a_node_changed_since_creation_is_modified() {
        let (w, events) = recording_watcher(EtcdWatcherConfig::default());
        let a = pod_value("a", "node-1");
        // An object updated before the watch's initial GET: modifiedIndex !=
        // createdIndex.
        w.send_result(&response(ETCD_GET, Some(node("a", &a, 7, 4)), None))
            .await;
        assert_eq!(
            describe(&events.lock()),
            vec![ev("MODIFIED", "a", 7, "node-1")]
        );
    }

    #[tokio::test]
    async fn ex5_send_result_set_and_compare_and_swap_go_to_send_modify() {
        let (w, events) = recording_watcher(EtcdWatcherConfig::default());
        let v1 = pod_value("a", "node-1");
        let v2 = pod_value("a", "node-2");
        // A set of a new key has no previous node: Added.
        w.send_result(&response(ETCD_SET, Some(node("a", &v1, 4, 4)), None))
            .await;
        w.send_result(&response(
            ETCD_SET,
            Some(node("a", &v2, 5, 4)),
            Some(node("a", &v1, 4, 4)),
        ))
        .await;
        w.send_result(&response(
            ETCD_CAS,
            Some(node("a", &v1, 6, 4)),
            Some(node("a", &v2, 5, 4)),
        ))
        .await;
        assert_eq!(
            describe(&events.lock()),
            vec![
                ev("ADDED", "a", 4, "node-1"),
                ev("MODIFIED", "a", 5, "node-2"),
                ev("MODIFIED", "a", 6, "node-1"),
            ]
        );
    }

    #[tokio::test]
    async fn ex5_send_result_delete_expire_and_compare_and_delete_are_deleted_at_their_index()
     {
        let (w, events) = recording_watcher(EtcdWatcherConfig::default());
        for (action, name, index) in [
            (ETCD_DELETE, "a", 9),
            (ETCD_EXPIRE, "b", 10),
            (ETCD_CAD, "c", 11),
        ] {
            let value = pod_value(name, "node-1");
            // etcd's delete node has only key and indexes; the object is in
            // prevNode.
            w.send_result(&response(
                action,
                Some(node(name, "", index, 3)),
                Some(node(name, &value, 3, 3)),
            ))
            .await;
        }
        assert_eq!(
            describe(&events.lock()),
            vec![
                ev("DELETED", "a", 9, "node-1"),
                ev("DELETED", "b", 10, "node-1"),
                ev("DELETED", "c", 11, "node-1"),
            ]
        );
    }

    #[tokio::test]
    async fn ex5_send_result_skips_what_it_cannot_convert_and_goes_on() {
        let (w, events) = recording_watcher(EtcdWatcherConfig::default());
        let good = pod_value("good", "node-1");
        w.send_result(&response(ETCD_CREATE, None, None)).await; // nil node
        w.send_result(&response(ETCD_DELETE, Some(node("x", "", 5, 4)), None))
            .await; // nil prev
        w.send_result(&response("update", Some(node("x", &good, 6, 4)), None))
            .await; // unknown
        w.send_result(&response(
            ETCD_CREATE,
            Some(node("x", "not json", 7, 7)),
            None,
        ))
        .await;
        w.send_result(&response(
            ETCD_CREATE,
            Some(node("good", &good, 8, 8)),
            None,
        ))
        .await;
        assert_eq!(
            describe(&events.lock()),
            vec![ev("ADDED", "good", 8, "node-1")]
        );
    }

    #[tokio::test]
    async fn ex5_send_result_filters_added_and_deleted_objects() {
        let (w, events) = recording_watcher(on_node_1());
        let other = pod_value("other", "node-2");
        let mine = pod_value("mine", "node-1");
        w.send_result(&response(
            ETCD_CREATE,
            Some(node("other", &other, 4, 4)),
            None,
        ))
        .await;
        w.send_result(&response(
            ETCD_CREATE,
            Some(node("mine", &mine, 5, 5)),
            None,
        ))
        .await;
        w.send_result(&response(
            ETCD_DELETE,
            Some(node("other", "", 6, 4)),
            Some(node("other", &other, 4, 4)),
        ))
        .await;
        assert_eq!(
            describe(&events.lock()),
            vec![ev("ADDED", "mine", 5, "node-1")]
        );
    }

    #[tokio::test]
    async fn ex5_send_result_include_skips_keys_before_decoding() {
        let include: IncludeFunc = Arc::new(|key: &str| !key.ends_with("/skipped"));
        let (w, events) =
            recording_watcher(EtcdWatcherConfig::default().include(include));
        w.send_result(&response(
            ETCD_CREATE,
            Some(node("skipped", "not json", 4, 4)),
            None,
        ))
        .await;
        let kept = pod_value("kept", "n");
        w.send_result(&response(
            ETCD_CREATE,
            Some(node("kept", &kept, 5, 5)),
            None,
        ))
        .await;
        assert_eq!(describe(&events.lock()), vec![ev("ADDED", "kept", 5, "n")]);
    }
}

/// Exercise ex5-send-modify: the old/new filter transitions.
#[cfg(test)]
mod ex5_send_modify {
    use super::test_support::*;
    use super::*;

    async fn modify(
        old_node_name: &str,
        new_node_name: &str,
    ) -> Vec<(String, String, String, String)> {
        let (w, events) = recording_watcher(on_node_1());
        let old = pod_value("a", old_node_name);
        let new = pod_value("a", new_node_name);
        w.send_modify(&response(
            ETCD_SET,
            Some(node("a", &new, 12, 4)),
            Some(node("a", &old, 11, 4)),
        ))
        .await;
        describe(&events.lock())
    }

    #[tokio::test]
    async fn ex5_send_modify_new_passes_old_did_not_is_added() {
        assert_eq!(
            modify("node-2", "node-1").await,
            vec![ev("ADDED", "a", 12, "node-1")]
        );
    }

    #[tokio::test]
    async fn ex5_send_modify_both_pass_is_modified() {
        assert_eq!(
            modify("node-1", "node-1").await,
            vec![ev("MODIFIED", "a", 12, "node-1")]
        );
    }

    #[tokio::test]
    async fn ex5_send_modify_only_old_passes_is_deleted_old_at_the_new_index() {
        assert_eq!(
            modify("node-1", "node-2").await,
            vec![ev("DELETED", "a", 12, "node-1")]
        );
    }

    #[tokio::test]
    async fn ex5_send_modify_neither_passes_is_nothing() {
        assert_eq!(modify("node-2", "node-3").await, vec![]);
    }

    #[tokio::test]
    async fn ex5_send_modify_an_undecodable_old_value_counts_as_not_passing() {
        let (w, events) = recording_watcher(on_node_1());
        let new = pod_value("a", "node-1");
        w.send_modify(&response(
            ETCD_CAS,
            Some(node("a", &new, 12, 4)),
            Some(node("a", "garbage", 11, 4)),
        ))
        .await;
        assert_eq!(
            describe(&events.lock()),
            vec![ev("ADDED", "a", 12, "node-1")]
        );
    }

    #[tokio::test]
    async fn ex5_send_modify_does_not_restamp_a_cached_old_object() {
        let cache = Arc::new(EtcdCache::new(16));
        let (w, events) = recording_watcher(on_node_1().cache(Arc::clone(&cache)));
        let old = pod_value("a", "node-1");
        let new = pod_value("a", "node-2");
        w.send_add(&response(ETCD_CREATE, Some(node("a", &old, 11, 11)), None))
            .await;
        w.send_modify(&response(
            ETCD_SET,
            Some(node("a", &new, 12, 11)),
            Some(node("a", &old, 11, 11)),
        ))
        .await;
        assert_eq!(
            describe(&events.lock()),
            vec![
                ev("ADDED", "a", 11, "node-1"),
                ev("DELETED", "a", 12, "node-1")
            ]
        );
        let cached = cache.get_from_cache(11).expect("decoded once, kept");
        assert_eq!(cached.resource_version(), "11");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::test_support::*;
    use super::*;
    use crate::etcd2::client::EtcdError;

    const BOUND: Duration = Duration::from_secs(10);

    struct Harness {
        w: Arc<EtcdWatcher>,
        incoming: mpsc::Sender<Response>,
        errors: mpsc::Sender<ClientError>,
        events: mpsc::Receiver<WatchEvent<Object>>,
    }

    /// A watcher whose etcd side the test plays: only translate runs.
    fn translate_only(config: EtcdWatcherConfig) -> Harness {
        let w = Arc::new(EtcdWatcher::new(config, None));
        let incoming = w.etcd_incoming.take_sender().expect("fresh watcher");
        let errors = w.etcd_error.take_sender().expect("fresh watcher");
        let events = w.result_chan().expect("fresh watcher");
        w.wg.spawn(Arc::clone(&w).translate());
        w.wg.close();
        Harness {
            w,
            incoming,
            errors,
            events,
        }
    }

    async fn next(
        events: &mut mpsc::Receiver<WatchEvent<Object>>,
    ) -> Option<WatchEvent<Object>> {
        tokio::time::timeout(BOUND, events.recv())
            .await
            .expect("translate must answer in time")
    }

    fn created(name: &str, index: u64) -> Response {
        response(
            ETCD_CREATE,
            Some(node(name, &pod_value(name, "n"), index, index)),
            None,
        )
    }

    fn etcd_error(code: u64) -> ClientError {
        ClientError::Etcd(EtcdError {
            error_code: code,
            message: "The event in requested index is outdated and cleared".into(),
            cause: "the requested history has been cleared [112/2]".into(),
            index: 1111,
        })
    }

    #[tokio::test]
    async fn translate_delivers_in_order_and_closes_when_etcd_watch_ends() {
        let mut h = translate_only(EtcdWatcherConfig::default());
        for (i, name) in ["a", "b", "c"].into_iter().enumerate() {
            h.incoming
                .send(created(name, 4 + i as u64))
                .await
                .expect("translate runs");
        }
        drop((h.incoming, h.errors)); // etcd_watch returned without error
        let mut got = Vec::new();
        while let Some(event) = next(&mut h.events).await {
            got.push(event);
        }
        assert_eq!(
            describe(&got),
            vec![
                ev("ADDED", "a", 4, "n"),
                ev("ADDED", "b", 5, "n"),
                ev("ADDED", "c", 6, "n")
            ]
        );
        tokio::time::timeout(BOUND, h.w.wg.wait())
            .await
            .expect("translate ended");
    }

    #[tokio::test]
    async fn translate_turns_index_cleared_into_410_expired_after_earlier_events() {
        let mut h = translate_only(EtcdWatcherConfig::default());
        h.incoming
            .send(created("a", 4))
            .await
            .expect("translate runs");
        h.errors
            .send(etcd_error(401))
            .await
            .expect("translate runs");
        assert!(matches!(
            next(&mut h.events).await,
            Some(WatchEvent::Added(_))
        ));
        let Some(WatchEvent::Error(status)) = next(&mut h.events).await else {
            panic!("an error event");
        };
        assert_eq!(status.code, Some(410));
        assert_eq!(status.reason.as_deref(), Some("Expired"));
        assert_eq!(status.message.as_deref(), Some(WATCH_EXPIRED_MESSAGE));
        assert!(
            next(&mut h.events).await.is_none(),
            "the channel closes after the error"
        );
    }

    #[tokio::test]
    async fn translate_turns_other_errors_into_500() {
        let mut h = translate_only(EtcdWatcherConfig::default());
        h.errors
            .send(ClientError::Connection("connection refused".into()))
            .await
            .expect("translate runs");
        let Some(WatchEvent::Error(status)) = next(&mut h.events).await else {
            panic!("an error event");
        };
        assert_eq!(status.code, Some(500));
        assert_eq!(status.reason.as_deref(), Some("InternalError"));
        assert!(
            status
                .message
                .as_deref()
                .is_some_and(|m| m.contains("connection refused"))
        );
        assert!(next(&mut h.events).await.is_none());
        // Another etcd error code is no expiry either.
        assert_eq!(error_status(&etcd_error(100)).code, Some(500));
    }

    #[tokio::test]
    async fn translate_skips_bad_responses_and_keeps_going() {
        let mut h = translate_only(EtcdWatcherConfig::default());
        h.incoming
            .send(response(ETCD_CREATE, None, None))
            .await
            .expect("runs");
        h.incoming
            .send(response("mystery", Some(node("m", "{}", 5, 5)), None))
            .await
            .expect("runs");
        h.incoming
            .send(response(
                ETCD_CREATE,
                Some(node("bad", "{not json", 6, 6)),
                None,
            ))
            .await
            .expect("runs");
        h.incoming.send(created("good", 7)).await.expect("runs");
        let event = next(&mut h.events).await.expect("an event");
        assert_eq!(describe(&[event]), vec![ev("ADDED", "good", 7, "n")]);
    }

    #[tokio::test]
    async fn user_stop_ends_translate_without_an_error_event() {
        let mut h = translate_only(EtcdWatcherConfig::default());
        h.incoming.send(created("a", 4)).await.expect("runs");
        assert!(next(&mut h.events).await.is_some());
        h.w.stop();
        h.w.stop(); // idempotent
        assert!(next(&mut h.events).await.is_none());
        tokio::time::timeout(BOUND, h.w.stop_and_wait())
            .await
            .expect("tasks end");
        assert!(h.w.is_finished());
    }

    #[tokio::test]
    async fn high_water_marks_record_the_longest_queues() {
        let w = Arc::new(EtcdWatcher::new(EtcdWatcherConfig::default(), None));
        let incoming = w.etcd_incoming.take_sender().expect("fresh");
        let errors = w.etcd_error.take_sender().expect("fresh");
        let mut events = w.result_chan().expect("fresh");
        // Five responses queued before translate starts, and nobody reading its
        // output.
        for i in 0..5 {
            incoming
                .send(created(&format!("p{i}"), 4 + i))
                .await
                .expect("buffered");
        }
        drop((incoming, errors));
        w.wg.spawn(Arc::clone(&w).translate());
        w.wg.close();
        tokio::time::timeout(BOUND, w.wg.wait())
            .await
            .expect("translate ends");
        assert_eq!(w.high_water_marks(), (4, 4));
        let mut count = 0;
        while events.recv().await.is_some() {
            count += 1;
        }
        assert_eq!(count, 5);
    }

    #[tokio::test]
    async fn stop_before_the_watch_starts_makes_no_call_and_ends() {
        // Nothing listens there: a call would become an error event.
        let client = EtcdClient::new("http://127.0.0.1:9");
        let w = new_etcd_watcher(
            client,
            "/registry/pods/",
            0,
            EtcdWatcherConfig::default(),
        );
        w.stop();
        let mut events = w.result_chan().expect("first call");
        assert!(w.result_chan().is_none(), "the receiver has one owner");
        let end = tokio::time::timeout(BOUND, events.recv())
            .await
            .expect("ends in time");
        assert!(end.is_none(), "no error event: {end:?}");
        tokio::time::timeout(BOUND, w.stop_and_wait())
            .await
            .expect("tasks end");
    }

    #[tokio::test]
    async fn an_unreachable_etcd_is_a_500_error_event() {
        let client = EtcdClient::new("http://127.0.0.1:9");
        let w = new_etcd_watcher(
            client,
            "/registry/pods/",
            0,
            EtcdWatcherConfig::default(),
        );
        let mut watch = Arc::clone(&w).into_watch();
        let first =
            tokio::time::timeout(BOUND, futures::StreamExt::next(&mut watch))
                .await
                .expect("an answer in time");
        let Some(Ok(WatchEvent::Error(status))) = first else {
            panic!("an error event, got {first:?}");
        };
        assert_eq!(status.code, Some(500));
        drop(watch);
        tokio::time::timeout(BOUND, w.stop_and_wait())
            .await
            .expect("tasks end");
    }

    #[test]
    fn without_a_runtime_the_watch_is_one_error_event() {
        let w = new_etcd_watcher(
            EtcdClient::new("http://127.0.0.1:9"),
            "/k",
            0,
            EtcdWatcherConfig::default(),
        );
        let mut events = w.result_chan().expect("first call");
        assert!(matches!(events.try_recv(), Ok(WatchEvent::Error(_))));
        assert!(events.try_recv().is_err());
    }

    #[test]
    fn the_cache_keeps_at_most_its_capacity() {
        let cache = EtcdCache::new(2);
        for i in 1..=3 {
            cache.add_to_cache(i, Arc::new(Object::default()));
        }
        assert_eq!(cache.len(), 2);
        assert!(cache.get_from_cache(1).is_none());
        assert!(cache.get_from_cache(3).is_some());
        let disabled = EtcdCache::disabled();
        disabled.add_to_cache(1, Arc::new(Object::default()));
        assert!(disabled.is_empty());
    }

    #[test]
    fn a_high_water_mark_only_reports_new_highs() {
        let hwm = HighWaterMark::default();
        assert!(!hwm.update(0));
        assert!(hwm.update(3));
        assert!(!hwm.update(2));
        assert!(!hwm.update(3));
        assert!(hwm.update(4));
        assert_eq!(hwm.get(), 4);
    }

    #[test]
    fn a_recursive_get_becomes_one_get_response_per_key() {
        let mut dir = Node {
            key: "/registry/pods".into(),
            dir: true,
            ..Node::default()
        };
        let mut ns = Node {
            key: "/registry/pods/default".into(),
            dir: true,
            ..Node::default()
        };
        ns.nodes = vec![node("a", "{}", 4, 4), node("b", "{}", 5, 5)];
        dir.nodes = vec![
            ns,
            Node {
                key: "/registry/pods/empty".into(),
                dir: true,
                ..Node::default()
            },
        ];
        let answer = Response {
            action: ETCD_GET.into(),
            node: Some(dir.clone()),
            prev_node: None,
            index: 9,
        };
        let mut out = Vec::new();
        convert_recursive_response(&dir, &answer, &mut out);
        let keys: Vec<_> = out
            .iter()
            .filter_map(|r| r.node.as_ref().map(|n| n.key.as_str()))
            .collect();
        assert_eq!(
            keys,
            ["/registry/pods/default/a", "/registry/pods/default/b"]
        );
        assert!(out.iter().all(|r| r.action == ETCD_GET && r.index == 9));
    }
}
