//! Mirrors apiserver's `pkg/storage/cacher/cacher.go`: the watch cache of one
//! resource type and its watchers.
//!
//! A [`Cacher`] runs two tasks: a stage 3 [`Reflector`] that lists and watches the
//! etcd3 storage into the [`WatchCache`], and the dispatcher, which hands every
//! event to the interested [`CacheWatcher`]s. Reads and watches are served from
//! memory; writes go to etcd.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};
use apimachinery::watch::{EventType, WatchEvent};
use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use parking_lot::Mutex;
use stage3_reflector::{Reflector, ReflectorOptions};
use stage5_storage::Watch;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::cache_watcher::{CacheWatcher, KeyFilter, WatchFilter, WatcherEvent};
use crate::caching_object::CachedObject;
use crate::lister_watcher::StorageListerWatcher;
use crate::probe::{
    CacherView, EndReason, Probe, WATCHERS_SHOWN, WatcherView, What,
};
use crate::time_budget::TimeBudget;
use crate::watch_cache::{WatchCache, WatchCacheEvent, WatchCacheOptions};
use apimachinery::runtime::CacheableObject;
use apimachinery::runtime::serializer::streaming::{
    EncodedEvent, EncodedWatch, encode_bookmark, encode_line, encode_status,
};
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::{
    EncodedListResult, GetOptions, KeyScope, ListResult, Preconditions, Storage,
    StorageError, UpdateFn, parse_resource_version,
};
use stage5_storage::{Object, ResourceInfo, SelectionPredicate};

/// A `GetList` answer before it is decoded or encoded.
enum CachedList {
    /// From etcd.
    Delegated(ListResult),
    /// From the watch cache, in key order.
    Cached {
        items: Vec<Arc<CachedObject>>,
        resource_version: u64,
    },
}

/// Mirrors `defaultBookmarkFrequency`: how often a bookmark-allowing watcher gets a
/// bookmark.
pub const DEFAULT_BOOKMARK_FREQUENCY: Duration = Duration::from_secs(60);
/// How often a waiting consistent read asks etcd for progress (upstream's
/// `progressRequestPeriod`).
pub const PROGRESS_REQUEST_PERIOD: Duration = Duration::from_millis(100);
/// The dispatcher's bookmark timer: 1 s, jittered by ±25 % (0.75 to 1.25 s).
/// Upstream's `wait.Jitter(time.Second, 0.25)` only adds: 1 to 1.25 s.
pub const BOOKMARK_TIMER_PERIOD: Duration = Duration::from_secs(1);

/// Options of a [`Cacher`].
#[derive(Clone, Debug)]
pub struct CacherConfig {
    /// The watch cache's ring sizes.
    pub watch_cache: WatchCacheOptions,
    /// How often watchers get bookmarks.
    pub bookmark_frequency: Duration,
    /// The Reflector's list page size.
    pub list_page_size: u32,
    /// Where the Cacher tells a live page what happens.
    pub probe: Probe,
}

impl Default for CacherConfig {
    fn default() -> Self {
        CacherConfig {
            watch_cache: WatchCacheOptions::default(),
            bookmark_frequency: DEFAULT_BOOKMARK_FREQUENCY,
            list_page_size: 10_000,
            probe: Probe::new(),
        }
    }
}

impl CacherConfig {
    /// A fixed ring capacity (no resizing), like `--watch-cache-sizes`.
    #[must_use]
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.watch_cache = self.watch_cache.fixed_capacity(capacity);
        self
    }

    /// Notes go to `probe` (one probe shared by a server's Cachers).
    #[must_use]
    pub fn probe(mut self, probe: Probe) -> Self {
        self.probe = probe;
        self
    }

    /// Another bookmark frequency.
    #[must_use]
    pub fn bookmark_frequency(mut self, frequency: Duration) -> Self {
        self.bookmark_frequency = frequency;
        self
    }
}

/// Counters of a Cacher, for `/metrics`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacherStats {
    /// Live watchers.
    pub watchers: usize,
    /// Events the dispatcher has handed out (each once, however many watchers got
    /// it).
    pub events_dispatched: u64,
    /// Watchers closed because they could not keep up.
    pub watchers_terminated_slow: u64,
    /// The ring's capacity.
    pub capacity: usize,
    /// The cache's resource version.
    pub resource_version: u64,
    /// Whether the cache has listed and serves.
    pub ready: bool,
}

/// One live watcher, for `/debug/watchers`.
#[derive(Clone, Debug)]
pub struct WatcherInfo {
    /// The request's description.
    pub identifier: String,
    /// Events waiting in its input channel.
    pub buffered: usize,
    /// Its channel size.
    pub buffer_capacity: usize,
    /// How long it has been open.
    pub age: Duration,
}

/// Where a watcher listens: `namespacedName` in upstream's
/// `indexedWatchers.allWatchers`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Scope {
    namespace: String,
    name: String,
}

// ANCHOR: indexed_watchers
/// Mirrors `indexedWatchers`: watchers without a trigger value by scope, watchers
/// with one by value.
#[derive(Default)]
struct IndexedWatchers {
    all: HashMap<Scope, HashMap<usize, Arc<CacheWatcher>>>,
    value: HashMap<String, HashMap<usize, Arc<CacheWatcher>>>,
}
// ANCHOR_END: indexed_watchers

/// How a watcher is registered, to find it again.
#[derive(Clone, Debug)]
enum Registration {
    Scope(Scope),
    Trigger(String),
}

impl IndexedWatchers {
    fn add(
        &mut self,
        index: usize,
        registration: &Registration,
        watcher: Arc<CacheWatcher>,
    ) {
        match registration {
            Registration::Scope(scope) => self.all.entry(scope.clone()).or_default(),
            Registration::Trigger(value) => {
                self.value.entry(value.clone()).or_default()
            }
        }
        .insert(index, watcher);
    }

    fn remove(
        &mut self,
        index: usize,
        registration: &Registration,
    ) -> Option<Arc<CacheWatcher>> {
        match registration {
            Registration::Scope(scope) => {
                let set = self.all.get_mut(scope)?;
                let removed = set.remove(&index);
                if set.is_empty() {
                    self.all.remove(scope);
                }
                removed
            }
            Registration::Trigger(value) => {
                let set = self.value.get_mut(value)?;
                let removed = set.remove(&index);
                if set.is_empty() {
                    self.value.remove(value);
                }
                removed
            }
        }
    }

    fn len(&self) -> usize {
        self.all.values().map(HashMap::len).sum::<usize>()
            + self.value.values().map(HashMap::len).sum::<usize>()
    }

    fn drain(&mut self) -> Vec<Arc<CacheWatcher>> {
        let mut out = Vec::new();
        for (_, set) in self.all.drain() {
            out.extend(set.into_values());
        }
        for (_, set) in self.value.drain() {
            out.extend(set.into_values());
        }
        out
    }
}

// ANCHOR: bookmark_buckets
/// Mirrors `watcherBookmarkTimeBuckets`: watchers by the second (since creation) at
/// which each is due a bookmark.
pub struct BookmarkBuckets {
    buckets: HashMap<u64, Vec<Arc<CacheWatcher>>>,
    created: Instant,
    start_bucket_id: u64,
    frequency: Duration,
}

impl BookmarkBuckets {
    /// Empty buckets starting now.
    pub fn new(frequency: Duration) -> Self {
        BookmarkBuckets {
            buckets: HashMap::new(),
            created: Instant::now(),
            start_bucket_id: 0,
            frequency,
        }
    }

    /// Mirrors `addWatcher`: files the watcher under the second of its next
    /// bookmark. False if it is due none (its deadline is too close).
    pub fn add_watcher(&mut self, watcher: Arc<CacheWatcher>) -> bool {
        let Some(next) = watcher.next_bookmark_time(Instant::now(), self.frequency)
        else {
            return false;
        };
        let bucket = next
            .saturating_duration_since(self.created)
            .as_secs()
            .max(self.start_bucket_id);
        self.buckets.entry(bucket).or_default().push(watcher);
        true
    }

    /// Mirrors `popExpiredWatchers`: every bucket up to the current second.
    pub fn pop_expired_watchers(&mut self) -> Vec<Vec<Arc<CacheWatcher>>> {
        let current = Instant::now()
            .saturating_duration_since(self.created)
            .as_secs();
        let mut expired = Vec::new();
        while self.start_bucket_id <= current {
            if let Some(watchers) = self.buckets.remove(&self.start_bucket_id) {
                expired.push(watchers);
            }
            self.start_bucket_id += 1;
        }
        expired
    }
}
// ANCHOR_END: bookmark_buckets

/// The state under the Cacher's lock (`c.Lock()`).
struct CacherState {
    watchers: IndexedWatchers,
    watcher_idx: usize,
    bookmark_watchers: BookmarkBuckets,
}

/// What the tasks share.
struct CacherInner {
    info: ResourceInfo,
    storage: Etcd3Store,
    watch_cache: Arc<WatchCache>,
    state: Mutex<CacherState>,
    /// Whether the cache has listed (`ready`), with a channel for waiters.
    ready: tokio::sync::watch::Sender<bool>,
    listed_once: AtomicBool,
    /// Node-name trigger: pods are indexed by `spec.nodeName`.
    has_trigger: bool,
    budget: TimeBudget,
    events_dispatched: AtomicU64,
    watchers_terminated_slow: AtomicU64,
    stop: CancellationToken,
    probe: Probe,
    /// The ring's capacity at the last dispatch noted, to note resizes.
    last_capacity: AtomicUsize,
}

// ANCHOR: cacher
/// Mirrors `Cacher`. Dropping it (or [`Cacher::stop`]) stops its tasks and ends
/// every watch.
pub struct Cacher {
    inner: Arc<CacherInner>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    _stop_on_drop: DropGuard,
}
// ANCHOR_END: cacher

impl std::fmt::Debug for Cacher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cacher")
            .field("resource", &self.inner.info.plural)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Cacher {
    // ANCHOR: new_cacher
    /// Mirrors `NewCacherFromConfig` + `startCaching`: the watch cache, its
    /// Reflector over the etcd3 storage, and the dispatcher, all started on the
    /// current runtime.
    pub fn new(storage: Etcd3Store, config: CacherConfig) -> Arc<Cacher> {
        let info = storage.info().clone();
        let (incoming_tx, incoming_rx) =
            mpsc::unbounded_channel::<Arc<WatchCacheEvent>>();
        let stop = CancellationToken::new();
        let probe = config.probe.clone();
        let inner = Arc::new_cyclic(|weak: &Weak<CacherInner>| {
            let on_replace = weak.clone();
            let entered = config.probe.clone();
            let plural = info.plural;
            let watch_cache = Arc::new(WatchCache::new(
                info.clone(),
                config.watch_cache.clone(),
                // `processEvent`: queue for the dispatcher (never blocks the
                // Reflector).
                Some(Box::new(move |event| {
                    note_entered(&entered, plural, &event);
                    let _ = incoming_tx.send(event);
                })),
                Some(Box::new(move || {
                    if let Some(inner) = on_replace.upgrade() {
                        inner.on_replace();
                    }
                })),
            ));
            CacherInner {
                has_trigger: info.field_labels.contains(&"spec.nodeName"),
                info: info.clone(),
                storage: storage.clone(),
                watch_cache,
                state: Mutex::new(CacherState {
                    watchers: IndexedWatchers::default(),
                    watcher_idx: 0,
                    bookmark_watchers: BookmarkBuckets::new(
                        config.bookmark_frequency,
                    ),
                }),
                ready: tokio::sync::watch::Sender::new(false),
                listed_once: AtomicBool::new(false),
                budget: TimeBudget::new(),
                events_dispatched: AtomicU64::new(0),
                watchers_terminated_slow: AtomicU64::new(0),
                stop: stop.clone(),
                last_capacity: AtomicUsize::new(config.watch_cache.initial_capacity),
                probe,
            }
        });
        // ANCHOR_END: new_cacher
        // ANCHOR: new_cacher_tasks
        let reflector = Reflector::new(
            StorageListerWatcher::new(storage),
            Arc::clone(&inner.watch_cache),
            ReflectorOptions::default()
                .name(format!("cacher/{}", info.plural))
                .type_description(info.kind)
                .page_size(config.list_page_size)
                .resource_version_updater(Arc::clone(&inner.watch_cache) as _),
        );
        let reflector_stop = stop.child_token();
        let reflector_task =
            tokio::spawn(async move { reflector.run(reflector_stop).await });
        let dispatcher_task =
            tokio::spawn(Arc::clone(&inner).dispatch_events(incoming_rx));
        Arc::new(Cacher {
            inner,
            tasks: Mutex::new(vec![reflector_task, dispatcher_task]),
            _stop_on_drop: stop.drop_guard(),
        })
    }
    // ANCHOR_END: new_cacher_tasks

    /// The resource type.
    pub fn info(&self) -> &ResourceInfo {
        &self.inner.info
    }

    /// The watch cache.
    pub fn watch_cache(&self) -> &Arc<WatchCache> {
        &self.inner.watch_cache
    }

    /// The etcd3 storage underneath.
    pub fn storage(&self) -> &Etcd3Store {
        &self.inner.storage
    }

    /// Whether the cache has listed and serves reads and watches.
    pub fn is_ready(&self) -> bool {
        *self.inner.ready.borrow()
    }

    /// Waits until ready, up to `timeout`. True if ready.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let mut rx = self.inner.ready.subscribe();
        matches!(
            tokio::time::timeout(timeout, rx.wait_for(|ready| *ready)).await,
            Ok(Ok(_))
        )
    }

    /// Counters for `/metrics`.
    pub fn stats(&self) -> CacherStats {
        let watchers = self.inner.state.lock().watchers.len();
        CacherStats {
            watchers,
            events_dispatched: self.inner.events_dispatched.load(Ordering::Relaxed),
            watchers_terminated_slow: self
                .inner
                .watchers_terminated_slow
                .load(Ordering::Relaxed),
            capacity: self.inner.watch_cache.capacity(),
            resource_version: self.inner.watch_cache.resource_version(),
            ready: self.is_ready(),
        }
    }

    /// The live watchers, for `/debug/watchers`.
    pub fn watchers_info(&self) -> Vec<WatcherInfo> {
        let state = self.inner.state.lock();
        let now = Instant::now();
        let mut out: Vec<WatcherInfo> = state
            .watchers
            .all
            .values()
            .chain(state.watchers.value.values())
            .flat_map(HashMap::values)
            .map(|w| WatcherInfo {
                identifier: w.identifier().to_string(),
                buffered: w.buffered(),
                buffer_capacity: w.chan_size(),
                age: now.saturating_duration_since(w.created()),
            })
            .collect();
        out.sort_by_key(|w| std::cmp::Reverse(w.age));
        out
    }

    /// Mirrors `Cacher.Stop`: stops the Reflector and the dispatcher and ends every
    /// watch. Idempotent; waits for the tasks to finish.
    pub async fn stop(&self) {
        self.inner.stop.cancel();
        self.inner.terminate_all_watchers(EndReason::Stopped);
        let tasks: Vec<_> = std::mem::take(&mut *self.tasks.lock());
        for task in tasks {
            let _ = task.await;
        }
    }

    // ANCHOR: watch
    /// Mirrors `Cacher.Watch`.
    ///
    /// 1. Parse the resource version (bad: 400).
    /// 2. Not ready: 429.
    /// 3. Work out the indexed trigger (pods: `spec.nodeName` pinned by the field
    ///    selector) and the channel size.
    /// 4. Under the watch cache's read lock, take the initial events and register
    ///    the watcher under the Cacher's lock, so no event slips in between.
    /// 5. Start its process task.
    ///
    /// An error taking the initial events (a version below the window: 410) becomes
    /// one Error event in an otherwise empty watch, not a failed request.
    pub async fn watch_cached(
        &self,
        prefix: &str,
        options: &WatchOptions,
        predicate: SelectionPredicate,
    ) -> Result<CacherWatch, StorageError> {
        self.watch_cached_in(prefix, KeyScope::Prefix, options, predicate)
            .await
    }

    /// [`watch_cached`](Self::watch_cached) of a prefix or of one object's key: the
    /// watcher's filter checks each object's key against it (upstream's
    /// `filterWithAttrsAndPrefixFunction`).
    pub async fn watch_cached_in(
        &self,
        key: &str,
        scope: KeyScope,
        options: &WatchOptions,
        predicate: SelectionPredicate,
    ) -> Result<CacherWatch, StorageError> {
        let inner = &self.inner;
        let prefix = &normalize_key(key, scope);
        let watch_rv = parse_resource_version(&options.resource_version)?;
        if !self.is_ready() {
            return Err(StorageError::TooManyRequests);
        }
        let send_initial_events = options.send_initial_events;
        if send_initial_events {
            // A consistent start: the state at etcd's current revision (for "") or
            // at least at the requested one.
            let required = if options.resource_version.is_empty() {
                inner.storage.current_resource_version().await?
            } else {
                watch_rv
            };
            if let Err(err) = inner.wait_until_fresh(required).await {
                return Ok(CacherWatch::error(inner.info.clone(), err));
            }
        }
        // ANCHOR_END: watch

        // ANCHOR: watch_watcher
        let trigger_value = if inner.has_trigger {
            predicate
                .field
                .requires_exact_match("spec.nodeName")
                .map(str::to_string)
        } else {
            None
        };
        let chan_size = inner.watch_cache.suggested_watch_channel_size(
            inner.has_trigger,
            trigger_value.is_some(),
        );
        let deadline = options
            .timeout_seconds
            .map(|s| Instant::now() + Duration::from_secs(u64::from(s)));
        let (namespace, key_name) = scope_of_key(&inner.info, prefix, scope);
        let identifier = format!(
            "key: {prefix:?}, labels: {:?}, fields: {:?}",
            predicate.label.to_string(),
            predicate.field.to_string()
        );
        let name = key_name
            .or_else(|| {
                predicate
                    .field
                    .requires_exact_match("metadata.name")
                    .map(str::to_string)
            })
            .unwrap_or_default();
        let registration = match &trigger_value {
            Some(value) => Registration::Trigger(value.clone()),
            None => Registration::Scope(Scope {
                namespace: namespace.clone().unwrap_or_default(),
                name,
            }),
        };
        let (watcher, channels) = CacheWatcher::new(
            chan_size,
            WatchFilter {
                namespace,
                key: Some(KeyFilter::new(&inner.info, prefix, scope)),
                predicate,
            },
            deadline,
            options.allow_watch_bookmarks,
            identifier,
        );
        // ANCHOR_END: watch_watcher

        // ANCHOR: watch_register
        let (initial_events, start_rv) = {
            let cache = inner.watch_cache.read();
            let since = if send_initial_events { 0 } else { watch_rv };
            // Version 0 (and a watch-list) starts with the current state, which
            // the store has even when the ring is empty.
            let initial_events = if since == 0 {
                cache.all_events_from_store()
            } else {
                match cache.get_all_events_since_thread_unsafe(since) {
                    Ok(events) => events,
                    Err(err) => {
                        inner.note_expired(since, &err);
                        return Ok(CacherWatch::error(inner.info.clone(), err));
                    }
                }
            };
            let start_rv = if since == 0 {
                cache.resource_version()
            } else {
                watch_rv
            };
            let mut state = inner.state.lock();
            let index = state.watcher_idx;
            state.watcher_idx += 1;
            let weak = Arc::downgrade(inner);
            let forget_registration = registration.clone();
            watcher.set_forget(Box::new(move || {
                if let Some(inner) = weak.upgrade() {
                    inner.forget_watcher(index, &forget_registration);
                }
            }));
            watcher.set_id(index);
            state
                .watchers
                .add(index, &registration, Arc::clone(&watcher));
            inner.note_added(&watcher);
            if watcher.allow_watch_bookmarks() {
                state.bookmark_watchers.add_watcher(Arc::clone(&watcher));
            }
            (initial_events, start_rv)
        };
        let initial_events_end = (send_initial_events
            && options.allow_watch_bookmarks)
            .then_some(start_rv);
        tokio::spawn(Arc::clone(&watcher).process(
            channels.input,
            channels.result_tx,
            initial_events,
            initial_events_end,
            start_rv,
        ));
        Ok(CacherWatch {
            info: inner.info.clone(),
            rx: channels.result_rx,
            watcher: Some(watcher),
        })
    }
    // ANCHOR_END: watch_register

    // ANCHOR: get_list
    /// Mirrors `Cacher.GetList` for a prefix; see
    /// [`get_list_cached_in`](Self::get_list_cached_in).
    pub async fn get_list_cached(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> Result<ListResult, StorageError> {
        self.get_list_cached_in(prefix, KeyScope::Prefix, options, predicate)
            .await
    }

    /// Mirrors `Cacher.GetList`: `""` is a consistent read (etcd's current revision,
    /// then wait until the cache has it), `"0"` is whatever the cache has, a
    /// version waits (up to 3 s) until the cache has caught up. Exact reads,
    /// continue tokens and limits with a version other than `"0"`, every list while
    /// the cache is not ready, and consistent reads over an etcd whose progress
    /// notifications can't be trusted (before 3.4.31 and 3.5.13) go to etcd. Only
    /// objects under the key (or at it) are listed.
    ///
    /// Upstream differs in two of these: since Kubernetes 1.34 it serves exact
    /// reads, continue tokens and limits from snapshots of the cache when it has
    /// one at the version, and since 1.31 a cache that is not ready sends only
    /// lists with a limit and no selector to etcd, and answers every other list
    /// 429.
    pub async fn get_list_cached_in(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> Result<ListResult, StorageError> {
        Ok(match self.list_in(key, scope, options, predicate).await? {
            CachedList::Delegated(result) => result,
            // The cache keeps JSON: a list of objects decodes each one.
            CachedList::Cached {
                items,
                resource_version,
            } => ListResult {
                items: items.iter().map(|item| item.object()).collect(),
                resource_version,
                continue_token: String::new(),
                remaining_item_count: None,
            },
        })
    }

    // ANCHOR_END: get_list

    // ANCHOR: get_list_encoded
    /// [`get_list_cached_in`](Self::get_list_cached_in) of a prefix with every item
    /// encoded: from the cache, each item's JSON as the watch cache keeps it
    /// (shared, never decoded); from etcd, encoded here.
    pub async fn get_list_encoded_cached(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> Result<EncodedListResult, StorageError> {
        Ok(
            match self
                .list_in(prefix, KeyScope::Prefix, options, predicate)
                .await?
            {
                CachedList::Delegated(result) => EncodedListResult::encode(&result),
                CachedList::Cached {
                    items,
                    resource_version,
                } => EncodedListResult {
                    items: items.iter().map(|item| item.json()).collect(),
                    cacheable: items
                        .iter()
                        .map(|item| Arc::clone(item) as Arc<dyn CacheableObject>)
                        .collect(),
                    resource_version,
                    continue_token: String::new(),
                    remaining_item_count: None,
                },
            },
        )
    }

    // ANCHOR_END: get_list_encoded

    // ANCHOR: get_list_body
    /// The body of `GetList`: the delegated answer from etcd, or the cached
    /// objects, still encoded.
    async fn list_in(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> Result<CachedList, StorageError> {
        let inner = &self.inner;
        let list_rv = parse_resource_version(&options.resource_version)?;
        let delegate = !options.continue_token.is_empty()
            || options.resource_version_match == Some(ResourceVersionMatch::Exact)
            || (options.limit > 0 && options.resource_version != "0")
            || !self.is_ready()
            || (options.resource_version.is_empty()
                && !inner.storage.kv().supports_request_watch_progress().await);
        if delegate {
            return inner
                .storage
                .list_objects_in(key, scope, options, predicate)
                .await
                .map(CachedList::Delegated);
        }
        inner
            .wait_for_read(&options.resource_version, list_rv)
            .await?;
        let key = normalize_key(&key, scope);
        let (namespace, _) = scope_of_key(&inner.info, &key, scope);
        let (mut items, resource_version) =
            inner.watch_cache.list(namespace.as_deref(), &predicate);
        let under_key = KeyFilter::new(&inner.info, &key, scope);
        items.retain(|obj| under_key.matches(obj.attributes()));
        Ok(CachedList::Cached {
            items,
            resource_version,
        })
    }
    // ANCHOR_END: get_list_body

    // ANCHOR: get_cached
    /// Mirrors `Cacher.Get`: `""` reads etcd; a version waits (up to 3 s) until the
    /// cache has caught up, and `"0"` takes whatever the cache has. A cache that is
    /// not ready sends every read to etcd.
    pub async fn get_cached(
        &self,
        key: String,
        options: GetOptions,
    ) -> Result<Option<Arc<Object>>, StorageError> {
        let inner = &self.inner;
        if options.resource_version.is_empty() || !self.is_ready() {
            return inner.storage.get_object_with(key, options).await;
        }
        let get_rv = parse_resource_version(&options.resource_version)?;
        inner
            .wait_for_read(&options.resource_version, get_rv)
            .await?;
        let cache_key = key
            .strip_prefix(&inner.info.key_prefix())
            .unwrap_or(&key)
            .to_string();
        match inner.watch_cache.get_element(&cache_key) {
            Some(element) => Ok(Some(element.object.object())),
            None if options.ignore_not_found => Ok(None),
            None => Err(StorageError::NotFound {
                plural: inner.info.qualified_resource(),
                name: key.rsplit('/').next().unwrap_or(&key).to_string(),
            }),
        }
    }
    // ANCHOR_END: get_cached
}

impl CacherInner {
    /// What a read from the cache waits for: `""` is a consistent read (etcd's
    /// current revision), `"0"` nothing, any other version that version.
    async fn wait_for_read(
        &self,
        resource_version: &str,
        parsed: u64,
    ) -> Result<(), StorageError> {
        if resource_version.is_empty() {
            let current = self.storage.current_resource_version().await?;
            self.wait_until_fresh(current).await
        } else if parsed > 0 {
            self.wait_until_fresh(parsed).await
        } else {
            Ok(())
        }
    }

    // ANCHOR: wait_until_fresh
    /// Mirrors `waitUntilFreshAndBlock` with the `progressRequester`: waits up to 3
    /// s for the cache to reach `resource_version`, asking etcd for a progress
    /// notification every 100 ms meanwhile. Without that, a cache of a quiet
    /// resource would never learn that etcd's revision (moved by other
    /// resources' writes) has nothing for it.
    ///
    /// Progress is asked for only from an etcd whose notifications can be trusted
    /// (the feature support checker's `RequestWatchProgress`: 3.4.31 or 3.5.13). An
    /// etcd before 3.4.25 and 3.5.8 (etcd issue 15220) may answer a watch that is
    /// still catching up, after a failover say, with its newest revision ahead of
    /// the events it has yet to send, and the cache would then serve a list
    /// without them; one before 3.4.31 and 3.5.13 (etcd issue 17507) may send no
    /// notification to a watch that has received no events. There a quiet cache
    /// waits out the 3 s instead.
    async fn wait_until_fresh(
        &self,
        resource_version: u64,
    ) -> Result<(), StorageError> {
        let deadline = Instant::now() + crate::watch_cache::BLOCK_TIMEOUT;
        let ask_progress = self.storage.kv().supports_request_watch_progress().await;
        loop {
            if self.watch_cache.resource_version() >= resource_version {
                return Ok(());
            }
            if ask_progress {
                self.storage.request_watch_progress().await;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let step = left.min(PROGRESS_REQUEST_PERIOD);
            match self
                .watch_cache
                .wait_until_fresh_within(resource_version, step)
                .await
            {
                Ok(()) => return Ok(()),
                Err(err) if left <= PROGRESS_REQUEST_PERIOD => return Err(err),
                Err(_) => {}
            }
        }
    }
    // ANCHOR_END: wait_until_fresh

    // ANCHOR: forget_watcher
    /// Called after every replace (relist): the first makes the cache ready; a later
    /// one means the cache may have missed events, so every watcher is closed
    /// and clients watch again.
    fn on_replace(&self) {
        if self.listed_once.swap(true, Ordering::AcqRel) {
            self.terminate_all_watchers(EndReason::Relist);
        }
        let rv = self.watch_cache.resource_version();
        self.probe.send(self.info.plural, || What::Relisted { rv });
        self.ready.send_replace(true);
    }

    /// Mirrors `terminateAllWatchers`.
    fn terminate_all_watchers(&self, reason: EndReason) {
        let watchers = self.state.lock().watchers.drain();
        for watcher in watchers {
            watcher.mark_end(reason);
            self.note_ended(&watcher);
            watcher.stop_locked();
        }
    }

    /// Mirrors `forgetWatcher`: unregisters and stops. Idempotent.
    fn forget_watcher(&self, index: usize, registration: &Registration) {
        let removed = self.state.lock().watchers.remove(index, registration);
        if let Some(watcher) = removed {
            self.note_ended(&watcher);
            watcher.stop_locked();
        }
    }
    // ANCHOR_END: forget_watcher

    // ANCHOR: dispatch_events
    /// Mirrors `Cacher.dispatchEvents`: dispatch each event from the watch cache
    /// (but not the bookmarks from storage, which only move the version), and on
    /// a 1 s ± 25 % timer (upstream's is 1 to 1.25 s) send bookmarks at the last
    /// processed version to the watchers that are due one.
    async fn dispatch_events(
        self: Arc<Self>,
        mut incoming: mpsc::UnboundedReceiver<Arc<WatchCacheEvent>>,
    ) {
        let mut last_processed_rv = 0;
        let bookmark_timer = tokio::time::sleep(jittered(BOOKMARK_TIMER_PERIOD));
        tokio::pin!(bookmark_timer);
        loop {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => break,
                event = incoming.recv() => {
                    let Some(event) = event else { break };
                    if event.event_type != EventType::Bookmark {
                        self.dispatch_event(&event).await;
                        self.events_dispatched.fetch_add(1, Ordering::Relaxed);
                        self.note_dispatched(&event);
                    }
                    last_processed_rv = event.resource_version;
                }
                () = &mut bookmark_timer => {
                    let next = Instant::now() + jittered(BOOKMARK_TIMER_PERIOD);
                    bookmark_timer.as_mut().reset(next);
                    if last_processed_rv == 0 {
                        continue;
                    }
                    let bookmark = self.bookmark_event(last_processed_rv);
                    self.dispatch_event(&bookmark).await;
                }
            }
        }
        self.terminate_all_watchers(EndReason::Stopped);
    }
    // ANCHOR_END: dispatch_events

    fn bookmark_event(&self, resource_version: u64) -> Arc<WatchCacheEvent> {
        let object = Object {
            types: Some(self.info.type_meta()),
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                resource_version: Some(resource_version.to_string()),
                ..Default::default()
            },
            data: serde_json::Value::Object(Default::default()),
        };
        Arc::new(WatchCacheEvent::new(
            EventType::Bookmark,
            Arc::new(CachedObject::new(&self.info, EventType::Bookmark, &object)),
            Arc::from(""),
            resource_version,
        ))
    }

    // ANCHOR: dispatch_event
    /// Mirrors `Cacher.dispatchEvent`: a non-blocking add to every interested
    /// watcher; then the blocked ones share one timer from the time budget;
    /// those still blocked are closed.
    async fn dispatch_event(&self, event: &Arc<WatchCacheEvent>) {
        // ANCHOR: ex5-dispatch
        let (watchers, expired_bookmark_watchers) = self.start_dispatching(event);
        if event.event_type == EventType::Bookmark {
            for watcher in &watchers {
                watcher.nonblocking_add(event);
            }
        } else {
            let blocked: Vec<&Arc<CacheWatcher>> = watchers
                .iter()
                .filter(|watcher| !watcher.nonblocking_add(event))
                .collect();
            if !blocked.is_empty() {
                let start = Instant::now();
                let timeout = self.budget.take_available();
                let deadline = start + timeout;
                let mut timer_fired = false;
                for watcher in blocked {
                    let delivered = if timer_fired {
                        watcher.nonblocking_add(event)
                    } else {
                        watcher.add(event, Some(deadline)).await
                    };
                    if !delivered {
                        timer_fired = true;
                        self.close_unresponsive(watcher);
                    }
                }
                self.budget
                    .return_unused(timeout.saturating_sub(start.elapsed()));
            }
        }
        self.finish_dispatching(expired_bookmark_watchers);
        // ANCHOR_END: ex5-dispatch
    }
    // ANCHOR_END: dispatch_event

    /// The watcher could not take an event in time: close it (the client will watch
    /// again from its last version).
    fn close_unresponsive(&self, watcher: &CacheWatcher) {
        tracing::info!(
            resource = self.info.plural,
            identifier = watcher.identifier(),
            buffered = watcher.buffered(),
            "forcing watcher close due to unresponsiveness"
        );
        self.watchers_terminated_slow
            .fetch_add(1, Ordering::Relaxed);
        watcher.mark_end(EndReason::Slow);
        watcher.stop();
    }

    // ANCHOR: start_dispatching
    /// Mirrors `Cacher.startDispatching`: the watchers interested in the event. For
    /// a bookmark: those due one. Otherwise: those scoped to the event's
    /// namespace and name (and the unscoped), plus those whose trigger value is
    /// the event's new or previous node name (all trigger watchers when the
    /// resource has no trigger).
    fn start_dispatching(
        &self,
        event: &WatchCacheEvent,
    ) -> (Vec<Arc<CacheWatcher>>, Vec<Arc<CacheWatcher>>) {
        let mut state = self.state.lock();
        let mut buffer = Vec::new();
        if event.event_type == EventType::Bookmark {
            let mut expired = Vec::new();
            for watchers in state.bookmark_watchers.pop_expired_watchers() {
                for watcher in watchers {
                    if watcher.is_stopped() {
                        continue;
                    }
                    buffer.push(Arc::clone(&watcher));
                    expired.push(watcher);
                }
            }
            return (buffer, expired);
        }
        // ANCHOR_END: start_dispatching
        // ANCHOR: start_dispatching_scopes
        let namespace = event.object.namespace();
        let name = event.object.name();
        let mut scopes = vec![Scope::default()];
        if !name.is_empty() {
            scopes.push(Scope {
                namespace: String::new(),
                name: name.to_string(),
            });
        }
        if !namespace.is_empty() {
            scopes.push(Scope {
                namespace: namespace.to_string(),
                name: String::new(),
            });
            if !name.is_empty() {
                scopes.push(Scope {
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                });
            }
        }
        for scope in &scopes {
            if let Some(set) = state.watchers.all.get(scope) {
                buffer.extend(set.values().cloned());
            }
        }
        if self.has_trigger {
            let mut values: HashSet<&str> = HashSet::new();
            values.insert(event.object.field("spec.nodeName").unwrap_or(""));
            if let Some(prev) = &event.prev_object {
                values.insert(prev.field("spec.nodeName").unwrap_or(""));
            }
            for value in values {
                if let Some(set) = state.watchers.value.get(value) {
                    buffer.extend(set.values().cloned());
                }
            }
        } else {
            for set in state.watchers.value.values() {
                buffer.extend(set.values().cloned());
            }
        }
        (buffer, Vec::new())
    }
    // ANCHOR_END: start_dispatching_scopes

    /// Mirrors `finishDispatching`: watchers that just got a bookmark are filed for
    /// the next one.
    fn finish_dispatching(&self, expired_bookmark_watchers: Vec<Arc<CacheWatcher>>) {
        if expired_bookmark_watchers.is_empty() {
            return;
        }
        self.note_bookmarks(&expired_bookmark_watchers);
        let mut state = self.state.lock();
        for watcher in expired_bookmark_watchers {
            if !watcher.is_stopped() {
                state.bookmark_watchers.add_watcher(watcher);
            }
        }
    }
}

/// `period` ± 25 %, drawn uniformly. Unlike upstream's `wait.Jitter(period, 0.25)`,
/// which only adds (`period` to 1.25 × `period`), this may also fire early.
fn jittered(period: Duration) -> Duration {
    period.mul_f64(0.75 + rand::random::<f64>() * 0.5)
}

/// The namespace a list or watch prefix is scoped to: `/registry/pods/default/` →
/// `default`.
fn namespace_of_prefix(info: &ResourceInfo, prefix: &str) -> Option<String> {
    if !info.namespaced {
        return None;
    }
    let rest = prefix.strip_prefix(&info.key_prefix())?;
    let namespace = rest.trim_end_matches('/');
    (!namespace.is_empty() && !namespace.contains('/'))
        .then(|| namespace.to_string())
}

/// A list or watch key as the storage reads it: a prefix ends in `/`.
fn normalize_key(key: &str, scope: KeyScope) -> String {
    let mut key = key.to_string();
    if scope == KeyScope::Prefix && !key.ends_with('/') {
        key.push('/');
    }
    key
}

/// The namespace a key is scoped to, and for one object's key its name:
/// `/registry/pods/default/` → (`default`, none); `/registry/pods/default/web` as an
/// object → (`default`, `web`).
fn scope_of_key(
    info: &ResourceInfo,
    key: &str,
    scope: KeyScope,
) -> (Option<String>, Option<String>) {
    match scope {
        KeyScope::Prefix => (namespace_of_prefix(info, key), None),
        KeyScope::Object => {
            let rest = key.strip_prefix(&info.key_prefix()).unwrap_or("");
            match rest.split_once('/') {
                Some((namespace, name)) if info.namespaced => {
                    (Some(namespace.to_string()), Some(name.to_string()))
                }
                _ => (None, (!rest.is_empty()).then(|| rest.to_string())),
            }
        }
    }
}

/// The live page's notes (see [`crate::probe`]): each is built only while a
/// page listens.
impl CacherInner {
    /// The dispatch, and a resize of the ring since the last note (both only
    /// while a page listens: nothing else on the dispatcher's path).
    fn note_dispatched(&self, event: &WatchCacheEvent) {
        if !self.probe.is_watched() {
            return;
        }
        let plural = self.info.plural;
        self.probe.send(plural, || What::Dispatched {
            event_type: event.event_type,
            key: Arc::clone(&event.key),
            rv: event.resource_version,
        });
        let capacity = self.watch_cache.capacity();
        let before = self.last_capacity.swap(capacity, Ordering::Relaxed);
        if before != capacity {
            self.probe.send(plural, || What::Resized {
                from: before,
                to: capacity,
            });
        }
    }

    fn note_bookmarks(&self, watchers: &[Arc<CacheWatcher>]) {
        for watcher in watchers {
            watcher.count_bookmark();
        }
        self.probe.send(self.info.plural, || What::Bookmark {
            rv: self.watch_cache.resource_version(),
            watchers: watchers.iter().map(|w| w.id()).collect(),
        });
    }

    fn note_added(&self, watcher: &CacheWatcher) {
        self.probe.send(self.info.plural, || What::WatcherAdded {
            id: watcher.id(),
            identifier: watcher.identifier().to_string(),
        });
    }

    fn note_ended(&self, watcher: &CacheWatcher) {
        self.probe.send(self.info.plural, || What::WatcherEnded {
            id: watcher.id(),
            reason: watcher.end_reason(),
            buffered: watcher.buffered(),
        });
    }

    fn note_expired(&self, requested: u64, err: &StorageError) {
        self.probe.send(self.info.plural, || What::Expired {
            requested,
            message: err.to_string(),
        });
    }
}

/// Notes an event from etcd entering the ring (bookmarks only move the
/// version).
fn note_entered(probe: &Probe, plural: &'static str, event: &WatchCacheEvent) {
    if event.event_type == EventType::Bookmark {
        return;
    }
    probe.send(plural, || What::Entered {
        event_type: event.event_type,
        key: Arc::clone(&event.key),
        rv: event.resource_version,
    });
}

impl Cacher {
    /// The probe this Cacher sends its notes to.
    pub fn probe(&self) -> &Probe {
        &self.inner.probe
    }

    /// The state the live page draws: the ring, the budget and every watcher.
    pub fn view(&self) -> CacherView {
        let inner = &self.inner;
        let ring = inner.watch_cache.read().ring_view();
        let now = Instant::now();
        let state = inner.state.lock();
        let scoped =
            state.watchers.all.values().flat_map(|set| {
                set.values().map(|watcher| (watcher, None::<&String>))
            });
        let triggered = state.watchers.value.iter().flat_map(|(value, set)| {
            set.values().map(move |watcher| (watcher, Some(value)))
        });
        let mut watchers: Vec<WatcherView> = scoped
            .chain(triggered)
            .map(|(w, trigger)| WatcherView {
                id: w.id(),
                identifier: w.identifier().to_string(),
                trigger: trigger.cloned(),
                buffered: w.buffered(),
                buffer_capacity: w.chan_size(),
                bookmarks: w.bookmarks(),
                allow_bookmarks: w.allow_watch_bookmarks(),
                age_secs: now.saturating_duration_since(w.created()).as_secs_f64(),
                ends_in_secs: w
                    .deadline()
                    .map(|d| d.saturating_duration_since(now).as_secs_f64()),
            })
            .collect();
        drop(state);
        let watcher_count = watchers.len();
        if watcher_count > WATCHERS_SHOWN {
            watchers.sort_by_key(|w| std::cmp::Reverse(w.buffered));
            watchers.truncate(WATCHERS_SHOWN);
        }
        watchers.sort_by_key(|w| w.id);
        CacherView {
            resource: inner.info.plural,
            ready: self.is_ready(),
            resource_version: inner.watch_cache.resource_version(),
            ring,
            budget_ms: inner.budget.available().as_secs_f64() * 1000.0,
            max_budget_ms: inner.budget.max_budget().as_secs_f64() * 1000.0,
            events_dispatched: inner.events_dispatched.load(Ordering::Relaxed),
            watchers_terminated_slow: inner
                .watchers_terminated_slow
                .load(Ordering::Relaxed),
            watcher_count,
            watchers,
        }
    }
}

// ANCHOR: cacher_watch_stream
/// The client's end of a cache watch: the watcher's result channel. Dropping it
/// forgets the watcher.
pub struct CacherWatch {
    info: ResourceInfo,
    rx: mpsc::Receiver<WatcherEvent>,
    watcher: Option<Arc<CacheWatcher>>,
}
// ANCHOR_END: cacher_watch_stream

impl CacherWatch {
    /// Mirrors `newErrWatcher`: a watch that delivers one Error event and ends.
    fn error(info: ResourceInfo, err: StorageError) -> CacherWatch {
        let (tx, rx) = mpsc::channel(1);
        let _ = tx.try_send(WatcherEvent::Error(Box::new(err.to_status())));
        CacherWatch {
            info,
            rx,
            watcher: None,
        }
    }

    /// As a storage [`Watch`] of objects.
    pub fn into_watch(self) -> Watch<Object> {
        Watch::new(self.map(|event| {
            Ok(match event {
                WatcherEvent::Object { event_type, object } => {
                    // The cache keeps JSON: a watch of objects decodes each one.
                    let obj = object.object();
                    match event_type {
                        EventType::Added => WatchEvent::Added(obj),
                        EventType::Deleted => WatchEvent::Deleted(obj),
                        _ => WatchEvent::Modified(obj),
                    }
                }
                WatcherEvent::Bookmark(bookmark) => WatchEvent::Bookmark(bookmark),
                WatcherEvent::Error(status) => WatchEvent::Error(status),
            })
        }))
    }

    /// As encoded lines: each object's JSON is shared by every watcher (serialize
    /// once).
    pub fn into_encoded(self) -> EncodedWatch {
        let types = self.info.type_meta();
        self.map(move |event| match event {
            WatcherEvent::Object { event_type, object } => EncodedEvent {
                event_type,
                line: object.line(event_type),
                object: Some(object as Arc<dyn CacheableObject>),
            },
            WatcherEvent::Bookmark(bookmark) => EncodedEvent::new(
                EventType::Bookmark,
                encode_line(
                    EventType::Bookmark,
                    &encode_bookmark(&types, &bookmark),
                ),
            ),
            WatcherEvent::Error(status) => EncodedEvent::new(
                EventType::Error,
                encode_line(EventType::Error, &encode_status(&status)),
            ),
        })
        .boxed()
    }
}

impl Stream for CacherWatch {
    type Item = WatcherEvent;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for CacherWatch {
    fn drop(&mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.stop();
        }
    }
}

impl Storage for Cacher {
    fn info(&self) -> &ResourceInfo {
        &self.inner.info
    }

    fn create(
        &self,
        key: String,
        obj: Object,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.inner.storage.create_object(key, obj).boxed()
    }

    fn get_with(
        &self,
        key: String,
        options: GetOptions,
    ) -> BoxFuture<'_, Result<Option<Arc<Object>>, StorageError>> {
        self.get_cached(key, options).boxed()
    }

    fn get_list_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>> {
        self.get_list_cached_in(key, scope, options, predicate)
            .boxed()
    }

    fn guaranteed_update_with(
        &self,
        key: String,
        ignore_not_found: bool,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.inner
            .storage
            .update_object_with(key, ignore_not_found, preconditions, update)
            .boxed()
    }

    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.inner.storage.delete_object(key, preconditions).boxed()
    }

    fn watch_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>> {
        async move {
            Ok(self
                .watch_cached_in(&key, scope, &options, predicate)
                .await?
                .into_watch())
        }
        .boxed()
    }

    fn count(&self, key: String) -> BoxFuture<'_, Result<i64, StorageError>> {
        self.inner.storage.count_objects(key).boxed()
    }

    fn get_current_resource_version(
        &self,
    ) -> BoxFuture<'_, Result<u64, StorageError>> {
        self.inner.storage.current_resource_version().boxed()
    }

    fn get_list_encoded(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<EncodedListResult, StorageError>> {
        self.get_list_encoded_cached(prefix, options, predicate)
            .boxed()
    }

    fn watch_encoded(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<EncodedWatch, StorageError>> {
        async move {
            Ok(self
                .watch_cached(&prefix, &options, predicate)
                .await?
                .into_encoded())
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watcher(deadline: Option<Instant>) -> Arc<CacheWatcher> {
        CacheWatcher::new(10, WatchFilter::default(), deadline, true, "w".into()).0
    }

    #[tokio::test(start_paused = true)]
    async fn bookmark_buckets_pop_each_watcher_in_its_second() {
        let mut buckets = BookmarkBuckets::new(Duration::from_secs(60));
        let start = Instant::now();
        // Due 2 s before its 10 s deadline: second 8. Without a deadline: second 60.
        let soon = watcher(Some(start + Duration::from_secs(10)));
        let later = watcher(None);
        assert!(buckets.add_watcher(Arc::clone(&soon)));
        assert!(buckets.add_watcher(Arc::clone(&later)));
        // A deadline closer than 2 s: no bookmark at all.
        assert!(!buckets.add_watcher(watcher(Some(start + Duration::from_secs(1)))));

        tokio::time::advance(Duration::from_millis(7_900)).await;
        assert!(buckets.pop_expired_watchers().is_empty());
        tokio::time::advance(Duration::from_millis(100)).await;
        let due = buckets.pop_expired_watchers();
        assert_eq!(due.len(), 1);
        assert!(Arc::ptr_eq(&due[0][0], &soon));
        // Popped buckets are gone; the next due is at 60 s.
        tokio::time::advance(Duration::from_secs(51)).await;
        assert!(buckets.pop_expired_watchers().is_empty());
        tokio::time::advance(Duration::from_secs(1)).await;
        let due = buckets.pop_expired_watchers();
        assert!(Arc::ptr_eq(&due[0][0], &later));
        // A watcher added now is due a minute later.
        assert!(buckets.add_watcher(watcher(None)));
        assert_eq!(buckets.buckets.keys().copied().collect::<Vec<_>>(), [120]);
    }

    #[test]
    fn watch_prefixes_name_their_namespace() {
        let pods = ResourceInfo::PODS;
        assert_eq!(
            namespace_of_prefix(&pods, "/registry/pods/default/"),
            Some("default".into())
        );
        assert_eq!(namespace_of_prefix(&pods, "/registry/pods/"), None);
        assert_eq!(
            namespace_of_prefix(&ResourceInfo::NODES, "/registry/nodes/"),
            None
        );
    }
}
