//! # Stage 5a: apiserver's storage (`k8s.io/apiserver/pkg/storage`)
//!
//! What a watch is served *from*: a key-value store with revisions, the etcd3
//! storage of one resource type over it, and the two generations of etcd watcher
//! that source documents 001 (etcd3 `watchChan`) and 002 (the etcd v2 `etcdWatcher`
//! of Kubernetes 1.5) describe. The watch cache (`stage5-cacher`) and the HTTP
//! server (`stage5-apiserver`) stand on this crate.
//!
//! | Go (k8s.io/apiserver, unless named)                           | Rust                                   |
//! |---------------------------------------------------------------|----------------------------------------|
//! | `pkg/storage/interfaces.go` (`storage.Interface`)             | [`Storage`] ([`interfaces`])           |
//! | `storage.Preconditions`, `storage.UpdateFunc`                 | [`Preconditions`], [`UpdateFn`]        |
//! | `storage.GetOptions`, `storage.ListOptions.Recursive`         | [`GetOptions`], [`KeyScope`]           |
//! | `pkg/storage/errors.go`, apimachinery `pkg/api/errors`        | [`StorageError`] ([`errors`])          |
//! | `pkg/storage/selection_predicate.go`                          | [`SelectionPredicate`] ([`selection_predicate`]) |
//! | `pkg/storage/api_object_versioner.go`                         | [`parse_resource_version`]             |
//! | `runtime.Object` / `unstructured.Unstructured` (apimachinery) | [`Object`] ([`object`])                |
//! | a registry's `Store` names and strategy's `GetAttrs`          | [`ResourceInfo`] ([`resource_info`])   |
//! | `NamespaceKeyFunc` (`pkg/registry/generic/registry/store.go`) | [`object_key`], [`list_prefix`]        |
//! | `storage.Interface.Watch`'s `watch.Interface`                 | [`Watch`] (apimachinery's, with [`StorageError`]) |
//! | `clientv3.KV`, `clientv3.Watcher` (go.etcd.io/etcd/client/v3)  | [`kv::Kv`]                             |
//! | an in-process etcd (etcd's `mvcc` package, much reduced)       | [`kv::EmbeddedKv`]                     |
//! | `clientv3.Client` over gRPC                                   | `kv::EtcdKv` (feature `etcd`)          |
//! | `pkg/storage/etcd3/store.go` (`store`)                        | [`etcd3::Etcd3Store`]                  |
//! | `pkg/storage/etcd3/watcher.go` (`watcher`, `watchChan`)       | [`etcd3::watcher`]                     |
//! | `pkg/storage/etcd3/event.go` (`event`, `parseKV`, `parseEvent`) | [`etcd3::event`]                     |
//! | `pkg/storage/etcd3/compact.go` (`compactor`, `Compact`)        | [`etcd3::compact`]                     |
//! | `pkg/storage/etcd/etcd_watcher.go` (Kubernetes 1.5)           | [`etcd2::etcd_watcher`]                |
//! | etcd v2's `client` package (`KeysAPI.Get`, `Watcher.Next`)    | [`etcd2::client`]                      |
//! | `pkg/storage/etcd3/testing`, `integration/etcd` test servers  | `testing::EtcdServer` (feature `testing`) |
//! | `pkg/storage/testing` (`store_tests.go`, `watcher_tests.go`)  | `testing::contract` (feature `testing`) |
//!
//! ## One event, file by file
//!
//! A pod is updated. Its path through this crate, then through the two crates above
//! it:
//!
//! ```text
//!  etcd3/store.rs      guaranteed_update: a txn with mod_revision = the read revision (CAS)
//!  kv/embedded.rs      the txn commits at revision R; the event goes into the shared history
//!  kv/embedded.rs      each watch stream reads the history at its own pace (KvEvent, prev_kv)
//!  etcd3/event.rs      parse_event: a KvEvent becomes an etcd3 Event (key, value, prev value, R)
//!  etcd3/watcher.rs    process_event → transform: decode, filter old and new, Added/Modified/Deleted
//!  ── stage5-cacher ──
//!  lister_watcher.rs   the watch cache's Reflector (stage 3) watches through Storage::watch
//!  watch_cache.rs      process_event: the event enters the ring and the indexer (stage 1)
//!  caching_object.rs   the object is encoded once (apimachinery's runtime/serializer/
//!                      streaming writes the line); every watcher shares the bytes
//!  cacher.rs           dispatch_event: to the watchers of its namespace and node (trigger)
//!  cache_watcher.rs    add → process → convert: one watcher's view, with its filter
//!  ── stage5-apiserver ──
//!  handlers/watch.rs   serve_watch: the encoded line is written to the chunked HTTP response
//! ```

pub mod api_object_versioner;
pub mod errors;
pub mod etcd2;
pub mod etcd3;
pub mod interfaces;
pub mod kv;
pub mod object;
pub mod resource_info;
pub mod selection_predicate;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use api_object_versioner::{
    next_revision, parse_resource_version, resource_version_of, revision_of,
};
pub use errors::StorageError;
pub use interfaces::{
    EncodedListResult, GetOptions, KeyScope, ListResult, Preconditions, Storage,
    UpdateFn, Watch, WatchItem, comma_separated, list_prefix, object_key,
};
pub use object::Object;
pub use resource_info::ResourceInfo;
pub use selection_predicate::{SelectionError, SelectionPredicate};
