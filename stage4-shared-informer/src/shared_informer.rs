//! The shared informer: one list-and-watch per type, one cache, many handlers.
//!
//! Mirrors client-go's `sharedIndexInformer` (tools/cache/shared_informer.go) as
//! source documents 003 and 004 describe it: `NewSharedIndexInformer`,
//! `AddEventHandler(WithResyncPeriod)`, `RemoveEventHandler`, `Run`, `HandleDeltas`,
//! `OnAdd`/`OnUpdate`/`OnDelete`, `HasSynced`, `LastSyncResourceVersion`,
//! `SetTransform`, `SetWatchErrorHandler`, `AddIndexers`, `GetStore`/`GetIndexer`
//! and `IsStopped`.
//!
//! # Locking
//! Three locks, always taken in this order: the informer's state lock (client-go's
//! `startedLock`), the `block_deltas` lock, then the processor's listener lock.
//! `handle_deltas` runs under the queue's lock (it is the queue's process function),
//! so the full order while events flow is queue → block_deltas → indexer →
//! processor.

use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use parking_lot::Mutex;
use stage1_store::{
    BoxError, Cache, Indexer, Indexers, KeyFunc, Store, StoreError,
    meta_namespace_key_func,
};
use stage2_deltafifo::{
    DeltaFifo, DeltaFifoOptions, Deltas, RealFifo, RealFifoOptions, TransformFunc,
};
use stage3_reflector::{
    Error as ReflectorError, ListerWatcher, ReflectorOptions, WatchErrorHandler,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::controller::{Config, Controller, InformerQueue, process_deltas};
use crate::debug_ui::{
    InformerView, Inspect, ListenerView, PageHook, QueueView, indexer_view,
    phase_name, popped_view, queue_view,
};
use crate::handler::{DeletedObject, Notification, ResourceEventHandler};
use crate::listener::{ProcessorListener, SyncTracker};
use crate::processor::{ListenerStats, SharedProcessor, determine_resync_period};

/// Mirrors client-go's `minimumResyncPeriod`: resync periods above zero are at least
/// this.
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

// ANCHOR: queue_kind
/// Which queue an informer runs on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum QueueKind {
    /// Stage 2's DeltaFIFO with `EmitDeltaTypeReplaced` (what source document 004
    /// describes).
    #[default]
    DeltaFifo,
    /// Stage 2's RealFIFO (non-atomic), which became client-go's default informer
    /// queue over 1.33–1.36.
    RealFifo,
}
// ANCHOR_END: queue_kind

/// The errors of this stage's informer API.
#[derive(Debug, thiserror::Error)]
pub enum InformerError {
    /// The informer has stopped; no handler can be added any more.
    #[error(
        "handler was not added to shared informer because it has stopped already"
    )]
    Stopped,
    /// A setting that only takes effect before `run` was changed after it.
    #[error("informer has already started: {what} must be set before run")]
    AlreadyStarted {
        /// The setting.
        what: &'static str,
    },
    /// The indexer refused new indexers.
    #[error(transparent)]
    Store(#[from] StoreError),
}

// ANCHOR: registration
/// Mirrors client-go's `ResourceEventHandlerRegistration`: the handle
/// `add_event_handler` returns. Keep it to ask whether this handler has synced, or
/// to remove it.
#[derive(Clone)]
pub struct ResourceEventHandlerRegistration {
    id: u64,
    sync_tracker: Arc<SyncTracker>,
    stopped: watch::Receiver<bool>,
}
// ANCHOR_END: registration

impl std::fmt::Debug for ResourceEventHandlerRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEventHandlerRegistration")
            .field("id", &self.id)
            .field("has_synced", &self.has_synced())
            .finish()
    }
}

// ANCHOR: registration_impl
impl ResourceEventHandlerRegistration {
    /// Mirrors the registration's `HasSynced`: the informer has synced *and* this
    /// handler has handled every initial-list notification queued for it
    /// (including the replay a late handler gets).
    pub fn has_synced(&self) -> bool {
        self.sync_tracker.has_synced()
    }

    /// The listener's id (as in [`ListenerStats`]).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether this handler's task has stopped (after removal or shutdown).
    pub fn is_stopped(&self) -> bool {
        *self.stopped.borrow()
    }
}
// ANCHOR_END: registration_impl

/// The settings and lifecycle of one informer, behind client-go's `startedLock`.
struct InformerState<K, L> {
    started: bool,
    stopped: bool,
    resync_check_period: Duration,
    transform: Option<TransformFunc<K>>,
    watch_error_handler: Option<WatchErrorHandler>,
    reflector_options: ReflectorOptions,
    queue_kind: QueueKind,
    /// Taken by `run`.
    lister_watcher: Option<L>,
    /// Set by `run`.
    controller: Option<Arc<Controller<K, L, InformerQueue<K>>>>,
}

// ANCHOR: struct
/// Mirrors client-go's `sharedIndexInformer`.
///
/// Clone it freely: clones share one informer. `K` is the object type, `L` its
/// [`ListerWatcher`].
pub struct SharedIndexInformer<K, L> {
    inner: Arc<Inner<K, L>>,
}

struct Inner<K, L> {
    indexer: Arc<Cache<K>>,
    processor: SharedProcessor<K>,
    default_event_handler_resync_period: Duration,
    state: Mutex<InformerState<K, L>>,
    /// Held while deltas are applied and while a handler joins or leaves, so a late
    /// handler's replay and the live notifications never interleave.
    block_deltas: Mutex<()>,
    /// What the live page shows (`debug_ui`).
    page: PageHook,
}
// ANCHOR_END: struct

impl<K, L> Clone for SharedIndexInformer<K, L> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K, L> SharedIndexInformer<K, L>
where
    K: Resource + Send + Sync + 'static,
    K::DynamicType: Default,
    L: ListerWatcher<K> + 'static,
{
    // ANCHOR: new
    /// Mirrors `NewSharedIndexInformer`: objects keyed `namespace/name`, with these
    /// indexers, and `default_resync` as both the resync check period and every
    /// handler's default period.
    pub fn new(
        lister_watcher: L,
        default_resync: Duration,
        indexers: Indexers<K>,
    ) -> Self {
        let key_func: KeyFunc<K> = Arc::new(meta_namespace_key_func::<K>);
        Self {
            inner: Arc::new(Inner {
                indexer: Arc::new(stage1_store::new_indexer(key_func, indexers)),
                processor: SharedProcessor::new(),
                default_event_handler_resync_period: default_resync,
                state: Mutex::new(InformerState {
                    started: false,
                    stopped: false,
                    resync_check_period: default_resync,
                    transform: None,
                    watch_error_handler: None,
                    reflector_options: ReflectorOptions::default(),
                    queue_kind: QueueKind::default(),
                    lister_watcher: Some(lister_watcher),
                    controller: None,
                }),
                block_deltas: Mutex::new(()),
                page: PageHook::default(),
            }),
        }
    }
    // ANCHOR_END: new

    /// Mirrors `AddEventHandler`: registers a handler with the informer's default
    /// resync period.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<ResourceEventHandlerRegistration, InformerError> {
        self.add_event_handler_with_resync_period(
            handler,
            self.inner.default_event_handler_resync_period,
        )
    }

    /// Mirrors `AddEventHandlerWithResyncPeriod`.
    ///
    /// The period rules: above zero it is at least [`MINIMUM_RESYNC_PERIOD`]; before
    /// the informer starts, a period below the check period lowers the check
    /// period (and every listener's period is re-derived); after it starts, such
    /// a period is raised to the check period; an informer without resync gives
    /// every listener 0.
    ///
    /// A handler added after the informer started gets the cache's current contents
    /// as initial-list adds, queued before this returns, so its registration's
    /// `has_synced` cannot be true before it has handled them.
    // ANCHOR: add_event_handler
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync_period: Duration,
    ) -> Result<ResourceEventHandlerRegistration, InformerError> {
        let mut state = self.inner.state.lock();
        if state.stopped {
            return Err(InformerError::Stopped);
        }
        let mut resync_period = resync_period;
        if !resync_period.is_zero() {
            resync_period = resync_period.max(MINIMUM_RESYNC_PERIOD);
            if resync_period < state.resync_check_period {
                if state.started {
                    tracing::warn!(
                        ?resync_period,
                        check = ?state.resync_check_period,
                        "resync period is below the check period of a started \
                         informer; raised"
                    );
                    resync_period = state.resync_check_period;
                } else {
                    state.resync_check_period = resync_period;
                    self.inner
                        .processor
                        .resync_check_period_changed(resync_period);
                }
            }
        }
        // ANCHOR_END: add_event_handler
        // ANCHOR: add_event_handler_replay
        let weak = Arc::downgrade(&self.inner);
        let sync_tracker = Arc::new(SyncTracker::new(Box::new(move || {
            weak.upgrade().is_some_and(|inner| inner.has_synced())
        })));
        let listener = Arc::new(ProcessorListener::new(
            Arc::new(handler),
            resync_period,
            determine_resync_period(resync_period, state.resync_check_period),
            tokio::time::Instant::now(),
            Arc::clone(&sync_tracker),
        ));
        let registration = ResourceEventHandlerRegistration {
            id: listener.id,
            sync_tracker,
            stopped: listener.stopped(),
        };
        if !state.started {
            self.inner.processor.add_listener(listener);
            return Ok(registration);
        }
        // Join a running informer: no deltas flow while the cache is replayed to the
        // newcomer.
        let _block = self.inner.block_deltas.lock();
        if !self.inner.processor.add_listener(Arc::clone(&listener)) {
            return Err(InformerError::Stopped);
        }
        for obj in self.inner.indexer.list().iter() {
            listener.add(Notification::Add {
                new: Arc::clone(obj),
                is_in_initial_list: true,
            });
        }
        Ok(registration)
    }
    // ANCHOR_END: add_event_handler_replay

    // ANCHOR: remove
    /// Mirrors `RemoveEventHandler`: the handler receives nothing more once its
    /// in-flight notification (if any) returns. Idempotent, and it does not wait
    /// for the handler's task;
    /// see [`remove_event_handler_and_wait`](Self::remove_event_handler_and_wait).
    pub fn remove_event_handler(
        &self,
        registration: &ResourceEventHandlerRegistration,
    ) {
        let _state = self.inner.state.lock();
        let _block = self.inner.block_deltas.lock();
        self.inner.processor.remove_listener(registration.id);
    }

    /// Removes the handler and waits until its task has stopped (so it is certainly
    /// not running).
    pub async fn remove_event_handler_and_wait(
        &self,
        registration: &ResourceEventHandlerRegistration,
    ) {
        self.remove_event_handler(registration);
        let mut stopped = registration.stopped.clone();
        // An error means the listener is gone entirely, which is stopped too.
        let _ = stopped.wait_for(|stopped| *stopped).await;
    }
    // ANCHOR_END: remove

    // ANCHOR: settings
    /// Mirrors `SetTransform`: rewrites objects as they are queued (before the cache
    /// sees them).
    pub fn set_transform(
        &self,
        transform: TransformFunc<K>,
    ) -> Result<(), InformerError> {
        let mut state = self.inner.state.lock();
        if state.started {
            return Err(InformerError::AlreadyStarted { what: "transform" });
        }
        state.transform = Some(transform);
        Ok(())
    }

    /// Mirrors `SetWatchErrorHandler`: told about every list and watch error of the
    /// Reflector.
    pub fn set_watch_error_handler(
        &self,
        handler: impl Fn(&str, &ReflectorError) + Send + Sync + 'static,
    ) -> Result<(), InformerError> {
        let mut state = self.inner.state.lock();
        if state.started {
            return Err(InformerError::AlreadyStarted {
                what: "watch error handler",
            });
        }
        state.watch_error_handler = Some(Arc::new(handler));
        Ok(())
    }
    // ANCHOR_END: settings

    /// Chooses the queue (before `run`).
    pub fn set_queue_kind(&self, kind: QueueKind) -> Result<(), InformerError> {
        let mut state = self.inner.state.lock();
        if state.started {
            return Err(InformerError::AlreadyStarted { what: "queue kind" });
        }
        state.queue_kind = kind;
        Ok(())
    }

    /// Sets the Reflector's other options (name, page size, list mode, backoff)
    /// before `run`.
    pub fn set_reflector_options(
        &self,
        options: ReflectorOptions,
    ) -> Result<(), InformerError> {
        let mut state = self.inner.state.lock();
        if state.started {
            return Err(InformerError::AlreadyStarted {
                what: "reflector options",
            });
        }
        state.reflector_options = options;
        Ok(())
    }

    /// Mirrors `AddIndexers`: more indexes. Like client-go since 1.30 this works on
    /// a running informer too: the indexer indexes what it already holds under
    /// its own lock.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), InformerError> {
        self.inner.indexer.add_indexers(indexers)?;
        Ok(())
    }

    /// Mirrors `GetStore` and `GetIndexer`: the cache. Read from it; do not write to
    /// it.
    pub fn get_indexer(&self) -> Arc<Cache<K>> {
        Arc::clone(&self.inner.indexer)
    }

    /// Mirrors `GetStore`.
    pub fn get_store(&self) -> Arc<Cache<K>> {
        self.get_indexer()
    }

    /// Mirrors `HasSynced`: the first list has been popped and applied.
    pub fn has_synced(&self) -> bool {
        self.inner.has_synced()
    }

    /// Mirrors `LastSyncResourceVersion`.
    pub fn last_sync_resource_version(&self) -> String {
        let state = self.inner.state.lock();
        state
            .controller
            .as_ref()
            .map(|c| c.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// Mirrors `IsStopped`.
    pub fn is_stopped(&self) -> bool {
        self.inner.state.lock().stopped
    }

    /// Mirrors `HasStarted`.
    pub fn has_started(&self) -> bool {
        self.inner.state.lock().started
    }

    /// The queue depth of every handler, for metrics and tests.
    pub fn listener_stats(&self) -> Vec<ListenerStats> {
        self.inner.processor.listener_stats()
    }

    /// The number of registered handlers.
    pub fn handler_count(&self) -> usize {
        self.inner.processor.len()
    }

    // ANCHOR: run
    /// Mirrors `sharedIndexInformer.Run`: builds the queue (known objects = the
    /// indexer), the controller and its Reflector, starts the processor, and
    /// runs until `shutdown`. The processor stops strictly after the controller;
    /// when this returns, no task of the informer is left running. A second call
    /// returns at once.
    pub async fn run(&self, shutdown: CancellationToken) {
        let Some(controller) = self.start() else {
            tracing::warn!(
                "the shared informer has started already; \
                 run more than once is not allowed"
            );
            return;
        };
        let processor_shutdown = CancellationToken::new();
        let controller_then_stop = async {
            controller.run(shutdown).await;
            self.inner.state.lock().stopped = true;
            processor_shutdown.cancel();
        };
        tokio::join!(
            self.inner.processor.run(processor_shutdown.clone()),
            controller_then_stop
        );
    }
    // ANCHOR_END: run

    // ANCHOR: start
    /// The part of `Run` under `startedLock`: builds the controller once.
    fn start(&self) -> Option<Arc<Controller<K, L, InformerQueue<K>>>> {
        let mut state = self.inner.state.lock();
        if state.started {
            return None;
        }
        let lister_watcher = state.lister_watcher.take()?;
        let key_func: KeyFunc<K> = Arc::new(meta_namespace_key_func::<K>);
        let known: stage2_deltafifo::KnownObjects<K> = self.inner.indexer.clone();
        let queue = match state.queue_kind {
            QueueKind::DeltaFifo => {
                let mut options = DeltaFifoOptions::new(key_func)
                    .known_objects(known)
                    .emit_delta_type_replaced(true);
                options.transformer = state.transform.clone();
                InformerQueue::DeltaFifo(DeltaFifo::new(options))
            }
            QueueKind::RealFifo => {
                let mut options = RealFifoOptions::non_atomic(key_func, known);
                options.transformer = state.transform.clone();
                InformerQueue::RealFifo(RealFifo::new(options))
            }
        };
        let weak = Arc::downgrade(&self.inner);
        let process = Arc::new(
            move |deltas: Deltas<K>, initial: bool| -> Result<(), BoxError> {
                match weak.upgrade() {
                    Some(inner) => Ok(inner.handle_deltas(deltas, initial)?),
                    None => Ok(()),
                }
            },
        );
        let weak = Arc::downgrade(&self.inner);
        let should_resync = Arc::new(move || {
            weak.upgrade().is_some_and(|i| i.processor.should_resync())
        });
        let controller = Arc::new(Controller::new(Config {
            queue: Arc::new(queue),
            lister_watcher,
            process,
            full_resync_period: state.resync_check_period,
            should_resync: Some(should_resync),
            watch_error_handler: state.watch_error_handler.clone(),
            reflector_options: state.reflector_options.clone(),
        }));
        state.controller = Some(Arc::clone(&controller));
        state.started = true;
        Some(controller)
    }
    // ANCHOR_END: start
}

impl<K, L> Inner<K, L>
where
    K: Resource + Send + Sync + 'static,
    K::DynamicType: Default,
    L: ListerWatcher<K> + 'static,
{
    // ANCHOR: has_synced
    fn has_synced(&self) -> bool {
        self.state
            .lock()
            .controller
            .as_ref()
            .is_some_and(|c| c.has_synced())
    }
    // ANCHOR_END: has_synced

    // ANCHOR: handle_deltas
    /// Mirrors `HandleDeltas`: applies one popped item to the indexer and notifies,
    /// under the block-deltas lock.
    fn handle_deltas(
        &self,
        deltas: Deltas<K>,
        is_in_initial_list: bool,
    ) -> Result<(), StoreError> {
        let _block = self.block_deltas.lock();
        self.page
            .popped(|| popped_view(&deltas, is_in_initial_list));
        process_deltas(self, &self.indexer, deltas, is_in_initial_list)
    }
    // ANCHOR_END: handle_deltas
}

// ANCHOR: on_update
/// The informer is itself the handler `process_deltas` reports to (client-go's
/// `sharedIndexInformer.OnAdd/OnUpdate/OnDelete`); it turns each call into a
/// notification for the processor. These run under `block_deltas`.
impl<K, L> ResourceEventHandler<K> for Inner<K, L>
where
    K: Resource + Send + Sync + 'static,
    L: Send + Sync + 'static,
{
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        let notification = Notification::Add {
            new: Arc::clone(obj),
            is_in_initial_list,
        };
        self.processor.distribute(&notification, false);
    }

    /// An update whose resourceVersion did not change is a resync (or a relist that
    /// found the object unchanged): it goes only to the listeners that are
    /// syncing now.
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let is_sync = old.meta().resource_version == new.meta().resource_version;
        let notification = Notification::Update {
            old: Arc::clone(old),
            new: Arc::clone(new),
        };
        self.processor.distribute(&notification, is_sync);
    }

    fn on_delete(&self, obj: &DeletedObject<K>) {
        let notification = Notification::Delete { old: obj.clone() };
        self.processor.distribute(&notification, false);
    }
}
// ANCHOR_END: on_update

/// The live page's view of an informer (`debug_ui`).
impl<K, L> Inspect for SharedIndexInformer<K, L>
where
    K: Resource + Send + Sync + 'static,
    K::DynamicType: Default,
    L: ListerWatcher<K> + 'static,
{
    fn view(&self, name: &str) -> InformerView {
        let controller = self.inner.state.lock().controller.clone();
        let (phase, last_sync_resource_version, queue) = match &controller {
            Some(c) => (
                phase_name(c.phase()),
                c.last_sync_resource_version(),
                queue_view(c.queue()),
            ),
            None => ("idle", String::new(), QueueView::default()),
        };
        InformerView {
            name: name.to_string(),
            phase,
            last_sync_resource_version,
            has_synced: self.has_synced(),
            queue,
            indexer: indexer_view(&self.inner.indexer),
            listeners: self
                .listener_stats()
                .into_iter()
                .map(|l| ListenerView {
                    id: l.id,
                    pending: l.pending,
                    high_water_mark: l.high_water_mark,
                    resync_period_secs: l.resync_period.as_secs_f64(),
                    is_syncing: l.is_syncing,
                    resync_due: l.resync_due,
                })
                .collect(),
            recent: self.inner.page.recent(),
        }
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.inner.page.subscribe()
    }
}
