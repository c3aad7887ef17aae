//! apiserver's `pkg/storage/interfaces.go`: [`Storage`] (`storage.Interface`), what
//! the REST layer calls for one resource type, with its [`Preconditions`],
//! [`ListResult`] and [`UpdateFn`]; and the registry's key layout ([`object_key`], [`list_prefix`]: the
//! `NamespaceKeyFunc` of `pkg/registry/generic/registry/store.go`).
//!
//! The etcd3 store implements [`Storage`], and so does stage 5's Cacher, which
//! serves reads and watches from memory and passes writes through.

use std::sync::Arc;

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use apimachinery::runtime::serializer::streaming as encode;
use futures::future::BoxFuture;

use crate::Object;
use crate::errors::StorageError;
use crate::resource_info::ResourceInfo;
use crate::selection_predicate::SelectionPredicate;

/// A watch of the storage: apimachinery's `watch.Interface` ([`apimachinery::watch::Watch`]).
/// The storage reports its failures as `ERROR` events carrying a `Status`, as
/// upstream's watchers do; [`StorageError`] is what the stream itself could end
/// with, and the HTTP edge writes it as one more `ERROR` event.
pub type Watch<T> = apimachinery::watch::Watch<T, StorageError>;

/// One item of a storage [`Watch`].
pub type WatchItem<T> = apimachinery::watch::WatchItem<T, StorageError>;

/// A list answer: the objects, the collection's resource version, and the continue
/// token.
#[derive(Clone, Debug, Default)]
pub struct ListResult {
    /// The selected objects, shared.
    pub items: Vec<Arc<Object>>,
    /// The resource version of the collection.
    pub resource_version: u64,
    /// Empty on the last page.
    pub continue_token: String,
    /// How many more objects match after this page, when known.
    pub remaining_item_count: Option<i64>,
}

/// A list answer with every item already encoded as JSON: what
/// [`Storage::get_list_encoded`] returns and the HTTP edge copies into the body.
#[derive(Clone, Debug, Default)]
pub struct EncodedListResult {
    /// The selected objects' JSON, shared.
    pub items: Vec<bytes::Bytes>,
    /// The same objects, when the storage keeps their other encodings (the
    /// watch cache does): empty, or one per item.
    pub cacheable: Vec<std::sync::Arc<dyn apimachinery::runtime::CacheableObject>>,
    /// The resource version of the collection.
    pub resource_version: u64,
    /// Empty on the last page.
    pub continue_token: String,
    /// How many more objects match after this page, when known.
    pub remaining_item_count: Option<i64>,
}

impl EncodedListResult {
    /// Encodes each item of a list answer.
    pub fn encode(result: &ListResult) -> Self {
        EncodedListResult {
            items: result
                .items
                .iter()
                .map(|obj| encode::encode_object(obj.as_ref()))
                .collect(),
            cacheable: Vec::new(),
            resource_version: result.resource_version,
            continue_token: result.continue_token.clone(),
            remaining_item_count: result.remaining_item_count,
        }
    }

    /// The items as the middle of a JSON array, `item,item,…`, in pieces that
    /// share the items' bytes: nothing is copied, whatever the list's size. The
    /// HTTP edge sends them as they are.
    pub fn item_chunks(&self) -> Vec<bytes::Bytes> {
        comma_separated(&self.items)
    }
}

/// Encoded JSON values as the middle of a JSON array, `item,item,…`, in pieces
/// that share the values' bytes.
pub fn comma_separated(items: &[bytes::Bytes]) -> Vec<bytes::Bytes> {
    let mut chunks = Vec::with_capacity(items.len() * 2);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            chunks.push(bytes::Bytes::from_static(b","));
        }
        chunks.push(item.clone());
    }
    chunks
}

/// Conditions a write must meet: apiserver's `storage.Preconditions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// The object's uid must be this.
    pub uid: Option<String>,
    /// The object's resourceVersion must be this.
    pub resource_version: Option<String>,
}

impl Preconditions {
    /// Checks `obj` against the preconditions; a mismatch is a 409 Conflict.
    pub fn check(
        &self,
        info: &ResourceInfo,
        obj: &Object,
    ) -> Result<(), StorageError> {
        let conflict = |message: String| StorageError::Conflict {
            plural: info.qualified_resource(),
            name: obj.name().to_string(),
            message,
        };
        if let Some(uid) = &self.uid
            && obj.metadata.uid.as_deref() != Some(uid.as_str())
        {
            return Err(conflict(format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                obj.metadata.uid.as_deref().unwrap_or("")
            )));
        }
        if let Some(rv) = &self.resource_version
            && obj.resource_version() != rv
        {
            return Err(conflict(format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                obj.resource_version()
            )));
        }
        Ok(())
    }
}

/// The function a [`Storage::guaranteed_update`] calls with the current object; it
/// returns the new object or an error that aborts the update. It may be called more
/// than once (on conflicts).
pub type UpdateFn = Box<dyn FnMut(&Object) -> Result<Object, StorageError> + Send>;

/// Mirrors `storage.GetOptions`: how [`Storage::get_with`] reads one object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GetOptions {
    /// `IgnoreNotFound`: a missing object is `Ok(None)` rather than NotFound.
    pub ignore_not_found: bool,
    /// `""` reads the newest state; otherwise the state must be at least this new
    /// (else 504 `ResourceVersionTooLarge`).
    pub resource_version: String,
}

/// Mirrors `storage.ListOptions.Recursive`: what a list or watch key names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeyScope {
    /// Every object whose key starts with the key followed by `/`
    /// (`Recursive: true`), e.g. a namespace: `/registry/pods/default`.
    #[default]
    Prefix,
    /// Only the object at exactly this key (`Recursive: false`).
    Object,
}

// ANCHOR: storage_reads
/// Mirrors apiserver's `storage.Interface` for one resource type. Keys are full etcd
/// keys (`/registry/pods/default/web-0`); list and watch keys are prefixes
/// (`/registry/pods/default/` or `/registry/pods/`), or one object's key with
/// [`KeyScope::Object`].
pub trait Storage: Send + Sync + 'static {
    /// The resource type this storage holds.
    fn info(&self) -> &ResourceInfo;

    /// Stores a new object; AlreadyExists if the key exists. Returns it with its
    /// resourceVersion.
    fn create(
        &self,
        key: String,
        obj: Object,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>>;

    /// Mirrors `Get`: reads one object, at least as new as the options' resource
    /// version; with `ignore_not_found` a missing object is `None`.
    fn get_with(
        &self,
        key: String,
        options: GetOptions,
    ) -> BoxFuture<'_, Result<Option<Arc<Object>>, StorageError>>;

    /// Mirrors `GetList`: lists the objects under a prefix (or the one object at a
    /// key) that the predicate selects, with resourceVersion, limit and continue
    /// semantics.
    fn get_list_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>>;
    // ANCHOR_END: storage_reads

    // ANCHOR: storage_writes
    /// Mirrors `GuaranteedUpdate`: read-modify-write with compare-and-swap on the
    /// mod revision, retried on conflict. With `ignore_not_found` a missing object
    /// is created: `update` gets an empty object of the type.
    fn guaranteed_update_with(
        &self,
        key: String,
        ignore_not_found: bool,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>>;

    /// Deletes an object if the preconditions hold; returns its last state.
    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>>;

    /// Mirrors `Watch`: watches the objects under a prefix (or the one object at a
    /// key) that the predicate selects.
    fn watch_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>>;

    /// Mirrors `Count`: how many objects are stored under the key (a prefix; `/` is
    /// added).
    fn count(&self, key: String) -> BoxFuture<'_, Result<i64, StorageError>>;

    /// Mirrors `GetCurrentResourceVersion`: etcd's current revision.
    fn get_current_resource_version(
        &self,
    ) -> BoxFuture<'_, Result<u64, StorageError>>;
    // ANCHOR_END: storage_writes

    // ANCHOR: storage_shorthands
    /// Reads the newest state of one object: [`get_with`](Storage::get_with)
    /// with default options.
    fn get(&self, key: String) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        Box::pin(async move {
            let not_found = StorageError::NotFound {
                plural: self.info().qualified_resource(),
                name: key.rsplit('/').next().unwrap_or(&key).to_string(),
            };
            self.get_with(key, GetOptions::default())
                .await?
                .ok_or(not_found)
        })
    }

    /// Lists the objects under a prefix:
    /// [`get_list_scoped`](Storage::get_list_scoped) with [`KeyScope::Prefix`].
    fn get_list(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>> {
        self.get_list_scoped(prefix, KeyScope::Prefix, options, predicate)
    }

    /// Updates an existing object:
    /// [`guaranteed_update_with`](Storage::guaranteed_update_with) without
    /// `ignore_not_found`.
    fn guaranteed_update(
        &self,
        key: String,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.guaranteed_update_with(key, false, preconditions, update)
    }

    /// Watches the objects under a prefix:
    /// [`watch_scoped`](Storage::watch_scoped) with [`KeyScope::Prefix`].
    fn watch(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>> {
        self.watch_scoped(prefix, KeyScope::Prefix, options, predicate)
    }
    // ANCHOR_END: storage_shorthands

    // ANCHOR: storage_watch_encoded
    /// Like [`watch`](Storage::watch), with every event already encoded as a JSON
    /// line: what the HTTP edge streams. The Cacher overrides it to encode each
    /// object once for all watchers.
    fn watch_encoded(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<encode::EncodedWatch, StorageError>> {
        Box::pin(async move {
            let watch = self.watch(prefix, options, predicate).await?;
            Ok(encode::encode_watch(self.info().type_meta(), watch))
        })
    }
    // ANCHOR_END: storage_watch_encoded

    // ANCHOR: storage_list_encoded
    /// Like [`get_list`](Storage::get_list), with every item already encoded as
    /// JSON: what the HTTP edge writes. The Cacher overrides it to share the JSON
    /// its watch cache keeps instead of decoding and encoding each object.
    fn get_list_encoded(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<EncodedListResult, StorageError>> {
        Box::pin(async move {
            let result = self.get_list(prefix, options, predicate).await?;
            Ok(EncodedListResult::encode(&result))
        })
    }
}
// ANCHOR_END: storage_list_encoded

/// The etcd key of one object: `/registry/pods/default/web-0` (or
/// `/registry/nodes/n1`).
pub fn object_key(
    info: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
) -> String {
    match namespace.filter(|ns| info.namespaced && !ns.is_empty()) {
        Some(ns) => format!("{}{ns}/{name}", info.key_prefix()),
        None => format!("{}{name}", info.key_prefix()),
    }
}

/// The etcd prefix of a list: `/registry/pods/default/` in a namespace,
/// `/registry/pods/` across all.
pub fn list_prefix(info: &ResourceInfo, namespace: Option<&str>) -> String {
    match namespace.filter(|ns| info.namespaced && !ns.is_empty()) {
        Some(ns) => format!("{}{ns}/", info.key_prefix()),
        None => info.key_prefix(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_registry_layout() {
        let pods = ResourceInfo::PODS;
        assert_eq!(
            object_key(&pods, Some("default"), "web"),
            "/registry/pods/default/web"
        );
        assert_eq!(
            list_prefix(&pods, Some("default")),
            "/registry/pods/default/"
        );
        assert_eq!(list_prefix(&pods, None), "/registry/pods/");
        assert_eq!(
            object_key(&ResourceInfo::NODES, Some("x"), "n1"),
            "/registry/nodes/n1"
        );
    }
}
