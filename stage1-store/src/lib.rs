//! # Stage 1: the indexed thread-safe store
//!
//! The informer's local cache. Every object an informer has seen lives here, under a
//! key such as `default/web-0`, and index functions let you ask "which pods are in
//! namespace `default`?" or "which pods run on node `n1`?" without scanning
//! everything.
//!
//! This crate mirrors client-go's `tools/cache` package, the part that source
//! document 003 describes as the `threadSafeMap`:
//!
//! | client-go (Go) | here (Rust) |
//! |---|---|
//! | `threadSafeMap` (thread_safe_store.go) | [`ThreadSafeStore`] |
//! | `storeIndex`, `updateIndices`, `updateSingleIndex` | private `StoreIndex`, `update_indices`, `update_single_index` |
//! | `IndexFunc`, `Indexers`, `Indices`, `Index` (index.go) | [`IndexFunc`], [`Indexers`], [`Indices`], [`Index`] |
//! | `MetaNamespaceIndexFunc`, `NamespaceIndex` | [`meta_namespace_index_func`], [`NAMESPACE_INDEX`] |
//! | `Store` (store.go); `KeyLister`, `KeyGetter`, `KeyListerGetter` (delta_fifo.go) | [`Store`], [`KeyLister`], [`KeyGetter`], [`KeyListerGetter`] |
//! | `Indexer` (index.go) | [`Indexer`] |
//! | `cache`, `NewStore`, `NewIndexer` | [`Cache`], [`new_store`], [`new_indexer`] |
//! | `KeyFunc`, `MetaNamespaceKeyFunc`, `SplitMetaNamespaceKey` | [`KeyFunc`], [`meta_namespace_key_func`], [`split_meta_namespace_key`] |
//! | `KeyError` | [`KeyError`] |
//! | the `[]string` and `[]interface{}` that `ListKeys` and `List` return | [`Snapshot`], cached in a [`SnapshotCell`] |
//!
//! ## Data flow
//!
//! ```text
//!  add(key, obj) ──► items: key ──► Arc<T>
//!        │
//!        └─► update_indices(old, new, key)
//!              for each indexer:  values = index_func(obj)
//!              indices[name][value] ∋ key        (the same Arc<str> as in items)
//!
//!  by_index("namespace", "default") ──► indices["namespace"]["default"] ──► keys ──► items
//! ```
//!
//! ## Where this differs from client-go
//! - `add_indexers` works on a store that already holds items (client-go allows it
//!   since 1.26).
//! - An index value whose key set becomes empty is removed (client-go issue 84959).
//! - A failing or panicking index function makes the write return an error and
//!   leaves the store unchanged; client-go panics.
//! - Objects are `Arc<T>`: a `get` or `list` hands out shared references, never
//!   copies.
//! - `list` and `list_keys` return a [`Snapshot`] that the store caches until its
//!   next change, so a read costs one atomic increment, not one per item.

mod error;
mod index;
mod snapshot;
mod store;
mod thread_safe_store;

pub use error::{InvalidKeyError, KeyError, StoreError};
pub use index::{
    BoxError, Index, IndexFunc, IndexValues, Indexers, Indices, NAMESPACE_INDEX,
    index_func, indexers, labels_index_func, meta_namespace_index_func,
    namespace_indexers,
};
pub use snapshot::{Snapshot, SnapshotCell};
pub use store::{
    Cache, Indexer, KeyFunc, KeyGetter, KeyLister, KeyListerGetter, Store,
    meta_namespace_key_func, new_indexer, new_store, split_meta_namespace_key,
};
pub use thread_safe_store::ThreadSafeStore;
