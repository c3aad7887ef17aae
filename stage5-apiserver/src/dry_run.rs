//! `dryRun=All`: a write that goes through everything but the storage. Mirrors
//! the `dryRun` handling of apiserver's registry `Store` and the etcd3 store
//! (`storage.Interface`'s `dryRun` argument): decoding, defaulting, admission,
//! validation, the field manager and the guaranteed update's function all run,
//! and the answer is the object the write would have stored, but nothing is
//! stored. `kubectl apply --dry-run=server` and `kubectl diff` send it.
//!
//! [`DryRunStorage`] wraps a resource's storage for one request: reads go
//! through, and each write reads the current object and answers as the write
//! would have, as upstream's etcd3 store answers a dry run (a create's object has
//! no resourceVersion, an update's keeps the live one).

use std::sync::Arc;

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use futures::future::BoxFuture;
use stage5_storage::Watch;
use stage5_storage::{
    GetOptions, KeyScope, ListResult, Object, Preconditions, ResourceInfo,
    SelectionPredicate, Storage, StorageError, UpdateFn,
};

use crate::registry::{RegisteredResource, ResourceStorage};
use crate::status::ApiError;

/// Mirrors `ValidateDryRun`: `All` is the only value (upstream's
/// `supportedDryRunValues`); `kind` is the options' kind (`CreateOptions`,
/// `UpdateOptions`, `PatchOptions`, `DeleteOptions`).
pub fn parse(values: &[&str], kind: &str) -> Result<bool, ApiError> {
    match values.iter().find(|v| **v != "All") {
        None => Ok(!values.is_empty()),
        Some(bad) => Err(ApiError::invalid(
            &format!("{kind}.meta.k8s.io"),
            "",
            "dryRun",
            &format!("Unsupported value: {bad:?}: supported values: \"All\""),
        )),
    }
}

/// `resource` with its storage wrapped in a [`DryRunStorage`].
pub fn resource(resource: &RegisteredResource) -> RegisteredResource {
    let storage: Arc<dyn Storage> =
        Arc::new(DryRunStorage::new(Arc::clone(&resource.dyn_storage)));
    RegisteredResource {
        info: resource.info.clone(),
        strategy: resource.strategy,
        storage: ResourceStorage::Converted(Arc::clone(&storage)),
        dyn_storage: storage,
    }
}

/// A storage that answers writes as they would go, without making them.
pub struct DryRunStorage {
    inner: Arc<dyn Storage>,
}

impl DryRunStorage {
    /// Dry runs over `inner`.
    pub fn new(inner: Arc<dyn Storage>) -> Self {
        DryRunStorage { inner }
    }

    async fn current(&self, key: &str) -> Result<Option<Arc<Object>>, StorageError> {
        self.inner
            .get_with(
                key.to_string(),
                GetOptions {
                    ignore_not_found: true,
                    ..GetOptions::default()
                },
            )
            .await
    }

    fn not_found(&self, key: &str) -> StorageError {
        StorageError::NotFound {
            plural: self.inner.info().qualified_resource(),
            name: key.rsplit('/').next().unwrap_or(key).to_string(),
        }
    }
}

impl Storage for DryRunStorage {
    fn info(&self) -> &ResourceInfo {
        self.inner.info()
    }

    fn create(
        &self,
        key: String,
        mut obj: Object,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        Box::pin(async move {
            if self.current(&key).await?.is_some() {
                return Err(StorageError::AlreadyExists {
                    plural: self.inner.info().qualified_resource(),
                    name: obj.name().to_string(),
                });
            }
            obj.metadata.resource_version = None;
            Ok(Arc::new(obj))
        })
    }

    fn get_with(
        &self,
        key: String,
        options: GetOptions,
    ) -> BoxFuture<'_, Result<Option<Arc<Object>>, StorageError>> {
        self.inner.get_with(key, options)
    }

    fn get_list_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>> {
        self.inner.get_list_scoped(key, scope, options, predicate)
    }

    fn guaranteed_update_with(
        &self,
        key: String,
        ignore_not_found: bool,
        preconditions: Preconditions,
        mut update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        Box::pin(async move {
            let current = match self.current(&key).await? {
                Some(current) => current,
                // The etcd3 store's empty object of the type, as a create by
                // update starts from.
                None if ignore_not_found => {
                    Arc::new(Object::empty(self.inner.info()))
                }
                None => return Err(self.not_found(&key)),
            };
            preconditions.check(self.inner.info(), &current)?;
            let mut next = update(&current)?;
            next.metadata.resource_version =
                current.metadata.resource_version.clone();
            Ok(Arc::new(next))
        })
    }

    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        Box::pin(async move {
            let current = self
                .current(&key)
                .await?
                .ok_or_else(|| self.not_found(&key))?;
            preconditions.check(self.inner.info(), &current)?;
            Ok(current)
        })
    }

    fn watch_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>> {
        self.inner.watch_scoped(key, scope, options, predicate)
    }

    fn count(&self, key: String) -> BoxFuture<'_, Result<i64, StorageError>> {
        self.inner.count(key)
    }

    fn get_current_resource_version(
        &self,
    ) -> BoxFuture<'_, Result<u64, StorageError>> {
        self.inner.get_current_resource_version()
    }
}
