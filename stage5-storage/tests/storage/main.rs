//! Stage 5a's integration tests, one test binary (one link) for the whole crate.
//!
//! - [`compactor`]: the compactor, and the 410 of a watch from a revision it
//!   compacted away;
//! - [`kv_contract`]: one contract for both KV backends, the embedded store and real
//!   etcd;
//! - [`etcd3_storage`]: the etcd3 store and its watchChan over both backends;
//! - [`etcd2_watcher`]: the Kubernetes 1.5 etcd v2 watcher against a real etcd;
//! - [`storage_contract`]: apiserver's storage contract suite
//!   (`pkg/storage/testing`) on the etcd3 store over both backends.

mod compactor;
mod etcd2_watcher;
mod etcd3_storage;
mod kv_contract;
mod storage_contract;
