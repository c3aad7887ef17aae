//! What the informer needs from a queue, whichever implementation it runs on.
//!
//! Mirrors client-go's `Queue` interface (fifo.go) and `TransformFunc`
//! (delta_fifo.go).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::Notify;

use stage1_store::{BoxError, KeyListerGetter, Store};

use crate::delta::Deltas;
use crate::error::PopError;

/// Mirrors client-go's `TransformFunc`: rewrites an object before it is queued,
/// typically to strip fields nobody reads (managed fields, big annotations) and save
/// memory.
///
/// It runs once per object on enqueue, never on tombstones and never on resync
/// `Sync` deltas (those objects went through it already).
pub type TransformFunc<T> =
    Arc<dyn Fn(Arc<T>) -> Result<Arc<T>, BoxError> + Send + Sync>;

/// The informer's view of its known objects: normally its indexer.
pub type KnownObjects<T> = Arc<dyn KeyListerGetter<T>>;

// ANCHOR: queue_trait
/// Mirrors client-go's `Queue`: a [`Store`] the Reflector writes into, that a
/// consumer pops from.
///
/// Both [`DeltaFifo`](crate::DeltaFifo) and [`RealFifo`](crate::RealFifo) implement
/// it, so stage 4's informer can run on either.
pub trait Queue<T>: Store<T> {
    /// Waits until an item is queued (or the queue is closed), removes it, and
    /// passes it to `process` together with `is_in_initial_list` (true while the
    /// first relist is still being popped). `process` runs under the queue's
    /// lock, so it can update the known-objects store without racing a
    /// concurrent `replace`. Its result is returned; the item is never requeued.
    fn pop<R, E, F>(
        &self,
        process: F,
    ) -> impl Future<Output = Result<R, PopError<E>>> + Send
    where
        F: FnOnce(Deltas<T>, bool) -> Result<R, E> + Send,
        R: Send,
        E: Send;

    /// Whether the first relist has been popped completely (or a write came before
    /// any relist).
    fn has_synced(&self) -> bool;

    /// Closes the queue: blocked and future pops return [`PopError::Closed`] once it
    /// is empty.
    fn close(&self);

    /// Whether `close` was called.
    fn is_closed(&self) -> bool;
}
// ANCHOR_END: queue_trait

// ANCHOR: wait_for
/// The waiting half of both queues' `pop`: calls `attempt` until it has an answer,
/// sleeping on `notify` in between.
///
/// Interest in `notify` is registered *before* each attempt, so an item queued
/// between a failed attempt and the wait still wakes the caller (Go gets this from
/// `cond.Wait`, which releases the lock and starts waiting in one step). Dropping
/// the returned future loses nothing: only `attempt` changes the queue.
pub(crate) async fn wait_for<R>(
    notify: &Notify,
    mut attempt: impl FnMut() -> Option<R>,
) -> R {
    loop {
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(answer) = attempt() {
            return answer;
        }
        notified.await;
    }
}
// ANCHOR_END: wait_for

/// Implements [`Queue`] for a queue type whose inherent `pop`, `has_synced`, `close`
/// and `is_closed` already do the work (both of this crate's queues).
macro_rules! impl_queue_via_inherent_methods {
    ($queue:ident) => {
        impl<T: Send + Sync + 'static> $crate::queue::Queue<T> for $queue<T> {
            fn pop<R, E, F>(
                &self,
                process: F,
            ) -> impl std::future::Future<
                Output = Result<R, $crate::error::PopError<E>>,
            > + Send
            where
                F: FnOnce($crate::delta::Deltas<T>, bool) -> Result<R, E> + Send,
                R: Send,
                E: Send,
            {
                $queue::pop(self, process)
            }

            fn has_synced(&self) -> bool {
                $queue::has_synced(self)
            }

            fn close(&self) {
                $queue::close(self)
            }

            fn is_closed(&self) -> bool {
                $queue::is_closed(self)
            }
        }
    };
}
pub(crate) use impl_queue_via_inherent_methods;
