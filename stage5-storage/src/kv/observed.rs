//! An [`EmbeddedKv`] that records what the code above it asks of it, for the unit
//! tests of that code: each range read's limit and revision, the number of
//! compactions, and a write slipped in right after the next range read (a writer
//! racing a paged list).

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use futures::future::BoxFuture;
use parking_lot::Mutex;

use super::{
    Compare, EmbeddedKv, KeyValue, Kv, KvError, KvWatch, RangeRequest,
    RangeResponse, TxnOp, TxnResponse, WatchRequest,
};

/// See the module doc. `inner` is the store itself, for assertions on it.
#[derive(Default)]
pub(crate) struct ObservedKv {
    pub(crate) inner: EmbeddedKv,
    ranges: Mutex<Vec<(i64, i64)>>,
    compactions: AtomicUsize,
    write_after_range: Mutex<Option<(Bytes, Bytes)>>,
}

impl ObservedKv {
    /// `(limit, revision)` of every range read so far, oldest first.
    pub(crate) fn ranges(&self) -> Vec<(i64, i64)> {
        self.ranges.lock().clone()
    }

    /// Forgets the range reads recorded so far.
    pub(crate) fn clear_ranges(&self) {
        self.ranges.lock().clear();
    }

    /// How many compactions were asked for.
    pub(crate) fn compactions(&self) -> usize {
        self.compactions.load(Ordering::Relaxed)
    }

    /// Writes `key` = `value` right after the next range read has been answered.
    pub(crate) fn write_after_next_range(&self, key: Bytes, value: Bytes) {
        *self.write_after_range.lock() = Some((key, value));
    }
}

impl Kv for ObservedKv {
    fn range(
        &self,
        request: RangeRequest,
    ) -> BoxFuture<'_, Result<RangeResponse, KvError>> {
        Box::pin(async move {
            self.ranges.lock().push((request.limit, request.revision));
            let response = self.inner.range(request).await;
            let write = self.write_after_range.lock().take();
            if let Some((key, value)) = write {
                self.inner.put(key, value).await?;
            }
            response
        })
    }

    fn put(
        &self,
        key: Bytes,
        value: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>> {
        self.inner.put(key, value)
    }

    fn delete(
        &self,
        key: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>> {
        self.inner.delete(key)
    }

    fn txn(
        &self,
        key: Bytes,
        compare: Compare,
        op: TxnOp,
    ) -> BoxFuture<'_, Result<TxnResponse, KvError>> {
        self.inner.txn(key, compare, op)
    }

    fn compact(&self, revision: i64) -> BoxFuture<'_, Result<(), KvError>> {
        self.compactions.fetch_add(1, Ordering::Relaxed);
        self.inner.compact(revision)
    }

    fn watch(
        &self,
        request: WatchRequest,
    ) -> BoxFuture<'_, Result<KvWatch, KvError>> {
        self.inner.watch(request)
    }
}
