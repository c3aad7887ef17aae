//! Index functions and the index types.
//!
//! Mirrors client-go's [`tools/cache/index.go`]: `IndexFunc`, `Indexers`, `Indices`,
//! `Index`, `NamespaceIndex` and `MetaNamespaceIndexFunc`.
//!
//! An index function looks at an object and returns zero or more *index values*. The
//! store then keeps, per index, a map from each value to the set of keys whose
//! objects produced it.
//!
//! [`tools/cache/index.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/index.go

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use hashbrown::{HashMap, HashSet};
use kube::Resource;
use smallvec::SmallVec;

/// A boxed error from user code (an index or key function).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The values an index function returns for one object.
///
/// Values borrow from the object where they can ([`Cow::Borrowed`]), and one value
/// lives inline, so the common case (one value per object, such as a namespace)
/// allocates nothing. That is what lets an update whose index value did not change
/// run without touching the heap.
pub type IndexValues<'a> = SmallVec<[Cow<'a, str>; 1]>;

// ANCHOR: index_func
/// Mirrors client-go's `IndexFunc`: computes the index values of an object.
///
/// It may fail; the store then refuses the write and stays as it was (client-go
/// panics instead).
pub type IndexFunc<T> = Arc<
    dyn for<'a> Fn(&'a T) -> Result<IndexValues<'a>, BoxError>
        + Send
        + Sync
        + 'static,
>;

/// Mirrors client-go's `Indexers`: index name → index function.
pub type Indexers<T> = BTreeMap<String, IndexFunc<T>>;

/// Mirrors client-go's `Index`: index value → the set of store keys that produced
/// it.
///
/// Keys are `Arc<str>` shared with the store's item map, so each key is stored once.
/// The maps are `hashbrown`'s, with its fast randomly seeded default hasher.
pub type Index = HashMap<String, HashSet<Arc<str>>>;

/// Mirrors client-go's `Indices`: index name → [`Index`].
///
/// A `BTreeMap`: a store has a handful of indexes, and finding one by comparing a
/// few short names is cheaper than hashing the name on every write.
pub type Indices = BTreeMap<String, Index>;
// ANCHOR_END: index_func

/// Mirrors client-go's `NamespaceIndex`: the conventional name of the namespace
/// index.
pub const NAMESPACE_INDEX: &str = "namespace";

/// Wraps a closure or function as an [`IndexFunc`].
///
/// Going through this function lets Rust infer the closure's lifetimes: the values
/// it returns may borrow from the object it is given.
///
/// ```
/// use std::borrow::Cow;
/// use stage1_store::{index_func, IndexFunc, IndexValues};
///
/// let by_first_letter: IndexFunc<String> = index_func(|s: &String| {
///     Ok(s.get(..1).map(Cow::Borrowed).into_iter().collect::<IndexValues>())
/// });
/// assert_eq!(by_first_letter(&"pod".to_string()).unwrap().as_slice(), &["p"]);
/// ```
pub fn index_func<T, F>(f: F) -> IndexFunc<T>
where
    F: for<'a> Fn(&'a T) -> Result<IndexValues<'a>, BoxError>
        + Send
        + Sync
        + 'static,
{
    Arc::new(f)
}

/// Builds [`Indexers`] from `(name, function)` pairs.
pub fn indexers<T, const N: usize>(pairs: [(&str, IndexFunc<T>); N]) -> Indexers<T> {
    pairs
        .into_iter()
        .map(|(name, f)| (name.to_string(), f))
        .collect()
}

// ANCHOR: namespace_index_func
/// Mirrors client-go's `MetaNamespaceIndexFunc`: indexes an object by its namespace.
///
/// A cluster-scoped object (no namespace) is indexed under the empty string, as in
/// client-go. The value borrows from the object, so this allocates nothing.
pub fn meta_namespace_index_func<K: Resource>(
    obj: &K,
) -> Result<IndexValues<'_>, BoxError> {
    let namespace = obj.meta().namespace.as_deref().unwrap_or("");
    Ok(smallvec::smallvec![Cow::Borrowed(namespace)])
}
// ANCHOR_END: namespace_index_func

/// The namespace index as a ready-made [`Indexers`] map, for `Cache::with_indexers`.
pub fn namespace_indexers<K: Resource + 'static>() -> Indexers<K> {
    indexers([(NAMESPACE_INDEX, index_func(meta_namespace_index_func::<K>))])
}

/// An index function with several values per object: every label as `key=value`.
///
/// `by_index("labels", "app=web")` then finds every object labelled `app=web`. It
/// shows the multi-valued case that the namespace index never exercises; the values
/// are built, so they allocate.
pub fn labels_index_func<K: Resource>(obj: &K) -> Result<IndexValues<'_>, BoxError> {
    Ok(obj
        .meta()
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| Cow::Owned(format!("{k}={v}")))
        .collect())
}
