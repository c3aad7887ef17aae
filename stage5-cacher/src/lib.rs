//! # Stage 5: the apiserver's side of the watch (not built yet)
//!
//! This stage will hold the apiserver's `pkg/storage/etcd3` watchChan, the older etcd2 watcher, and
//! `pkg/storage/cacher` (watchCache, Cacher, cacheWatcher) behind a small Kubernetes-compatible HTTP
//! server. Its issues describe the work; until they land this crate is empty on purpose.
