//! A resource's storage: mirrors apiserver's `pkg/registry/generic/registry`
//! (`StorageWithCacher`, `NewRawStorage`), which puts either the Cacher
//! (`--watch-cache`, the default) or the bare etcd3 store behind each resource,
//! and the storage backend's choice (`storagebackend.Config`: etcd, or here the
//! embedded store).
//!
//! [`ResourceStorage`] keeps the concrete type next to the `Arc<dyn Storage>`
//! the handlers use, so the metrics and the debug page can read the watch
//! cache's figures.

use std::sync::Arc;

use crate::Backend;
use crate::ServerError;
use stage5_cacher::{CacherStats, WatcherInfo};
use stage5_storage::ResourceInfo;
use stage5_storage::Storage;
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EmbeddedKv, Kv};

/// One resource's storage: the etcd3 store itself (`--no-watch-cache`) or the Cacher
/// in front of it.
#[derive(Clone)]
pub enum ResourceStorage {
    /// Reads and watches straight from etcd: every watch is a new etcd watch.
    Direct(Arc<Etcd3Store>),
    /// Reads and watches served from the watch cache; writes go to etcd.
    Cached(Arc<stage5_cacher::Cacher>),
    /// Another resource's storage in another shape (`events.k8s.io/v1` over the
    /// core events): no cache of its own, nothing to stop.
    Converted(Arc<dyn Storage>),
}

impl std::fmt::Debug for ResourceStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResourceStorage::Direct(store) => {
                f.debug_tuple("Direct").field(store).finish()
            }
            ResourceStorage::Cached(_) => f.write_str("Cached(..)"),
            ResourceStorage::Converted(_) => f.write_str("Converted(..)"),
        }
    }
}

/// Mirrors `StorageWithCacher` / `NewRawStorage`: the storage of `info` over `kv`,
/// behind a watch cache of `capacity` events when `watch_cache` is on.
pub fn new_storage(
    kv: Arc<dyn Kv>,
    info: ResourceInfo,
    watch_cache: bool,
    capacity: usize,
) -> ResourceStorage {
    let store = Etcd3Store::new(kv, info);
    if watch_cache {
        let config = stage5_cacher::CacherConfig::default().capacity(capacity);
        ResourceStorage::Cached(stage5_cacher::Cacher::new(store, config))
    } else {
        ResourceStorage::Direct(Arc::new(store))
    }
}

impl ResourceStorage {
    /// The storage the handlers call.
    pub fn storage(&self) -> Arc<dyn Storage> {
        match self {
            ResourceStorage::Direct(store) => Arc::clone(store) as Arc<dyn Storage>,
            ResourceStorage::Cached(cacher) => {
                Arc::clone(cacher) as Arc<dyn Storage>
            }
            ResourceStorage::Converted(storage) => Arc::clone(storage),
        }
    }

    /// The watch cache's figures; `None` without a cache.
    pub fn cache_stats(&self) -> Option<CacherStats> {
        match self {
            ResourceStorage::Direct(_) | ResourceStorage::Converted(_) => None,
            ResourceStorage::Cached(cacher) => Some(cacher.stats()),
        }
    }

    /// The watch cache's live watchers; empty without a cache.
    pub fn cache_watchers(&self) -> Vec<WatcherInfo> {
        match self {
            ResourceStorage::Direct(_) | ResourceStorage::Converted(_) => Vec::new(),
            ResourceStorage::Cached(cacher) => cacher.watchers_info(),
        }
    }

    /// Stops the watch cache (its reflector and every cache watcher) and waits for
    /// its tasks; nothing for etcd.
    pub async fn stop(&self) {
        match self {
            ResourceStorage::Direct(_) | ResourceStorage::Converted(_) => {}
            ResourceStorage::Cached(cacher) => cacher.stop().await,
        }
    }
}

/// Opens the backend: a new embedded store, a caller's [`Kv`], or real etcd (feature
/// `etcd`).
pub async fn connect_backend(backend: &Backend) -> Result<Arc<dyn Kv>, ServerError> {
    match backend {
        Backend::Embedded => Ok(Arc::new(EmbeddedKv::new())),
        Backend::Kv(kv) => Ok(Arc::clone(kv)),
        #[cfg(feature = "etcd")]
        Backend::Etcd(urls) => stage5_storage::kv::EtcdKv::connect(urls)
            .await
            .map(|kv| Arc::new(kv) as Arc<dyn Kv>)
            .map_err(|error| {
                ServerError::Backend(format!(
                    "cannot connect to etcd at {}: {error}",
                    urls.join(",")
                ))
            }),
        #[cfg(not(feature = "etcd"))]
        Backend::Etcd(urls) => Err(ServerError::Backend(format!(
            "--etcd {}: this binary was built without real etcd support; rebuild with `--features etcd` (needs protoc), or leave --etcd out to use the embedded store",
            urls.join(",")
        ))),
    }
}
