//! The key-value backend: what the storage layer needs from etcd v3.
//!
//! Mirrors the slice of etcd's `clientv3.KV` and `clientv3.Watcher` interfaces that
//! the apiserver's `pkg/storage/etcd3` uses: ranges at a revision with a limit, puts
//! and deletes that report the revision they created, a transaction that compares
//! `mod_revision` (optimistic concurrency), compaction, and watches from a revision
//! with `prefix`, `prev_kv` and `progress_notify`.
//!
//! Two implementations pass one contract suite (`tests/kv_contract.rs`):
//! - [`EmbeddedKv`]: an in-process MVCC store, the default, so nothing needs
//!   installing;
//! - `EtcdKv` (cargo feature `etcd`): real etcd through the `etcd-client` crate.
//!
//! The trait is object-safe (`Arc<dyn Kv>`) so a server can pick its backend at run
//! time.

mod embedded;
#[cfg(feature = "etcd")]
mod etcd;
#[cfg(test)]
pub(crate) mod observed;

pub use embedded::{EmbeddedKv, EmbeddedKvOptions};
#[cfg(feature = "etcd")]
pub use etcd::{
    DEFAULT_MAX_CALL_RECV_MSG_SIZE, DEFAULT_MAX_CALL_SEND_MSG_SIZE, EtcdKv,
};

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

// ANCHOR: kv_types
/// One stored version of a key: etcd's `mvccpb.KeyValue`.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key, e.g. `/registry/pods/default/web-0`.
    pub key: Bytes,
    /// The value; empty in the `kv` of a delete event.
    pub value: Bytes,
    /// The revision that created the key (0 in the `kv` of a delete event).
    pub create_revision: i64,
    /// The revision of the last change to the key; for a delete event, the delete's
    /// revision.
    pub mod_revision: i64,
    /// How many times the key changed since it was created (0 in the `kv` of a
    /// delete event).
    pub version: i64,
}

/// What happened to a key: etcd's `mvccpb.Event_EventType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KvEventType {
    /// A put: a create or an update.
    Put,
    /// A delete.
    Delete,
}

/// One change: etcd's `mvccpb.Event`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvEvent {
    /// Put or delete.
    pub kind: KvEventType,
    /// The new state. For a delete only `key` and `mod_revision` (the delete's
    /// revision) are set.
    pub kv: KeyValue,
    /// The state before the change, when the watch asked for `prev_kv` and there
    /// was one.
    pub prev_kv: Option<KeyValue>,
}

impl KvEvent {
    /// Whether this put created the key (etcd's `Event.IsCreate`).
    pub fn is_create(&self) -> bool {
        self.kind == KvEventType::Put
            && self.kv.create_revision == self.kv.mod_revision
    }
}
// ANCHOR_END: kv_types

impl fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyValue")
            .field("key", &String::from_utf8_lossy(&self.key))
            .field("value", &format_args!("{} bytes", self.value.len()))
            .field("create_revision", &self.create_revision)
            .field("mod_revision", &self.mod_revision)
            .field("version", &self.version)
            .finish()
    }
}

/// A range read: one key, or every key under a prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeRequest {
    /// The key, or the prefix when `prefix` is set.
    pub key: Bytes,
    /// Read every key starting with `key`.
    pub prefix: bool,
    /// For paging: start at this key instead of `key` (inclusive); the end stays
    /// the prefix's end.
    pub from_key: Option<Bytes>,
    /// Read at this revision; 0 reads the newest.
    pub revision: i64,
    /// At most this many keys; 0 means no limit.
    pub limit: i64,
    /// Only count the keys; `kvs` comes back empty.
    pub count_only: bool,
}

impl RangeRequest {
    /// A read of one key at the newest revision.
    pub fn key(key: impl Into<Bytes>) -> Self {
        RangeRequest {
            key: key.into(),
            ..RangeRequest::default()
        }
    }

    /// A read of every key under `prefix` at the newest revision.
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        RangeRequest {
            key: prefix.into(),
            prefix: true,
            ..RangeRequest::default()
        }
    }

    /// The same read at `revision`.
    #[must_use]
    pub fn at_revision(mut self, revision: i64) -> Self {
        self.revision = revision;
        self
    }

    /// The same read, at most `limit` keys.
    #[must_use]
    pub fn with_limit(mut self, limit: i64) -> Self {
        self.limit = limit;
        self
    }

    /// The same read, starting at `from_key` (inclusive).
    #[must_use]
    pub fn starting_at(mut self, from_key: impl Into<Bytes>) -> Self {
        self.from_key = Some(from_key.into());
        self
    }
}

/// The answer to a [`RangeRequest`]: etcd's `RangeResponse`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeResponse {
    /// The store's revision when the read was served (the header revision), even
    /// when the read was at an older revision.
    pub header_revision: i64,
    /// The keys found, in key order.
    pub kvs: Vec<KeyValue>,
    /// Whether more keys match than `limit` let through.
    pub more: bool,
    /// How many keys match in all (ignoring the limit).
    pub count: i64,
}

/// The condition of a [`Kv::txn`]: compare the key's `mod_revision` or `version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// The key's `mod_revision` equals this (0: the key does not exist).
    ModRevision(i64),
    /// The key's `version` equals this (0: the key does not exist):
    /// `clientv3.Compare(clientv3.Version(key), "=", v)`, the compactor's CAS.
    Version(i64),
}

/// What a [`Kv::txn`] does when its comparison holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxnOp {
    /// Put this value.
    Put(Bytes),
    /// Delete the key.
    Delete,
}

/// The answer to a [`Kv::txn`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnResponse {
    /// Whether the comparison held and the operation ran.
    pub succeeded: bool,
    /// The store's revision after the transaction (the new revision when it wrote).
    pub header_revision: i64,
    /// When it failed: the key's current state (a `get` in the else branch), if the
    /// key exists. When a delete succeeded: the deleted state.
    pub kv: Option<KeyValue>,
}

/// Options of a watch: etcd's `WatchRequest` fields the apiserver sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatchRequest {
    /// The key, or the prefix when `prefix` is set.
    pub key: Bytes,
    /// Watch every key under `key` (`clientv3.WithPrefix`).
    pub prefix: bool,
    /// Replay from this revision (inclusive); 0 starts after the newest revision.
    pub start_revision: i64,
    /// Fill `prev_kv` in events (`clientv3.WithPrevKV`).
    pub prev_kv: bool,
    /// Ask for progress notifications (`clientv3.WithProgressNotify`).
    pub progress_notify: bool,
}

/// One message on a watch: etcd's `WatchResponse`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatchResponse {
    /// The store's revision when the message was sent. For a progress notification,
    /// every change up to it has been delivered.
    pub header_revision: i64,
    /// The changes, in revision order.
    pub events: Vec<KvEvent>,
    /// Non-zero when the watch's start revision has been compacted: the watch is
    /// cancelled.
    pub compact_revision: i64,
    /// The watch ended (by compaction or by the server).
    pub canceled: bool,
    /// Why the server cancelled the watch, when it said.
    pub cancel_reason: String,
}

impl WatchResponse {
    /// etcd's `IsProgressNotify`: no events, not cancelled, not a compaction.
    pub fn is_progress_notify(&self) -> bool {
        self.events.is_empty()
            && !self.canceled
            && self.compact_revision == 0
            && self.header_revision != 0
    }
}

/// An open watch: a stream of [`WatchResponse`]s and a handle to ask for progress.
///
/// Dropping it cancels the watch.
pub struct KvWatch {
    /// The messages. The stream ends after a cancelled message or when the backend
    /// goes away (then its last item is an error).
    pub responses: BoxStream<'static, Result<WatchResponse, KvError>>,
    /// Asks the backend for a progress notification (`RequestProgress`).
    pub progress: Arc<dyn ProgressRequester>,
}

impl fmt::Debug for KvWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KvWatch").finish_non_exhaustive()
    }
}

/// Asks an open watch for a progress notification.
pub trait ProgressRequester: Send + Sync {
    /// etcd's `Watcher.RequestProgress`: the backend answers with a progress
    /// notification at its current revision once every earlier event has been
    /// sent.
    fn request_progress(&self) -> BoxFuture<'_, Result<(), KvError>>;
}

/// Errors of a [`Kv`], with etcd's meaning.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// The requested revision has been compacted (`rpctypes.ErrCompacted`).
    #[error("mvcc: required revision has been compacted (compacted at {compacted})")]
    Compacted {
        /// The revision the store was compacted at.
        compacted: i64,
    },
    /// The requested revision is newer than the store (`rpctypes.ErrFutureRev`).
    #[error("mvcc: required revision is a future revision (current {current})")]
    FutureRevision {
        /// The store's current revision.
        current: i64,
    },
    /// The backend cannot be reached or failed; the message says why.
    #[error("etcd backend unavailable: {0}")]
    Unavailable(String),
    /// The backend refused the request; the message says why.
    #[error("etcd request failed: {0}")]
    Request(String),
    /// etcd refused a write larger than its `--max-request-bytes`
    /// (`rpctypes.ErrRequestTooLarge`).
    #[error("etcdserver: request is too large")]
    RequestTooLarge,
}

/// Mirrors the part of etcd's `clientv3.KV` and `clientv3.Watcher` that the
/// apiserver uses.
// ANCHOR: kv_trait
pub trait Kv: Send + Sync + 'static {
    /// Reads one key or a prefix, at a revision, with a limit.
    fn range(
        &self,
        request: RangeRequest,
    ) -> BoxFuture<'_, Result<RangeResponse, KvError>>;

    /// Puts a value; answers the new revision and the previous state, if any.
    fn put(
        &self,
        key: Bytes,
        value: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>>;

    /// Deletes a key; answers the revision (the new one when it deleted, else the
    /// current one) and the deleted state, if there was one.
    fn delete(
        &self,
        key: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>>;

    /// If the key's `mod_revision` matches, runs `op`; otherwise reads the key.
    fn txn(
        &self,
        key: Bytes,
        compare: Compare,
        op: TxnOp,
    ) -> BoxFuture<'_, Result<TxnResponse, KvError>>;

    /// Forgets every version older than `revision` (except the newest version of
    /// each key).
    fn compact(&self, revision: i64) -> BoxFuture<'_, Result<(), KvError>>;

    /// Opens a watch. Starting at a compacted revision gives one message with
    /// `compact_revision` set and `canceled`, then the end of the stream.
    fn watch(
        &self,
        request: WatchRequest,
    ) -> BoxFuture<'_, Result<KvWatch, KvError>>;

    /// Whether a progress notification asked for with `request_progress` comes
    /// after every event below its revision, so a cache may trust it. Mirrors the
    /// `storage.RequestWatchProgress` feature of `pkg/storage/feature`; true here,
    /// see [`EtcdKv`](crate::kv::EtcdKv) for etcd.
    fn supports_request_watch_progress(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { true })
    }
}
// ANCHOR_END: kv_trait

/// The smallest key after every key that starts with `prefix` (etcd's
/// `clientv3.GetPrefixRangeEnd`). `None` when there is none (all `0xff`), meaning
/// "to the end".
pub fn prefix_range_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_range_end_increments_the_last_byte() {
        assert_eq!(
            prefix_range_end(b"/registry/pods/"),
            Some(b"/registry/pods0".to_vec())
        );
        assert_eq!(prefix_range_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_range_end(b"\xff\xff"), None);
    }

    #[test]
    fn progress_notify_is_an_empty_uncancelled_message() {
        let progress = WatchResponse {
            header_revision: 7,
            ..WatchResponse::default()
        };
        assert!(progress.is_progress_notify());
        let compacted = WatchResponse {
            header_revision: 7,
            compact_revision: 3,
            canceled: true,
            ..WatchResponse::default()
        };
        assert!(!compacted.is_progress_notify());
    }
}
