//! The controller loop: mirrors the pattern every controller of
//! kube-controller-manager follows, as client-go's [`examples/workqueue`] and
//! sample-controller's `controller.go` spell it out: `Run(workers)` waits for
//! the informers' caches, starts the workers and, at shutdown, drains the
//! queue; each worker loops over `processNextWorkItem`, which takes a key,
//! calls the sync function, and `handleErr`s the result: success `Forget`s the
//! key's failures, a failure puts it back rate-limited (up to a number of
//! retries, when there is one), and `Done` always tells the queue the key is
//! free again.
//!
//! kube-rs's `kube_runtime::Controller` does the same with streams: a
//! `reconcile` function returns an `Action` (requeue after, or await change),
//! and an `error_policy` decides the requeue of a failure. Here the queue's rate
//! limiter decides it, as in client-go, and a sync may ask for a later look with
//! [`SyncResult::requeue_after`].
//!
//! [`examples/workqueue`]: https://github.com/kubernetes/client-go/blob/v0.36.0/examples/workqueue/main.go

use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use stage4_shared_informer::{DeletedObject, ResourceEventHandlerFuncs};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::workqueue::RateLimitingQueue;

// ANCHOR: reconcile
/// Why a sync failed (any error; the loop only logs it and requeues).
pub type SyncError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a sync asks of the queue besides success or failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncResult {
    /// Look at the key again after this long (`queue.AddAfter`), as the
    /// ReplicaSet controller does for `minReadySeconds`.
    pub requeue_after: Option<Duration>,
}

impl SyncResult {
    /// Done; nothing more to do until something changes.
    pub fn done() -> Self {
        Self::default()
    }

    /// Done for now; look again after `delay`.
    pub fn requeue_after(delay: Duration) -> Self {
        Self {
            requeue_after: Some(delay),
        }
    }
}

/// A controller's sync function: reconciles the object of one key
/// (`namespace/name`).
pub trait Reconcile: Send + Sync + 'static {
    /// Mirrors `syncHandler(ctx, key)`.
    fn sync(&self, key: &str) -> BoxFuture<'_, Result<SyncResult, SyncError>>;
}
// ANCHOR_END: reconcile

// ANCHOR: controller
/// One controller's queue and workers.
pub struct Controller<R> {
    /// The controller's name, for logs (`replicaset`).
    name: String,
    /// The keys to sync.
    queue: RateLimitingQueue<String>,
    /// The sync function.
    reconciler: Arc<R>,
    /// After this many failed syncs of one key it is dropped (client-go's
    /// example uses 5); `None` retries forever, as kube-controller-manager's
    /// controllers do.
    max_retries: Option<usize>,
}
// ANCHOR_END: controller

impl<R> std::fmt::Debug for Controller<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("queued", &self.queue.len())
            .finish_non_exhaustive()
    }
}

impl<R: Reconcile> Controller<R> {
    /// A controller named `name` that syncs the keys of `queue` with
    /// `reconciler`, retrying failures forever.
    pub fn new(
        name: impl Into<String>,
        queue: RateLimitingQueue<String>,
        reconciler: Arc<R>,
    ) -> Self {
        Self {
            name: name.into(),
            queue,
            reconciler,
            max_retries: None,
        }
    }

    /// Drops a key after `retries` failed syncs (`maxRetries` of client-go's
    /// example).
    #[must_use]
    pub fn max_retries(mut self, retries: usize) -> Self {
        self.max_retries = Some(retries);
        self
    }

    /// The queue, for the event handlers that add keys.
    pub fn queue(&self) -> &RateLimitingQueue<String> {
        &self.queue
    }

    // ANCHOR: run
    /// Mirrors `Run(ctx, workers)`: waits for `caches_synced` (the informers'
    /// `WaitForCacheSync`; `false` means the controller stops before it
    /// starts), runs `workers` workers until `shutdown`, then shuts the queue
    /// down with drain (the keys being synced finish) and waits for every
    /// worker.
    pub async fn run(
        self: Arc<Self>,
        workers: usize,
        caches_synced: impl Future<Output = bool>,
        shutdown: CancellationToken,
    ) {
        if !caches_synced.await {
            tracing::warn!(
                controller = %self.name,
                "caches did not sync; not starting"
            );
            return;
        }
        tracing::info!(controller = %self.name, workers, "starting workers");
        let tracker = TaskTracker::new();
        for _ in 0..workers.max(1) {
            let controller = Arc::clone(&self);
            tracker.spawn(async move { controller.run_worker().await });
        }
        tracker.close();
        shutdown.cancelled().await;
        self.queue.shut_down_with_drain().await;
        tracker.wait().await;
        tracing::info!(controller = %self.name, "workers stopped");
    }
    // ANCHOR_END: run

    /// Mirrors `runWorker`: process items until the queue shuts down.
    async fn run_worker(&self) {
        while self.process_next_work_item().await {}
    }

    // ANCHOR: process_next_work_item
    /// Mirrors `processNextWorkItem`: one key from the queue through the sync
    /// function; `false` once the queue is shut down.
    pub async fn process_next_work_item(&self) -> bool {
        let Some(key) = self.queue.get().await else {
            return false;
        };
        let result = self.reconciler.sync(&key).await;
        self.handle_err(result, &key);
        self.queue.done(&key);
        true
    }
    // ANCHOR_END: process_next_work_item

    // ANCHOR: handle_err
    /// Mirrors `handleErr`: a success forgets the key's failures (and asks
    /// for a later look if the sync wants one); a failure requeues it
    /// rate-limited, or drops it after `max_retries`.
    fn handle_err(&self, result: Result<SyncResult, SyncError>, key: &str) {
        match result {
            Ok(done) => {
                self.queue.forget(&key.to_string());
                if let Some(delay) = done.requeue_after {
                    self.queue.add_after(key.to_string(), delay);
                }
            }
            Err(error) => {
                let key = key.to_string();
                let retries = self.queue.num_requeues(&key);
                if self.max_retries.is_some_and(|max| retries >= max) {
                    tracing::warn!(
                        controller = %self.name, %key, %error, retries,
                        "dropping the key after too many failures"
                    );
                    self.queue.forget(&key);
                } else {
                    tracing::info!(
                        controller = %self.name, %key, %error,
                        "sync failed; requeued"
                    );
                    self.queue.add_rate_limited(key);
                }
            }
        }
    }
    // ANCHOR_END: handle_err
}

/// A controller's event handlers, each calling the controller while it
/// lives: what every kube-controller-manager controller registers with
/// `AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.addPod, ...})`.
/// The informer holds the handlers, and the controller holds the informers, so
/// the handlers hold the controller weakly; once it is gone they do nothing.
pub fn weak_handlers<C, K>(
    controller: Weak<C>,
    add: impl Fn(&C, &Arc<K>) + Send + Sync + 'static,
    update: impl Fn(&C, &Arc<K>, &Arc<K>) + Send + Sync + 'static,
    delete: impl Fn(&C, &DeletedObject<K>) + Send + Sync + 'static,
) -> ResourceEventHandlerFuncs<K>
where
    C: Send + Sync + 'static,
{
    let (on_add, on_update, on_delete) = (
        Weak::clone(&controller),
        Weak::clone(&controller),
        controller,
    );
    ResourceEventHandlerFuncs::new()
        .add_func(move |object, _| {
            if let Some(c) = on_add.upgrade() {
                add(&c, object);
            }
        })
        .update_func(move |old, cur| {
            if let Some(c) = on_update.upgrade() {
                update(&c, old, cur);
            }
        })
        .delete_func(move |deleted| {
            if let Some(c) = on_delete.upgrade() {
                delete(&c, deleted);
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::ItemExponentialFailureRateLimiter;
    use parking_lot::Mutex;

    /// Fails a key a given number of times, recording every sync.
    struct Flaky {
        failures: Mutex<std::collections::HashMap<String, usize>>,
        synced: Mutex<Vec<String>>,
    }

    impl Reconcile for Flaky {
        fn sync(&self, key: &str) -> BoxFuture<'_, Result<SyncResult, SyncError>> {
            let key = key.to_string();
            Box::pin(async move {
                self.synced.lock().push(key.clone());
                let mut failures = self.failures.lock();
                match failures.get_mut(&key) {
                    Some(left) if *left > 0 => {
                        *left -= 1;
                        Err(format!("{key} is not ready").into())
                    }
                    _ => Ok(SyncResult::done()),
                }
            })
        }
    }

    fn queue() -> RateLimitingQueue<String> {
        RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        ))
    }

    /// A failing key is retried with backoff until it succeeds, and then its
    /// failures are forgotten.
    #[tokio::test(start_paused = true)]
    async fn a_failed_sync_is_retried_rate_limited_until_it_succeeds() {
        let flaky = Arc::new(Flaky {
            failures: Mutex::new([("ns/a".to_string(), 2)].into()),
            synced: Mutex::new(Vec::new()),
        });
        let controller = Controller::new("test", queue(), Arc::clone(&flaky));
        controller.queue().add("ns/a".into());
        for _ in 0..3 {
            assert!(
                tokio::time::timeout(
                    Duration::from_secs(60),
                    controller.process_next_work_item()
                )
                .await
                .expect("a key in time")
            );
        }
        assert_eq!(*flaky.synced.lock(), ["ns/a", "ns/a", "ns/a"]);
        assert_eq!(controller.queue().num_requeues(&"ns/a".to_string()), 0);
        assert_eq!(controller.queue().len(), 0);
    }

    /// With `max_retries`, a key that keeps failing is dropped.
    #[tokio::test(start_paused = true)]
    async fn a_key_that_keeps_failing_is_dropped_after_max_retries() {
        let flaky = Arc::new(Flaky {
            failures: Mutex::new([("ns/b".to_string(), usize::MAX)].into()),
            synced: Mutex::new(Vec::new()),
        });
        let controller =
            Controller::new("test", queue(), Arc::clone(&flaky)).max_retries(2);
        controller.queue().add("ns/b".into());
        for _ in 0..3 {
            tokio::time::timeout(
                Duration::from_secs(60),
                controller.process_next_work_item(),
            )
            .await
            .expect("a key in time");
        }
        assert_eq!(flaky.synced.lock().len(), 3);
        assert_eq!(controller.queue().len(), 0);
        assert_eq!(controller.queue().num_requeues(&"ns/b".to_string()), 0);
    }

    /// `run` starts workers only after the caches synced, and at shutdown the
    /// queue drains and every worker ends.
    #[tokio::test(start_paused = true)]
    async fn run_waits_for_the_caches_and_stops_at_shutdown() {
        let flaky = Arc::new(Flaky {
            failures: Mutex::new(Default::default()),
            synced: Mutex::new(Vec::new()),
        });
        let controller =
            Arc::new(Controller::new("test", queue(), Arc::clone(&flaky)));
        controller.queue().add("ns/c".into());
        let shutdown = CancellationToken::new();
        let (synced_tx, synced_rx) = tokio::sync::oneshot::channel::<bool>();
        let running = tokio::spawn(Arc::clone(&controller).run(
            2,
            async move { synced_rx.await.unwrap_or(false) },
            shutdown.clone(),
        ));
        tokio::task::yield_now().await;
        assert!(flaky.synced.lock().is_empty(), "no sync before the caches");
        synced_tx.send(true).expect("run is waiting");
        tokio::time::timeout(Duration::from_secs(5), async {
            while flaky.synced.lock().is_empty() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("synced in time");
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), running)
            .await
            .expect("stops in time")
            .expect("no panic");
        assert!(controller.queue().shutting_down());
    }
}
