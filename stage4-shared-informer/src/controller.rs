//! The low-level controller: a Reflector filling a queue, and a loop popping from
//! it.
//!
//! Mirrors client-go's `tools/cache/controller.go`: `Config`, `New`,
//! `controller.Run`, `processLoop`, `HasSynced`, `LastSyncResourceVersion`, and
//! `processDeltas`.

use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use stage1_store::{BoxError, Cache, Store, StoreError};
use stage2_deltafifo::{DeltaFifo, Deltas, PopError, Queue, RealFifo};
use stage3_reflector::{
    ListerWatcher, Reflector, ReflectorOptions, ShouldResync, WatchErrorHandler,
};
use tokio_util::sync::CancellationToken;

use crate::handler::ResourceEventHandler;

// ANCHOR: informer_queue
/// The queue an informer runs on: client-go's DeltaFIFO, or the newer RealFIFO.
pub enum InformerQueue<K> {
    /// Stage 2's [`DeltaFifo`] with `emit_delta_type_replaced` and the indexer as
    /// known objects.
    DeltaFifo(DeltaFifo<K>),
    /// Stage 2's [`RealFifo`] in non-atomic mode, with the indexer as known objects.
    RealFifo(RealFifo<K>),
}
// ANCHOR_END: informer_queue

macro_rules! delegate {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            InformerQueue::DeltaFifo($q) => $e,
            InformerQueue::RealFifo($q) => $e,
        }
    };
}

impl<K: Send + Sync + 'static> stage1_store::KeyLister for InformerQueue<K> {
    fn list_keys(&self) -> stage1_store::Snapshot<Arc<str>> {
        delegate!(self, q => stage1_store::KeyLister::list_keys(q))
    }
}

impl<K: Send + Sync + 'static> stage1_store::KeyGetter<K> for InformerQueue<K> {
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        delegate!(self, q => q.get_by_key(key))
    }
}

impl<K: Send + Sync + 'static> Store<K> for InformerQueue<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), StoreError> {
        delegate!(self, q => q.add(obj))
    }
    fn update(&self, obj: Arc<K>) -> Result<(), StoreError> {
        delegate!(self, q => q.update(obj))
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), StoreError> {
        delegate!(self, q => q.delete(obj))
    }
    fn list(&self) -> stage1_store::Snapshot<Arc<K>> {
        delegate!(self, q => q.list())
    }
    fn get(&self, obj: &K) -> Result<Option<Arc<K>>, StoreError> {
        delegate!(self, q => q.get(obj))
    }
    fn replace(
        &self,
        list: Vec<Arc<K>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        delegate!(self, q => q.replace(list, resource_version))
    }
    fn resync(&self) -> Result<(), StoreError> {
        delegate!(self, q => q.resync())
    }
}

impl<K: Send + Sync + 'static> Queue<K> for InformerQueue<K> {
    async fn pop<R, E, F>(&self, process: F) -> Result<R, PopError<E>>
    where
        F: FnOnce(Deltas<K>, bool) -> Result<R, E> + Send,
        R: Send,
        E: Send,
    {
        match self {
            InformerQueue::DeltaFifo(q) => q.pop(process).await,
            InformerQueue::RealFifo(q) => q.pop(process).await,
        }
    }
    fn has_synced(&self) -> bool {
        delegate!(self, q => q.has_synced())
    }
    fn close(&self) {
        delegate!(self, q => q.close())
    }
    fn is_closed(&self) -> bool {
        delegate!(self, q => q.is_closed())
    }
}

/// Mirrors client-go's `ProcessFunc`: what the controller does with each popped
/// item.
pub type ProcessFn<K> =
    Arc<dyn Fn(Deltas<K>, bool) -> Result<(), BoxError> + Send + Sync>;

// ANCHOR: config
/// Mirrors client-go's `Config` for a low-level controller.
pub struct Config<K, L, Q> {
    /// The queue the Reflector fills and the process loop drains.
    pub queue: Arc<Q>,
    /// Where the objects come from.
    pub lister_watcher: L,
    /// Called for every popped item, with `is_in_initial_list`.
    pub process: ProcessFn<K>,
    /// How often the Reflector resyncs the queue; zero for never.
    pub full_resync_period: Duration,
    /// Asked before each resync.
    pub should_resync: Option<ShouldResync>,
    /// Told about every list and watch error.
    pub watch_error_handler: Option<WatchErrorHandler>,
    /// Anything else for the Reflector (its name, page size, list mode, backoff).
    pub reflector_options: ReflectorOptions,
}
// ANCHOR_END: config

// ANCHOR: controller
/// Mirrors client-go's `controller`: runs a Reflector into a queue and pops from it.
pub struct Controller<K, L, Q> {
    queue: Arc<Q>,
    process: ProcessFn<K>,
    reflector: Reflector<K, L, Q>,
}

impl<K, L, Q> Controller<K, L, Q>
where
    K: Resource + Send + Sync + 'static,
    K::DynamicType: Default,
    L: ListerWatcher<K>,
    Q: Queue<K> + 'static,
{
    /// Mirrors client-go's `New`.
    #[track_caller]
    pub fn new(config: Config<K, L, Q>) -> Self {
        let mut options = config
            .reflector_options
            .resync_period(config.full_resync_period);
        options.should_resync = config.should_resync;
        options.watch_error_handler = config.watch_error_handler;
        let reflector = Reflector::new(
            config.lister_watcher,
            Arc::clone(&config.queue),
            options,
        );
        Self {
            queue: config.queue,
            process: config.process,
            reflector,
        }
    }
    // ANCHOR_END: controller

    // ANCHOR: run
    /// Mirrors `controller.Run`: runs the Reflector and the process loop until
    /// `shutdown`, then closes the queue so the loop ends, and returns when both
    /// have stopped.
    pub async fn run(&self, shutdown: CancellationToken) {
        let close_on_shutdown = async {
            shutdown.cancelled().await;
            self.queue.close();
        };
        tokio::join!(
            self.reflector.run(shutdown.clone()),
            close_on_shutdown,
            self.process_loop()
        );
    }

    /// Mirrors `processLoop`: pops until the queue is closed. A process error is
    /// logged; the item is not retried (client-go's `RetryOnError` is false for
    /// informers and requeueing is gone since 1.33).
    async fn process_loop(&self) {
        loop {
            let process = Arc::clone(&self.process);
            let popped = self
                .queue
                .pop(
                    move |deltas: Deltas<K>, initial: bool| -> Result<(), String> {
                        // A plain message crosses the await; a boxed `dyn Error`
                        // here trips a known limitation of
                        // rustc's `Send` analysis for async trait methods.
                        process(deltas, initial).map_err(|error| error.to_string())
                    },
                )
                .await;
            match popped {
                Ok(()) => {}
                Err(PopError::Closed) => return,
                Err(PopError::Process(error)) => {
                    tracing::error!(
                        %error,
                        "processing a popped item failed; it is not retried"
                    );
                }
            }
        }
    }
    // ANCHOR_END: run

    // ANCHOR: has_synced
    /// Mirrors `controller.HasSynced`: the queue's answer.
    pub fn has_synced(&self) -> bool {
        self.queue.has_synced()
    }

    /// Mirrors `controller.LastSyncResourceVersion`.
    pub fn last_sync_resource_version(&self) -> String {
        self.reflector.last_sync_resource_version()
    }
    // ANCHOR_END: has_synced

    /// What the Reflector is doing (for the live page).
    pub fn phase(&self) -> stage3_reflector::Phase {
        self.reflector.phase()
    }

    /// The queue between the Reflector and the process loop.
    pub fn queue(&self) -> &Arc<Q> {
        &self.queue
    }
}

// ANCHOR: process_deltas
/// Mirrors client-go's `processDeltas`: applies each delta to the indexer, oldest
/// first, then tells `handler`. `Sync`, `Replaced`, `Added` and `Updated` become an
/// update when the key is already cached (with the cached object as `old`) and an
/// add otherwise; `Deleted` removes the key and passes on the object or tombstone.
pub fn process_deltas<K, H>(
    handler: &H,
    indexer: &Cache<K>,
    deltas: Deltas<K>,
    is_in_initial_list: bool,
) -> Result<(), StoreError>
where
    K: Send + Sync + 'static,
    H: ResourceEventHandler<K> + ?Sized,
{
    // ANCHOR: ex4-process-deltas
    use crate::handler::DeletedObject;
    use stage2_deltafifo::{DeltaObject, DeltaType};

    for delta in deltas {
        match (delta.delta_type, delta.object) {
            (
                DeltaType::Sync
                | DeltaType::Replaced
                | DeltaType::Added
                | DeltaType::Updated,
                DeltaObject::Object(obj),
            ) => match indexer.get(&obj)? {
                Some(old) => {
                    indexer.update(Arc::clone(&obj))?;
                    handler.on_update(&old, &obj);
                }
                None => {
                    indexer.add(Arc::clone(&obj))?;
                    handler.on_add(&obj, is_in_initial_list);
                }
            },
            (DeltaType::Deleted, DeltaObject::Object(obj)) => {
                indexer.delete(Arc::clone(&obj))?;
                handler.on_delete(&DeletedObject::Object(obj));
            }
            (DeltaType::Deleted, DeltaObject::Tombstone(tombstone)) => {
                indexer.thread_safe_store().delete(&tombstone.key)?;
                handler.on_delete(&DeletedObject::Tombstone(tombstone));
            }
            (delta_type, _) => {
                tracing::warn!(
                    ?delta_type,
                    "an informer cannot apply this delta; skipped"
                );
            }
        }
    }
    Ok(())
    // ANCHOR_END: ex4-process-deltas
}
// ANCHOR_END: process_deltas
