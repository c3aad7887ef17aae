//! Mirrors apiserver's `pkg/storage/cacher/watch_cache.go`: the in-memory state of
//! one resource type and a sliding window of its recent events.
//!
//! The watch cache is the store the Cacher's Reflector (stage 3) writes into. For
//! every change it keeps:
//! - the current object, in a stage 1 [`ThreadSafeStore`] indexed by namespace (and,
//!   for pods, by `spec.nodeName`), so lists are served from memory;
//! - a [`WatchCacheEvent`] in a ring buffer, so a watch can start from a recent
//!   resource version without going to etcd.
//!
//! The ring grows and shrinks between 100 and 102,400 events, aiming to hold the
//! last 75 s.
//!
//! # Memory usage
//!
//! The store and the ring share one [`CachedObject`] per object version: its JSON
//! (inside the watch line of the event that stored it) plus its labels and field
//! values, never the decoded object. An event adds only its own small record.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use apimachinery::watch::EventType;
use parking_lot::{RwLock, RwLockReadGuard};
use stage1_store::{
    BoxError, IndexValues, KeyGetter, KeyLister, Snapshot, Store, StoreError,
    ThreadSafeStore, index_func, indexers, meta_namespace_key_func,
};
use stage3_reflector::ResourceVersionUpdater;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::caching_object::{CachedObject, LabelMatcher};
use crate::probe::RingView;
use stage5_storage::StorageError;
use stage5_storage::{Object, ResourceInfo, SelectionPredicate};

/// Mirrors `defaultLowerBoundCapacity`: the smallest ring.
pub const DEFAULT_LOWER_BOUND_CAPACITY: usize = 100;
/// Mirrors `defaultUpperBoundCapacity`: the largest ring.
pub const DEFAULT_UPPER_BOUND_CAPACITY: usize = 100 * 1024;
/// Mirrors `eventFreshDuration`: how much history the ring aims to hold.
pub const EVENT_FRESH_DURATION: Duration = Duration::from_secs(75);
/// Mirrors `blockTimeout`: how long a read waits for the cache to reach a resource
/// version.
pub const BLOCK_TIMEOUT: Duration = Duration::from_secs(3);

/// Mirrors `resourceVersionTooHighRetrySeconds`: the `Retry-After` of a 504
/// `ResourceVersionTooLarge` from the cache.
pub const RESOURCE_VERSION_TOO_HIGH_RETRY_SECONDS: i32 = 1;
/// The store index of pods by node: the Cacher's indexed trigger
/// (`f:spec.nodeName`).
pub const NODE_NAME_INDEX: &str = "f:spec.nodeName";
/// The store index by namespace.
pub const NAMESPACE_INDEX: &str = "namespace";

/// Mirrors `minWatchChanSize`.
pub const MIN_WATCH_CHAN_SIZE: usize = 10;
/// Mirrors `maxWatchChanSizeWithIndexAndTrigger`.
pub const MAX_WATCH_CHAN_SIZE_WITH_INDEX_AND_TRIGGER: usize = 10;
/// Mirrors `maxWatchChanSizeWithIndexWithoutTrigger`.
pub const MAX_WATCH_CHAN_SIZE_WITH_INDEX_WITHOUT_TRIGGER: usize = 1000;
/// Mirrors `maxWatchChanSizeWithoutIndex`.
pub const MAX_WATCH_CHAN_SIZE_WITHOUT_INDEX: usize = 100;

// ANCHOR: watch_cache_event
/// Mirrors `watchCacheEvent`: one change with everything a watcher's filter needs,
/// computed once.
#[derive(Debug)]
pub struct WatchCacheEvent {
    /// Added, Modified, Deleted or Bookmark.
    pub event_type: EventType,
    /// The new object (for a delete, the last state at the delete's version),
    /// with its labels and field values (`GetAttrs`).
    pub object: Arc<CachedObject>,
    /// The object as the cache held it before this change, with its labels and
    /// field values.
    pub prev_object: Option<Arc<CachedObject>>,
    /// The store key, `namespace/name`.
    pub key: Arc<str>,
    /// The resource version of the change.
    pub resource_version: u64,
    /// When the cache recorded it (for the ring's resize rules).
    pub record_time: Instant,
    /// The previous object stamped with this event's version: what a watcher whose
    /// filter the object leaves receives as Deleted. Built once, on first use.
    prev_at_event_version: OnceLock<Arc<CachedObject>>,
}
// ANCHOR_END: watch_cache_event

impl WatchCacheEvent {
    /// An event with no previous object.
    pub fn new(
        event_type: EventType,
        object: Arc<CachedObject>,
        key: Arc<str>,
        resource_version: u64,
    ) -> Self {
        WatchCacheEvent {
            event_type,
            object,
            prev_object: None,
            key,
            resource_version,
            record_time: Instant::now(),
            prev_at_event_version: OnceLock::new(),
        }
    }

    /// The previous object with `metadata.resourceVersion` set to this event's
    /// version, shared by every watcher that needs it.
    pub fn prev_object_at_event_version(&self) -> Option<&Arc<CachedObject>> {
        let prev = self.prev_object.as_ref()?;
        Some(self.prev_at_event_version.get_or_init(|| {
            Arc::new(
                prev.at_resource_version(self.resource_version, EventType::Deleted),
            )
        }))
    }

    /// The namespace, from the fields.
    pub fn namespace(&self) -> &str {
        self.object.namespace()
    }
}

/// Mirrors `storeElement`: what the watch cache's store holds per key. Upstream
/// keeps the decoded object with its labels and fields; here the object is its
/// JSON, and the labels and fields live in the [`CachedObject`] (shared with the
/// event that stored it).
#[derive(Debug)]
pub struct StoreElement {
    /// `namespace/name`.
    pub key: Arc<str>,
    /// The object: its JSON, labels and field values.
    pub object: Arc<CachedObject>,
}

/// Options of a [`WatchCache`].
#[derive(Clone, Debug)]
pub struct WatchCacheOptions {
    /// The ring's starting capacity.
    pub initial_capacity: usize,
    /// The smallest capacity.
    pub lower_bound_capacity: usize,
    /// The largest capacity.
    pub upper_bound_capacity: usize,
    /// The history window the ring aims to hold.
    pub event_fresh_duration: Duration,
}

impl Default for WatchCacheOptions {
    fn default() -> Self {
        WatchCacheOptions {
            initial_capacity: DEFAULT_LOWER_BOUND_CAPACITY,
            lower_bound_capacity: DEFAULT_LOWER_BOUND_CAPACITY,
            upper_bound_capacity: DEFAULT_UPPER_BOUND_CAPACITY,
            event_fresh_duration: EVENT_FRESH_DURATION,
        }
    }
}

impl WatchCacheOptions {
    /// A fixed capacity (lower = initial = upper), as upstream's tests use.
    #[must_use]
    pub fn fixed_capacity(mut self, capacity: usize) -> Self {
        self.initial_capacity = capacity;
        self.lower_bound_capacity = capacity;
        self.upper_bound_capacity = capacity;
        self
    }
}

/// What the watch cache calls after each change (outside its lock): the Cacher's
/// `processEvent`, which queues the event for dispatch.
pub type EventHandler = Box<dyn Fn(Arc<WatchCacheEvent>) + Send + Sync>;
/// What the watch cache calls after each replace (a relist): the Cacher marks itself
/// ready.
pub type ReplaceHandler = Box<dyn Fn() + Send + Sync>;

// ANCHOR: watch_cache
/// Mirrors `watchCache`.
///
/// Locking: one `RwLock` over the ring, the store and the versions. Writers are the
/// Reflector (one task). The Cacher holds the read lock while it takes a watcher's
/// initial events and registers it, so no event can slip between the two.
pub struct WatchCache {
    info: ResourceInfo,
    inner: RwLock<Inner>,
    /// The resource version, for waiters (upstream's `cond.Broadcast`).
    resource_version_tx: watch::Sender<u64>,
    event_handler: Option<EventHandler>,
    on_replace: Option<ReplaceHandler>,
    event_fresh_duration: Duration,
}

/// The state behind the lock.
pub struct Inner {
    capacity: usize,
    lower_bound_capacity: usize,
    upper_bound_capacity: usize,
    event_fresh_duration: Duration,
    /// The ring: events `start_index..end_index` live at `index % capacity`.
    cache: Vec<Option<Arc<WatchCacheEvent>>>,
    start_index: usize,
    end_index: usize,
    /// Whether an event has left the ring since the last relist.
    removed_event_since_relist: bool,
    store: ThreadSafeStore<StoreElement>,
    resource_version: u64,
    list_resource_version: u64,
    /// How often the ring changed size (for the live page).
    resizes: u64,
}
// ANCHOR_END: watch_cache

impl std::fmt::Debug for WatchCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("WatchCache")
            .field("resource", &self.info.plural)
            .field("capacity", &inner.capacity)
            .field("events", &(inner.end_index - inner.start_index))
            .field("objects", &inner.store.len())
            .field("resource_version", &inner.resource_version)
            .finish()
    }
}

fn store_indexers(info: &ResourceInfo) -> stage1_store::Indexers<StoreElement> {
    let mut map = indexers([(
        NAMESPACE_INDEX,
        index_func(|e: &StoreElement| -> Result<IndexValues<'_>, BoxError> {
            Ok(smallvec::smallvec![std::borrow::Cow::Borrowed(
                e.object.namespace()
            )])
        }),
    )]);
    if info.field_labels.contains(&"spec.nodeName") {
        map.insert(
            NODE_NAME_INDEX.to_string(),
            index_func(|e: &StoreElement| -> Result<IndexValues<'_>, BoxError> {
                Ok(smallvec::smallvec![std::borrow::Cow::Borrowed(
                    e.object.field("spec.nodeName").unwrap_or("")
                )])
            }),
        );
    }
    map
}

impl WatchCache {
    /// Mirrors `newWatchCache`: an empty, not yet listed cache of `info`'s objects.
    pub fn new(
        info: ResourceInfo,
        options: WatchCacheOptions,
        event_handler: Option<EventHandler>,
        on_replace: Option<ReplaceHandler>,
    ) -> Self {
        let capacity = options.initial_capacity.max(1);
        let store = ThreadSafeStore::new(store_indexers(&info));
        WatchCache {
            inner: RwLock::new(Inner {
                capacity,
                lower_bound_capacity: options.lower_bound_capacity.max(1),
                upper_bound_capacity: options.upper_bound_capacity.max(capacity),
                event_fresh_duration: options.event_fresh_duration,
                cache: vec![None; capacity],
                start_index: 0,
                end_index: 0,
                removed_event_since_relist: false,
                store,
                resource_version: 0,
                list_resource_version: 0,
                resizes: 0,
            }),
            resource_version_tx: watch::Sender::new(0),
            event_handler,
            on_replace,
            event_fresh_duration: options.event_fresh_duration,
            info,
        }
    }

    /// The resource type.
    pub fn info(&self) -> &ResourceInfo {
        &self.info
    }

    /// The ring's capacity now.
    pub fn capacity(&self) -> usize {
        self.inner.read().capacity
    }

    /// The newest resource version the cache has seen (events and bookmarks).
    pub fn resource_version(&self) -> u64 {
        self.inner.read().resource_version
    }

    /// How many events the ring holds.
    pub fn len(&self) -> usize {
        let inner = self.inner.read();
        inner.end_index - inner.start_index
    }

    /// Whether the ring holds no event.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes the read lock: while the guard lives no event is processed.
    pub fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read()
    }

    /// The history window.
    pub fn event_fresh_duration(&self) -> Duration {
        self.event_fresh_duration
    }

    // ANCHOR: process_event
    /// Mirrors `watchCache.processEvent`: builds the event (with the previous object
    /// from the store), then, under the lock, appends it to the ring, updates
    /// the store and the resource version; wakes waiters, and calls the event
    /// handler outside the lock.
    pub fn process_event(
        &self,
        event_type: EventType,
        obj: Arc<Object>,
    ) -> Result<(), StoreError> {
        let key: Arc<str> = meta_namespace_key_func(&*obj)?.into();
        let resource_version = parse_rv(obj.resource_version())?;
        // The object is encoded here, once, and dropped: the cache keeps its JSON.
        let object = Arc::new(CachedObject::new(&self.info, event_type, &obj));
        drop(obj);
        let mut event = WatchCacheEvent::new(
            event_type,
            Arc::clone(&object),
            Arc::clone(&key),
            resource_version,
        );
        let event = {
            let mut inner = self.inner.write();
            if let Some(previous) = inner.store.get(&key) {
                event.prev_object = Some(Arc::clone(&previous.object));
            }
            let event = Arc::new(event);
            inner.update_cache(Arc::clone(&event));
            inner.resource_version = resource_version;
            match event_type {
                EventType::Deleted => inner.store.delete(&key)?,
                _ => inner.store.update(
                    &key,
                    Arc::new(StoreElement {
                        key: Arc::clone(&key),
                        object,
                    }),
                )?,
            }
            event
        };
        self.resource_version_tx.send_replace(resource_version);
        if let Some(handler) = &self.event_handler {
            handler(event);
        }
        Ok(())
    }
    // ANCHOR_END: process_event

    /// Mirrors `watchCache.Replace`: a relist. The ring is emptied, the store
    /// replaced, the versions set to the list's, and the cache becomes ready.
    pub fn replace_objects(
        &self,
        objs: Vec<Arc<Object>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        let version = parse_rv(resource_version)?;
        let mut elements = Vec::with_capacity(objs.len());
        for obj in objs {
            let key: Arc<str> = meta_namespace_key_func(&*obj)?.into();
            let object =
                Arc::new(CachedObject::new(&self.info, EventType::Added, &obj));
            drop(obj);
            elements
                .push((Arc::clone(&key), Arc::new(StoreElement { key, object })));
        }
        {
            let mut inner = self.inner.write();
            inner.store.replace(elements, resource_version)?;
            inner.start_index = 0;
            inner.end_index = 0;
            inner.cache.iter_mut().for_each(|slot| *slot = None);
            inner.removed_event_since_relist = false;
            inner.list_resource_version = version;
            inner.resource_version = version;
        }
        self.resource_version_tx.send_replace(version);
        if let Some(on_replace) = &self.on_replace {
            on_replace();
        }
        Ok(())
    }

    /// Mirrors `watchCache.UpdateResourceVersion`: a bookmark moved the version
    /// without a change. The handler gets a Bookmark event (which the Cacher
    /// records but does not forward).
    pub fn update_resource_version_to(&self, resource_version: u64) {
        {
            let mut inner = self.inner.write();
            if resource_version <= inner.resource_version {
                return;
            }
            inner.resource_version = resource_version;
        }
        self.resource_version_tx.send_replace(resource_version);
        if let Some(handler) = &self.event_handler {
            let bookmark = Object {
                types: Some(self.info.type_meta()),
                metadata:
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        resource_version: Some(resource_version.to_string()),
                        ..Default::default()
                    },
                data: serde_json::Value::Object(Default::default()),
            };
            handler(Arc::new(WatchCacheEvent::new(
                EventType::Bookmark,
                Arc::new(CachedObject::new(
                    &self.info,
                    EventType::Bookmark,
                    &bookmark,
                )),
                Arc::from(""),
                resource_version,
            )));
        }
    }

    /// Mirrors `watchCache.waitUntilFreshAndBlock`: waits (up to [`BLOCK_TIMEOUT`])
    /// until the cache has reached `resource_version`; else 504 with the
    /// `ResourceVersionTooLarge` cause.
    pub async fn wait_until_fresh(
        &self,
        resource_version: u64,
    ) -> Result<(), StorageError> {
        self.wait_until_fresh_within(resource_version, BLOCK_TIMEOUT)
            .await
    }

    /// Like [`wait_until_fresh`](Self::wait_until_fresh), waiting at most `timeout`.
    pub async fn wait_until_fresh_within(
        &self,
        resource_version: u64,
        timeout: Duration,
    ) -> Result<(), StorageError> {
        let mut rx = self.resource_version_tx.subscribe();
        let waited =
            tokio::time::timeout(timeout, rx.wait_for(|rv| *rv >= resource_version))
                .await;
        match waited {
            Ok(Ok(_)) => Ok(()),
            _ => Err(StorageError::TooLargeResourceVersion {
                requested: resource_version,
                current: *self.resource_version_tx.borrow(),
                retry_after_seconds: RESOURCE_VERSION_TOO_HIGH_RETRY_SECONDS,
            }),
        }
    }

    /// Forgets every event at or below `resource_version`, as if the history had
    /// been compacted there: a watch from an older version then gets 410 (or, with
    /// no event left, an internal error). The Cacher never does this itself; it is
    /// the watch-cache half of upstream's test helper `compactStorage`
    /// (`cacher_test.go`), which the storage contract suite's compaction needs.
    pub fn compact(&self, resource_version: u64) {
        let mut inner = self.inner.write();
        while inner.start_index < inner.end_index {
            let slot = inner.start_index % inner.capacity;
            if inner.cache[slot]
                .as_ref()
                .is_some_and(|e| e.resource_version > resource_version)
            {
                break;
            }
            inner.cache[slot] = None;
            inner.start_index += 1;
            inner.removed_event_since_relist = true;
        }
        inner.list_resource_version = resource_version;
    }

    /// Mirrors `watchCache.GetAllEventsSince` (taking the read lock itself).
    pub fn get_all_events_since(
        &self,
        resource_version: u64,
    ) -> Result<Vec<Arc<WatchCacheEvent>>, StorageError> {
        self.inner
            .read()
            .get_all_events_since_thread_unsafe(resource_version)
    }

    /// Lists the cached objects under `namespace` (all when `None`) that `predicate`
    /// selects, in key order, with the cache's resource version. Uses the
    /// node-name index when the field selector pins `spec.nodeName` (upstream's
    /// `listItems` with `IndexFields`). The objects stay encoded: the caller
    /// decodes ([`CachedObject::object`]) or copies the JSON.
    pub fn list(
        &self,
        namespace: Option<&str>,
        predicate: &SelectionPredicate,
    ) -> (Vec<Arc<CachedObject>>, u64) {
        let inner = self.inner.read();
        // An index answers with a fresh vector, a whole-store list with the
        // shared snapshot; either is read as a slice, never copied.
        let indexed: Vec<Arc<StoreElement>>;
        let snapshot: Snapshot<Arc<StoreElement>>;
        let elements: &[Arc<StoreElement>] =
            match predicate.field.requires_exact_match("spec.nodeName") {
                Some(node) if self.info.field_labels.contains(&"spec.nodeName") => {
                    indexed = inner
                        .store
                        .by_index(NODE_NAME_INDEX, node)
                        .unwrap_or_default();
                    &indexed
                }
                _ => match namespace {
                    Some(ns) => {
                        indexed = inner
                            .store
                            .by_index(NAMESPACE_INDEX, ns)
                            .unwrap_or_default();
                        &indexed
                    }
                    None => {
                        snapshot = inner.store.list();
                        &snapshot
                    }
                },
            };
        let resource_version = inner.resource_version;
        drop(inner);
        let everything = predicate.is_everything();
        let labels = LabelMatcher::new(&predicate.label);
        let mut selected: Vec<&Arc<StoreElement>> = elements
            .iter()
            .filter(|e| namespace.is_none_or(|ns| e.object.namespace() == ns))
            .filter(|e| {
                everything
                    || (labels.matches(e.object.attributes())
                        && predicate.field.matches(e.object.attributes()))
            })
            .collect();
        selected.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        (
            selected
                .into_iter()
                .map(|e| Arc::clone(&e.object))
                .collect(),
            resource_version,
        )
    }

    /// The cached element under `key` (`namespace/name`).
    pub fn get_element(&self, key: &str) -> Option<Arc<StoreElement>> {
        self.inner.read().store.get(key)
    }

    /// Mirrors `watchCache.suggestedWatchChannelSize`: room for about one second of
    /// history (capacity / 75 s, at least 10), capped at 10 for a watcher with
    /// an index and a trigger value, 1000 with an index but no trigger value,
    /// and 100 without an index.
    pub fn suggested_watch_channel_size(
        &self,
        index_exists: bool,
        trigger_used: bool,
    ) -> usize {
        suggested_watch_channel_size(
            self.capacity(),
            self.event_fresh_duration,
            index_exists,
            trigger_used,
        )
    }
}

// ANCHOR: suggested_watch_channel_size
/// The channel-size heuristic as a pure function (see
/// [`WatchCache::suggested_watch_channel_size`]).
pub fn suggested_watch_channel_size(
    capacity: usize,
    event_fresh_duration: Duration,
    index_exists: bool,
    trigger_used: bool,
) -> usize {
    let per_second =
        (capacity as f64 / event_fresh_duration.as_secs_f64()).ceil() as usize;
    let size = per_second.max(MIN_WATCH_CHAN_SIZE);
    let max = match (index_exists, trigger_used) {
        (true, true) => MAX_WATCH_CHAN_SIZE_WITH_INDEX_AND_TRIGGER,
        (true, false) => MAX_WATCH_CHAN_SIZE_WITH_INDEX_WITHOUT_TRIGGER,
        (false, _) => MAX_WATCH_CHAN_SIZE_WITHOUT_INDEX,
    };
    size.min(max)
}
// ANCHOR_END: suggested_watch_channel_size

impl Inner {
    /// The ring's capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The cache's resource version.
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    fn is_cache_full(&self) -> bool {
        self.end_index == self.start_index + self.capacity
    }

    // ANCHOR: update_cache
    /// Mirrors `watchCache.updateCache`: resize if the rules say so, evict the
    /// oldest event when full, append.
    fn update_cache(&mut self, event: Arc<WatchCacheEvent>) {
        self.resize_cache(event.record_time);
        if self.is_cache_full() {
            self.cache[self.start_index % self.capacity] = None;
            self.start_index += 1;
            self.removed_event_since_relist = true;
        }
        let slot = self.end_index % self.capacity;
        self.cache[slot] = Some(event);
        self.end_index += 1;
    }
    // ANCHOR_END: update_cache

    // ANCHOR: resize
    /// Mirrors `watchCache.resizeCacheLocked`. When full: if even the oldest event
    /// is younger than the history window, double (up to the upper bound); if
    /// the event a quarter of the capacity from the end is older than the
    /// window, halve (down to the lower bound).
    fn resize_cache(&mut self, event_time: Instant) {
        // ANCHOR: ex5-resize
        if !self.is_cache_full() {
            return;
        }
        let record_time = |index: usize| {
            self.cache[index % self.capacity]
                .as_ref()
                .map(|e| e.record_time)
                .unwrap_or(event_time)
        };
        let oldest = record_time(self.start_index);
        if event_time.saturating_duration_since(oldest) < self.event_fresh_duration {
            let capacity = (self.capacity * 2).min(self.upper_bound_capacity);
            if capacity > self.capacity {
                self.do_cache_resize(capacity);
            }
            return;
        }
        let quarter_from_end = record_time(self.end_index - self.capacity / 4);
        if event_time.saturating_duration_since(quarter_from_end)
            > self.event_fresh_duration
        {
            let capacity = (self.capacity / 2).max(self.lower_bound_capacity);
            if capacity < self.capacity {
                self.do_cache_resize(capacity);
            }
        }
        // ANCHOR_END: ex5-resize
    }
    // ANCHOR_END: resize

    /// Mirrors `watchCache.doCacheResizeLocked`: copies the live events into a ring
    /// of the new capacity; shrinking keeps the newest.
    fn do_cache_resize(&mut self, capacity: usize) {
        let mut cache = vec![None; capacity];
        if capacity < self.capacity {
            self.start_index = self.end_index - capacity;
        }
        for i in self.start_index..self.end_index {
            cache[i % capacity] = self.cache[i % self.capacity].take();
        }
        self.cache = cache;
        self.capacity = capacity;
        self.resizes += 1;
    }

    /// The ring as the live page draws it: its size, the version of each event
    /// it holds, the oldest version a watch may start from and the time it
    /// spans.
    pub fn ring_view(&self) -> RingView {
        let events: Vec<&Arc<WatchCacheEvent>> = (self.start_index..self.end_index)
            .filter_map(|i| self.cache[i % self.capacity].as_ref())
            .collect();
        let versions: Vec<u64> = events.iter().map(|e| e.resource_version).collect();
        let window = match (events.first(), events.last()) {
            (Some(first), Some(last)) => last
                .record_time
                .saturating_duration_since(first.record_time),
            _ => Duration::ZERO,
        };
        let oldest_rv = if self.removed_event_since_relist {
            versions.first().copied().unwrap_or(self.resource_version)
        } else {
            self.list_resource_version.saturating_add(1)
        };
        RingView {
            capacity: self.capacity,
            oldest_rv,
            newest_rv: versions.last().copied().unwrap_or(self.resource_version),
            versions,
            window_secs: window.as_secs_f64(),
            resizes: self.resizes,
            lower_bound: self.lower_bound_capacity,
            upper_bound: self.upper_bound_capacity,
        }
    }

    // ANCHOR: get_all_events_since
    /// Mirrors `watchCache.getAllEventsSinceThreadUnsafe`: the events after
    /// `resource_version`.
    ///
    /// The oldest version a watch can start from is the list version + 1 while no
    /// event has left the ring since the relist, else the oldest event's. Older
    /// is 410 Expired. Version 0 means "now": the current state as Added events.
    pub fn get_all_events_since_thread_unsafe(
        &self,
        resource_version: u64,
    ) -> Result<Vec<Arc<WatchCacheEvent>>, StorageError> {
        // ANCHOR: ex5-events-since
        let size = self.end_index - self.start_index;
        // Checked arithmetic on versions: a list version of `u64::MAX` (which etcd
        // never reports) keeps `oldest` at the edge instead of wrapping to 0.
        let oldest =
            if self.list_resource_version > 0 && !self.removed_event_since_relist {
                self.list_resource_version.saturating_add(1)
            } else if size > 0 {
                self.event_at(self.start_index).resource_version
            } else {
                return Err(StorageError::Internal(
                    "watch cache isn't correctly initialized".into(),
                ));
            };
        if resource_version == 0 {
            return Ok(self.all_events_from_store());
        }
        let oldest_start = oldest.saturating_sub(1);
        if resource_version < oldest_start {
            return Err(StorageError::Expired(format!(
                "too old resource version: {resource_version} ({oldest_start})"
            )));
        }
        // The first event newer than the requested version: the ring is sorted by
        // version.
        let first = partition_point(size, |i| {
            self.event_at(self.start_index + i).resource_version <= resource_version
        });
        Ok((first..size)
            .map(|i| Arc::clone(self.event_at(self.start_index + i)))
            .collect())
        // ANCHOR_END: ex5-events-since
    }
    // ANCHOR_END: get_all_events_since

    fn event_at(&self, index: usize) -> &Arc<WatchCacheEvent> {
        self.cache[index % self.capacity]
            .as_ref()
            .unwrap_or_else(|| {
                unreachable!("ring slots between start and end are filled")
            })
    }

    /// Mirrors `getIntervalFromStoreLocked`: the current state as Added events at
    /// the cache's version (what a watch from version 0, or a watch-list, starts
    /// with), whatever the ring holds.
    pub fn all_events_from_store(&self) -> Vec<Arc<WatchCacheEvent>> {
        let snapshot = self.store.list();
        let mut elements: Vec<&Arc<StoreElement>> = snapshot.iter().collect();
        elements.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        elements
            .into_iter()
            .map(|e| {
                Arc::new(WatchCacheEvent::new(
                    EventType::Added,
                    Arc::clone(&e.object),
                    Arc::clone(&e.key),
                    self.resource_version,
                ))
            })
            .collect()
    }
}

/// `sort.Search`: the first index in `0..size` for which `below` is false.
fn partition_point(size: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, size);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

fn parse_rv(rv: &str) -> Result<u64, StoreError> {
    rv.parse::<u64>().map_err(|_| {
        StoreError::Other(
            format!("object has an invalid resourceVersion {rv:?}").into(),
        )
    })
}

// The watch cache is the Reflector's store (stage 3 writes into any stage 1
// `Store`).
impl KeyLister for WatchCache {
    fn list_keys(&self) -> Snapshot<Arc<str>> {
        self.inner.read().store.list_keys()
    }
}

impl KeyGetter<Object> for WatchCache {
    fn get_by_key(&self, key: &str) -> Option<Arc<Object>> {
        self.get_element(key).map(|e| e.object.object())
    }
}

impl Store<Object> for WatchCache {
    fn add(&self, obj: Arc<Object>) -> Result<(), StoreError> {
        self.process_event(EventType::Added, obj)
    }

    fn update(&self, obj: Arc<Object>) -> Result<(), StoreError> {
        self.process_event(EventType::Modified, obj)
    }

    fn delete(&self, obj: Arc<Object>) -> Result<(), StoreError> {
        self.process_event(EventType::Deleted, obj)
    }

    fn list(&self) -> Snapshot<Arc<Object>> {
        self.inner
            .read()
            .store
            .list()
            .iter()
            .map(|e| e.object.object())
            .collect()
    }

    fn get(&self, obj: &Object) -> Result<Option<Arc<Object>>, StoreError> {
        let key = meta_namespace_key_func(obj)?;
        Ok(self.get_by_key(&key))
    }

    fn replace(
        &self,
        list: Vec<Arc<Object>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        self.replace_objects(list, resource_version)
    }

    fn resync(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

impl ResourceVersionUpdater for WatchCache {
    fn update_resource_version(&self, resource_version: &str) {
        match resource_version.parse::<u64>() {
            Ok(rv) => self.update_resource_version_to(rv),
            Err(_) => {
                tracing::error!(resource_version, "couldn't parse resourceVersion")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, rv: u64, node: &str) -> Arc<Object> {
        let mut obj = Object::new(&ResourceInfo::PODS, Some("ns"), name)
            .with_data(serde_json::json!({"spec": {"nodeName": node}}));
        obj.metadata.resource_version = Some(rv.to_string());
        Arc::new(obj)
    }

    fn cache(capacity: usize) -> WatchCache {
        WatchCache::new(
            ResourceInfo::PODS,
            WatchCacheOptions::default().fixed_capacity(capacity),
            None,
            None,
        )
    }

    fn versions(events: &[Arc<WatchCacheEvent>]) -> Vec<(EventType, u64)> {
        events
            .iter()
            .map(|e| (e.event_type, e.resource_version))
            .collect()
    }

    mod ex5_events_since {
        use super::*;

        /// Upstream's `TestEvents`, in this crate's words: a ring of 5 across adds,
        /// updates, deletes and a replace.
        #[test]
        fn ex5_events_since_slides_a_window_of_five() {
            let cache = cache(5);
            cache.replace_objects(vec![], "4").unwrap();
            // Before any event, everything after the list version is available.
            assert_eq!(cache.get_all_events_since(4).unwrap().len(), 0);
            assert!(matches!(
                cache.get_all_events_since(2),
                Err(StorageError::Expired(_))
            ));

            cache
                .process_event(EventType::Added, pod("pod", 5, "n"))
                .unwrap();
            let events = cache.get_all_events_since(4).unwrap();
            assert_eq!(versions(&events), [(EventType::Added, 5)]);
            assert!(events[0].prev_object.is_none());

            for rv in 6..10 {
                cache
                    .process_event(EventType::Modified, pod("pod", rv, "n"))
                    .unwrap();
            }
            // 5 events, nothing evicted yet: the window still starts right after the
            // list.
            assert_eq!(cache.get_all_events_since(4).unwrap().len(), 5);
            let events = cache.get_all_events_since(7).unwrap();
            assert_eq!(
                versions(&events),
                [(EventType::Modified, 8), (EventType::Modified, 9)]
            );
            // The previous object is the state before the change.
            assert_eq!(
                events[0]
                    .prev_object
                    .as_ref()
                    .unwrap()
                    .object()
                    .resource_version(),
                "7"
            );

            // Two more: 5 and 6 are evicted; 6 is the oldest version a watch can
            // start from.
            cache
                .process_event(EventType::Modified, pod("pod", 10, "n"))
                .unwrap();
            cache
                .process_event(EventType::Deleted, pod("pod", 11, "n"))
                .unwrap();
            let err = cache.get_all_events_since(5).unwrap_err();
            assert_eq!(
                err,
                StorageError::Expired("too old resource version: 5 (6)".into())
            );
            let events = cache.get_all_events_since(6).unwrap();
            assert_eq!(
                versions(&events),
                [
                    (EventType::Modified, 7),
                    (EventType::Modified, 8),
                    (EventType::Modified, 9),
                    (EventType::Modified, 10),
                    (EventType::Deleted, 11)
                ]
            );
            assert!(
                cache.get_by_key("ns/pod").is_none(),
                "the delete left the store"
            );
            assert_eq!(cache.get_all_events_since(11).unwrap().len(), 0);

            // A replace empties the ring; the window starts after the new list.
            cache
                .replace_objects(vec![pod("other", 12, "n")], "12")
                .unwrap();
            assert_eq!(cache.get_all_events_since(12).unwrap().len(), 0);
            assert!(cache.get_all_events_since(10).is_err());
            // Version 0: the current state, as Added at the cache's version.
            let now = cache.get_all_events_since(0).unwrap();
            assert_eq!(versions(&now), [(EventType::Added, 12)]);
            assert_eq!(&*now[0].key, "ns/other");
        }

        #[test]
        fn ex5_events_since_needs_an_initialised_cache() {
            let cache = cache(5);
            assert!(matches!(
                cache.get_all_events_since(1),
                Err(StorageError::Internal(_))
            ));
        }
    }

    mod ex5_resize {
        use super::*;

        fn growing_cache() -> WatchCache {
            WatchCache::new(
                ResourceInfo::PODS,
                WatchCacheOptions {
                    initial_capacity: 4,
                    lower_bound_capacity: 4,
                    upper_bound_capacity: 16,
                    event_fresh_duration: Duration::from_secs(75),
                },
                None,
                None,
            )
        }

        #[tokio::test(start_paused = true)]
        async fn ex5_resize_doubles_while_the_history_is_fresh_up_to_the_bound() {
            let cache = growing_cache();
            cache.replace_objects(vec![], "1").unwrap();
            for rv in 2..6 {
                cache
                    .process_event(EventType::Added, pod(&format!("p{rv}"), rv, "n"))
                    .unwrap();
            }
            assert_eq!(cache.capacity(), 4);
            // Full, and the oldest event is seconds old: double instead of evicting.
            cache
                .process_event(EventType::Added, pod("p6", 6, "n"))
                .unwrap();
            assert_eq!(cache.capacity(), 8);
            assert_eq!(cache.len(), 5);
            for rv in 7..40 {
                cache
                    .process_event(EventType::Added, pod(&format!("p{rv}"), rv, "n"))
                    .unwrap();
            }
            assert_eq!(cache.capacity(), 16, "never above the upper bound");
            assert_eq!(cache.len(), 16);
        }

        #[tokio::test(start_paused = true)]
        async fn ex5_resize_halves_when_a_quarter_of_the_history_is_stale() {
            let cache = growing_cache();
            cache.replace_objects(vec![], "1").unwrap();
            for rv in 2..10 {
                cache
                    .process_event(EventType::Added, pod(&format!("p{rv}"), rv, "n"))
                    .unwrap();
            }
            assert_eq!(cache.capacity(), 8);
            tokio::time::advance(Duration::from_secs(80)).await;
            // Full, and the event capacity/4 from the end is older than 75 s: halve.
            cache
                .process_event(EventType::Added, pod("p10", 10, "n"))
                .unwrap();
            assert_eq!(cache.capacity(), 4);
            // The newest events survive the shrink (read straight from the ring, so
            // that this test needs no other exercise's region).
            let kept: Vec<u64> = {
                let inner = cache.inner.read();
                (inner.start_index..inner.end_index)
                    .filter_map(|i| inner.cache[i % inner.capacity].as_ref())
                    .map(|e| e.resource_version)
                    .collect()
            };
            assert_eq!(kept, [7, 8, 9, 10]);
            tokio::time::advance(Duration::from_secs(80)).await;
            cache
                .process_event(EventType::Added, pod("p11", 11, "n"))
                .unwrap();
            assert_eq!(cache.capacity(), 4, "never below the lower bound");
        }

        #[tokio::test(start_paused = true)]
        async fn ex5_resize_keeps_the_capacity_in_between() {
            let cache = growing_cache();
            cache.replace_objects(vec![], "1").unwrap();
            for rv in 2..6 {
                cache
                    .process_event(EventType::Added, pod(&format!("p{rv}"), rv, "n"))
                    .unwrap();
                // Spread over 100 s: the oldest is stale but the last quarter is
                // fresh.
                tokio::time::advance(Duration::from_secs(25)).await;
            }
            cache
                .process_event(EventType::Added, pod("p6", 6, "n"))
                .unwrap();
            assert_eq!(cache.capacity(), 4);
        }
    }

    #[test]
    fn the_channel_size_holds_about_a_second_of_history_within_caps() {
        let fresh = EVENT_FRESH_DURATION;
        // 100 / 75 s → 2, raised to the minimum of 10.
        assert_eq!(suggested_watch_channel_size(100, fresh, true, true), 10);
        assert_eq!(suggested_watch_channel_size(100, fresh, true, false), 10);
        assert_eq!(suggested_watch_channel_size(100, fresh, false, false), 10);
        // 102,400 / 75 s → 1366, capped by the kind of watcher.
        let big = DEFAULT_UPPER_BOUND_CAPACITY;
        assert_eq!(suggested_watch_channel_size(big, fresh, true, true), 10);
        assert_eq!(suggested_watch_channel_size(big, fresh, true, false), 1000);
        assert_eq!(suggested_watch_channel_size(big, fresh, false, false), 100);
        // 7,500 / 75 s → 100.
        assert_eq!(suggested_watch_channel_size(7_500, fresh, true, false), 100);
    }

    #[tokio::test]
    async fn waiting_until_fresh_is_bounded_and_woken_by_events() {
        let cache = Arc::new(cache(5));
        cache.replace_objects(vec![], "3").unwrap();
        assert!(cache.wait_until_fresh(3).await.is_ok());
        let waiter = {
            let cache = Arc::clone(&cache);
            tokio::spawn(async move { cache.wait_until_fresh(5).await })
        };
        tokio::task::yield_now().await;
        cache
            .process_event(EventType::Added, pod("a", 5, "n"))
            .unwrap();
        assert!(waiter.await.unwrap().is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_for_a_version_the_cache_never_reaches_is_504() {
        let cache = cache(5);
        cache.replace_objects(vec![], "3").unwrap();
        let err = cache.wait_until_fresh(9).await.unwrap_err();
        assert_eq!(
            err,
            StorageError::TooLargeResourceVersion {
                requested: 9,
                current: 3,
                retry_after_seconds: 1,
            }
        );
    }

    /// Versions up to `u64::MAX` are plain `u64`s here: a watch after any of
    /// them gets no event and no error, and waiting for one is a 504 naming it.
    #[tokio::test(start_paused = true)]
    async fn versions_at_the_integer_limits_never_wrap() {
        let cache = cache(5);
        cache.replace_objects(vec![], "3").unwrap();
        for rv in [i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let events = cache
                .read()
                .get_all_events_since_thread_unsafe(rv)
                .expect("a future version is not too old");
            assert!(events.is_empty());
            assert_eq!(
                cache.wait_until_fresh(rv).await.unwrap_err(),
                StorageError::TooLargeResourceVersion {
                    requested: rv,
                    current: 3,
                    retry_after_seconds: 1,
                }
            );
        }
    }

    #[test]
    fn lists_use_the_node_index_and_sort_by_key() {
        let cache = cache(5);
        cache
            .replace_objects(
                vec![pod("b", 2, "n1"), pod("a", 2, "n1"), pod("c", 2, "n2")],
                "2",
            )
            .unwrap();
        let on_n1 =
            SelectionPredicate::parse(&ResourceInfo::PODS, "", "spec.nodeName=n1")
                .unwrap();
        let (items, rv) = cache.list(Some("ns"), &on_n1);
        assert_eq!(rv, 2);
        assert_eq!(
            items.iter().map(|o| o.name()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        let (items, _) =
            cache.list(Some("elsewhere"), &SelectionPredicate::default());
        assert!(items.is_empty());
    }

    #[test]
    fn bookmarks_from_storage_only_move_the_version_forward() {
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let cache = WatchCache::new(
            ResourceInfo::PODS,
            WatchCacheOptions::default(),
            Some(Box::new(move |e: Arc<WatchCacheEvent>| {
                sink.lock().push((e.event_type, e.resource_version))
            })),
            None,
        );
        cache.replace_objects(vec![], "5").unwrap();
        cache.update_resource_version("9");
        cache.update_resource_version("7");
        assert_eq!(cache.resource_version(), 9);
        assert_eq!(*seen.lock(), [(EventType::Bookmark, 9)]);
    }
}
