//! Mirrors apiserver's `pkg/storage/cacher/lister_watcher.go`: the
//! `cacherListerWatcher` through which the Cacher's Reflector (stage 3) lists and
//! watches the etcd3 storage.

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use futures::TryStreamExt;
use stage3_reflector::{ListPage, ListerWatcher, Watch};
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::{Object, SelectionPredicate, Storage, StorageError};

/// The Cacher's ListerWatcher: the etcd3 storage's list and watch (`storage.GetList`
/// and `storage.Watch` with progress notifications), as apiserver's
/// `cacherListerWatcher`.
#[derive(Clone, Debug)]
pub struct StorageListerWatcher {
    storage: Etcd3Store,
}

impl StorageListerWatcher {
    /// Lists and watches `storage`'s whole prefix.
    pub fn new(storage: Etcd3Store) -> Self {
        StorageListerWatcher { storage }
    }
}

fn to_reflector_error(err: StorageError) -> stage3_reflector::Error {
    stage3_reflector::Error::from_status(err.to_status())
}

impl ListerWatcher<Object> for StorageListerWatcher {
    async fn list(
        &self,
        options: ListOptions,
    ) -> Result<ListPage<Object>, stage3_reflector::Error> {
        let prefix = self.storage.info().key_prefix();
        let result = self
            .storage
            .list_objects(prefix, options, SelectionPredicate::default())
            .await
            .map_err(to_reflector_error)?;
        Ok(
            ListPage::new(result.items, result.resource_version.to_string())
                .with_continue(result.continue_token),
        )
    }

    async fn watch(
        &self,
        options: WatchOptions,
    ) -> Result<Watch<Object>, stage3_reflector::Error> {
        let prefix = self.storage.info().key_prefix();
        let watch = self
            .storage
            .watch_objects(prefix, options, SelectionPredicate::default())
            .await
            .map_err(to_reflector_error)?;
        // The storage reports failures as ERROR events; what could still end
        // its stream becomes the Reflector's error. Stopping the Reflector's
        // watch drops this one, which stops the storage's.
        Ok(Watch::new(watch.map_err(to_reflector_error)))
    }
}
