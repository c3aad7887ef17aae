//! The 1.5-era etcd2 watcher (`pkg/storage/etcd/etcd_watcher.go`), over etcd's v2
//! HTTP API (source document 002).
//!
//! Before etcd3, the apiserver stored objects in etcd v2 and watched them with long
//! polls: `GET /v2/keys/<key>?wait=true&waitIndex=N&recursive=true` answers with the
//! first change at or after index `N`. The `etcdWatcher` turns those answers into
//! watch events:
//!
//! ```text
//! etcd ──etcd_watch──▶ etcd_incoming (100) ──translate──▶ outgoing (100) ──▶ Reflector
//!                      etcd_error    (1)   ─┘
//! ```
//!
//! - [`client`]: a small v2 keys API client (`Get`, the long poll, `Set`, `Delete`)
//!   and the wire types `Response`, `Node` and `EtcdError`;
//! - [`watcher`]: the `etcdWatcher` itself: [`new_etcd_watcher`], `etcd_watch`,
//!   `translate`, `send_result` and the `send_add`/`send_modify`/`send_delete`
//!   mapping.
//!
//! etcd v2 versus v3, in short: v2 has one global *index* and keeps the last 1000
//! events (an older `waitIndex` fails with error 401, a 410 Expired for the client);
//! v3 has a *revision* per change, keeps history until compaction, and streams a
//! watch over gRPC instead of one long poll per event.
//!
//! Run etcd 3.4 with `--enable-v2=true` to use it; [`crate::testing::EtcdServer`]
//! does.

pub mod client;
pub mod etcd_watcher;

pub use client::{
    ClientError, EtcdClient, EtcdError, GetOptions, Node, Response, SetOptions,
    is_etcd_not_found, is_etcd_watch_expired,
};
pub use etcd_watcher::{
    APIObjectVersioner, EtcdCache, EtcdWatcher, EtcdWatcherConfig, FilterFunc,
    HighWaterMark, IncludeFunc, JsonCodec, TransformFunc, error_status, everything,
    new_etcd_watcher, simple_filter,
};
