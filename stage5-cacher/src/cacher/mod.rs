//! apiserver's `pkg/storage/cacher`: the watch cache (source document 000).
//!
//! | Go                                   | Rust                                      |
//! |--------------------------------------|-------------------------------------------|
//! | `watch_cache.go` `watchCache`        | [`watch_cache::WatchCache`]               |
//! | `watchCacheEvent`                    | [`watch_cache::WatchCacheEvent`]          |
//! | `cachingObject`                      | [`watch_cache::CachedObject`]             |
//! | `cache_watcher.go` `cacheWatcher`    | [`cache_watcher::CacheWatcher`]           |
//! | `cacher.go` `Cacher`                 | [`cacher::Cacher`]                        |
//! | `watcherBookmarkTimeBuckets`         | [`cacher::BookmarkBuckets`]               |
//! | `time_budget.go` `timeBudget`        | [`time_budget::TimeBudget`]               |

pub mod cache_watcher;
#[allow(clippy::module_inception)]
pub mod cacher;
pub mod time_budget;
pub mod watch_cache;

pub use cache_watcher::{CacheWatcher, WatchFilter, WatcherEvent};
pub use cacher::{
    Cacher, CacherConfig, CacherStats, CacherWatch, StorageListerWatcher, WatcherInfo,
};
pub use time_budget::TimeBudget;
pub use watch_cache::{CachedObject, WatchCache, WatchCacheEvent, WatchCacheOptions};
