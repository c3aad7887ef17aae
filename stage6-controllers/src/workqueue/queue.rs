//! [`Queue`]: the work queue itself, client-go's `Typed[T]`.
//!
//! Mirrors
//! [queue.go](https://github.com/kubernetes/client-go/blob/v0.36.0/util/workqueue/queue.go).
//! Handlers [`add`](Queue::add) keys; workers [`get`](Queue::get) one, work on it,
//! and call [`done`](Queue::done). Three rules make the queue *stingy*:
//!
//! 1. a key added twice while it waits is queued once;
//! 2. a key is never handed to two workers at once: while one processes it, it is
//!    not handed out again;
//! 3. a key added while it is processed is marked dirty, and queued again when its
//!    worker calls `done`, so the change that came in meanwhile is not lost.
//!
//! Go keeps two sets for this, `dirty` (needs processing) and `processing` (a
//! worker has it), next to the FIFO. Here one map holds each known key's
//! `ItemState`, and a count stands for `processing.Len()`:
//!
//! | state here         | in `dirty` | in `processing` | in the FIFO |
//! |--------------------|------------|-----------------|-------------|
//! | (absent)           | no         | no              | no          |
//! | `Waiting`          | yes        | no              | yes         |
//! | `Processing`       | no         | yes             | no          |
//! | `ProcessingDirty`  | yes        | yes             | no          |
//!
//! One lookup per call instead of Go's two or three, with the same answers.
//!
//! ## Waiting without polling
//!
//! Go's `sync.Cond` becomes two [`Notify`]s: `item_ready` (Go's `Signal` in `Add`
//! and `Done`, `Broadcast` in `ShutDown`) wakes workers blocked in `get`, and
//! `drained` wakes `shut_down_with_drain` when the last processed item is done. A
//! waiter registers with its `Notify` while it still holds the lock, so no wake-up
//! falls between its check and its wait.
//!
//! ## Memory usage
//!
//! Each key waiting or being processed is stored twice (the map and the FIFO hold a
//! clone each), and is forgotten the moment it is done and clean: the queue keeps
//! nothing for keys it has finished with (client-go's `TestGarbageCollection`).

use std::collections::VecDeque;
use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use hashbrown::HashMap;
use hashbrown::hash_map::EntryRef;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use super::metrics::{MetricsProvider, QueueMetrics};

/// What a queue's items must be: mirrors the `T comparable` constraint of
/// client-go's typed queues (`TypedInterface[T]`), plus what sharing them between
/// tasks needs. Implemented for every such type; a controller's key is usually a
/// `String` ("namespace/name") or an `Arc<str>`.
pub trait Item: Clone + Eq + Hash + Send + Sync + 'static {}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> Item for T {}

/// Mirrors client-go's `Queue[T]` interface: the order in which waiting items are
/// handed out (the default is a FIFO, [`DefaultQueue`]).
///
/// Go calls it `Queue`; here that name is the work queue itself. Its methods are
/// called with the work queue's lock held, so from one task at a time, and only
/// with items the work queue has decided to queue: an item is pushed at most once
/// until it is popped.
pub trait QueueStorage<T>: Send {
    /// Mirrors `Queue.Touch`: `item`, already waiting, was added again. A priority
    /// queue could move it; the FIFO does nothing.
    fn touch(&mut self, item: &T);
    /// Mirrors `Queue.Push`: adds a new item.
    fn push(&mut self, item: T);
    /// Mirrors `Queue.Len`: the number of waiting items.
    fn len(&self) -> usize;
    /// Whether no item waits.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Mirrors `Queue.Pop`: takes the next item (Go's panics when empty; this
    /// returns `None`, and the work queue never calls it then).
    fn pop(&mut self) -> Option<T>;
}

/// Mirrors client-go's `DefaultQueue` (the slice-based `queue[T]`): first in,
/// first out.
pub struct DefaultQueue<T> {
    items: VecDeque<T>,
}

impl<T> Default for DefaultQueue<T> {
    fn default() -> Self {
        DefaultQueue {
            items: VecDeque::new(),
        }
    }
}

impl<T> fmt::Debug for DefaultQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefaultQueue")
            .field("len", &self.items.len())
            .finish()
    }
}

impl<T: Send> QueueStorage<T> for DefaultQueue<T> {
    /// Mirrors `queue.Touch`: nothing to do in a FIFO.
    fn touch(&mut self, _item: &T) {}

    /// Mirrors `queue.Push`.
    fn push(&mut self, item: T) {
        self.items.push_back(item);
    }

    /// Mirrors `queue.Len`.
    fn len(&self) -> usize {
        self.items.len()
    }

    /// Mirrors `queue.Pop`.
    fn pop(&mut self) -> Option<T> {
        self.items.pop_front()
    }
}

/// Mirrors client-go's `TypedQueueConfig[T]`: how to build a [`Queue`].
///
/// Go's `Clock` has no counterpart: time is tokio's clock, paused in tests.
#[must_use]
pub struct QueueConfig<T> {
    /// The queue's name. Mirrors `Name`: an unnamed queue reports no metrics.
    pub name: String,
    /// Mirrors `MetricsProvider`: where the metrics go; `None` uses the one given
    /// to [`set_provider`](super::set_provider), if any.
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
    /// Mirrors `Queue`: the order of waiting items; `None` is a FIFO.
    pub queue: Option<Box<dyn QueueStorage<T>>>,
}

impl<T> Default for QueueConfig<T> {
    fn default() -> Self {
        QueueConfig {
            name: String::new(),
            metrics_provider: None,
            queue: None,
        }
    }
}

impl<T> fmt::Debug for QueueConfig<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .field("queue", &self.queue.is_some())
            .finish()
    }
}

impl<T> QueueConfig<T> {
    /// Names the queue (its metrics carry the name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Reports the metrics to `provider` instead of the global one.
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    /// Orders waiting items with `queue` instead of a FIFO.
    pub fn queue(mut self, queue: Box<dyn QueueStorage<T>>) -> Self {
        self.queue = Some(queue);
        self
    }
}

/// The queue's storage: the FIFO inline (the common case, one pointer less to
/// follow on every call), or the one a config brings.
pub(crate) enum Storage<T> {
    /// Mirrors `DefaultQueue`.
    Fifo(DefaultQueue<T>),
    /// A `TypedQueueConfig.Queue`.
    Custom(Box<dyn QueueStorage<T>>),
}

impl<T> Default for Storage<T> {
    fn default() -> Self {
        Storage::Fifo(DefaultQueue::default())
    }
}

impl<T> Storage<T> {
    fn touch(&mut self, item: &T) {
        match self {
            Storage::Fifo(_) => {}
            Storage::Custom(queue) => queue.touch(item),
        }
    }

    fn push(&mut self, item: T) {
        match self {
            Storage::Fifo(fifo) => fifo.items.push_back(item),
            Storage::Custom(queue) => queue.push(item),
        }
    }

    fn len(&self) -> usize {
        match self {
            Storage::Fifo(fifo) => fifo.items.len(),
            Storage::Custom(queue) => queue.len(),
        }
    }

    fn pop(&mut self) -> Option<T> {
        match self {
            Storage::Fifo(fifo) => fifo.items.pop_front(),
            Storage::Custom(queue) => {
                if queue.is_empty() {
                    None
                } else {
                    queue.pop()
                }
            }
        }
    }
}

/// Mirrors `defaultUnfinishedWorkUpdatePeriod`: how often a queue with metrics
/// refreshes its unfinished-work gauges.
pub(crate) const DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD: Duration =
    Duration::from_millis(500);

// ANCHOR: state
/// Where a key the queue knows stands: Go's `dirty` and `processing` sets in one
/// (see the table in the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemState {
    /// In the FIFO, waiting for a worker (dirty, not processing).
    Waiting,
    /// A worker has it (processing, not dirty).
    Processing,
    /// A worker has it and it was added again meanwhile (processing and dirty):
    /// `done` queues it again.
    ProcessingDirty,
}

/// Everything the lock guards: the fields of Go's `Typed[T]` under `cond.L`.
struct State<T> {
    /// Mirrors `queue`: the waiting items, each `Waiting` in `items`.
    queue: Storage<T>,
    /// Mirrors `dirty` and `processing`.
    items: HashMap<T, ItemState>,
    /// Mirrors `processing.Len()`: the items in a `Processing*` state.
    processing: usize,
    /// Mirrors `shuttingDown`.
    shutting_down: bool,
    /// Mirrors `drain`: `shut_down_with_drain` waits while this holds.
    drain: bool,
    /// The workers registered to be woken in `get` (Go's `cond` knows its
    /// waiters; here an `add` with nobody waiting skips the wake-up).
    waiters: usize,
    /// Mirrors `metrics` (Go's `defaultQueueMetrics` expects the caller to hold
    /// the lock, as here).
    metrics: QueueMetrics<T>,
}
// ANCHOR_END: state

impl<T: Item> State<T> {
    /// The pop half of Go's `Get`: the next waiting item, now processing.
    fn pop_for_processing(&mut self) -> Option<T> {
        let item = self.queue.pop()?;
        self.metrics.get(&item);
        match self.items.get_mut(&item) {
            Some(state @ ItemState::Waiting) => {
                *state = ItemState::Processing;
                self.processing += 1;
            }
            // Only a storage that hands out what it was not given gets here.
            Some(state) => *state = ItemState::Processing,
            None => {
                self.items.insert(item.clone(), ItemState::Processing);
                self.processing += 1;
            }
        }
        Some(item)
    }
}

/// What the handles share.
struct Shared<T> {
    state: Mutex<State<T>>,
    /// Wakes workers waiting in `get` (Go's `cond.Signal`/`Broadcast`).
    item_ready: Notify,
    /// Wakes `shut_down_with_drain` when nothing is processing any more.
    drained: Notify,
    /// Mirrors the goroutine of `updateUnfinishedWorkLoop` (and `stopCh`): only
    /// for a queue with metrics, stopped by `shut_down` or the last handle's drop.
    unfinished_work_loop: Mutex<Option<JoinHandle<()>>>,
}

impl<T> Shared<T> {
    fn stop_unfinished_work_loop(&self) {
        if let Some(task) = self.unfinished_work_loop.lock().take() {
            task.abort();
        }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        self.stop_unfinished_work_loop();
    }
}

/// A `get` counted among the waiters: dropping it (the future cancelled while
/// it waits) takes it out of the count.
struct Waiting<'a, T> {
    shared: &'a Shared<T>,
    counted: bool,
}

impl<T> Drop for Waiting<'_, T> {
    fn drop(&mut self) {
        if self.counted {
            self.shared.state.lock().waiters -= 1;
        }
    }
}

/// Mirrors client-go's `Typed[T]` (`TypedInterface[T]`): a work queue. See the
/// module docs for its rules.
///
/// A cheap handle: clones share one queue, so the informer's handlers (which add)
/// and the workers (which get and finish) each hold one.
pub struct Queue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("len", &state.queue.len())
            .field("processing", &state.processing)
            .field("shutting_down", &state.shutting_down)
            .finish_non_exhaustive()
    }
}

impl<T: Item> Default for Queue<T> {
    fn default() -> Self {
        Queue::new()
    }
}

/// How many scheduler rounds [`Queue::get`] waits for an item before it
/// registers as a waiter.
const SPINS_BEFORE_WAITING: usize = 2;

impl<T: Item> Queue<T> {
    /// Mirrors client-go's `NewTyped`: an unnamed FIFO work queue, without metrics.
    pub fn new() -> Self {
        Queue::with_config(QueueConfig::default())
    }

    /// Mirrors client-go's `NewTypedWithConfig`.
    ///
    /// # Panics
    ///
    /// A named queue with a metrics provider starts its unfinished-work task with
    /// `tokio::spawn`, so it must be built inside a tokio runtime.
    pub fn with_config(config: QueueConfig<T>) -> Self {
        Queue::with_update_period(config, DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD)
    }

    /// Mirrors `newQueueWithConfig` and `newQueue`: the tests shorten the period.
    pub(crate) fn with_update_period(
        config: QueueConfig<T>,
        update_period: Duration,
    ) -> Self {
        let metrics =
            QueueMetrics::new(config.metrics_provider.as_ref(), &config.name);
        Queue::from_parts(
            config.queue.map_or_else(Storage::default, Storage::Custom),
            metrics,
            update_period,
        )
    }

    /// Mirrors `newQueue`: the queue over its storage and metrics, with the
    /// unfinished-work task when there are metrics to update.
    pub(crate) fn from_parts(
        queue: Storage<T>,
        metrics: QueueMetrics<T>,
        update_period: Duration,
    ) -> Self {
        let with_metrics = metrics.is_enabled();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue,
                items: HashMap::new(),
                processing: 0,
                shutting_down: false,
                drain: false,
                waiters: 0,
                metrics,
            }),
            item_ready: Notify::new(),
            drained: Notify::new(),
            unfinished_work_loop: Mutex::new(None),
        });
        // Go starts no goroutine for `noMetrics`, so that an unnamed queue costs
        // nothing; neither does this.
        if with_metrics {
            // The period counts from now, as Go's ticker from `newQueue`.
            let task = tokio::spawn(update_unfinished_work_loop(
                Arc::downgrade(&shared),
                Instant::now() + update_period,
                update_period,
            ));
            *shared.unfinished_work_loop.lock() = Some(task);
        }
        Queue { shared }
    }

    // ANCHOR: add
    /// Mirrors client-go's `Typed.Add`: marks `item` as needing processing.
    ///
    /// A waiting item is not queued twice (the storage is `touch`ed instead); an
    /// item being processed is only marked dirty, and queued again by
    /// [`done`](Queue::done). Once the queue is shutting down, new items are
    /// silently dropped.
    pub fn add(&self, item: T) {
        // ANCHOR: ex6-queue-add
        use hashbrown::hash_map::Entry;

        let mut guard = self.shared.state.lock();
        let state = &mut *guard;
        if state.shutting_down {
            return;
        }
        match state.items.entry(item) {
            Entry::Occupied(mut known) => match *known.get() {
                // Dirty already: waiting (let the storage reorder it), or queued
                // again when its worker is done.
                ItemState::Waiting => state.queue.touch(known.key()),
                ItemState::ProcessingDirty => {}
                // A worker has it: mark it dirty; `done` queues it again.
                ItemState::Processing => {
                    state.metrics.add(known.key());
                    known.insert(ItemState::ProcessingDirty);
                }
            },
            Entry::Vacant(new) => {
                let item = new.key().clone();
                new.insert(ItemState::Waiting);
                state.metrics.add(&item);
                state.queue.push(item);
                let wake = state.waiters > 0;
                drop(guard);
                if wake {
                    self.shared.item_ready.notify_one();
                }
            }
        }
        // ANCHOR_END: ex6-queue-add
    }
    // ANCHOR_END: add

    /// Mirrors client-go's `Typed.Len`: the number of items waiting (not those
    /// being processed). For information only: gating `add` or `get` on it races.
    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Whether no item is waiting (see [`len`](Queue::len)).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // ANCHOR: get
    /// Mirrors client-go's `Typed.Get`: waits for an item and hands it to the
    /// caller, who must call [`done`](Queue::done) with it when finished.
    ///
    /// Returns `None` (Go's `shutdown == true`) once the queue is shutting down
    /// and no item waits: the worker should stop. Items still waiting when the
    /// queue shuts down are handed out first, as in Go.
    ///
    /// Cancel-safe: dropping the future before it completes takes nothing out of
    /// the queue.
    pub async fn get(&self) -> Option<T> {
        // The common case, an item waiting: no wake-up to register.
        if let Some(item) = self.shared.state.lock().pop_for_processing() {
            return Some(item);
        }
        // A busy producer often adds within a scheduler round: give it a few
        // rounds before parking, which costs the adder a wake-up (Go's
        // scheduler spins before it parks a goroutine, to the same end).
        for _ in 0..SPINS_BEFORE_WAITING {
            tokio::task::yield_now().await;
            let mut state = self.shared.state.lock();
            if let Some(item) = state.pop_for_processing() {
                return Some(item);
            }
            if state.shutting_down {
                return None;
            }
        }
        let mut waiting = Waiting {
            shared: &self.shared,
            counted: false,
        };
        loop {
            let mut notified = pin!(self.shared.item_ready.notified());
            {
                let mut state = self.shared.state.lock();
                if waiting.counted {
                    state.waiters -= 1;
                    waiting.counted = false;
                }
                if let Some(item) = state.pop_for_processing() {
                    return Some(item);
                }
                if state.shutting_down {
                    return None;
                }
                // Registered before the lock is released: an `add` after this
                // point sees the count and wakes this worker (or another
                // waiting one).
                notified.as_mut().enable();
                state.waiters += 1;
                waiting.counted = true;
            }
            notified.await;
        }
    }
    // ANCHOR_END: get

    // ANCHOR: done
    /// Mirrors client-go's `Typed.Done`: `item` is processed. If it was added
    /// again meanwhile, it is queued again now.
    ///
    /// Calling it for an item that is not being processed does nothing (Go would
    /// queue a waiting item a second time).
    pub fn done(&self, item: &T) {
        let mut guard = self.shared.state.lock();
        let state = &mut *guard;
        state.metrics.done(item);
        let EntryRef::Occupied(mut known) = state.items.entry_ref(item) else {
            return;
        };
        let requeued = match *known.get() {
            // Added again while processed: back in the queue.
            ItemState::ProcessingDirty => {
                known.insert(ItemState::Waiting);
                state.queue.push(item.clone());
                true
            }
            // Clean: forget it.
            ItemState::Processing => {
                known.remove();
                false
            }
            ItemState::Waiting => return,
        };
        state.processing -= 1;
        // Only a draining shut-down waits for this.
        let drained = state.processing == 0 && state.drain;
        let wake = requeued && state.waiters > 0;
        drop(guard);
        if wake {
            self.shared.item_ready.notify_one();
        }
        if drained {
            self.shared.drained.notify_waiters();
        }
    }
    // ANCHOR_END: done

    // ANCHOR: shut_down
    /// Mirrors client-go's `Typed.ShutDown`: new items are ignored from now on;
    /// workers get the items still waiting, then `None`. Stops a
    /// [`shut_down_with_drain`](Queue::shut_down_with_drain) that is waiting.
    pub fn shut_down(&self) {
        self.shared.stop_unfinished_work_loop();
        {
            let mut state = self.shared.state.lock();
            state.drain = false;
            state.shutting_down = true;
        }
        self.shared.item_ready.notify_waiters();
        self.shared.drained.notify_waiters();
    }

    /// Mirrors client-go's `Typed.ShutDownWithDrain`: shuts down as
    /// [`shut_down`](Queue::shut_down), then waits until every item being
    /// processed is done. Workers must call `done` for each item, or this waits
    /// until a `shut_down` ends the wait.
    ///
    /// As in Go it waits for the items being processed, not for the items still
    /// waiting in the queue (a dirty item that `done` queues again is handed out
    /// after this returns).
    pub async fn shut_down_with_drain(&self) {
        self.shared.stop_unfinished_work_loop();
        {
            let mut state = self.shared.state.lock();
            state.drain = true;
            state.shutting_down = true;
        }
        self.shared.item_ready.notify_waiters();
        loop {
            let mut notified = pin!(self.shared.drained.notified());
            {
                let state = self.shared.state.lock();
                if state.processing == 0 || !state.drain {
                    return;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    // ANCHOR_END: shut_down

    /// Mirrors client-go's `Typed.ShuttingDown`.
    pub fn shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }

    /// Whether the unfinished-work task has stopped (or never started).
    #[cfg(test)]
    pub(crate) fn background_task_stopped(&self) -> bool {
        self.shared
            .unfinished_work_loop
            .lock()
            .as_ref()
            .is_none_or(JoinHandle::is_finished)
    }
}

impl<T: Item> Shared<T> {
    /// Mirrors `Typed.updateUnfinishedWork`.
    fn update_unfinished_work(&self) {
        let state = self.state.lock();
        if !state.shutting_down {
            state.metrics.update_unfinished_work();
        }
    }
}

/// Mirrors `Typed.updateUnfinishedWorkLoop`: refreshes the unfinished-work gauges
/// every `period` from `first` until the queue shuts down (the task is aborted)
/// or its last handle is dropped (it holds the queue weakly, so that it keeps
/// nothing alive).
async fn update_unfinished_work_loop<T: Item>(
    shared: Weak<Shared<T>>,
    first: Instant,
    period: Duration,
) {
    let mut ticker = tokio::time::interval_at(first, period);
    // A Go ticker drops the ticks a slow reader misses.
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        ticker.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.update_unfinished_work();
    }
}

#[cfg(test)]
mod tests {
    //! client-go's queue_test.go, test by test.

    use std::collections::HashSet;
    use std::sync::Arc;
    use std::time::Duration;

    use parking_lot::Mutex;
    use tokio::task::JoinSet;
    use tokio::time::timeout;

    use super::*;

    /// How long a test waits for something that should happen at once, in
    /// (paused) tokio time: past it the test fails instead of hanging.
    const PATIENCE: Duration = Duration::from_secs(30);

    /// Lets the other tasks of the current-thread runtime run, without moving
    /// the paused clock.
    async fn let_others_run() {
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
    }

    /// Runs a producers-and-consumers scenario against `queue`, then shuts it down
    /// with `drain` or not. Shared by `test_basic` and `test_add_while_processing`.
    async fn producers_and_consumers(
        queue: Queue<String>,
        drain: bool,
        adds_per_producer: usize,
        pause_between_adds: Duration,
        requeue_once: bool,
        work: Duration,
    ) {
        const PRODUCERS: usize = 50;
        const CONSUMERS: usize = 10;
        let mut producers = JoinSet::new();
        for i in 0..PRODUCERS {
            let queue = queue.clone();
            producers.spawn(async move {
                for _ in 0..adds_per_producer {
                    queue.add(i.to_string());
                    if !pause_between_adds.is_zero() {
                        tokio::time::sleep(pause_between_adds).await;
                    }
                }
            });
        }
        let mut consumers = JoinSet::new();
        for _ in 0..CONSUMERS {
            let queue = queue.clone();
            consumers.spawn(async move {
                let mut counters = std::collections::HashMap::<String, usize>::new();
                while let Some(item) = queue.get().await {
                    assert_ne!(
                        item, "added after shutdown!",
                        "got an item added after shutdown"
                    );
                    if requeue_once {
                        let count = counters.entry(item.clone()).or_default();
                        *count += 1;
                        if *count < 2 {
                            queue.add(item.clone());
                        }
                    }
                    if !work.is_zero() {
                        tokio::time::sleep(work).await;
                    }
                    queue.done(&item);
                }
            });
        }
        timeout(PATIENCE, async {
            while let Some(done) = producers.join_next().await {
                done.expect("a producer panicked");
            }
        })
        .await
        .expect("the producers finish");
        if drain {
            timeout(PATIENCE, queue.shut_down_with_drain())
                .await
                .expect("the drain ends");
        } else {
            queue.shut_down();
        }
        queue.add("added after shutdown!".to_string());
        timeout(PATIENCE, async {
            while let Some(done) = consumers.join_next().await {
                done.expect("a consumer panicked");
            }
        })
        .await
        .expect("the consumers finish");
        assert_eq!(queue.len(), 0, "the queue should be empty");
    }

    /// A worker that stops waiting (its `get` dropped) leaves the waiter count,
    /// and workers that wait are each woken by an add.
    #[tokio::test(start_paused = true)]
    async fn a_cancelled_get_is_no_longer_a_waiter() {
        use std::future::Future as _;
        use std::task::Context;
        let q: Queue<&str> = Queue::new();
        let mut waiting = Box::pin(q.get());
        let waker = futures::task::noop_waker();
        // A few polls: `get` yields for a scheduler round or two first.
        for _ in 0..=SPINS_BEFORE_WAITING {
            assert!(
                waiting
                    .as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_pending()
            );
        }
        assert_eq!(q.shared.state.lock().waiters, 1);
        drop(waiting);
        assert_eq!(q.shared.state.lock().waiters, 0);

        let (a, b) = (q.clone(), q.clone());
        let first = tokio::spawn(async move { a.get().await });
        let second = tokio::spawn(async move { b.get().await });
        for _ in 0..=SPINS_BEFORE_WAITING + 1 {
            tokio::task::yield_now().await;
        }
        assert_eq!(q.shared.state.lock().waiters, 2);
        q.add("x");
        q.add("y");
        let mut got = [first.await.expect("worker"), second.await.expect("worker")];
        got.sort();
        assert_eq!(got, [Some("x"), Some("y")]);
        assert_eq!(q.shared.state.lock().waiters, 0);
    }

    /// client-go's `traceQueue`: a FIFO that records which items were touched.
    struct TraceQueue {
        queue: DefaultQueue<&'static str>,
        touched: Arc<Mutex<HashSet<&'static str>>>,
    }

    impl QueueStorage<&'static str> for TraceQueue {
        fn touch(&mut self, item: &&'static str) {
            self.queue.touch(item);
            self.touched.lock().insert(item);
        }
        fn push(&mut self, item: &'static str) {
            self.queue.push(item);
        }
        fn len(&self) -> usize {
            self.queue.len()
        }
        fn pop(&mut self) -> Option<&'static str> {
            self.queue.pop()
        }
    }

    fn traced_queue() -> (Queue<&'static str>, Arc<Mutex<HashSet<&'static str>>>) {
        let touched = Arc::new(Mutex::new(HashSet::new()));
        let q =
            Queue::with_config(QueueConfig::default().queue(Box::new(TraceQueue {
                queue: DefaultQueue::default(),
                touched: Arc::clone(&touched),
            })));
        (q, touched)
    }

    /// TestQueueDrainageUsingShutDownWithDrain: the drain waits until both items
    /// being processed are done.
    #[tokio::test(start_paused = true)]
    async fn test_queue_drainage_using_shut_down_with_drain() {
        let q = Queue::new();
        q.add("foo");
        q.add("bar");
        let first = q.get().await.expect("an item");
        let second = q.get().await.expect("an item");

        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        // Shut down before the items are done: the drain waits for them.
        timeout(PATIENCE, async { while q.get().await.is_some() {} })
            .await
            .expect("get reports the shutdown");
        let_others_run().await;
        assert!(!drain.is_finished(), "the drain waits for the two items");

        q.done(&first);
        q.done(&second);
        timeout(PATIENCE, drain)
            .await
            .expect("the drain ends")
            .expect("no panic");
    }

    /// TestNoQueueDrainageUsingShutDown: `shut_down` returns at once, items in
    /// flight or not.
    #[tokio::test]
    async fn test_no_queue_drainage_using_shut_down() {
        let q = Queue::new();
        q.add("foo");
        q.add("bar");
        let _ = q.get().await;
        let _ = q.get().await;
        // Returns without `done` on either item.
        q.shut_down();
        assert!(q.shutting_down());
    }

    /// TestForceQueueShutdownUsingShutDown: a `shut_down` ends a drain that waits
    /// for items nobody finishes.
    #[tokio::test(start_paused = true)]
    async fn test_force_queue_shutdown_using_shut_down() {
        let q = Queue::new();
        q.add("foo");
        q.add("bar");
        let _ = q.get().await;
        let _ = q.get().await;

        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        timeout(PATIENCE, async { while q.get().await.is_some() {} })
            .await
            .expect("get reports the shutdown");
        // A second SIGTERM, say.
        q.shut_down();
        timeout(PATIENCE, drain)
            .await
            .expect("the drain ends without any done")
            .expect("no panic");
    }

    /// TestQueueDrainageUsingShutDownWithDrainWithDirtyItem: a dirty item that
    /// `done` queues again is still handed out during the drain.
    #[tokio::test(start_paused = true)]
    async fn test_queue_drainage_using_shut_down_with_drain_with_dirty_item() {
        let q = Queue::new();
        q.add("foo");
        let gotten = q.get().await.expect("an item");
        q.add("foo");

        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        // Ensure that the drain has started and waits.
        timeout(PATIENCE, async { while q.get().await.is_some() {} })
            .await
            .expect("get reports the shutdown");

        // Finish "working": `done` puts the dirty item back.
        q.done(&gotten);
        let again = timeout(PATIENCE, q.get())
            .await
            .expect("get answers")
            .expect("should not have been done: the dirty item is back");
        q.done(&again);

        // Now we are really done.
        let last = timeout(PATIENCE, q.get()).await.expect("get answers");
        assert_eq!(last, None, "should have been done");
        timeout(PATIENCE, drain)
            .await
            .expect("the drain ends")
            .expect("no panic");
    }

    /// TestGarbageCollection: once added, handed out and done, an item is no
    /// longer held by the queue.
    #[tokio::test]
    async fn test_garbage_collection() {
        let leak_queue: Queue<Arc<str>> = Queue::new();
        let c: Arc<str> = Arc::from("hello");
        leak_queue.add(Arc::clone(&c));
        let o = leak_queue.get().await.expect("an item");
        leak_queue.done(&o);
        drop(o);
        assert_eq!(Arc::strong_count(&c), 1, "the queue still holds the item");
        drop(leak_queue);
    }

    /// The tests of `add` (exercise `ex6-queue-add`): client-go's cases of the
    /// dirty and processing rules, and the stingy rule under real threads.
    mod ex6_queue_add {
        use super::*;

        /// TestBasic: 50 producers add 50 times each, 10 consumers process; after
        /// `ShutDown` (and after `ShutDownWithDrain`) every consumer ends, nothing
        /// added after the shutdown is handed out, and the queue is empty.
        #[tokio::test(start_paused = true)]
        async fn test_basic() {
            for drain in [false, true] {
                producers_and_consumers(
                    Queue::new(),
                    drain,
                    50,
                    Duration::from_millis(1),
                    false,
                    Duration::from_millis(3),
                )
                .await;
            }
        }

        /// TestAddWhileProcessing: every consumer adds each item back once while
        /// processing it (the dirty-while-processing case).
        #[tokio::test(start_paused = true)]
        async fn test_add_while_processing() {
            for drain in [false, true] {
                producers_and_consumers(
                    Queue::new(),
                    drain,
                    1,
                    Duration::ZERO,
                    true,
                    Duration::ZERO,
                )
                .await;
            }
        }

        /// TestLen: adding a waiting item again does not lengthen the queue.
        #[test]
        fn test_len() {
            let q = Queue::new();
            q.add("foo");
            assert_eq!(q.len(), 1);
            q.add("bar");
            assert_eq!(q.len(), 2);
            q.add("foo"); // should not increase the queue length
            assert_eq!(q.len(), 2);
        }

        /// TestReinsert: an item added while processed is handed out again after
        /// `done`.
        #[tokio::test]
        async fn test_reinsert() {
            let q = Queue::new();
            q.add("foo");
            let i = q.get().await.expect("an item");
            assert_eq!(i, "foo");
            q.add(i); // add it back while processing
            q.done(&i);
            let i = q.get().await.expect("it is back on the queue");
            assert_eq!(i, "foo");
            q.done(&i);
            assert_eq!(q.len(), 0, "expected the queue to be empty");
        }

        /// TestCollapse: an item added twice while waiting is handed out once, and
        /// the storage is touched.
        #[tokio::test]
        async fn test_collapse() {
            let (q, touched) = traced_queue();
            q.add("bar");
            q.add("bar");
            let i = q.get().await.expect("an item");
            assert_eq!(i, "bar");
            q.done(&i);
            assert_eq!(q.len(), 0, "expected the queue to be empty");
            assert!(touched.lock().contains("bar"), "expected bar to be touched");
        }

        /// TestCollapseWhileProcessing: an item added twice while processed is handed
        /// out once more, only after `done`, and the storage is not touched.
        #[tokio::test(start_paused = true)]
        async fn test_collapse_while_processing() {
            let (q, touched) = traced_queue();
            q.add("foo");
            let i = q.get().await.expect("an item");
            assert_eq!(i, "foo");
            q.add("foo");
            q.add("foo");

            // Another worker consuming the queue.
            let worker = tokio::spawn({
                let q = q.clone();
                async move {
                    let i = q.get().await.expect("an item");
                    assert_eq!(i, "foo");
                    q.done(&i);
                }
            });
            let_others_run().await;
            assert!(
                !worker.is_finished(),
                "the worker should be blocked until we are done"
            );
            q.done(&"foo");
            timeout(PATIENCE, worker)
                .await
                .expect("the worker gets the item")
                .expect("the worker did not panic");
            assert_eq!(q.len(), 0, "expected the queue to be empty");
            assert!(!touched.lock().contains("foo"), "unexpected touch");
        }

        /// The stingy rule under real threads: no key is ever processed by two
        /// workers at once, and every add is eventually processed.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn never_processes_a_key_twice_at_once() {
            const KEYS: u32 = 20;
            const ADDS: u32 = 2_000;
            let q: Queue<u32> = Queue::new();
            let in_flight = Arc::new(Mutex::new(HashSet::new()));
            let mut workers = JoinSet::new();
            for _ in 0..4 {
                let q = q.clone();
                let in_flight = Arc::clone(&in_flight);
                workers.spawn(async move {
                    let mut processed = 0u32;
                    while let Some(key) = q.get().await {
                        assert!(
                            in_flight.lock().insert(key),
                            "{key} processed twice"
                        );
                        tokio::task::yield_now().await;
                        assert!(in_flight.lock().remove(&key));
                        q.done(&key);
                        processed += 1;
                    }
                    processed
                });
            }
            for n in 0..ADDS {
                q.add(n % KEYS);
                if n % 64 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            timeout(Duration::from_secs(20), q.shut_down_with_drain())
                .await
                .expect("the drain ends");
            let mut processed = 0;
            while let Some(count) = workers.join_next().await {
                processed += count.expect("a worker panicked");
            }
            assert!(processed >= KEYS, "each key was processed at least once");
            assert!(processed <= ADDS);
            assert_eq!(q.len(), 0);
        }
    }
}
