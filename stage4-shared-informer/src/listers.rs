//! Listers: typed, read-only views of an informer's indexer.
//!
//! Mirrors client-go's [`tools/cache/listers.go`] (`ListAll`, `ListAllByNamespace`)
//! and the typed listers that `lister-gen` writes for every API type (`PodLister`,
//! `PodNamespaceLister`, `NodeLister`, …), which today are thin wrappers around the
//! generic `ResourceIndexer[T]` of [`listers/generic_helpers.go`].
//!
//! A controller never asks the apiserver "which pods are in `default`?"; it asks its
//! lister, which answers from the informer's local cache (stage 1's [`Indexer`])
//! without a network call. Answers are shared `Arc`s, never copies: treat them as
//! read-only, as client-go asks you to.
//!
//! | client-go (Go) | here (Rust) |
//! |---|---|
//! | `cache.ListAll(store, selector, appendFn)` | [`Lister::list`] |
//! | `cache.ListAllByNamespace(indexer, ns, selector, appendFn)` | [`NamespaceLister::list`] |
//! | `PodLister.Pods(ns)` | [`Lister::namespaced`] |
//! | `PodNamespaceLister.Get(name)` | [`NamespaceLister::get`] |
//! | `NodeLister.Get(name)` | [`Lister::get`] |
//! | `errors.NewNotFound(resource, name)` | [`ListerError::NotFound`] |
//!
//! As in the generated listers, the scope of the type decides the shape: only
//! namespaced types have [`Lister::namespaced`], and only cluster-scoped types have
//! [`Lister::get`] (a pod's key is `namespace/name`, so a get by bare name could
//! never find one).
//!
//! [`tools/cache/listers.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/listers.go
//! [`listers/generic_helpers.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/listers/generic_helpers.go

use std::fmt;
use std::sync::Arc;

use kube::Resource;
use kube::core::{ClusterResourceScope, NamespaceScope, Selector};
use stage1_store::{Indexer, NAMESPACE_INDEX};

use apimachinery::labels::matches_labels;

// ANCHOR: lister_error
/// Mirrors the apiserver errors a client-go lister returns
/// (`k8s.io/apimachinery/pkg/api/errors`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListerError {
    /// Mirrors `errors.NewNotFound`: no object with this name is in the cache.
    ///
    /// The message is the apiserver's, `pods "web-0" not found`: the qualified
    /// resource (the plural, followed by `.group` outside the core group:
    /// `deployments.apps`) and the name alone, without the namespace. In a
    /// controller this usually means the object was deleted (or the informer has
    /// not synced yet); it is not a failure of the cache.
    #[error("{resource} \"{name}\" not found")]
    NotFound {
        /// The qualified resource: `pods`, `nodes`, `deployments.apps`.
        resource: String,
        /// The name looked up, without namespace.
        name: String,
    },
}
// ANCHOR_END: lister_error

impl ListerError {
    /// Mirrors `errors.NewNotFound` for the type `K`.
    pub fn not_found<K>(name: &str) -> Self
    where
        K: Resource<DynamicType = ()>,
    {
        let plural = K::plural(&());
        let group = K::group(&());
        let resource = if group.is_empty() {
            plural.into_owned()
        } else {
            format!("{plural}.{group}")
        };
        Self::NotFound {
            resource,
            name: name.to_string(),
        }
    }

    /// The HTTP status code the apiserver answers with (`metav1.Status.Code`): 404
    /// for [`ListerError::NotFound`].
    pub fn code(&self) -> u16 {
        match self {
            Self::NotFound { .. } => 404,
        }
    }

    /// The machine-readable reason (`metav1.Status.Reason`, a
    /// `metav1.StatusReason`): `"NotFound"` for [`ListerError::NotFound`].
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "NotFound",
        }
    }

    /// Mirrors `errors.IsNotFound`.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }
}

// ANCHOR: lister
/// Mirrors a generated lister such as `PodLister` or `NodeLister` (client-go's
/// generic `listers.ResourceIndexer[T]`): typed reads from an informer's indexer,
/// across all namespaces.
///
/// Cloning is cheap: clones share the indexer.
pub struct Lister<K> {
    indexer: Arc<dyn Indexer<K>>,
}
// ANCHOR_END: lister

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: Arc::clone(&self.indexer),
        }
    }
}

impl<K> fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lister")
            .field("type", &std::any::type_name::<K>())
            .finish_non_exhaustive()
    }
}

impl<K> Lister<K>
where
    K: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    /// Mirrors a generated `NewPodLister(indexer)`: a lister over an informer's
    /// indexer.
    pub fn new(indexer: Arc<dyn Indexer<K>>) -> Self {
        Self { indexer }
    }

    // ANCHOR: list_all
    /// Mirrors client-go's `cache.ListAll` (and a generated `PodLister.List`): every
    /// object in every namespace whose labels match `selector`.
    ///
    /// An empty selector (`Selector::default()`, or `parse_label_selector("")`)
    /// returns everything without looking at labels. The order is unspecified.
    /// Memory: one `Arc` per object; nothing is deep copied.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        filter_by_labels(self.indexer.list().to_vec(), selector)
    }
    // ANCHOR_END: list_all

    /// Mirrors a generated `PodLister.Pods(namespace)`: a lister restricted to one
    /// namespace.
    ///
    /// Only namespaced types have it. As in client-go, the empty namespace
    /// (`metav1.NamespaceAll`) means every namespace.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # use stage1_store::Cache;
    /// # use stage4_shared_informer::{Lister, parse_label_selector};
    /// let pods = Lister::<Pod>::new(Arc::new(Cache::<Pod>::for_resources()));
    /// let web = pods.namespaced("default").list(&parse_label_selector("app=web")?);
    /// assert!(web.is_empty());
    /// assert_eq!(
    ///     pods.namespaced("default").get("web-0").unwrap_err().to_string(),
    ///     r#"pods "web-0" not found"#
    /// );
    /// # Ok::<(), stage4_shared_informer::SelectorError>(())
    /// ```
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K>
    where
        K::Scope: NamespaceScope,
    {
        NamespaceLister {
            indexer: Arc::clone(&self.indexer),
            namespace: namespace.to_string(),
        }
    }

    /// Mirrors a generated cluster-scoped `NodeLister.Get(name)`: the object stored
    /// under the key `name`.
    ///
    /// Only cluster-scoped types have it; for namespaced types use
    /// `lister.namespaced(ns).get(name)`. Asking a pod lister for a bare name does
    /// not compile:
    ///
    /// ```compile_fail
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # use stage1_store::Cache;
    /// # use stage4_shared_informer::{Lister, parse_label_selector};
    /// let pods = Lister::<Pod>::new(Arc::new(Cache::<Pod>::for_resources()));
    /// let _ = pods.get("web-0"); // error: Pod's scope is not ClusterResourceScope
    /// # Ok::<(), stage4_shared_informer::SelectorError>(())
    /// ```
    pub fn get(&self, name: &str) -> Result<Arc<K>, ListerError>
    where
        K: Resource<Scope = ClusterResourceScope>,
    {
        self.indexer
            .get_by_key(name)
            .ok_or_else(|| ListerError::not_found::<K>(name))
    }
}

// ANCHOR: namespace_lister
/// Mirrors a generated namespace lister such as `PodNamespaceLister`: typed reads
/// from an informer's indexer within one namespace.
pub struct NamespaceLister<K> {
    indexer: Arc<dyn Indexer<K>>,
    namespace: String,
}
// ANCHOR_END: namespace_lister

impl<K> Clone for NamespaceLister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: Arc::clone(&self.indexer),
            namespace: self.namespace.clone(),
        }
    }
}

impl<K> fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("type", &std::any::type_name::<K>())
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl<K> NamespaceLister<K>
where
    K: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    // ANCHOR: list_all_by_namespace
    /// Mirrors client-go's `cache.ListAllByNamespace` (and a generated
    /// `PodNamespaceLister.List`): the objects in this namespace whose labels
    /// match `selector`.
    ///
    /// It reads the `"namespace"` index ([`NAMESPACE_INDEX`]), so the cost is the
    /// size of the namespace, not of the cache. The empty namespace means every
    /// namespace, as in client-go.
    ///
    /// # Recovery
    /// If the indexer cannot answer from that index (it was built without it, so
    /// `by_index` returns `StoreError::IndexNotFound`), this falls back to
    /// scanning every object and keeping those in the namespace, as client-go
    /// does after logging "can not retrieve list of objects using index". The
    /// answer is the same; only the cost grows to the size of the whole cache.
    /// Register the index (`namespace_indexers()`, or `Cache::for_resources`) to
    /// avoid it.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        if self.namespace.is_empty() {
            return filter_by_labels(self.indexer.list().to_vec(), selector);
        }
        match self.indexer.by_index(NAMESPACE_INDEX, &self.namespace) {
            Ok(items) => filter_by_labels(items, selector),
            // client-go ignores whatever error the index returned and scans instead.
            Err(_) => {
                let mut items = self.indexer.list().to_vec();
                items.retain(|obj| {
                    obj.meta().namespace.as_deref() == Some(&*self.namespace)
                });
                filter_by_labels(items, selector)
            }
        }
    }
    // ANCHOR_END: list_all_by_namespace

    /// Mirrors a generated `PodNamespaceLister.Get(name)`: the object stored under
    /// the key `namespace/name`.
    ///
    /// A missing object is [`ListerError::NotFound`], whose message names the object
    /// without its namespace (`pods "web-0" not found`), as the apiserver's
    /// does.
    pub fn get(&self, name: &str) -> Result<Arc<K>, ListerError> {
        let key = if self.namespace.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.namespace)
        };
        self.indexer
            .get_by_key(&key)
            .ok_or_else(|| ListerError::not_found::<K>(name))
    }
}

/// Keeps the objects whose labels match `selector`; an empty selector keeps
/// everything without looking (client-go's `selectAll` shortcut).
fn filter_by_labels<K: Resource>(
    mut items: Vec<Arc<K>>,
    selector: &Selector,
) -> Vec<Arc<K>> {
    if !selector.selects_all() {
        items.retain(|obj| matches_labels(selector, obj.meta().labels.as_ref()));
    }
    items
}
