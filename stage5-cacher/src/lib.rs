//! # Stage 5b: the watch cache (`k8s.io/apiserver/pkg/storage/cacher`)
//!
//! Source document 000. The apiserver does not let every watcher watch etcd: one
//! [`Cacher`] per resource type lists and watches the etcd3 storage (stage 5a) with
//! a stage 3 Reflector into a [`WatchCache`] (a stage 1 indexer plus a ring of
//! recent events), and fans every event out to its [`CacheWatcher`]s from memory.
//! Writes pass through to etcd.
//!
//! | Go (`pkg/storage/cacher`)                               | Rust                                        |
//! |---------------------------------------------------------|---------------------------------------------|
//! | `cacher.go` `Cacher`, `NewCacherFromConfig`             | [`Cacher`], [`Cacher::new`]                 |
//! | `cacher.go` `Config`                                    | [`CacherConfig`]                            |
//! | `cacher.go` `indexedWatchers`, `watchersBuffer`         | private `IndexedWatchers` in [`cacher`]     |
//! | `cacher.go` `dispatchEvents`, `dispatchEvent`           | private `dispatch_events`, `dispatch_event` |
//! | `cacher.go` `watcherBookmarkTimeBuckets`                | [`cacher::BookmarkBuckets`]                 |
//! | `cacher.go` `Watch`, `GetList`, `Get`                   | [`Cacher`]'s [`Storage`](stage5_storage::Storage) impl |
//! | `watch_cache.go` `watchCache`                           | [`WatchCache`]                              |
//! | `watch_cache.go` `watchCacheEvent`                      | [`WatchCacheEvent`]                         |
//! | `watch_cache.go` `getAllEventsSinceLocked`, `resizeCacheLocked` | [`WatchCache`]'s methods            |
//! | `util.go` `suggestedWatchChannelSize`                    | [`watch_cache::suggested_watch_channel_size`] |
//! | `caching_object.go` `cachingObject`                     | [`CachedObject`]                            |
//! | `watch_cache.go` `storeElement`'s `Labels`; `labels.Selector` | [`Labels`], [`LabelMatcher`]          |
//! | `cache_watcher.go` `cacheWatcher`                       | [`CacheWatcher`]                            |
//! | `cacher.go` `filterWithAttrsAndPrefixFunction`          | [`WatchFilter`], [`KeyFilter`]              |
//! | `cache_watcher.go` `add`, `process`, `convertToWatchEvent` | [`CacheWatcher`]'s methods               |
//! | `time_budget.go` `timeBudget`                           | [`TimeBudget`]                              |
//! | `lister_watcher.go` `listerWatcher`                     | [`StorageListerWatcher`]                    |
//! | `metrics.go` (the counters the HTTP edge exports)       | [`CacherStats`], [`WatcherInfo`]            |
//! | (none: what `/debug/ui` draws live)                     | [`Probe`], [`Note`], [`CacherView`]         |
//!
//! The path of one event through this crate, from the storage below to the HTTP edge
//! above, is drawn in `stage5_storage`'s crate documentation; here it runs
//! `lister_watcher.rs → watch_cache.rs → caching_object.rs → cacher.rs →
//! cache_watcher.rs`.

pub mod cache_watcher;
pub mod cacher;
pub mod caching_object;
pub mod lister_watcher;
pub mod probe;
pub mod time_budget;
pub mod watch_cache;

pub use cache_watcher::{CacheWatcher, KeyFilter, WatchFilter, WatcherEvent};
pub use cacher::{Cacher, CacherConfig, CacherStats, CacherWatch, WatcherInfo};
pub use caching_object::{Attributes, CachedObject, LabelMatcher};
pub use lister_watcher::StorageListerWatcher;
pub use probe::{CacherView, EndReason, Note, Probe, What};
pub use time_budget::TimeBudget;
pub use watch_cache::{WatchCache, WatchCacheEvent, WatchCacheOptions};
