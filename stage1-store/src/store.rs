//! The store interfaces, key functions, and the keyed store.
//!
//! Mirrors client-go's [`tools/cache/store.go`]: the `Store` interface, `KeyFunc`,
//! `MetaNamespaceKeyFunc`, `SplitMetaNamespaceKey`, and the `cache` struct behind
//! `NewStore` and `NewIndexer` (here [`Cache`]). The `Indexer` interface comes from
//! [`tools/cache/index.go`], and `KeyLister`, `KeyGetter` and `KeyListerGetter` from
//! `delta_fifo.go`, where client-go declares them for the DeltaFIFO's known objects.
//!
//! [`tools/cache/store.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/store.go
//! [`tools/cache/index.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/index.go

use std::sync::Arc;

use kube::Resource;

use crate::error::{InvalidKeyError, KeyError, StoreError};
use crate::index::{Indexers, NAMESPACE_INDEX};
use crate::snapshot::Snapshot;
use crate::thread_safe_store::ThreadSafeStore;

// ANCHOR: key_func
/// Mirrors client-go's `KeyFunc`: computes the store key of an object.
pub type KeyFunc<T> =
    Arc<dyn Fn(&T) -> Result<String, KeyError> + Send + Sync + 'static>;
// ANCHOR_END: key_func

// ANCHOR: key_traits
/// Mirrors client-go's `KeyLister`: something that can list its keys.
pub trait KeyLister: Send + Sync {
    /// Every key, in no particular order, as a shared [`Snapshot`].
    fn list_keys(&self) -> Snapshot<Arc<str>>;
}

/// Mirrors client-go's `KeyGetter`: something that can look an object up by key.
pub trait KeyGetter<T>: Send + Sync {
    /// The object stored under `key`, if any.
    fn get_by_key(&self, key: &str) -> Option<Arc<T>>;
}

/// Mirrors client-go's `KeyListerGetter`. Stage 2's DeltaFIFO sees the informer's
/// indexer through it (the "known objects").
pub trait KeyListerGetter<T>: KeyLister + KeyGetter<T> {}

impl<T, S: KeyLister + KeyGetter<T> + ?Sized> KeyListerGetter<T> for S {}
// ANCHOR_END: key_traits

// ANCHOR: store_traits
/// Mirrors client-go's `Store`: a keyed collection of objects.
///
/// The Reflector (stage 3) writes into any `Store`: an [`Indexer`], stage 2's
/// DeltaFIFO, or stage 5's watch cache. Objects are shared `Arc`s and are never
/// copied.
pub trait Store<T>: KeyListerGetter<T> {
    /// Adds an object (or replaces the one with the same key).
    fn add(&self, obj: Arc<T>) -> Result<(), StoreError>;
    /// Updates an object (or adds it).
    fn update(&self, obj: Arc<T>) -> Result<(), StoreError>;
    /// Deletes the object with the same key as `obj`.
    fn delete(&self, obj: Arc<T>) -> Result<(), StoreError>;
    /// Every object, in no particular order, as a shared [`Snapshot`].
    fn list(&self) -> Snapshot<Arc<T>>;
    /// The stored object with the same key as `obj`.
    fn get(&self, obj: &T) -> Result<Option<Arc<T>>, StoreError>;
    /// Replaces the whole contents with `list`, as observed at `resource_version`.
    fn replace(
        &self,
        list: Vec<Arc<T>>,
        resource_version: &str,
    ) -> Result<(), StoreError>;
    /// Asks the store to resynchronise; a no-op for plain stores.
    fn resync(&self) -> Result<(), StoreError>;
}

/// Mirrors client-go's `Indexer`: a [`Store`] with indexes.
pub trait Indexer<T>: Store<T> {
    /// The objects that share an index value with `obj`.
    fn index(&self, index_name: &str, obj: &T) -> Result<Vec<Arc<T>>, StoreError>;
    /// The keys under `indexed_value`, sorted.
    fn index_keys(
        &self,
        index_name: &str,
        indexed_value: &str,
    ) -> Result<Vec<Arc<str>>, StoreError>;
    /// Every value the index holds, sorted.
    fn list_index_func_values(
        &self,
        index_name: &str,
    ) -> Result<Vec<String>, StoreError>;
    /// The objects under `indexed_value`.
    fn by_index(
        &self,
        index_name: &str,
        indexed_value: &str,
    ) -> Result<Vec<Arc<T>>, StoreError>;
    /// The registered index functions.
    fn get_indexers(&self) -> Indexers<T>;
    /// Registers more index functions, indexing the objects already stored.
    fn add_indexers(&self, indexers: Indexers<T>) -> Result<(), StoreError>;
}
// ANCHOR_END: store_traits

// ANCHOR: cache
/// Mirrors client-go's `cache` struct: a [`ThreadSafeStore`] plus the key function
/// that names each object. It implements [`Store`] and [`Indexer`].
pub struct Cache<T> {
    store: ThreadSafeStore<T>,
    key_func: KeyFunc<T>,
}
// ANCHOR_END: cache

// ANCHOR: constructors
/// Mirrors client-go's `NewStore`: a store without indexes.
pub fn new_store<T>(key_func: KeyFunc<T>) -> Cache<T> {
    new_indexer(key_func, Indexers::new())
}

/// Mirrors client-go's `NewIndexer`: a store with these indexes.
pub fn new_indexer<T>(key_func: KeyFunc<T>, indexers: Indexers<T>) -> Cache<T> {
    Cache {
        store: ThreadSafeStore::new(indexers),
        key_func,
    }
}

impl<T> Cache<T> {
    /// The underlying thread-safe store, for callers that already know keys.
    pub fn thread_safe_store(&self) -> &ThreadSafeStore<T> {
        &self.store
    }

    /// The key of `obj` under this store's key function.
    pub fn key_of(&self, obj: &T) -> Result<String, KeyError> {
        (self.key_func)(obj)
    }

    /// The number of objects stored.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }
}

impl<K> Cache<K>
where
    K: Resource + Send + Sync + 'static,
    K::DynamicType: Default,
{
    /// A store of Kubernetes objects keyed by `namespace/name`, with the
    /// `"namespace"` index: what a client-go informer builds by default.
    pub fn for_resources() -> Self {
        new_indexer(
            Arc::new(meta_namespace_key_func::<K>),
            crate::index::indexers([(
                NAMESPACE_INDEX,
                crate::index::index_func(
                    crate::index::meta_namespace_index_func::<K>,
                ),
            )]),
        )
    }
}

// ANCHOR_END: constructors

impl<T> std::fmt::Debug for Cache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("store", &self.store).finish()
    }
}

impl<T: Send + Sync> KeyLister for Cache<T> {
    fn list_keys(&self) -> Snapshot<Arc<str>> {
        self.store.list_keys()
    }
}

impl<T: Send + Sync> KeyGetter<T> for Cache<T> {
    fn get_by_key(&self, key: &str) -> Option<Arc<T>> {
        self.store.get(key)
    }
}

impl<T: Send + Sync> Store<T> for Cache<T> {
    fn add(&self, obj: Arc<T>) -> Result<(), StoreError> {
        let key = self.key_of(&obj)?;
        self.store.add(&key, obj)
    }

    fn update(&self, obj: Arc<T>) -> Result<(), StoreError> {
        let key = self.key_of(&obj)?;
        self.store.update(&key, obj)
    }

    fn delete(&self, obj: Arc<T>) -> Result<(), StoreError> {
        let key = self.key_of(&obj)?;
        self.store.delete(&key)
    }

    fn list(&self) -> Snapshot<Arc<T>> {
        self.store.list()
    }

    fn get(&self, obj: &T) -> Result<Option<Arc<T>>, StoreError> {
        let key = self.key_of(obj)?;
        Ok(self.store.get(&key))
    }

    fn replace(
        &self,
        list: Vec<Arc<T>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        let items = list
            .into_iter()
            .map(|obj| Ok((Arc::<str>::from(self.key_of(&obj)?), obj)))
            .collect::<Result<Vec<_>, KeyError>>()?;
        self.store.replace(items, resource_version)
    }

    fn resync(&self) -> Result<(), StoreError> {
        self.store.resync()
    }
}

impl<T: Send + Sync> Indexer<T> for Cache<T> {
    fn index(&self, index_name: &str, obj: &T) -> Result<Vec<Arc<T>>, StoreError> {
        self.store.index(index_name, obj)
    }

    fn index_keys(
        &self,
        index_name: &str,
        indexed_value: &str,
    ) -> Result<Vec<Arc<str>>, StoreError> {
        self.store.index_keys(index_name, indexed_value)
    }

    fn list_index_func_values(
        &self,
        index_name: &str,
    ) -> Result<Vec<String>, StoreError> {
        self.store.list_index_func_values(index_name)
    }

    fn by_index(
        &self,
        index_name: &str,
        indexed_value: &str,
    ) -> Result<Vec<Arc<T>>, StoreError> {
        self.store.by_index(index_name, indexed_value)
    }

    fn get_indexers(&self) -> Indexers<T> {
        self.store.get_indexers()
    }

    fn add_indexers(&self, indexers: Indexers<T>) -> Result<(), StoreError> {
        self.store.add_indexers(indexers)
    }
}

// ANCHOR: meta_namespace_key_func
/// Mirrors client-go's `MetaNamespaceKeyFunc`: `namespace/name`, or just `name` for
/// a cluster-scoped object.
///
/// An object without a name has no key; that is a [`KeyError`] naming the object's
/// kind and namespace.
pub fn meta_namespace_key_func<K>(obj: &K) -> Result<String, KeyError>
where
    K: Resource,
    K::DynamicType: Default,
{
    // ANCHOR: ex1-namespace-key
    let meta = obj.meta();
    let namespace = meta.namespace.as_deref().unwrap_or("");
    let Some(name) = meta.name.as_deref().filter(|name| !name.is_empty()) else {
        let kind = K::kind(&K::DynamicType::default()).into_owned();
        return Err(KeyError::new(
            format!("{kind} in namespace {namespace:?}"),
            "object has no name",
        ));
    };
    if namespace.is_empty() {
        Ok(name.to_string())
    } else {
        Ok(format!("{namespace}/{name}"))
    }
    // ANCHOR_END: ex1-namespace-key
}
// ANCHOR_END: meta_namespace_key_func

// ANCHOR: split_meta_namespace_key
/// Mirrors client-go's `SplitMetaNamespaceKey`: `name` → `("", name)`,
/// `namespace/name` → `(namespace, name)`, anything with more slashes is an error.
pub fn split_meta_namespace_key(key: &str) -> Result<(&str, &str), InvalidKeyError> {
    // ANCHOR: ex1-split-key
    let mut parts = key.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, None) => Ok(("", name)),
        (Some(namespace), Some(name), None) => Ok((namespace, name)),
        _ => Err(InvalidKeyError {
            key: key.to_string(),
        }),
    }
    // ANCHOR_END: ex1-split-key
}
// ANCHOR_END: split_meta_namespace_key
