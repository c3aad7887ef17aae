//! The storage layer: apiserver's `pkg/storage` for stage 5.
//!
//! - [`kv`]: the key-value backend (embedded MVCC store, or real etcd behind feature `etcd`);
//! - [`etcd3`]: `pkg/storage/etcd3`, the storage of one resource type over a [`kv::Kv`], with its
//!   watchChan (source document 001);
//! - [`etcd2`]: the 1.5-era `pkg/storage/etcd/etcd_watcher.go`, over etcd's v2 HTTP API (source
//!   document 002).
//!
//! [`Storage`] is apiserver's `storage.Interface`: what the REST layer calls. The etcd3 store
//! implements it, and so does the Cacher (stage 5b), which serves reads and watches from memory
//! and passes writes through.

pub mod encode;
pub mod etcd2;
pub mod etcd3;
pub mod kv;

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};
use stage3_reflector::{ListOptions, Watch, WatchOptions};

use crate::object::{Object, ResourceInfo, SelectionPredicate};

// ANCHOR: storage_error
/// Errors of the storage layer, each with the Kubernetes status the HTTP edge answers with
/// ([`StorageError::to_status`]). Mirrors apiserver's `storage.StorageError` codes and the
/// `apierrors` they become.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// No object under the key (404 NotFound).
    #[error("{plural} \"{name}\" not found")]
    NotFound {
        /// The resource, e.g. `pods`.
        plural: String,
        /// The object's name.
        name: String,
    },
    /// Create of a key that exists (409 AlreadyExists).
    #[error("{plural} \"{name}\" already exists")]
    AlreadyExists {
        /// The resource.
        plural: String,
        /// The object's name.
        name: String,
    },
    /// A precondition (uid or resourceVersion) failed (409 Conflict).
    #[error("Operation cannot be fulfilled on {plural} \"{name}\": {message}")]
    Conflict {
        /// The resource.
        plural: String,
        /// The object's name.
        name: String,
        /// What did not match.
        message: String,
    },
    /// The resource version (or continue token) is older than the store keeps (410 Expired).
    #[error("{0}")]
    Expired(String),
    /// The store did not reach the requested resource version in time (504, cause
    /// `ResourceVersionTooLarge`).
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The requested version.
        requested: u64,
        /// The version the store had reached.
        current: u64,
    },
    /// The request is malformed: a bad resource version, selector or continue token (400).
    #[error("{0}")]
    BadRequest(String),
    /// The object is invalid (422 Invalid).
    #[error("{message}")]
    Invalid {
        /// The resource.
        plural: String,
        /// The object's name.
        name: String,
        /// Why.
        message: String,
    },
    /// The watch cache is not ready yet (429, retry after a second).
    #[error("storage is (re)initializing")]
    TooManyRequests,
    /// Anything else (500): the backend failed, or stored data does not decode.
    #[error("{0}")]
    Internal(String),
}
// ANCHOR_END: storage_error

impl StorageError {
    /// The HTTP code.
    pub fn code(&self) -> u16 {
        match self {
            StorageError::NotFound { .. } => 404,
            StorageError::AlreadyExists { .. } | StorageError::Conflict { .. } => 409,
            StorageError::Expired(_) => 410,
            StorageError::TooLargeResourceVersion { .. } => 504,
            StorageError::BadRequest(_) => 400,
            StorageError::Invalid { .. } => 422,
            StorageError::TooManyRequests => 429,
            StorageError::Internal(_) => 500,
        }
    }

    /// The Kubernetes `Status` for this error, as apimachinery's `apierrors` build it.
    pub fn to_status(&self) -> Status {
        let (reason, details) = match self {
            StorageError::NotFound { plural, name } => {
                ("NotFound", Some(details(plural, name, None)))
            }
            StorageError::AlreadyExists { plural, name } => {
                ("AlreadyExists", Some(details(plural, name, None)))
            }
            StorageError::Conflict { plural, name, .. } => {
                ("Conflict", Some(details(plural, name, None)))
            }
            StorageError::Expired(_) => ("Expired", None),
            StorageError::TooLargeResourceVersion { .. } => (
                "Timeout",
                Some(StatusDetails {
                    causes: Some(vec![StatusCause {
                        reason: Some("ResourceVersionTooLarge".into()),
                        message: Some("Too large resource version".into()),
                        field: None,
                    }]),
                    retry_after_seconds: Some(1),
                    ..StatusDetails::default()
                }),
            ),
            StorageError::BadRequest(_) => ("BadRequest", None),
            StorageError::Invalid {
                plural,
                name,
                message,
            } => (
                "Invalid",
                Some(details(plural, name, Some(message.clone()))),
            ),
            StorageError::TooManyRequests => (
                "TooManyRequests",
                Some(StatusDetails {
                    retry_after_seconds: Some(1),
                    ..StatusDetails::default()
                }),
            ),
            StorageError::Internal(_) => ("InternalError", None),
        };
        let message = match self {
            StorageError::Internal(m) => format!("Internal error occurred: {m}"),
            StorageError::Invalid {
                plural,
                name,
                message,
            } => format!("{plural} \"{name}\" is invalid: {message}"),
            other => other.to_string(),
        };
        Status {
            code: Some(i32::from(self.code())),
            reason: Some(reason.to_string()),
            message: Some(message),
            status: Some("Failure".to_string()),
            details,
            metadata: Default::default(),
        }
    }
}

fn details(plural: &str, name: &str, message: Option<String>) -> StatusDetails {
    StatusDetails {
        name: Some(name.to_string()),
        kind: Some(plural.to_string()),
        causes: message.map(|message| {
            vec![StatusCause {
                reason: Some("FieldValueInvalid".into()),
                message: Some(message),
                field: Some("metadata.name".into()),
            }]
        }),
        ..StatusDetails::default()
    }
}

/// A list answer: the objects, the collection's resource version, and the continue token.
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
    pub fn check(&self, info: &ResourceInfo, obj: &Object) -> Result<(), StorageError> {
        let conflict = |message: String| StorageError::Conflict {
            plural: info.plural.to_string(),
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

/// The function a [`Storage::guaranteed_update`] calls with the current object; it returns the
/// new object or an error that aborts the update. It may be called more than once (on conflicts).
pub type UpdateFn = Box<dyn FnMut(&Object) -> Result<Object, StorageError> + Send>;

/// Parses a resource version as the apiserver's `APIObjectVersioner.ParseResourceVersion` does:
/// `""` is 0; otherwise a non-negative integer, else 400 BadRequest.
pub fn parse_resource_version(rv: &str) -> Result<u64, StorageError> {
    if rv.is_empty() {
        return Ok(0);
    }
    rv.parse::<u64>().map_err(|_| {
        StorageError::BadRequest(format!(
            "invalid resource version {rv:?}: must be a non-negative integer"
        ))
    })
}

// ANCHOR: storage_interface
/// Mirrors apiserver's `storage.Interface` for one resource type. Keys are full etcd keys
/// (`/registry/pods/default/web-0`); list and watch keys are prefixes
/// (`/registry/pods/default/` or `/registry/pods/`).
pub trait Storage: Send + Sync + 'static {
    /// The resource type this storage holds.
    fn info(&self) -> &ResourceInfo;

    /// Stores a new object; AlreadyExists if the key exists. Returns it with its resourceVersion.
    fn create(&self, key: String, obj: Object) -> BoxFuture<'_, Result<Arc<Object>, StorageError>>;

    /// Reads one object.
    fn get(&self, key: String) -> BoxFuture<'_, Result<Arc<Object>, StorageError>>;

    /// Lists the objects under a prefix that the predicate selects, with resourceVersion, limit and
    /// continue semantics.
    fn get_list(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>>;

    /// Read-modify-write with compare-and-swap on the mod revision, retried on conflict.
    fn guaranteed_update(
        &self,
        key: String,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>>;

    /// Deletes an object if the preconditions hold; returns its last state.
    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>>;

    /// Watches the objects under a prefix that the predicate selects.
    fn watch(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>>;

    /// Like [`watch`](Storage::watch), with every event already encoded as a JSON line: what the
    /// HTTP edge streams. The Cacher overrides it to encode each object once for all watchers.
    fn watch_encoded(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<encode::EncodedWatch, StorageError>> {
        Box::pin(async move {
            let watch = self.watch(prefix, options, predicate).await?;
            Ok(encode::encode_watch(self.info().clone(), watch))
        })
    }
}
// ANCHOR_END: storage_interface

/// The etcd key of one object: `/registry/pods/default/web-0` (or `/registry/nodes/n1`).
pub fn object_key(info: &ResourceInfo, namespace: Option<&str>, name: &str) -> String {
    match namespace.filter(|ns| info.namespaced && !ns.is_empty()) {
        Some(ns) => format!("{}{ns}/{name}", info.key_prefix()),
        None => format!("{}{name}", info.key_prefix()),
    }
}

/// The etcd prefix of a list: `/registry/pods/default/` in a namespace, `/registry/pods/` across
/// all.
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

    #[test]
    fn statuses_carry_code_reason_and_cause() {
        let s = StorageError::TooLargeResourceVersion {
            requested: 20,
            current: 10,
        }
        .to_status();
        assert_eq!(s.code, Some(504));
        let error = stage3_reflector::Error::from_status(s);
        assert!(error.is_too_large_resource_version(), "{error:?}");
        let s = StorageError::Expired("too old resource version: 1 (5)".into()).to_status();
        assert!(stage3_reflector::Error::from_status(s).is_expired());
        assert_eq!(StorageError::TooManyRequests.to_status().code, Some(429));
        assert!(parse_resource_version("abc").is_err());
        assert_eq!(parse_resource_version("").unwrap(), 0);
    }
}
