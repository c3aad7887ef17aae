//! The RealFIFO: every notification, in arrival order, with no per-key coalescing.
//!
//! Mirrors client-go's [`tools/cache/the_real_fifo.go`], which replaced the
//! DeltaFIFO as the informers' default queue over client-go 1.33–1.36: `RealFIFO`,
//! `addToItems_locked`, `Replace`, `Resync`, `Pop`, and the newer atomic mode
//! (`ReplacedAll`, `SyncAll`, `Bookmark`) with `PopBatch`.
//!
//! # Why it exists
//! The DeltaFIFO keeps one place in line per key, so a busy key can be processed
//! late relative to keys changed after it, and a relist turns into a burst of
//! per-object deltas that handlers see one by one while the indexer is half old,
//! half new. The RealFIFO keeps arrival order exactly; in atomic mode a relist is
//! one entry that the consumer applies in one step.
//!
//! # Locking
//! As for [`DeltaFifo`](crate::DeltaFifo): one mutex; the process function runs
//! under it; lock order queue, then known objects.
//!
//! # Whole-queue reads
//! As for the DeltaFifo, `list_keys` and `list` hand out a cached [`Snapshot`],
//! dropped whenever a delta is queued or popped.
//!
//! [`tools/cache/the_real_fifo.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/the_real_fifo.go

use std::collections::VecDeque;
use std::sync::Arc;

use hashbrown::{HashMap, HashSet};
use parking_lot::Mutex;
use stage1_store::{
    KeyError, KeyFunc, KeyGetter, KeyLister, Snapshot, SnapshotCell, Store,
    StoreError,
};
use tokio::sync::Notify;

use crate::delta::{Delta, DeltaObject, DeltaType, Deltas, ReplacedAllInfo};
use crate::error::{FifoError, PopError};
use crate::queue::{KnownObjects, TransformFunc, wait_for};

/// How a [`RealFifo`] reports relists and resyncs.
pub enum RealFifoMode<T> {
    /// One delta per object. Deletions found by a relist are queued as tombstones,
    /// which needs the known-objects store (the informer's indexer).
    NonAtomic {
        /// The consumer's known objects.
        known_objects: KnownObjects<T>,
    },
    /// A relist is one `ReplacedAll` entry and a resync one `SyncAll`; the consumer
    /// works out deletions itself against its indexer. Bookmarks are queued too.
    Atomic,
}

/// Options for [`RealFifo::new`].
#[must_use]
pub struct RealFifoOptions<T> {
    /// Computes an object's key.
    pub key_func: KeyFunc<T>,
    /// Atomic or not.
    pub mode: RealFifoMode<T>,
    /// Rewrites each object as it is queued (not tombstones, not resyncs).
    pub transformer: Option<TransformFunc<T>>,
}

impl<T> RealFifoOptions<T> {
    /// Non-atomic options with the given known objects.
    pub fn non_atomic(key_func: KeyFunc<T>, known_objects: KnownObjects<T>) -> Self {
        Self {
            key_func,
            mode: RealFifoMode::NonAtomic { known_objects },
            transformer: None,
        }
    }

    /// Atomic options.
    pub fn atomic(key_func: KeyFunc<T>) -> Self {
        Self {
            key_func,
            mode: RealFifoMode::Atomic,
            transformer: None,
        }
    }

    /// Sets the transform function.
    pub fn transformer(mut self, transformer: TransformFunc<T>) -> Self {
        self.transformer = Some(transformer);
        self
    }
}

// ANCHOR: struct
/// Mirrors client-go's `RealFIFO`: a queue in which every notification from the
/// Reflector is popped, in order, once.
pub struct RealFifo<T> {
    state: Mutex<RealFifoState<T>>,
    notify: Notify,
    key_func: KeyFunc<T>,
    mode: RealFifoMode<T>,
    transformer: Option<TransformFunc<T>>,
}

struct RealFifoState<T> {
    /// Every queued delta with its key (`None` for batch entries), oldest first.
    items: VecDeque<(Option<Arc<str>>, Delta<T>)>,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
    /// What `list_keys` last returned; reset when `items` changes.
    keys_snapshot: SnapshotCell<Arc<str>>,
    /// What `list` last returned; reset when `items` changes.
    list_snapshot: SnapshotCell<Arc<T>>,
}
// ANCHOR_END: struct

impl<T> RealFifoState<T> {
    /// Drops the cached snapshots: `items` is about to change.
    fn forget_snapshots(&mut self) {
        self.keys_snapshot.invalidate();
        self.list_snapshot.invalidate();
    }
}

impl<T> std::fmt::Debug for RealFifo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("RealFifo")
            .field("atomic", &matches!(self.mode, RealFifoMode::Atomic))
            .field("queued", &state.items.len())
            .field("initial_population_count", &state.initial_population_count)
            .field("closed", &state.closed)
            .finish()
    }
}

impl<T: Send + Sync + 'static> RealFifo<T> {
    /// Mirrors client-go's `NewRealFIFO`.
    pub fn new(options: RealFifoOptions<T>) -> Self {
        Self {
            state: Mutex::new(RealFifoState {
                items: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
                keys_snapshot: SnapshotCell::new(),
                list_snapshot: SnapshotCell::new(),
            }),
            notify: Notify::new(),
            key_func: options.key_func,
            mode: options.mode,
            transformer: options.transformer,
        }
    }

    /// Whether this queue runs in atomic mode.
    pub fn is_atomic(&self) -> bool {
        matches!(self.mode, RealFifoMode::Atomic)
    }

    fn key_of(&self, obj: &T) -> Result<Arc<str>, KeyError> {
        Ok(Arc::from((self.key_func)(obj)?))
    }

    fn transform(&self, key: &Arc<str>, obj: Arc<T>) -> Result<Arc<T>, FifoError> {
        match &self.transformer {
            Some(transform) => {
                transform(obj).map_err(|source| FifoError::Transform {
                    key: key.to_string(),
                    source,
                })
            }
            None => Ok(obj),
        }
    }

    /// Mirrors `addToItems_locked`: appends one delta and wakes poppers.
    fn push_locked(
        &self,
        state: &mut RealFifoState<T>,
        key: Option<Arc<str>>,
        delta: Delta<T>,
    ) {
        state.items.push_back((key, delta));
        state.forget_snapshots();
        self.notify.notify_waiters();
    }

    fn queue_object(
        &self,
        delta_type: DeltaType,
        obj: Arc<T>,
    ) -> Result<(), FifoError> {
        let key = self.key_of(&obj)?;
        let obj = self.transform(&key, obj)?;
        let mut state = self.state.lock();
        state.populated = true;
        self.push_locked(&mut state, Some(key), Delta::new(delta_type, obj));
        Ok(())
    }

    // ANCHOR: replace
    /// Mirrors `RealFIFO.Replace`.
    ///
    /// Non-atomic: first a tombstone for every queued key whose last delta is not
    /// already a deletion and which the list no longer has, then one for every
    /// known key the list no longer has and nothing queued, then one `Replaced`
    /// per listed object, in list order.
    ///
    /// Atomic: a single `ReplacedAll` holding the resource version and every object.
    pub fn replace_list(
        &self,
        list: Vec<Arc<T>>,
        resource_version: &str,
    ) -> Result<(), FifoError> {
        let mut keyed = Vec::with_capacity(list.len());
        for obj in list {
            let key = self.key_of(&obj)?;
            let obj = self.transform(&key, obj)?;
            keyed.push((key, obj));
        }
        let mut state = self.state.lock();
        match &self.mode {
            RealFifoMode::Atomic => {
                let info = ReplacedAllInfo {
                    resource_version: resource_version.to_string(),
                    objects: keyed.into_iter().map(|(_, obj)| obj).collect(),
                };
                let delta = Delta {
                    delta_type: DeltaType::ReplacedAll,
                    object: DeltaObject::ReplacedAll(Arc::new(info)),
                };
                self.push_locked(&mut state, None, delta);
            }
            RealFifoMode::NonAtomic { known_objects } => {
                let listed: HashSet<Arc<str>> =
                    keyed.iter().map(|(k, _)| Arc::clone(k)).collect();
                for (key, obj) in
                    replace_tombstones(&state.items, known_objects, &listed)
                {
                    self.push_locked(
                        &mut state,
                        Some(Arc::clone(&key)),
                        Delta::tombstone(key, obj),
                    );
                }
                for (key, obj) in keyed {
                    self.push_locked(
                        &mut state,
                        Some(key),
                        Delta::new(DeltaType::Replaced, obj),
                    );
                }
            }
        }
        if !state.populated {
            state.populated = true;
            state.initial_population_count = state.items.len();
        }
        Ok(())
    }
    // ANCHOR_END: replace

    /// Mirrors `RealFIFO.Resync`. Non-atomic: a `Sync` of the known object for every
    /// known key with nothing queued. Atomic: one `SyncAll` entry.
    pub fn resync_known(&self) -> Result<(), FifoError> {
        let mut state = self.state.lock();
        match &self.mode {
            RealFifoMode::Atomic => {
                let delta = Delta {
                    delta_type: DeltaType::SyncAll,
                    object: DeltaObject::SyncAll,
                };
                self.push_locked(&mut state, None, delta);
            }
            RealFifoMode::NonAtomic { known_objects } => {
                let queued: HashSet<Arc<str>> =
                    state.items.iter().filter_map(|(k, _)| k.clone()).collect();
                for key in known_objects.list_keys().iter() {
                    if queued.contains(key) {
                        continue;
                    }
                    if let Some(obj) = known_objects.get_by_key(key) {
                        self.push_locked(
                            &mut state,
                            Some(Arc::clone(key)),
                            Delta::new(DeltaType::Sync, obj),
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Queues a `Bookmark` for `resource_version` in atomic mode, so the consumer
    /// learns how far the watch got in order with the events. A no-op in
    /// non-atomic mode.
    pub fn bookmark(&self, resource_version: &str) {
        if !self.is_atomic() {
            return;
        }
        let mut state = self.state.lock();
        let delta = Delta {
            delta_type: DeltaType::Bookmark,
            object: DeltaObject::Bookmark(Arc::from(resource_version)),
        };
        self.push_locked(&mut state, None, delta);
    }

    /// Mirrors `RealFIFO.Pop`: the oldest delta, alone, wrapped in a [`Deltas`].
    pub async fn pop<R, E, F>(&self, process: F) -> Result<R, PopError<E>>
    where
        F: FnOnce(Deltas<T>, bool) -> Result<R, E>,
    {
        self.pop_batch(1, |batch, initial| {
            process(batch.into_iter().collect(), initial)
        })
        .await
    }

    // ANCHOR: pop_batch
    /// Mirrors `RealFIFO.PopBatch`: up to `max` deltas, oldest first, no two with
    /// the same key, passed to `process` with `is_in_initial_list`.
    ///
    /// A batch never mixes items of the initial list with later ones, and a batch
    /// entry (`ReplacedAll`, `SyncAll`, `Bookmark`) always travels alone.
    pub async fn pop_batch<R, E, F>(
        &self,
        max: usize,
        process: F,
    ) -> Result<R, PopError<E>>
    where
        F: FnOnce(Vec<Delta<T>>, bool) -> Result<R, E>,
    {
        let max = max.max(1);
        let mut process = Some(process);
        wait_for(&self.notify, || {
            let mut state = self.state.lock();
            if !state.items.is_empty() {
                let is_in_initial_list = !has_synced_locked(&state);
                state.forget_snapshots();
                let batch = take_batch(&mut state, max);
                let process = process.take()?;
                return Some(
                    process(batch, is_in_initial_list).map_err(PopError::Process),
                );
            }
            state.closed.then_some(Err(PopError::Closed))
        })
        .await
    }
    // ANCHOR_END: pop_batch

    /// Mirrors `RealFIFO.HasSynced`.
    pub fn has_synced(&self) -> bool {
        has_synced_locked(&self.state.lock())
    }

    /// Mirrors `RealFIFO.Close`.
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.notify.notify_waiters();
    }

    /// Mirrors `RealFIFO.IsClosed`.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// The number of queued deltas.
    pub fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn has_synced_locked<T>(state: &RealFifoState<T>) -> bool {
    state.populated && state.initial_population_count == 0
}

/// The tombstones a non-atomic replace queues, in order: queued keys first (in
/// first-seen order, skipping keys whose last delta is already a deletion), then
/// known keys with nothing queued.
fn replace_tombstones<T>(
    items: &VecDeque<(Option<Arc<str>>, Delta<T>)>,
    known_objects: &KnownObjects<T>,
    listed: &HashSet<Arc<str>>,
) -> Vec<(Arc<str>, Option<Arc<T>>)> {
    let mut order: Vec<&Arc<str>> = Vec::new();
    let mut last: HashMap<&Arc<str>, &Delta<T>> = HashMap::new();
    for (key, delta) in items {
        if let Some(key) = key
            && last.insert(key, delta).is_none()
        {
            order.push(key);
        }
    }
    let mut tombstones = Vec::new();
    for key in order {
        if listed.contains(key) {
            continue;
        }
        let delta = last[key];
        if delta.delta_type == DeltaType::Deleted {
            continue;
        }
        tombstones.push((Arc::clone(key), delta.object().cloned()));
    }
    for key in known_objects.list_keys().iter() {
        if listed.contains(key) || last.contains_key(key) {
            continue;
        }
        let obj = known_objects.get_by_key(key);
        tombstones.push((Arc::clone(key), obj));
    }
    tombstones
}

// ANCHOR: take_batch
/// Takes the next batch off the front of the queue (see [`RealFifo::pop_batch`]).
fn take_batch<T>(state: &mut RealFifoState<T>, max: usize) -> Vec<Delta<T>> {
    // ANCHOR: ex2-take-batch
    let in_initial_list = !has_synced_locked(state);
    let mut batch = Vec::new();
    let mut keys: HashSet<Arc<str>> = HashSet::new();
    while batch.len() < max {
        let Some((key, _)) = state.items.front() else {
            break;
        };
        let is_entry = key.is_none();
        let repeats_a_key = key.as_ref().is_some_and(|k| keys.contains(k));
        let initial_list_ends =
            in_initial_list && state.initial_population_count == 0;
        if !batch.is_empty() && (is_entry || repeats_a_key || initial_list_ends) {
            break;
        }
        let Some((key, delta)) = state.items.pop_front() else {
            break;
        };
        if state.initial_population_count > 0 {
            state.initial_population_count -= 1;
        }
        batch.push(delta);
        match key {
            Some(key) => {
                keys.insert(key);
            }
            None => break,
        }
    }
    batch
    // ANCHOR_END: ex2-take-batch
}
// ANCHOR_END: take_batch

impl<T: Send + Sync + 'static> KeyLister for RealFifo<T> {
    /// The keys with something queued, in first-seen order.
    fn list_keys(&self) -> Snapshot<Arc<str>> {
        let state = self.state.lock();
        state.keys_snapshot.get_or_build(|| {
            let mut seen: HashSet<&Arc<str>> = HashSet::new();
            state
                .items
                .iter()
                .filter_map(|(k, _)| k.as_ref())
                .filter(|k| seen.insert(k))
                .cloned()
                .collect()
        })
    }
}

impl<T: Send + Sync + 'static> KeyGetter<T> for RealFifo<T> {
    /// The newest object queued under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<T>> {
        let state = self.state.lock();
        state
            .items
            .iter()
            .rev()
            .find(|(k, _)| k.as_deref() == Some(key))
            .and_then(|(_, delta)| delta.object().cloned())
    }
}

impl<T: Send + Sync + 'static> Store<T> for RealFifo<T> {
    fn add(&self, obj: Arc<T>) -> Result<(), StoreError> {
        Ok(self.queue_object(DeltaType::Added, obj)?)
    }

    fn update(&self, obj: Arc<T>) -> Result<(), StoreError> {
        Ok(self.queue_object(DeltaType::Updated, obj)?)
    }

    /// Mirrors `RealFIFO.Delete`: always queues the deletion; the consumer decides.
    fn delete(&self, obj: Arc<T>) -> Result<(), StoreError> {
        Ok(self.queue_object(DeltaType::Deleted, obj)?)
    }

    /// Mirrors `RealFIFO.List`: the object of every queued delta, oldest first.
    fn list(&self) -> Snapshot<Arc<T>> {
        let state = self.state.lock();
        state.list_snapshot.get_or_build(|| {
            state
                .items
                .iter()
                .filter_map(|(_, delta)| delta.object().cloned())
                .collect()
        })
    }

    fn get(&self, obj: &T) -> Result<Option<Arc<T>>, StoreError> {
        let key = self.key_of(obj)?;
        Ok(self.get_by_key(&key))
    }

    fn replace(
        &self,
        list: Vec<Arc<T>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        Ok(self.replace_list(list, resource_version)?)
    }

    fn resync(&self) -> Result<(), StoreError> {
        Ok(self.resync_known()?)
    }
}

crate::queue::impl_queue_via_inherent_methods!(RealFifo);
