//! # Stage 5: the apiserver's side of the watch
//!
//! Stages 1–4 rebuilt client-go. This stage rebuilds what a client watches *from*:
//!
//! ```text
//! etcd (EmbeddedKv or real etcd) → etcd3 watchChan → Reflector (stage 3) → watchCache
//!   → Cacher → cacheWatcher → HTTP watch → kube-client → your informer (stage 4)
//! ```
//!
//! | Go (k8s.io/apiserver)                         | Rust                                   |
//! |-----------------------------------------------|----------------------------------------|
//! | `pkg/storage/etcd3/store.go`                  | [`storage::etcd3::Etcd3Store`]         |
//! | `pkg/storage/etcd3/watcher.go` (`watchChan`)  | [`storage::etcd3::watcher`]            |
//! | `pkg/storage/etcd/etcd_watcher.go` (1.5)      | [`storage::etcd2`]                     |
//! | `clientv3.KV` / `clientv3.Watcher`            | [`storage::kv::Kv`]                    |
//! | `storage.Interface`                           | [`storage::Storage`]                   |
//! | `storage.SelectionPredicate`                  | [`object::SelectionPredicate`]         |
//!
//! The watch cache (`pkg/storage/cacher`) and the HTTP server follow in [`cacher`] and the
//! `mini-apiserver` binary.

pub mod cacher;
pub mod fanout;
pub mod object;
pub mod server;
pub mod storage;
pub mod testing;

pub use object::{Object, ResourceInfo, SelectionPredicate};
pub use storage::{Storage, StorageError};
