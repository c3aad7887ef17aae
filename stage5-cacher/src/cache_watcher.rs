//! Mirrors apiserver's `pkg/storage/cacher/cache_watcher.go`: one client's watch on
//! the cache (source document 000).
//!
//! The Cacher's dispatcher puts events on the watcher's `input` channel; the
//! watcher's own task ([`CacheWatcher::process`]) sends its initial events, then
//! every input event newer than its starting version, converted by its filter, to
//! its `result` channel, which the client reads.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use apimachinery::watch::{Bookmark, EventType};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::caching_object::{CachedObject, LabelMatcher};
use crate::probe::EndReason;
use crate::watch_cache::WatchCacheEvent;
use apimachinery::fields::FieldSource;
use stage5_storage::{KeyScope, ResourceInfo, SelectionPredicate};

/// What a watcher sends to its client.
#[derive(Clone, Debug)]
pub enum WatcherEvent {
    /// Added, Modified or Deleted, with the (shared, encode-once) object.
    Object {
        /// The event's type for this watcher (after filter conversion).
        event_type: EventType,
        /// The object.
        object: Arc<CachedObject>,
    },
    /// A bookmark.
    Bookmark(Bookmark),
    /// An error; the watch ends after it.
    Error(Box<Status>),
}

/// Mirrors `filterWithAttrsAndPrefixFunction`: the namespace the watch is scoped to,
/// the keys it covers, and its predicate.
#[derive(Clone, Debug, Default)]
pub struct WatchFilter {
    /// Only objects in this namespace (from the watch key); `None` for every
    /// namespace.
    pub namespace: Option<String>,
    /// Only objects under this key (or at it); `None` for every key.
    pub key: Option<KeyFilter>,
    /// The label and field selectors.
    pub predicate: SelectionPredicate,
}

impl WatchFilter {
    /// Whether `object` passes, its labels matched by `labels` (this filter's label
    /// selector, taken apart once: [`LabelMatcher::new`]).
    pub fn matches(&self, labels: &LabelMatcher, object: &CachedObject) -> bool {
        let attributes = object.attributes();
        if let Some(ns) = &self.namespace
            && attributes.field("metadata.namespace") != Some(ns.as_str())
        {
            return false;
        }
        if let Some(key) = &self.key
            && !key.matches(attributes)
        {
            return false;
        }
        labels.matches(attributes) && self.predicate.field.matches(attributes)
    }
}

/// The key half of `filterWithAttrsAndPrefixFunction`: a watch or list covers the
/// objects whose etcd key starts with its key (a prefix ending in `/`), or the one
/// object at its key. The object's key is rebuilt from its namespace and name, as
/// the registry's key function builds it.
#[derive(Clone, Debug)]
pub struct KeyFilter {
    /// The watched key relative to the resource's prefix: `default/` for
    /// `/registry/pods/default/`, `default/web` for one pod, `` for all.
    relative: String,
    namespaced: bool,
    scope: KeyScope,
}

impl KeyFilter {
    /// The filter of `key` (`/registry/pods/default/`) for `info`'s objects. A key
    /// outside the resource's prefix selects nothing.
    pub fn new(info: &ResourceInfo, key: &str, scope: KeyScope) -> Self {
        let prefix = info.key_prefix();
        let relative = match key.strip_prefix(&prefix) {
            Some(rest) => rest.to_string(),
            // The bare resource key (`/registry/pods`) is the whole resource.
            None if scope == KeyScope::Prefix && format!("{key}/") == prefix => {
                String::new()
            }
            // No object key can start with this.
            None => "\0".to_string(),
        };
        KeyFilter {
            relative,
            namespaced: info.namespaced,
            scope,
        }
    }

    /// Whether the object with these fields lies under (or at) the key.
    pub fn matches<F: FieldSource + ?Sized>(&self, fields: &F) -> bool {
        let name = fields.field("metadata.name").unwrap_or("");
        let namespace = if self.namespaced {
            fields.field("metadata.namespace").unwrap_or("")
        } else {
            ""
        };
        self.matches_object(namespace, name)
    }

    /// Whether the object `namespace/name` (or `name`) lies under (or at) the key.
    pub fn matches_object(&self, namespace: &str, name: &str) -> bool {
        // The object's relative key, `namespace/name` or `name`, without
        // allocating.
        let (first, slash) = if namespace.is_empty() {
            ("", "")
        } else {
            (namespace, "/")
        };
        let object_len = first.len() + slash.len() + name.len();
        let object = first.bytes().chain(slash.bytes()).chain(name.bytes());
        let watched = self.relative.bytes();
        match self.scope {
            KeyScope::Prefix => {
                object_len >= self.relative.len()
                    && object.take(self.relative.len()).eq(watched)
            }
            KeyScope::Object => {
                object_len == self.relative.len() && object.eq(watched)
            }
        }
    }
}

/// The function that unregisters a watcher from its Cacher and stops it (`forget`).
pub type ForgetFn = Box<dyn Fn() + Send + Sync>;

// ANCHOR: cache_watcher
/// Mirrors `cacheWatcher`.
pub struct CacheWatcher {
    /// Events from the dispatcher.
    input: mpsc::Sender<Arc<WatchCacheEvent>>,
    /// Closed when the watcher stops (`done`).
    done: CancellationToken,
    filter: WatchFilter,
    /// The filter's label selector, taken apart once.
    labels: LabelMatcher,
    /// Set once, under the Cacher's lock, when the watcher is stopped.
    stopped: AtomicBool,
    /// Unregisters the watcher; set when the Cacher registers it.
    forget: OnceLock<ForgetFn>,
    /// The server closes the watch at this time (from `timeoutSeconds`); bookmarks
    /// are sent 2 s before it.
    deadline: Option<Instant>,
    allow_watch_bookmarks: bool,
    /// A human-readable description of the request.
    identifier: String,
    /// When the watch started (for `/debug/watchers`).
    created: Instant,
    chan_size: usize,
    /// What the live page shows of it (its number, bookmarks, why it ended).
    seen: Seen,
}
// ANCHOR_END: cache_watcher

/// A watcher's figures for the live page (`/debug/ui`).
#[derive(Debug, Default)]
struct Seen {
    id: AtomicUsize,
    bookmarks: AtomicU64,
    end: AtomicU8,
}

impl std::fmt::Debug for CacheWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheWatcher")
            .field("identifier", &self.identifier)
            .field("stopped", &self.is_stopped())
            .finish_non_exhaustive()
    }
}

/// The channel ends a new watcher's task needs.
pub struct WatcherChannels {
    /// The dispatcher's events.
    pub input: mpsc::Receiver<Arc<WatchCacheEvent>>,
    /// Where the task sends.
    pub result_tx: mpsc::Sender<WatcherEvent>,
    /// What the client reads.
    pub result_rx: mpsc::Receiver<WatcherEvent>,
}

impl CacheWatcher {
    // ANCHOR: new_cache_watcher
    /// Mirrors `newCacheWatcher`: input and result channels of `chan_size`, not yet
    /// registered.
    pub fn new(
        chan_size: usize,
        filter: WatchFilter,
        deadline: Option<Instant>,
        allow_watch_bookmarks: bool,
        identifier: String,
    ) -> (Arc<CacheWatcher>, WatcherChannels) {
        let chan_size = chan_size.max(1);
        let (input_tx, input_rx) = mpsc::channel(chan_size);
        let (result_tx, result_rx) = mpsc::channel(chan_size);
        let watcher = Arc::new(CacheWatcher {
            input: input_tx,
            done: CancellationToken::new(),
            labels: LabelMatcher::new(&filter.predicate.label),
            filter,
            stopped: AtomicBool::new(false),
            forget: OnceLock::new(),
            deadline,
            allow_watch_bookmarks,
            identifier,
            created: Instant::now(),
            chan_size,
            seen: Seen::default(),
        });
        (
            watcher,
            WatcherChannels {
                input: input_rx,
                result_tx,
                result_rx,
            },
        )
    }
    // ANCHOR_END: new_cache_watcher

    /// Sets the function that unregisters this watcher (once).
    pub fn set_forget(&self, forget: ForgetFn) {
        let _ = self.forget.set(forget);
    }

    /// The request's description.
    pub fn identifier(&self) -> &str {
        &self.identifier
    }

    /// When the watch started.
    pub fn created(&self) -> Instant {
        self.created
    }

    /// Its number in its Cacher (set when registered).
    pub fn id(&self) -> usize {
        self.seen.id.load(Ordering::Relaxed)
    }

    /// Sets its number in its Cacher.
    pub fn set_id(&self, id: usize) {
        self.seen.id.store(id, Ordering::Relaxed);
    }

    /// Counts a bookmark sent to it.
    pub fn count_bookmark(&self) {
        self.seen.bookmarks.fetch_add(1, Ordering::Relaxed);
    }

    /// How many bookmarks it has been sent.
    pub fn bookmarks(&self) -> u64 {
        self.seen.bookmarks.load(Ordering::Relaxed)
    }

    /// Records why it ends; the first reason recorded stays.
    pub fn mark_end(&self, reason: EndReason) {
        let _ = self.seen.end.compare_exchange(
            0,
            reason.as_u8(),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    /// Why it ended: the reason recorded, else its deadline if that has passed,
    /// else its client went away.
    pub fn end_reason(&self) -> EndReason {
        EndReason::from_u8(self.seen.end.load(Ordering::Acquire)).unwrap_or_else(
            || match self.deadline {
                Some(deadline) if Instant::now() >= deadline => EndReason::Timeout,
                _ => EndReason::ClientGone,
            },
        )
    }

    /// When its `timeoutSeconds` ends it, if it has one.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the client asked for bookmarks.
    pub fn allow_watch_bookmarks(&self) -> bool {
        self.allow_watch_bookmarks
    }

    /// The size of the input and result channels.
    pub fn chan_size(&self) -> usize {
        self.chan_size
    }

    /// How many events wait in the input channel.
    pub fn buffered(&self) -> usize {
        self.chan_size - self.input.capacity()
    }

    /// Whether the watcher has been stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    // ANCHOR: stop
    /// Mirrors `cacheWatcher.Stop`: unregisters from the Cacher (which stops the
    /// watcher). Idempotent.
    pub fn stop(&self) {
        match self.forget.get() {
            Some(forget) => forget(),
            None => self.stop_locked(),
        }
    }

    /// Mirrors `stopLocked`: marks the watcher stopped and closes `done`, which ends
    /// its task and so its result channel. Idempotent.
    pub fn stop_locked(&self) {
        if !self.stopped.swap(true, Ordering::AcqRel) {
            self.done.cancel();
        }
    }
    // ANCHOR_END: stop

    /// Mirrors `nonblockingAdd`: queues the event if there is room. A watcher whose
    /// task has ended counts as delivered (it wants nothing more).
    pub fn nonblocking_add(&self, event: &Arc<WatchCacheEvent>) -> bool {
        match self.input.try_send(Arc::clone(event)) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => true,
            Err(mpsc::error::TrySendError::Full(_)) => false,
        }
    }

    // ANCHOR: add
    /// Mirrors `cacheWatcher.add` with a timer: tries at once, then waits until
    /// `deadline` for room. Returns false if the watcher is still blocked then;
    /// the caller closes it.
    pub async fn add(
        &self,
        event: &Arc<WatchCacheEvent>,
        deadline: Option<Instant>,
    ) -> bool {
        if self.nonblocking_add(event) {
            return true;
        }
        let Some(deadline) = deadline else {
            return false;
        };
        tokio::time::timeout_at(deadline, self.input.send(Arc::clone(event)))
            .await
            .is_ok()
    }
    // ANCHOR_END: add

    // ANCHOR: next_bookmark_time
    /// Mirrors `nextBookmarkTime`: every `frequency`, but 2 s before the deadline if
    /// that comes first; none if that moment has passed.
    pub fn next_bookmark_time(
        &self,
        now: Instant,
        frequency: Duration,
    ) -> Option<Instant> {
        let mut heartbeat = now + frequency;
        if let Some(deadline) = self.deadline {
            let pre_timeout =
                deadline.checked_sub(Duration::from_secs(2)).unwrap_or(now);
            if pre_timeout < heartbeat {
                heartbeat = pre_timeout;
            }
        }
        (heartbeat >= now).then_some(heartbeat)
    }
    // ANCHOR_END: next_bookmark_time

    // ANCHOR: convert
    /// Mirrors `cacheWatcher.convertToWatchEvent`: bookmarks pass; otherwise the
    /// current object passes the filter and the previous did not → Added; both →
    /// Modified; only the previous → Deleted (the previous object at the event's
    /// version); neither → nothing.
    pub fn convert_to_watch_event(
        &self,
        event: &WatchCacheEvent,
    ) -> Option<WatcherEvent> {
        // ANCHOR: ex5-convert
        if event.event_type == EventType::Bookmark {
            return Some(WatcherEvent::Bookmark(Bookmark::new(
                event.resource_version.to_string(),
            )));
        }
        let current_passes = event.event_type != EventType::Deleted
            && self.filter.matches(&self.labels, &event.object);
        let previous_passes = event
            .prev_object
            .as_ref()
            .is_some_and(|prev| self.filter.matches(&self.labels, prev));
        let (event_type, object) = match (current_passes, previous_passes) {
            (true, false) => (EventType::Added, Arc::clone(&event.object)),
            (true, true) => (EventType::Modified, Arc::clone(&event.object)),
            (false, true) => (
                EventType::Deleted,
                Arc::clone(event.prev_object_at_event_version()?),
            ),
            (false, false) => return None,
        };
        Some(WatcherEvent::Object { event_type, object })
        // ANCHOR_END: ex5-convert
    }
    // ANCHOR_END: convert

    /// Mirrors `sendWatchCacheEvent`: converts and sends, unless the watcher is
    /// done. Returns false when the watcher is done or its client has gone.
    async fn send_watch_cache_event(
        &self,
        event: &WatchCacheEvent,
        result: &mpsc::Sender<WatcherEvent>,
    ) -> bool {
        let Some(watch_event) = self.convert_to_watch_event(event) else {
            return true;
        };
        self.send(watch_event, result).await
    }

    async fn send(
        &self,
        watch_event: WatcherEvent,
        result: &mpsc::Sender<WatcherEvent>,
    ) -> bool {
        // Once done, send nothing more: events after a gap would be wrong.
        if self.done.is_cancelled() {
            return false;
        }
        tokio::select! {
            biased;
            () = self.done.cancelled() => false,
            sent = result.send(watch_event) => sent.is_ok(),
        }
    }

    // ANCHOR: process
    /// Mirrors `cacheWatcher.process` (with `processEvents`): sends the initial
    /// events (and, for `sendInitialEvents`, the bookmark that ends them), then
    /// every input event whose version is above `resource_version` and above every
    /// initial event's, until the watcher is stopped, its deadline passes, or its
    /// client goes. Dropping `result` at the end closes the client's stream.
    pub async fn process(
        self: Arc<Self>,
        mut input: mpsc::Receiver<Arc<WatchCacheEvent>>,
        result: mpsc::Sender<WatcherEvent>,
        initial_events: Vec<Arc<WatchCacheEvent>>,
        initial_events_end: Option<u64>,
        resource_version: u64,
    ) {
        let deadline = async {
            match self.deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(deadline);
        let mut open = true;
        let mut resource_version = resource_version;
        for event in &initial_events {
            if !self.send_watch_cache_event(event, &result).await {
                open = false;
                break;
            }
            // An event from the ring may still wait in the dispatcher's queue: never
            // deliver it twice (upstream's `processInterval`).
            resource_version = resource_version.max(event.resource_version);
        }
        if open && let Some(rv) = initial_events_end {
            let end =
                WatcherEvent::Bookmark(Bookmark::initial_events_end(rv.to_string()));
            open = self.send(end, &result).await;
        }
        drop(initial_events);
        while open {
            tokio::select! {
                biased;
                () = self.done.cancelled() => break,
                () = &mut deadline => break,
                () = result.closed() => break,
                event = input.recv() => match event {
                    None => break,
                    // Only events newer than the starting version: the initial
                    // events already cover everything up to it.
                    Some(event) if event.resource_version > resource_version => {
                        open = self.send_watch_cache_event(&event, &result).await;
                    }
                    Some(_) => {}
                },
            }
        }
        self.stop();
    }
    // ANCHOR_END: process
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::Object;

    fn pod(name: &str, rv: u64, node: &str) -> Arc<Object> {
        let mut obj = Object::new(&ResourceInfo::PODS, Some("ns"), name)
            .with_data(serde_json::json!({"spec": {"nodeName": node}}));
        obj.metadata.resource_version = Some(rv.to_string());
        Arc::new(obj)
    }

    /// An event as the watch cache builds it: the new object and the previous one.
    fn event(
        event_type: EventType,
        current: Arc<Object>,
        previous: Option<Arc<Object>>,
    ) -> Arc<WatchCacheEvent> {
        let rv = current.resource_version().parse().unwrap();
        let pods = &ResourceInfo::PODS;
        let mut e = WatchCacheEvent::new(
            event_type,
            Arc::new(CachedObject::new(pods, event_type, &current)),
            Arc::from("ns/pod"),
            rv,
        );
        if let Some(prev) = previous {
            e.prev_object = Some(Arc::new(CachedObject::new(
                pods,
                EventType::Modified,
                &prev,
            )));
        }
        Arc::new(e)
    }

    fn on_node(node: &str) -> WatchFilter {
        WatchFilter {
            namespace: None,
            key: None,
            predicate: SelectionPredicate::parse(
                &ResourceInfo::PODS,
                "",
                &format!("spec.nodeName={node}"),
            )
            .unwrap(),
        }
    }

    fn summary(e: Option<WatcherEvent>) -> Option<(EventType, String, String)> {
        match e? {
            WatcherEvent::Object { event_type, object } => Some((
                event_type,
                object.object().data["spec"]["nodeName"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                object.object().resource_version().to_string(),
            )),
            WatcherEvent::Bookmark(b) => {
                Some((EventType::Bookmark, String::new(), b.resource_version))
            }
            WatcherEvent::Error(_) => {
                Some((EventType::Error, String::new(), String::new()))
            }
        }
    }

    mod ex5_convert {
        use super::*;

        /// Upstream's `TestCacheWatcherCleanupNotBlockedByResult`-era filter table,
        /// for a watcher of pods on `node-1`: a pod scheduled there, moved
        /// away, back, deleted.
        #[test]
        fn ex5_convert_follows_a_pod_across_nodes() {
            let (watcher, _channels) =
                CacheWatcher::new(10, on_node("node-1"), None, false, "t".into());
            let e = |t, cur, prev| {
                summary(watcher.convert_to_watch_event(&event(t, cur, prev)))
            };
            let ev = |t: EventType, node: &str, rv: &str| {
                Some((t, node.to_string(), rv.to_string()))
            };
            // Created elsewhere: nothing.
            assert_eq!(e(EventType::Added, pod("p", 1, ""), None), None);
            // Scheduled onto node-1: Added.
            assert_eq!(
                e(
                    EventType::Modified,
                    pod("p", 2, "node-1"),
                    Some(pod("p", 1, ""))
                ),
                ev(EventType::Added, "node-1", "2")
            );
            // Changed on node-1: Modified.
            assert_eq!(
                e(
                    EventType::Modified,
                    pod("p", 3, "node-1"),
                    Some(pod("p", 2, "node-1"))
                ),
                ev(EventType::Modified, "node-1", "3")
            );
            // Moved away: Deleted, with the previous object at the event's version.
            assert_eq!(
                e(
                    EventType::Modified,
                    pod("p", 4, "node-2"),
                    Some(pod("p", 3, "node-1"))
                ),
                ev(EventType::Deleted, "node-1", "4")
            );
            // Changed elsewhere: nothing.
            assert_eq!(
                e(
                    EventType::Modified,
                    pod("p", 5, "node-2"),
                    Some(pod("p", 4, "node-2"))
                ),
                None
            );
            // Back, then deleted while on node-1: Added, then Deleted at the
            // delete's version.
            assert_eq!(
                e(
                    EventType::Modified,
                    pod("p", 6, "node-1"),
                    Some(pod("p", 5, "node-2"))
                ),
                ev(EventType::Added, "node-1", "6")
            );
            assert_eq!(
                e(
                    EventType::Deleted,
                    pod("p", 7, "node-1"),
                    Some(pod("p", 6, "node-1"))
                ),
                ev(EventType::Deleted, "node-1", "7")
            );
            // Deleted elsewhere: nothing.
            assert_eq!(
                e(
                    EventType::Deleted,
                    pod("p", 8, "node-2"),
                    Some(pod("p", 7, "node-2"))
                ),
                None
            );
        }

        #[test]
        fn ex5_convert_shares_the_deleted_object_between_watchers() {
            let (a, _ca) =
                CacheWatcher::new(10, on_node("node-1"), None, false, "a".into());
            let (b, _cb) =
                CacheWatcher::new(10, on_node("node-1"), None, false, "b".into());
            let moved = event(
                EventType::Modified,
                pod("p", 4, "node-2"),
                Some(pod("p", 3, "node-1")),
            );
            let (
                Some(WatcherEvent::Object { object: x, .. }),
                Some(WatcherEvent::Object { object: y, .. }),
            ) = (
                a.convert_to_watch_event(&moved),
                b.convert_to_watch_event(&moved),
            )
            else {
                panic!("both watchers get a Deleted event");
            };
            assert!(
                Arc::ptr_eq(&x, &y),
                "one object (and one encoding) for every watcher"
            );
        }
    }

    #[tokio::test]
    async fn no_event_at_or_below_the_starting_version_is_delivered_again() {
        let (watcher, channels) =
            CacheWatcher::new(10, WatchFilter::default(), None, false, "t".into());
        let initial = vec![event(EventType::Added, pod("p", 5, "n"), None)];
        let mut result = channels.result_rx;
        let task = tokio::spawn(Arc::clone(&watcher).process(
            channels.input,
            channels.result_tx,
            initial,
            None,
            5,
        ));
        for rv in [4, 5, 6] {
            assert!(watcher.nonblocking_add(&event(
                EventType::Modified,
                pod("p", rv, "n"),
                Some(pod("p", rv - 1, "n"))
            )));
        }
        let got: Vec<_> = [result.recv().await, result.recv().await]
            .into_iter()
            .map(|e| summary(e).map(|s| (s.0, s.2)))
            .collect();
        assert_eq!(
            got,
            [
                Some((EventType::Added, "5".into())),
                Some((EventType::Modified, "6".into()))
            ]
        );
        watcher.stop();
        assert!(
            tokio::time::timeout(Duration::from_secs(5), result.recv())
                .await
                .unwrap()
                .is_none(),
            "stopping closes the result"
        );
        task.await.unwrap();
    }

    /// Found by the storage contract suite (`RunWatchSemantics`, RV=1): an event
    /// the watcher got among its initial events (from the ring) and then again
    /// from the dispatcher's queue is delivered once.
    #[tokio::test]
    async fn an_initial_event_still_queued_for_dispatch_is_not_delivered_twice() {
        let (watcher, channels) =
            CacheWatcher::new(10, WatchFilter::default(), None, false, "t".into());
        let initial = vec![
            event(EventType::Added, pod("p", 5, "n"), None),
            event(
                EventType::Modified,
                pod("p", 6, "n"),
                Some(pod("p", 5, "n")),
            ),
        ];
        let mut result = channels.result_rx;
        tokio::spawn(Arc::clone(&watcher).process(
            channels.input,
            channels.result_tx,
            initial,
            None,
            1,
        ));
        for rv in [6, 7] {
            assert!(watcher.nonblocking_add(&event(
                EventType::Modified,
                pod("p", rv, "n"),
                Some(pod("p", rv - 1, "n"))
            )));
        }
        let mut got = Vec::new();
        for _ in 0..3 {
            let next = tokio::time::timeout(Duration::from_secs(5), result.recv())
                .await
                .expect("an event");
            got.push(summary(next).map(|s| (s.0, s.2)));
        }
        assert_eq!(
            got,
            [
                Some((EventType::Added, "5".into())),
                Some((EventType::Modified, "6".into())),
                Some((EventType::Modified, "7".into()))
            ]
        );
        watcher.stop();
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_ends_the_watch_and_bookmarks_come_two_seconds_before_it() {
        let now = Instant::now();
        let deadline = now + Duration::from_secs(10);
        let (watcher, channels) = CacheWatcher::new(
            10,
            WatchFilter::default(),
            Some(deadline),
            true,
            "t".into(),
        );
        assert_eq!(
            watcher.next_bookmark_time(now, Duration::from_secs(60)),
            Some(deadline - Duration::from_secs(2))
        );
        assert_eq!(
            watcher.next_bookmark_time(now, Duration::from_secs(5)),
            Some(now + Duration::from_secs(5))
        );
        assert_eq!(
            watcher.next_bookmark_time(
                deadline - Duration::from_secs(1),
                Duration::from_secs(5)
            ),
            None
        );
        let mut result = channels.result_rx;
        tokio::spawn(Arc::clone(&watcher).process(
            channels.input,
            channels.result_tx,
            vec![],
            None,
            0,
        ));
        assert!(result.recv().await.is_none());
        assert_eq!(Instant::now(), deadline);
        assert!(watcher.is_stopped());
    }
}
