//! The thread-safe map with indexes.
//!
//! Mirrors client-go's [`tools/cache/thread_safe_store.go`]: `threadSafeMap` (here
//! [`ThreadSafeStore`]) and `storeIndex`.
//!
//! # Locking
//! One `parking_lot::RwLock` guards the items and every index together, as in
//! client-go, so a reader never sees an item without its index entries or the other
//! way round. Index functions run while the write lock is held: keep them cheap and
//! never call back into the store.
//!
//! # Recovery
//! Every write first computes all index values it needs, and only then changes
//! anything. If an index function returns an error (or panics), the write returns
//! [`StoreError::IndexFunc`] and the store is exactly as it was. client-go panics in
//! that case instead; a library must not take a program down because of one odd
//! object.
//!
//! # Whole-store reads
//! `list` and `list_keys` hand out a [`Snapshot`] that the store builds on the first
//! read after a change and caches until the next one: a read is one `Arc` clone,
//! however many items the store holds, and two threads listing at once do not
//! fight over every key's reference count.
//!
//! # Memory usage
//! Each key is one `Arc<str>`, shared by the item map and every index set it appears
//! in. An index value whose set becomes empty is removed (client-go issue 84959), so
//! churn through short-lived values does not grow the indices. A cached snapshot
//! adds one pointer per item while it lives.
//!
//! [`tools/cache/thread_safe_store.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/thread_safe_store.go

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use hashbrown::{HashMap, HashSet};
use parking_lot::RwLock;
use smallvec::SmallVec;

use crate::error::StoreError;
use crate::index::{Index, IndexFunc, IndexValues, Indexers, Indices};
use crate::snapshot::{Snapshot, SnapshotCell};

// ANCHOR: struct
/// Mirrors client-go's `threadSafeMap`: a map from key to `Arc<T>`, with indexes,
/// behind one read/write lock.
///
/// Unlike [`Cache`](crate::Cache), it does not know how to compute an object's key:
/// every call names the key. `ThreadSafeStore<T>` is `Send + Sync` when `T` is.
pub struct ThreadSafeStore<T> {
    inner: RwLock<ThreadSafeMap<T>>,
}

/// What the lock guards.
struct ThreadSafeMap<T> {
    /// key → object. The key `Arc<str>` is the same allocation the index sets hold.
    items: HashMap<Arc<str>, Arc<T>>,
    /// The indexing half, client-go's `storeIndex`.
    index: StoreIndex<T>,
    /// What `list_keys` last returned; reset when a key comes or goes.
    keys_snapshot: SnapshotCell<Arc<str>>,
    /// What `list` last returned; reset on every change.
    list_snapshot: SnapshotCell<Arc<T>>,
}

/// Mirrors client-go's `storeIndex`: the index functions and what they computed.
struct StoreIndex<T> {
    /// index name → index function.
    indexers: Indexers<T>,
    /// index name → (index value → set of keys). Holds an entry for every indexer.
    indices: Indices,
}
// ANCHOR_END: struct

/// The index values one indexer computed for a write: before and after.
struct PendingIndexUpdate<'a> {
    name: &'a str,
    old: IndexValues<'a>,
    new: IndexValues<'a>,
}

impl<T> Default for ThreadSafeStore<T> {
    fn default() -> Self {
        Self::new(Indexers::new())
    }
}

impl<T> std::fmt::Debug for ThreadSafeStore<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("ThreadSafeStore")
            .field("items", &inner.items.len())
            .field("indexers", &inner.index.indexers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl<T> ThreadSafeStore<T> {
    /// Mirrors client-go's `NewThreadSafeStore`: an empty store with these indexers.
    pub fn new(indexers: Indexers<T>) -> Self {
        let indices = indexers
            .keys()
            .map(|name| (name.clone(), Index::new()))
            .collect();
        Self {
            inner: RwLock::new(ThreadSafeMap {
                items: HashMap::new(),
                index: StoreIndex { indexers, indices },
                keys_snapshot: SnapshotCell::new(),
                list_snapshot: SnapshotCell::new(),
            }),
        }
    }

    // ANCHOR: add
    /// Mirrors `threadSafeMap.Add`: stores `obj` under `key`, replacing any previous
    /// object, and moves the key in every index.
    ///
    /// Fails with [`StoreError::IndexFunc`] if an index function fails; the store is
    /// then unchanged.
    pub fn add(&self, key: &str, obj: Arc<T>) -> Result<(), StoreError> {
        self.update(key, obj)
    }

    /// Mirrors `threadSafeMap.Update`; the same as [`add`](Self::add).
    ///
    /// Updating an existing key whose index values did not change allocates nothing.
    pub fn update(&self, key: &str, obj: Arc<T>) -> Result<(), StoreError> {
        let mut guard = self.inner.write();
        let map = &mut *guard;
        match map.items.get_key_value_mut(key) {
            // An existing key: reuse its allocation, and swap the object in place.
            Some((stored_key, slot)) => {
                map.index
                    .update_indices(Some(&**slot), Some(&*obj), stored_key)?;
                *slot = obj;
            }
            None => {
                let key = Arc::<str>::from(key);
                map.index.update_indices(None, Some(&*obj), &key)?;
                map.items.insert(key, obj);
                map.keys_snapshot.invalidate();
            }
        }
        map.list_snapshot.invalidate();
        Ok(())
    }
    // ANCHOR_END: add

    // ANCHOR: delete
    /// Mirrors `threadSafeMap.Delete`: removes `key` and its index entries. Deleting
    /// a missing key is a no-op.
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let mut guard = self.inner.write();
        let map = &mut *guard;
        let Some((key, old)) = map
            .items
            .get_key_value(key)
            .map(|(k, v)| (Arc::clone(k), Arc::clone(v)))
        else {
            return Ok(());
        };
        map.index.update_indices(Some(&*old), None, &key)?;
        map.items.remove(&key);
        map.keys_snapshot.invalidate();
        map.list_snapshot.invalidate();
        Ok(())
    }
    // ANCHOR_END: delete

    /// Mirrors `threadSafeMap.Get`.
    pub fn get(&self, key: &str) -> Option<Arc<T>> {
        self.inner.read().items.get(key).cloned()
    }

    // ANCHOR: list
    /// Mirrors `threadSafeMap.List`: every object, in no particular order.
    ///
    /// The snapshot is shared with every other `list` until the store changes.
    pub fn list(&self) -> Snapshot<Arc<T>> {
        let map = self.inner.read();
        map.list_snapshot
            .get_or_build(|| map.items.values().cloned().collect())
    }

    /// Mirrors `threadSafeMap.ListKeys`: every key, in no particular order.
    ///
    /// The snapshot is shared with every other `list_keys` until a key is added
    /// or deleted.
    pub fn list_keys(&self) -> Snapshot<Arc<str>> {
        let map = self.inner.read();
        map.keys_snapshot
            .get_or_build(|| map.items.keys().cloned().collect())
    }
    // ANCHOR_END: list

    /// The number of objects stored.
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // ANCHOR: replace
    /// Mirrors `threadSafeMap.Replace`: swaps in a whole new set of items and
    /// rebuilds every index.
    ///
    /// The new indices are computed before anything is swapped, so a failing index
    /// function leaves the old contents in place. If a key appears twice, the
    /// last object wins. The resource version is not used by this store; it is
    /// part of the signature because stores that wrap this one (stage 2's
    /// DeltaFIFO, stage 5's watch cache) need it.
    pub fn replace<K>(
        &self,
        items: impl IntoIterator<Item = (K, Arc<T>)>,
        _resource_version: &str,
    ) -> Result<(), StoreError>
    where
        K: Into<Arc<str>>,
    {
        let items: HashMap<Arc<str>, Arc<T>> =
            items.into_iter().map(|(k, v)| (k.into(), v)).collect();
        let mut guard = self.inner.write();
        let indices = build_indices(&guard.index.indexers, &items)?;
        guard.items = items;
        guard.index.indices = indices;
        guard.keys_snapshot.invalidate();
        guard.list_snapshot.invalidate();
        Ok(())
    }
    // ANCHOR_END: replace

    // ANCHOR: index
    /// Mirrors `threadSafeMap.Index`: the objects that share at least one index
    /// value with `obj` in the index `index_name`, each once, in no particular
    /// order.
    ///
    /// For the namespace index, `obj` can be any object in the wanted namespace.
    pub fn index(
        &self,
        index_name: &str,
        obj: &T,
    ) -> Result<Vec<Arc<T>>, StoreError> {
        let map = self.inner.read();
        let index_func = map.index.indexer(index_name)?;
        let values = call_index_func(index_name, index_func, obj, "(query object)")?;
        let index = map.index.indices.get(index_name);
        let keys = keys_for_values(index, &values);
        Ok(keys
            .into_iter()
            .filter_map(|key| map.items.get(key).cloned())
            .collect())
    }
    // ANCHOR_END: index

    /// Mirrors `threadSafeMap.IndexKeys`: the keys whose objects produced
    /// `indexed_value` in the index, sorted.
    pub fn index_keys(
        &self,
        index_name: &str,
        indexed_value: &str,
    ) -> Result<Vec<Arc<str>>, StoreError> {
        let map = self.inner.read();
        map.index.indexer(index_name)?;
        let mut keys: Vec<Arc<str>> = map
            .index
            .indices
            .get(index_name)
            .and_then(|index| index.get(indexed_value))
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default();
        keys.sort_unstable();
        Ok(keys)
    }

    /// Mirrors `threadSafeMap.ListIndexFuncValues`: every value the index currently
    /// holds, sorted.
    pub fn list_index_func_values(
        &self,
        index_name: &str,
    ) -> Result<Vec<String>, StoreError> {
        let map = self.inner.read();
        map.index.indexer(index_name)?;
        let mut values: Vec<String> = map
            .index
            .indices
            .get(index_name)
            .map(|index| index.keys().cloned().collect())
            .unwrap_or_default();
        values.sort_unstable();
        Ok(values)
    }

    /// Mirrors `threadSafeMap.ByIndex`: the objects whose values in the index
    /// include `indexed_value`, in no particular order.
    pub fn by_index(
        &self,
        index_name: &str,
        indexed_value: &str,
    ) -> Result<Vec<Arc<T>>, StoreError> {
        let map = self.inner.read();
        map.index.indexer(index_name)?;
        let Some(set) = map
            .index
            .indices
            .get(index_name)
            .and_then(|index| index.get(indexed_value))
        else {
            return Ok(Vec::new());
        };
        Ok(set
            .iter()
            .filter_map(|key| map.items.get(key).cloned())
            .collect())
    }

    /// Mirrors `threadSafeMap.GetIndexers`: a copy of the index functions (cheap:
    /// they are `Arc`s).
    pub fn get_indexers(&self) -> Indexers<T> {
        self.inner.read().index.indexers.clone()
    }

    // ANCHOR: add_indexers
    /// Mirrors `threadSafeMap.AddIndexers`: registers more indexers, and indexes the
    /// items already stored with them.
    ///
    /// A name that is already registered fails with [`StoreError::IndexerConflict`];
    /// a failing index function fails with [`StoreError::IndexFunc`]. Either way
    /// nothing is added.
    pub fn add_indexers(&self, new_indexers: Indexers<T>) -> Result<(), StoreError> {
        let mut guard = self.inner.write();
        let map = &mut *guard;
        let conflicts: Vec<String> = new_indexers
            .keys()
            .filter(|name| map.index.indexers.contains_key(*name))
            .cloned()
            .collect();
        if !conflicts.is_empty() {
            return Err(StoreError::IndexerConflict { names: conflicts });
        }
        let new_indices = build_indices(&new_indexers, &map.items)?;
        map.index.indices.extend(new_indices);
        map.index.indexers.extend(new_indexers);
        Ok(())
    }
    // ANCHOR_END: add_indexers

    /// Mirrors `threadSafeMap.Resync`: nothing to do for an in-memory map. It exists
    /// so that stores which do queue something on resync (stage 2's DeltaFIFO)
    /// share one interface.
    pub fn resync(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

impl<T> StoreIndex<T> {
    /// The index function registered under `name`.
    fn indexer(&self, name: &str) -> Result<&IndexFunc<T>, StoreError> {
        self.indexers
            .get(name)
            .ok_or_else(|| StoreError::IndexNotFound {
                name: name.to_string(),
            })
    }

    // ANCHOR: update_indices
    /// Mirrors `storeIndex.updateIndices`: moves `key` from the old object's index
    /// values to the new object's, in every index. `old` is `None` for a create,
    /// `new` is `None` for a delete.
    ///
    /// All index functions run first; only when every one succeeded is any index
    /// touched. An index whose values did not change is not looked up at all: the
    /// common update (same namespace, same node) leaves every index alone.
    fn update_indices(
        &mut self,
        old: Option<&T>,
        new: Option<&T>,
        key: &Arc<str>,
    ) -> Result<(), StoreError> {
        let StoreIndex { indexers, indices } = self;
        let mut pending: SmallVec<[PendingIndexUpdate<'_>; 2]> = SmallVec::new();
        for (name, index_func) in indexers.iter() {
            let old = match old {
                Some(obj) => call_index_func(name, index_func, obj, key)?,
                None => IndexValues::new(),
            };
            let new = match new {
                Some(obj) => call_index_func(name, index_func, obj, key)?,
                None => IndexValues::new(),
            };
            if old != new {
                pending.push(PendingIndexUpdate { name, old, new });
            }
        }
        for update in pending {
            let index = match indices.get_mut(update.name) {
                Some(index) => index,
                None => indices.entry(update.name.to_string()).or_default(),
            };
            update_single_index(index, key, &update.old, &update.new);
        }
        Ok(())
    }
    // ANCHOR_END: update_indices
}

// ANCHOR: update_single_index
/// Mirrors `storeIndex.updateSingleIndex` (after the index values are known): moves
/// `key` from the sets of `old_values` to the sets of `new_values` within one index.
///
/// When the values did not change it does nothing at all, which makes the common
/// update (same namespace, same node) free. A set that becomes empty is removed.
fn update_single_index(
    index: &mut Index,
    key: &Arc<str>,
    old_values: &[Cow<'_, str>],
    new_values: &[Cow<'_, str>],
) {
    // ANCHOR: ex1-update-index
    if old_values == new_values {
        return;
    }
    for value in old_values {
        if !new_values.contains(value) {
            delete_key_from_index(index, key, value);
        }
    }
    for value in new_values {
        if !old_values.contains(value) {
            add_key_to_index(index, key, value);
        }
    }
    // ANCHOR_END: ex1-update-index
}
// ANCHOR_END: update_single_index

// ANCHOR: index_helpers
/// Mirrors `storeIndex.addKeyToIndex`.
fn add_key_to_index(index: &mut Index, key: &Arc<str>, value: &str) {
    match index.get_mut(value) {
        Some(set) => {
            set.insert(Arc::clone(key));
        }
        None => {
            index.insert(value.to_string(), HashSet::from([Arc::clone(key)]));
        }
    }
}

/// Mirrors `storeIndex.deleteKeyFromIndex`, including the removal of empty sets.
fn delete_key_from_index(index: &mut Index, key: &str, value: &str) {
    if let Some(set) = index.get_mut(value) {
        set.remove(key);
        if set.is_empty() {
            index.remove(value);
        }
    }
}
// ANCHOR_END: index_helpers

// ANCHOR: keys_for_values
/// The keys in `index` under any of `values`, each once.
///
/// Mirrors the set logic of `storeIndex.getKeysFromIndex`: a single value needs no
/// de-duplication; several values can name one key more than once.
fn keys_for_values<'i>(
    index: Option<&'i Index>,
    values: &[Cow<'_, str>],
) -> Vec<&'i Arc<str>> {
    // ANCHOR: ex1-index-query
    let Some(index) = index else {
        return Vec::new();
    };
    match values {
        [value] => index
            .get(value.as_ref())
            .map(|set| set.iter().collect())
            .unwrap_or_default(),
        values => {
            let mut keys: HashSet<&'i Arc<str>> = HashSet::new();
            for value in values {
                if let Some(set) = index.get(value.as_ref()) {
                    keys.extend(set.iter());
                }
            }
            keys.into_iter().collect()
        }
    }
    // ANCHOR_END: ex1-index-query
}
// ANCHOR_END: keys_for_values

/// Computes one index from scratch for every item.
fn build_indices<T>(
    indexers: &Indexers<T>,
    items: &HashMap<Arc<str>, Arc<T>>,
) -> Result<Indices, StoreError> {
    let mut indices = Indices::new();
    for (name, index_func) in indexers {
        let mut index = Index::new();
        for (key, obj) in items {
            for value in call_index_func(name, index_func, obj, key)? {
                add_key_to_index(&mut index, key, &value);
            }
        }
        indices.insert(name.clone(), index);
    }
    Ok(indices)
}

// ANCHOR: call_index_func
/// Runs a user's index function, turning an error or a panic into
/// [`StoreError::IndexFunc`].
#[inline]
fn call_index_func<'a, T>(
    name: &str,
    index_func: &IndexFunc<T>,
    obj: &'a T,
    key: &str,
) -> Result<IndexValues<'a>, StoreError> {
    let error = |cause| StoreError::IndexFunc {
        index: name.to_string(),
        key: key.to_string(),
        cause,
    };
    match catch_unwind(AssertUnwindSafe(|| index_func(obj))) {
        Ok(Ok(values)) => Ok(values),
        Ok(Err(cause)) => Err(error(cause)),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            Err(error(format!("index function panicked: {message}").into()))
        }
    }
}
// ANCHOR_END: call_index_func
