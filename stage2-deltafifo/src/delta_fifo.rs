//! The DeltaFIFO: a queue of keys, each with the list of changes that happened to
//! it.
//!
//! Mirrors client-go's [`tools/cache/delta_fifo.go`]: `DeltaFIFO`,
//! `DeltaFIFOOptions`, `NewDeltaFIFOWithOptions`, `queueActionLocked`,
//! `dedupDeltas`, `Replace`, `Resync`, `syncKeyLocked`, `Pop`, `HasSynced` and
//! `KeyOf`.
//!
//! # Locking
//! One `parking_lot::RwLock` guards the queue (readers such as `list_keys` share
//! it). `pop` calls the process function while holding it (as client-go does), so
//! the consumer can update the known-objects store in step with the queue. `replace`
//! and `resync` read the known-objects store while holding it. The lock order is
//! therefore always queue, then known objects; a process function must not call back
//! into the queue.
//!
//! # Whole-queue reads
//! `list_keys` and `list` hand out a [`Snapshot`] built on the first read after a
//! change and cached until the next one, so a read is one `Arc` clone however long
//! the queue is. A change (a new key, a pop; for `list`, any new delta) drops it.
//!
//! # Memory usage
//! Keys are `Arc<str>`, shared by the key list and the item map; objects are
//! `Arc<T>`, shared with the Reflector and the indexer. A key with one pending delta
//! (the common case) costs one map entry and one slot in the queue, with the delta
//! inline. A cached snapshot adds one pointer per key while it lives.
//!
//! [`tools/cache/delta_fifo.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/delta_fifo.go

use std::collections::VecDeque;
use std::sync::Arc;

use hashbrown::{HashMap, HashSet};
use parking_lot::RwLock;
use stage1_store::{
    KeyError, KeyFunc, KeyGetter, KeyLister, Snapshot, SnapshotCell, Store,
    StoreError,
};
use tokio::sync::Notify;

use crate::delta::{Delta, DeltaObject, DeltaType, Deltas};
use crate::error::{FifoError, PopError};
use crate::queue::{KnownObjects, TransformFunc, wait_for};

// ANCHOR: options
/// Mirrors client-go's `DeltaFIFOOptions`.
#[must_use]
pub struct DeltaFifoOptions<T> {
    /// Computes an object's key. Required (client-go defaults to
    /// `MetaNamespaceKeyFunc`; use [`DeltaFifoOptions::new`] with
    /// `Arc::new(meta_namespace_key_func::<K>)` for that).
    pub key_func: KeyFunc<T>,
    /// The keys the consumer already knows (normally the informer's indexer).
    /// Without it, a replace cannot report deletions of objects that were
    /// already popped.
    pub known_objects: Option<KnownObjects<T>>,
    /// Queue relisted objects as `Replaced` instead of `Sync` (the informer sets
    /// this).
    pub emit_delta_type_replaced: bool,
    /// Rewrites each object as it is queued.
    pub transformer: Option<TransformFunc<T>>,
}
// ANCHOR_END: options

impl<T> DeltaFifoOptions<T> {
    /// Options with only a key function.
    pub fn new(key_func: KeyFunc<T>) -> Self {
        Self {
            key_func,
            known_objects: None,
            emit_delta_type_replaced: false,
            transformer: None,
        }
    }

    /// Sets the known-objects store.
    pub fn known_objects(mut self, known: KnownObjects<T>) -> Self {
        self.known_objects = Some(known);
        self
    }

    /// Emits `Replaced` instead of `Sync` for relisted objects.
    pub fn emit_delta_type_replaced(mut self, emit: bool) -> Self {
        self.emit_delta_type_replaced = emit;
        self
    }

    /// Sets the transform function.
    pub fn transformer(mut self, transformer: TransformFunc<T>) -> Self {
        self.transformer = Some(transformer);
        self
    }
}

// ANCHOR: struct
/// Mirrors client-go's `DeltaFIFO`: a producer/consumer queue in which each key
/// carries the list of changes ([`Deltas`]) that happened to its object since it was
/// last popped.
///
/// A key keeps its first place in line; later changes to it append to its deltas.
/// The Reflector produces (through the [`Store`] methods); the informer consumes
/// with [`pop`](Queue::pop).
pub struct DeltaFifo<T> {
    state: RwLock<FifoState<T>>,
    /// Wakes blocked `pop`s when an item is queued or the queue closes.
    notify: Notify,
    key_func: KeyFunc<T>,
    known_objects: Option<KnownObjects<T>>,
    emit_delta_type_replaced: bool,
    transformer: Option<TransformFunc<T>>,
}

/// What the lock guards.
struct FifoState<T> {
    /// key → its deltas. Every `Deltas` here holds at least one delta.
    items: HashMap<Arc<str>, Deltas<T>>,
    /// The keys in pop order, without duplicates; a key is here iff it is in
    /// `items`.
    queue: VecDeque<Arc<str>>,
    /// Whether the first `replace` happened, or a write came first.
    populated: bool,
    /// How many items of the first `replace` have not been popped yet.
    initial_population_count: usize,
    closed: bool,
    /// What `list_keys` last returned; reset when `queue` changes.
    keys_snapshot: SnapshotCell<Arc<str>>,
    /// What `list` last returned; reset when `items` changes.
    list_snapshot: SnapshotCell<Arc<T>>,
}
// ANCHOR_END: struct

impl<T> FifoState<T> {
    /// An empty, unpopulated, open queue.
    fn new() -> Self {
        Self {
            items: HashMap::new(),
            queue: VecDeque::new(),
            populated: false,
            initial_population_count: 0,
            closed: false,
            keys_snapshot: SnapshotCell::new(),
            list_snapshot: SnapshotCell::new(),
        }
    }
}

impl<T> std::fmt::Debug for DeltaFifo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.read();
        f.debug_struct("DeltaFifo")
            .field("queued_keys", &state.queue.len())
            .field("populated", &state.populated)
            .field("initial_population_count", &state.initial_population_count)
            .field("closed", &state.closed)
            .finish()
    }
}

impl<T: Send + Sync + 'static> DeltaFifo<T> {
    /// Mirrors client-go's `NewDeltaFIFOWithOptions`.
    pub fn new(options: DeltaFifoOptions<T>) -> Self {
        Self {
            state: RwLock::new(FifoState::new()),
            notify: Notify::new(),
            key_func: options.key_func,
            known_objects: options.known_objects,
            emit_delta_type_replaced: options.emit_delta_type_replaced,
            transformer: options.transformer,
        }
    }

    /// Mirrors `DeltaFIFO.KeyOf` for a plain object: the key function's answer.
    pub fn key_of(&self, obj: &T) -> Result<String, KeyError> {
        (self.key_func)(obj)
    }

    /// Mirrors `DeltaFIFO.KeyOf` for what a delta carries: a tombstone knows its own
    /// key.
    pub fn key_of_delta_object(
        &self,
        obj: &DeltaObject<T>,
    ) -> Result<Arc<str>, KeyError> {
        match obj {
            DeltaObject::Object(obj) => Ok(Arc::from(self.key_of(obj)?)),
            DeltaObject::Tombstone(tombstone) => Ok(Arc::clone(&tombstone.key)),
            DeltaObject::ReplacedAll(_)
            | DeltaObject::SyncAll
            | DeltaObject::Bookmark(_) => Err(KeyError::new(
                "a batch entry",
                "batch entries (ReplacedAll, SyncAll, Bookmark) have no key",
            )),
        }
    }

    /// Mirrors `DeltaFIFO.KeyOf` for a `Deltas`: the key of the newest delta. An
    /// empty `Deltas` is an error (client-go's `ErrZeroLengthDeltasObject`).
    pub fn key_of_deltas(&self, deltas: &Deltas<T>) -> Result<Arc<str>, KeyError> {
        match deltas.newest() {
            Some(newest) => self.key_of_delta_object(&newest.object),
            None => Err(KeyError::new(
                "an empty Deltas",
                "0 length Deltas object; can't get key",
            )),
        }
    }

    // ANCHOR: list_keys
    /// Mirrors `DeltaFIFO.ListKeys`: the queued keys, in pop order.
    ///
    /// The snapshot is shared with every other `list_keys` until a key is queued
    /// or popped.
    pub fn list_keys(&self) -> Snapshot<Arc<str>> {
        let state = self.state.read();
        state
            .keys_snapshot
            .get_or_build(|| state.queue.iter().cloned().collect())
    }
    // ANCHOR_END: list_keys

    /// Mirrors `DeltaFIFO.GetByKey`: a copy of the deltas queued for `key` (cheap:
    /// the objects are shared).
    pub fn get_deltas(&self, key: &str) -> Option<Deltas<T>> {
        self.state.read().items.get(key).cloned()
    }

    /// The number of queued keys.
    pub fn len(&self) -> usize {
        self.state.read().queue.len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues `delta_type` for `obj`; the public write methods all come through
    /// here.
    fn queue_object(
        &self,
        delta_type: DeltaType,
        obj: Arc<T>,
    ) -> Result<(), FifoError> {
        let key: Arc<str> = Arc::from(self.key_of(&obj)?);
        let mut state = self.state.write();
        state.populated = true;
        self.queue_action_locked(
            &mut state,
            key,
            delta_type,
            DeltaObject::Object(obj),
            false,
        )
    }

    // ANCHOR: queue_action_locked
    /// Mirrors `queueActionLocked`: appends a delta to the key's list, de-duplicates
    /// the tail, and puts the key at the back of the line if it was not queued
    /// yet.
    ///
    /// The transformer runs here, once per object, except for tombstones and resync
    /// deltas.
    fn queue_action_locked(
        &self,
        state: &mut FifoState<T>,
        key: Arc<str>,
        delta_type: DeltaType,
        mut object: DeltaObject<T>,
        skip_transform: bool,
    ) -> Result<(), FifoError> {
        if let (Some(transform), DeltaObject::Object(obj), false) =
            (&self.transformer, &object, skip_transform)
        {
            let transformed = transform(Arc::clone(obj)).map_err(|source| {
                FifoError::Transform {
                    key: key.to_string(),
                    source,
                }
            })?;
            object = DeltaObject::Object(transformed);
        }
        let delta = Delta { delta_type, object };
        match state.items.get_mut(&key) {
            Some(deltas) => {
                deltas.0.push(delta);
                dedup_deltas(deltas);
            }
            None => {
                state.queue.push_back(Arc::clone(&key));
                state.items.insert(key, Deltas(smallvec::smallvec![delta]));
                state.keys_snapshot.invalidate();
            }
        }
        state.list_snapshot.invalidate();
        self.notify.notify_waiters();
        Ok(())
    }
    // ANCHOR_END: queue_action_locked

    // ANCHOR: delete
    /// Mirrors `DeltaFIFO.Delete`: queues a `Deleted` delta, unless the key is
    /// neither queued nor known (then it was already deleted, for example by a
    /// relist, and a second report would be wrong). Without known objects, "not
    /// queued" alone decides.
    pub fn delete_object(&self, obj: Arc<T>) -> Result<(), FifoError> {
        let key: Arc<str> = Arc::from(self.key_of(&obj)?);
        let mut state = self.state.write();
        state.populated = true;
        let queued = state.items.contains_key(&key);
        let known = match &self.known_objects {
            Some(known) => known.get_by_key(&key).is_some(),
            None => false,
        };
        if !queued && !known {
            return Ok(());
        }
        self.queue_action_locked(
            &mut state,
            key,
            DeltaType::Deleted,
            DeltaObject::Object(obj),
            false,
        )
    }
    // ANCHOR_END: delete

    // ANCHOR: replace
    /// Mirrors `DeltaFIFO.Replace`: what a relist does.
    ///
    /// 1. Every listed object is queued as `Sync` (or `Replaced`, with
    ///    `emit_delta_type_replaced`).
    /// 2. Every queued key missing from the list gets a `Deleted` tombstone holding
    ///    its newest queued object (client-go 1.27's fix for issue 115658).
    /// 3. With known objects, every known key missing from the list and with nothing
    ///    queued gets a tombstone holding the known object.
    /// 4. The first replace sets `populated` and the initial population count
    ///    (unique listed keys plus queued deletions), which `has_synced` counts
    ///    down.
    ///
    /// All keys are computed first: a key error leaves the queue untouched.
    pub fn replace_list(
        &self,
        list: Vec<Arc<T>>,
        _resource_version: &str,
    ) -> Result<(), FifoError> {
        let keyed = list
            .into_iter()
            .map(|obj| Ok((Arc::<str>::from(self.key_of(&obj)?), obj)))
            .collect::<Result<Vec<_>, KeyError>>()?;
        let action = if self.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        let mut state = self.state.write();
        let mut listed: HashSet<Arc<str>> = HashSet::with_capacity(keyed.len());
        for (key, obj) in keyed {
            listed.insert(Arc::clone(&key));
            self.queue_action_locked(
                &mut state,
                key,
                action,
                DeltaObject::Object(obj),
                false,
            )?;
        }
        let queued_deletions = self.queue_replace_deletions(&mut state, &listed)?;
        if !state.populated {
            state.populated = true;
            state.initial_population_count = listed.len() + queued_deletions;
        }
        Ok(())
    }
    // ANCHOR_END: replace

    // ANCHOR: queue_replace_deletions
    /// Steps 2 and 3 of [`replace_list`](Self::replace_list): the deletion
    /// detection. Returns how many tombstones it queued.
    fn queue_replace_deletions(
        &self,
        state: &mut FifoState<T>,
        listed: &HashSet<Arc<str>>,
    ) -> Result<usize, FifoError> {
        // ANCHOR: ex2-replace-deletions
        let mut tombstones: Vec<(Arc<str>, Option<Arc<T>>)> = Vec::new();
        // Queued keys that the list no longer has: their newest queued object is the
        // best guess of the final state.
        for key in &state.queue {
            if listed.contains(key) {
                continue;
            }
            let newest = state
                .items
                .get(key)
                .and_then(|deltas| deltas.newest())
                .and_then(|delta| delta.object().cloned());
            tombstones.push((Arc::clone(key), newest));
        }
        // Known keys that the list no longer has and that have nothing queued.
        if let Some(known) = &self.known_objects {
            for key in known.list_keys().iter() {
                if listed.contains(key) || state.items.contains_key(key) {
                    continue;
                }
                let last_known = known.get_by_key(key);
                tombstones.push((Arc::clone(key), last_known));
            }
        }
        let queued = tombstones.len();
        for (key, obj) in tombstones {
            let tombstone = Delta::tombstone(Arc::clone(&key), obj);
            self.queue_action_locked(
                state,
                key,
                DeltaType::Deleted,
                tombstone.object,
                true,
            )?;
        }
        Ok(queued)
        // ANCHOR_END: ex2-replace-deletions
    }
    // ANCHOR_END: queue_replace_deletions

    // ANCHOR: resync
    /// Mirrors `DeltaFIFO.Resync`: queues a `Sync` of the known object for every
    /// known key that has nothing pending. Does nothing without known objects.
    pub fn resync_known(&self) -> Result<(), FifoError> {
        let Some(known) = &self.known_objects else {
            return Ok(());
        };
        let mut state = self.state.write();
        for key in known.list_keys().iter() {
            self.sync_key_locked(&mut state, known, Arc::clone(key))?;
        }
        Ok(())
    }

    /// Mirrors `syncKeyLocked`: the resync of one key.
    fn sync_key_locked(
        &self,
        state: &mut FifoState<T>,
        known: &KnownObjects<T>,
        key: Arc<str>,
    ) -> Result<(), FifoError> {
        // ANCHOR: ex2-sync-key
        let Some(obj) = known.get_by_key(&key) else {
            tracing::debug!(
                %key,
                "key vanished from known objects during resync; not queued"
            );
            return Ok(());
        };
        // A pending delta is newer than the known object: a Sync behind it would
        // carry an older state than the delta in front of it. Skip.
        if state.items.contains_key(&key) {
            return Ok(());
        }
        self.queue_action_locked(
            state,
            key,
            DeltaType::Sync,
            DeltaObject::Object(obj),
            true,
        )
        // ANCHOR_END: ex2-sync-key
    }
    // ANCHOR_END: resync

    // ANCHOR: pop
    /// Mirrors `DeltaFIFO.Pop`: waits for the first queued key, removes it with its
    /// deltas, and calls `process(deltas, is_in_initial_list)` under the queue's
    /// lock.
    ///
    /// Returns [`PopError::Closed`] once the queue is closed and empty, and
    /// [`PopError::Process`] with the process function's error (the item is not
    /// requeued). Cancelling the returned future before it completes loses
    /// nothing.
    pub async fn pop<R, E, F>(&self, process: F) -> Result<R, PopError<E>>
    where
        F: FnOnce(Deltas<T>, bool) -> Result<R, E>,
    {
        let mut process = Some(process);
        wait_for(&self.notify, || {
            let mut state = self.state.write();
            if !state.queue.is_empty() {
                state.keys_snapshot.invalidate();
                state.list_snapshot.invalidate();
            }
            if let Some((deltas, is_in_initial_list)) = take_front(&mut state) {
                let process = process.take()?;
                return Some(
                    process(deltas, is_in_initial_list).map_err(PopError::Process),
                );
            }
            state.closed.then_some(Err(PopError::Closed))
        })
        .await
    }
    // ANCHOR_END: pop

    /// Mirrors `DeltaFIFO.HasSynced`.
    pub fn has_synced(&self) -> bool {
        has_synced_locked(&self.state.read())
    }

    /// Mirrors `DeltaFIFO.Close`.
    pub fn close(&self) {
        self.state.write().closed = true;
        self.notify.notify_waiters();
    }

    /// Mirrors `DeltaFIFO.IsClosed`.
    pub fn is_closed(&self) -> bool {
        self.state.read().closed
    }
}

// ANCHOR: has_synced_locked
/// Mirrors `hasSynced_locked`: the first relist was fully popped, or a write came
/// first.
fn has_synced_locked<T>(state: &FifoState<T>) -> bool {
    state.populated && state.initial_population_count == 0
}
// ANCHOR_END: has_synced_locked

// ANCHOR: take_front
/// The part of `Pop` that runs under the lock: take the front key and its deltas,
/// and count down the initial population. Returns the deltas and whether they belong
/// to the initial list.
fn take_front<T>(state: &mut FifoState<T>) -> Option<(Deltas<T>, bool)> {
    // ANCHOR: ex2-pop
    while let Some(key) = state.queue.pop_front() {
        let is_in_initial_list = !has_synced_locked(state);
        if state.initial_population_count > 0 {
            state.initial_population_count -= 1;
        }
        match state.items.remove(&key) {
            Some(deltas) => return Some((deltas, is_in_initial_list)),
            None => tracing::error!(%key, "key was queued without deltas; skipped"),
        }
    }
    None
    // ANCHOR_END: ex2-pop
}
// ANCHOR_END: take_front

// ANCHOR: dedup_deltas
/// Mirrors `dedupDeltas` and `isDeletionDup`: when the last two deltas are both
/// deletions, keep one. If the older one is a tombstone, the newer one wins (it
/// knows more); otherwise the older one stays.
///
/// Nothing else is coalesced: an `Updated` after an `Updated` stays two deltas, so
/// the consumer sees every state.
pub fn dedup_deltas<T>(deltas: &mut Deltas<T>) {
    // ANCHOR: ex2-dedup
    let n = deltas.0.len();
    if n < 2 {
        return;
    }
    let (older, newer) = (&deltas.0[n - 2], &deltas.0[n - 1]);
    if older.delta_type != DeltaType::Deleted
        || newer.delta_type != DeltaType::Deleted
    {
        return;
    }
    let keep_newer = older.is_tombstone();
    if let Some(newer) = deltas.0.pop()
        && keep_newer
    {
        deltas.0[n - 2] = newer;
    }
    // ANCHOR_END: ex2-dedup
}
// ANCHOR_END: dedup_deltas

impl<T: Send + Sync + 'static> KeyLister for DeltaFifo<T> {
    fn list_keys(&self) -> Snapshot<Arc<str>> {
        DeltaFifo::list_keys(self)
    }
}

impl<T: Send + Sync + 'static> KeyGetter<T> for DeltaFifo<T> {
    /// The newest object queued under `key` (client-go returns the whole `Deltas`;
    /// use [`DeltaFifo::get_deltas`] for that).
    fn get_by_key(&self, key: &str) -> Option<Arc<T>> {
        let state = self.state.read();
        state
            .items
            .get(key)
            .and_then(|deltas| deltas.newest())
            .and_then(|delta| delta.object().cloned())
    }
}

impl<T: Send + Sync + 'static> Store<T> for DeltaFifo<T> {
    fn add(&self, obj: Arc<T>) -> Result<(), StoreError> {
        Ok(self.queue_object(DeltaType::Added, obj)?)
    }

    fn update(&self, obj: Arc<T>) -> Result<(), StoreError> {
        Ok(self.queue_object(DeltaType::Updated, obj)?)
    }

    fn delete(&self, obj: Arc<T>) -> Result<(), StoreError> {
        Ok(self.delete_object(obj)?)
    }

    /// Mirrors `DeltaFIFO.List`: the newest object of every queued key, in pop
    /// order (client-go's map order is random). The snapshot is shared with every
    /// other `list` until a delta is queued or popped.
    fn list(&self) -> Snapshot<Arc<T>> {
        let state = self.state.read();
        state.list_snapshot.get_or_build(|| {
            state
                .queue
                .iter()
                .filter_map(|key| state.items.get(key))
                .filter_map(|deltas| deltas.newest()?.object().cloned())
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

crate::queue::impl_queue_via_inherent_methods!(DeltaFifo);

/// `take_front` on a state built by hand, with the initial-list count set as the
/// first `replace` sets it. The tests of `pop` in `tests/delta_fifo.rs` never call
/// `replace`, so `ex2-pop` needs no other exercise's region.
#[cfg(test)]
mod ex2_pop {
    use super::*;

    /// A populated state whose queue holds `keys` in order, each with one delta, and
    /// whose first list has `initial` items left to pop.
    fn state(keys: &[&str], initial: usize) -> FifoState<u32> {
        let mut state = FifoState {
            populated: true,
            initial_population_count: initial,
            ..FifoState::new()
        };
        for (value, key) in (1..).zip(keys) {
            let key: Arc<str> = Arc::from(*key);
            let deltas =
                std::iter::once(Delta::new(DeltaType::Sync, Arc::new(value)))
                    .collect();
            state.items.insert(Arc::clone(&key), deltas);
            state.queue.push_back(key);
        }
        state
    }

    /// The object of the first delta `take_front` returns, and whether it is in the
    /// initial list.
    fn take(state: &mut FifoState<u32>) -> Option<(u32, bool)> {
        let (deltas, initial) = take_front(state)?;
        Some((**deltas.newest()?.object()?, initial))
    }

    #[test]
    fn the_initial_list_ends_with_its_last_pop() {
        let mut state = state(&["a", "b", "c"], 2);
        assert!(!has_synced_locked(&state));
        assert_eq!(take(&mut state), Some((1, true)));
        assert_eq!(
            take(&mut state),
            Some((2, true)),
            "read before counting down"
        );
        assert!(has_synced_locked(&state));
        assert_eq!(take(&mut state), Some((3, false)));
        assert_eq!(state.initial_population_count, 0);
        assert_eq!(take(&mut state), None);
        assert!(state.items.is_empty() && state.queue.is_empty());
    }

    #[test]
    fn after_the_initial_list_nothing_is_initial_and_the_count_stays_at_zero() {
        let mut state = state(&["a", "b"], 0);
        assert_eq!(take(&mut state), Some((1, false)));
        assert_eq!(take(&mut state), Some((2, false)));
        assert_eq!(state.initial_population_count, 0);
    }

    #[test]
    fn a_queued_key_without_deltas_is_skipped() {
        let mut state = state(&["a"], 0);
        state.queue.push_front(Arc::from("ghost"));
        assert_eq!(take(&mut state), Some((1, false)));
        assert_eq!(take(&mut state), None);
    }
}
