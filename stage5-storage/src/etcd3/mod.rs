//! apiserver's `pkg/storage/etcd3`: the storage of one resource type over a [`Kv`].
//!
//! - [`Etcd3Store`] (`store.go`): create, get, list with resourceVersion semantics
//!   and paging, guaranteed update by compare-and-swap, delete with preconditions;
//! - [`watcher`] (`watcher.go`): the watchChan of source document 001, which turns
//!   an etcd watch into Kubernetes watch events;
//! - [`event`] (`event.go`): an etcd event reduced to what the watchChan needs;
//! - [`compact`] (`compact.go`): the compactor, which compacts the store every
//!   interval to the revision seen one interval earlier.
//!
//! Objects are stored as JSON without `metadata.resourceVersion`; reading one sets
//! its resourceVersion to the key's mod revision (apiserver's `APIObjectVersioner`).

pub mod compact;
pub mod event;
mod store;
pub mod watcher;

pub use compact::{Compactor, DEFAULT_COMPACTION_INTERVAL};
pub use store::{
    DEFAULT_RANGE_PAGE_SIZE, Etcd3Store, decode_continue, encode_continue,
};
pub use watcher::{WatchChan, WatchChanOptions};

use bytes::Bytes;

use crate::Object;
use crate::StorageError;
use crate::kv::{Kv, KvError, RangeRequest};

/// Mirrors `storage.GetCurrentResourceVersionFromStorage`: etcd's current revision,
/// read with a count-only range of `prefix` (the store's and the watchChan's one way
/// to ask "where is etcd now?").
pub async fn current_revision(
    kv: &dyn Kv,
    prefix: impl Into<Bytes>,
) -> Result<i64, KvError> {
    let mut request = RangeRequest::prefix(prefix);
    request.count_only = true;
    Ok(kv.range(request).await?.header_revision)
}

/// Mirrors `decodeObj`: JSON to an [`Object`] whose resourceVersion is `rev`.
pub fn decode(data: &[u8], rev: i64) -> Result<Object, StorageError> {
    let mut obj: Object = serde_json::from_slice(data).map_err(|error| {
        StorageError::Internal(format!(
            "unable to decode an object stored at revision {rev}: {error}"
        ))
    })?;
    obj.metadata.resource_version = Some(rev.to_string());
    Ok(obj)
}

/// Mirrors `runtime.Encode` after `versioner.PrepareObjectForStorage`: JSON without
/// the resourceVersion (etcd's revision is the version). The selfLink is cleared for
/// good, as `PrepareObjectForStorage` does: it is never stored nor returned.
pub fn encode(obj: &mut Object) -> Result<Bytes, StorageError> {
    obj.metadata.self_link = None;
    let rv = obj.metadata.resource_version.take();
    let data = serde_json::to_vec(obj);
    obj.metadata.resource_version = rv;
    data.map(Bytes::from).map_err(|error| {
        StorageError::Internal(format!("unable to encode object: {error}"))
    })
}
