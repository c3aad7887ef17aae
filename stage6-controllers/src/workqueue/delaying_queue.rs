//! [`DelayingQueue`]: a work queue that can add an item later, client-go's
//! `delayingType`.
//!
//! Mirrors
//! [delaying_queue.go](https://github.com/kubernetes/client-go/blob/v0.36.0/util/workqueue/delaying_queue.go).
//! [`add_after`](DelayingQueue::add_after) hands the item and its ready time to the
//! queue's one waiting-loop task (Go's `waitingForAddCh`; here an inbox under a
//! lock, which the loop empties whenever it is woken). The loop keeps the waiting
//! items in a min-heap on their ready time (`waitForPriorityQueue`), adds each to
//! the work queue when its time comes, and sleeps until the earliest one, or the
//! next arrival, or at most [`MAX_WAIT`].
//!
//! An item already waiting is waiting once: adding it again with an earlier ready
//! time moves it forward, with a later one changes nothing (the private `insert`).
//!
//! ## Recovery
//!
//! The loop is owned by the queue: [`shut_down`](DelayingQueue::shut_down) stops
//! it, and so does dropping the last handle (the loop holds the queue weakly).
//! Items still waiting then are dropped, as in Go: a shut-down queue accepts
//! nothing.

use std::fmt;
use std::future::pending;
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior, sleep_until};

use super::metrics::{MetricsProvider, RetryMetrics};
use super::queue::{Item, Queue, QueueConfig};

/// Mirrors `maxWait`: the longest the loop sleeps before it looks at the heap
/// again, "just insurance against weird things happening".
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// Mirrors client-go's `TypedDelayingQueueConfig[T]`: how to build a
/// [`DelayingQueue`]. (Go's `Logger` and `Clock` have no counterpart: the loop
/// cannot panic, and time is tokio's.)
#[must_use]
pub struct DelayingQueueConfig<T> {
    /// Mirrors `Name`: an unnamed queue reports no metrics.
    pub name: String,
    /// Mirrors `MetricsProvider`; `None` uses the global one.
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
    /// Mirrors `Queue`: the work queue underneath; `None` makes one with the same
    /// name and provider.
    pub queue: Option<Queue<T>>,
}

impl<T> Default for DelayingQueueConfig<T> {
    fn default() -> Self {
        DelayingQueueConfig {
            name: String::new(),
            metrics_provider: None,
            queue: None,
        }
    }
}

impl<T> fmt::Debug for DelayingQueueConfig<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .field("queue", &self.queue.is_some())
            .finish()
    }
}

impl<T> DelayingQueueConfig<T> {
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

    /// Delays into `queue` instead of a new work queue.
    pub fn queue(mut self, queue: Queue<T>) -> Self {
        self.queue = Some(queue);
        self
    }
}

// ANCHOR: wait_for
/// Mirrors `waitFor`: an item and when it is ready.
#[derive(Debug)]
pub(crate) struct WaitFor<T> {
    pub(crate) data: T,
    pub(crate) ready_at: Instant,
    /// Mirrors `index`: the entry's place in the heap.
    index: usize,
}
// ANCHOR_END: wait_for

impl<T> WaitFor<T> {
    pub(crate) fn new(data: T, ready_at: Instant) -> Self {
        WaitFor {
            data,
            ready_at,
            index: 0,
        }
    }
}

/// Mirrors `waitForPriorityQueue` under Go's `container/heap`: a binary min-heap
/// on `ready_at`, the item ready first at the root.
///
/// Go's heap holds `*waitFor` pointers that know their index, so that
/// `waitingEntryByData` can point at an entry and `heap.Fix` can move it. Here the
/// entries live in slots that never move, the heap orders slot numbers, and each
/// entry keeps its heap index: `known` entries are slot numbers.
struct WaitForPriorityQueue<T> {
    /// Slot numbers, in heap order.
    heap: Vec<usize>,
    /// The entries; `None` is a free slot.
    slots: Vec<Option<WaitFor<T>>>,
    /// Free slot numbers.
    free: Vec<usize>,
}

impl<T> WaitForPriorityQueue<T> {
    fn new() -> Self {
        WaitForPriorityQueue {
            heap: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Mirrors `Len` (the loop asks `peek` instead).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.heap.len()
    }

    fn entry(&self, slot: usize) -> &WaitFor<T> {
        self.slots[slot].as_ref().expect("a heap slot is occupied")
    }

    fn entry_mut(&mut self, slot: usize) -> &mut WaitFor<T> {
        self.slots[slot].as_mut().expect("a heap slot is occupied")
    }

    /// Mirrors `Less`.
    fn less(&self, i: usize, j: usize) -> bool {
        self.entry(self.heap[i]).ready_at < self.entry(self.heap[j]).ready_at
    }

    /// Mirrors `Swap`: the entries learn their new indexes.
    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        let (a, b) = (self.heap[i], self.heap[j]);
        self.entry_mut(a).index = i;
        self.entry_mut(b).index = j;
    }

    /// Mirrors `Peek`: the entry ready first.
    fn peek(&self) -> Option<&WaitFor<T>> {
        self.heap.first().map(|&slot| self.entry(slot))
    }

    /// Mirrors `heap.Push`: adds `entry`; returns its slot.
    fn push(&mut self, mut entry: WaitFor<T>) -> usize {
        let index = self.heap.len();
        entry.index = index;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(entry);
                slot
            }
            None => {
                self.slots.push(Some(entry));
                self.slots.len() - 1
            }
        };
        self.heap.push(slot);
        self.up(index);
        slot
    }

    /// Mirrors `heap.Pop`: removes and returns the entry ready first.
    fn pop(&mut self) -> Option<WaitFor<T>> {
        let last = self.heap.len().checked_sub(1)?;
        self.swap(0, last);
        self.down(0, last);
        let slot = self.heap.pop()?;
        self.free.push(slot);
        self.slots[slot].take()
    }

    /// Mirrors `heap.Fix`: the entry at `index` changed its time.
    fn fix(&mut self, index: usize) {
        if !self.down(index, self.heap.len()) {
            self.up(index);
        }
    }

    /// `container/heap`'s `up`.
    fn up(&mut self, mut j: usize) {
        while j > 0 {
            let i = (j - 1) / 2; // parent
            if i == j || !self.less(j, i) {
                break;
            }
            self.swap(i, j);
            j = i;
        }
    }

    /// `container/heap`'s `down`: whether the entry moved.
    fn down(&mut self, i0: usize, n: usize) -> bool {
        let mut i = i0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1; // left child
            let j2 = j1 + 1;
            if j2 < n && self.less(j2, j1) {
                j = j2; // right child
            }
            if !self.less(j, i) {
                break;
            }
            self.swap(i, j);
            i = j;
        }
        i > i0
    }
}

// ANCHOR: insert
/// Mirrors `insert`: puts `entry` in the heap, or, if its item is already
/// waiting, moves that one's ready time forward when `entry` is ready sooner.
fn insert<T: Item>(
    q: &mut WaitForPriorityQueue<T>,
    known_entries: &mut HashMap<T, usize>,
    entry: WaitFor<T>,
) {
    // ANCHOR: ex6-delaying-insert
    // Already waiting: only an earlier time changes anything.
    if let Some(&slot) = known_entries.get(&entry.data) {
        let existing = q.entry_mut(slot);
        if existing.ready_at > entry.ready_at {
            existing.ready_at = entry.ready_at;
            let index = existing.index;
            q.fix(index);
        }
        return;
    }
    let data = entry.data.clone();
    let slot = q.push(entry);
    known_entries.insert(data, slot);
    // ANCHOR_END: ex6-delaying-insert
}
// ANCHOR_END: insert

/// Mirrors `waitingForAddCh`: what `add_after` hands the loop.
struct Inbox<T> {
    entries: Vec<WaitFor<T>>,
    /// Mirrors a closed `stopCh`: the loop is gone, take nothing more.
    stopped: bool,
}

/// What the handles share.
struct Shared<T> {
    /// Mirrors the embedded `TypedInterface[T]`.
    queue: Queue<T>,
    inbox: Mutex<Inbox<T>>,
    /// Wakes the loop when the inbox has something (the loop holds its own `Arc`
    /// of it, so that it waits without keeping the queue alive).
    arrived: Arc<Notify>,
    /// Mirrors `metrics`.
    metrics: RetryMetrics,
    /// The waiting loop (Go's goroutine; aborting it closes `stopCh`).
    waiting_loop: Mutex<Option<JoinHandle<()>>>,
}

impl<T> Shared<T> {
    /// Mirrors closing `stopCh` (and stopping the heartbeat).
    fn stop(&self) {
        {
            let mut inbox = self.inbox.lock();
            inbox.stopped = true;
            inbox.entries.clear();
        }
        if let Some(task) = self.waiting_loop.lock().take() {
            task.abort();
        }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        if let Some(task) = self.waiting_loop.get_mut().take() {
            task.abort();
        }
    }
}

/// Mirrors client-go's `delayingType` (`TypedDelayingInterface[T]`): a [`Queue`]
/// that can also [`add_after`](DelayingQueue::add_after) a delay.
///
/// A cheap handle: clones share one queue and one waiting loop.
pub struct DelayingQueue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("queue", &self.shared.queue)
            .field("arriving", &self.shared.inbox.lock().entries.len())
            .finish_non_exhaustive()
    }
}

impl<T: Item> Default for DelayingQueue<T> {
    fn default() -> Self {
        DelayingQueue::new()
    }
}

impl<T: Item> DelayingQueue<T> {
    /// Mirrors client-go's `NewTypedDelayingQueue`: unnamed, without metrics.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime: the waiting loop is a tokio task.
    pub fn new() -> Self {
        DelayingQueue::with_config(DelayingQueueConfig::default())
    }

    /// Mirrors client-go's `NewTypedDelayingQueueWithConfig`.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime: the waiting loop is a tokio task.
    pub fn with_config(config: DelayingQueueConfig<T>) -> Self {
        let DelayingQueueConfig {
            name,
            metrics_provider,
            queue,
        } = config;
        let queue = queue.unwrap_or_else(|| {
            let mut config = QueueConfig::default().name(name.clone());
            config.metrics_provider = metrics_provider.clone();
            Queue::with_config(config)
        });
        let delaying = DelayingQueue::without_waiting_loop(
            queue,
            RetryMetrics::new(&name, metrics_provider.as_ref()),
        );
        // The heartbeat counts from now, as Go's ticker from `newDelayingQueue`.
        let task = tokio::spawn(waiting_loop(
            Arc::downgrade(&delaying.shared),
            Arc::clone(&delaying.shared.arrived),
            Instant::now() + MAX_WAIT,
        ));
        *delaying.shared.waiting_loop.lock() = Some(task);
        delaying
    }

    /// Mirrors `newDelayingQueue` before its `go ret.waitingLoop(...)`: client-go's
    /// `TestRateLimitingQueue` builds a `delayingType` by hand to read what
    /// arrives instead of a loop, and so do this crate's tests.
    pub(crate) fn without_waiting_loop(
        queue: Queue<T>,
        metrics: RetryMetrics,
    ) -> Self {
        DelayingQueue {
            shared: Arc::new(Shared {
                queue,
                inbox: Mutex::new(Inbox {
                    entries: Vec::new(),
                    stopped: false,
                }),
                arrived: Arc::new(Notify::new()),
                metrics,
                waiting_loop: Mutex::new(None),
            }),
        }
    }

    // ANCHOR: add_after
    /// Mirrors client-go's `delayingType.AddAfter`: adds `item` to the queue once
    /// `duration` has passed; at once for a zero duration. Ignored once the queue
    /// is shutting down.
    pub fn add_after(&self, item: T, duration: Duration) {
        // Don't add if we're already shutting down.
        if self.shared.queue.shutting_down() {
            return;
        }
        self.shared.metrics.retry();
        // Immediately add things with no delay.
        if duration.is_zero() {
            self.shared.queue.add(item);
            return;
        }
        let now = Instant::now();
        // Go's time.Time.Add does not fail; a delay past what an Instant can hold
        // waits "forever" (30 years, tokio's own far future).
        let ready_at = now
            .checked_add(duration)
            .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365 * 30));
        {
            let mut inbox = self.shared.inbox.lock();
            if inbox.stopped {
                return;
            }
            inbox.entries.push(WaitFor::new(item, ready_at));
        }
        self.shared.arrived.notify_one();
    }
    // ANCHOR_END: add_after

    /// Mirrors client-go's `delayingType.ShutDown`: shuts the queue down and stops
    /// the waiting loop. Items still waiting for their time are dropped.
    pub fn shut_down(&self) {
        self.shared.queue.shut_down();
        self.shared.stop();
    }

    /// Mirrors the `ShutDownWithDrain` that `delayingType` inherits: stops the
    /// waiting loop (Go's ends within [`MAX_WAIT`], having nothing left to add),
    /// shuts the queue down and waits for the items being processed.
    pub async fn shut_down_with_drain(&self) {
        self.shared.stop();
        self.shared.queue.shut_down_with_drain().await;
    }

    /// Mirrors [`Queue::add`].
    pub fn add(&self, item: T) {
        self.shared.queue.add(item);
    }

    /// Mirrors [`Queue::len`]: the items ready and waiting for a worker (not those
    /// waiting for their time).
    pub fn len(&self) -> usize {
        self.shared.queue.len()
    }

    /// Whether no item is ready and waiting (see [`len`](DelayingQueue::len)).
    pub fn is_empty(&self) -> bool {
        self.shared.queue.is_empty()
    }

    /// Mirrors [`Queue::get`].
    pub async fn get(&self) -> Option<T> {
        self.shared.queue.get().await
    }

    /// Mirrors [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.shared.queue.done(item);
    }

    /// Mirrors [`Queue::shutting_down`].
    pub fn shutting_down(&self) -> bool {
        self.shared.queue.shutting_down()
    }

    /// Whether `add_after` has handed the loop nothing it has not yet taken:
    /// client-go's tests look at `len(waitingForAddCh)`.
    #[cfg(test)]
    pub(crate) fn inbox_is_empty(&self) -> bool {
        self.shared.inbox.lock().entries.is_empty()
    }

    /// Takes what `add_after` handed over, as client-go's `TestRateLimitingQueue`
    /// reads `waitingForAddCh` of a queue without a loop.
    #[cfg(test)]
    pub(crate) fn take_arrivals(&self) -> Vec<WaitFor<T>> {
        std::mem::take(&mut self.shared.inbox.lock().entries)
    }

    /// Whether the waiting loop has stopped (or never started).
    #[cfg(test)]
    pub(crate) fn waiting_loop_stopped(&self) -> bool {
        self.shared
            .waiting_loop
            .lock()
            .as_ref()
            .is_none_or(JoinHandle::is_finished)
    }
}

// ANCHOR: waiting_loop
/// Mirrors `delayingType.waitingLoop`: runs until the queue shuts down (the task
/// is aborted) or its last handle is dropped, adding each waiting item to the
/// queue when it is ready.
///
/// It holds the queue weakly and only while it works, never across an `await`.
/// The heartbeat first beats at `first_heartbeat`, then every [`MAX_WAIT`].
async fn waiting_loop<T: Item>(
    shared: Weak<Shared<T>>,
    arrived: Arc<Notify>,
    first_heartbeat: Instant,
) {
    let mut waiting_for_queue = WaitForPriorityQueue::new();
    let mut waiting_entry_by_data: HashMap<T, usize> = HashMap::new();
    let mut heartbeat = tokio::time::interval_at(first_heartbeat, MAX_WAIT);
    heartbeat.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut arrivals = Vec::new();
    let mut next_ready_timer = pin!(sleep_until(first_heartbeat));

    loop {
        let next_ready_at = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let queue = &shared.queue;
            if queue.shutting_down() {
                return;
            }

            // Add ready entries.
            let now = Instant::now();
            while let Some(entry) = waiting_for_queue.peek() {
                if entry.ready_at > now {
                    break;
                }
                let Some(entry) = waiting_for_queue.pop() else {
                    break;
                };
                waiting_entry_by_data.remove(&entry.data);
                queue.add(entry.data);
            }

            // What arrived (Go's receive from `waitingForAddCh`, then its drain of
            // the buffered rest).
            std::mem::swap(&mut arrivals, &mut shared.inbox.lock().entries);
            for entry in arrivals.drain(..) {
                if entry.ready_at > Instant::now() {
                    insert(
                        &mut waiting_for_queue,
                        &mut waiting_entry_by_data,
                        entry,
                    );
                } else {
                    queue.add(entry.data);
                }
            }

            // Set up a wait for the first item's ready time (if one exists).
            waiting_for_queue.peek().map(|entry| entry.ready_at)
        };
        if let Some(at) = next_ready_at {
            next_ready_timer.as_mut().reset(at);
        }

        tokio::select! {
            _ = heartbeat.tick() => {
                // Continue the loop, which will add ready items.
            }
            () = async {
                match next_ready_at {
                    Some(_) => next_ready_timer.as_mut().await,
                    None => pending().await,
                }
            } => {
                // Continue the loop, which will add ready items.
            }
            () = arrived.notified() => {
                // Continue the loop, which takes what arrived.
            }
        }
    }
}
// ANCHOR_END: waiting_loop

#[cfg(test)]
mod tests {
    //! client-go's delaying_queue_test.go, plus the heap's own checks.

    use std::time::Duration;

    use tokio::time::{advance, timeout};

    use super::*;

    const PATIENCE: Duration = Duration::from_secs(30);

    /// Mirrors `waitForWaitingQueueToFill`: until the loop has taken everything
    /// `add_after` handed it. Lets the loop run without moving the paused clock,
    /// and gives up after a bounded number of turns.
    async fn wait_for_waiting_queue_to_fill<T: Item>(q: &DelayingQueue<T>) {
        for _ in 0..10_000 {
            if q.inbox_is_empty() {
                // One more turn for the loop to finish with what it took.
                tokio::task::yield_now().await;
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the waiting loop never took its arrivals");
    }

    /// Mirrors `waitForAdded`: until `depth` items are ready, within a bounded
    /// number of turns of the runtime (the paused clock does not move).
    async fn wait_for_added<T: Item>(q: &DelayingQueue<T>, depth: usize) {
        for _ in 0..10_000 {
            if q.len() == depth {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("expected {depth} ready items, have {}", q.len());
    }

    /// Turns of the runtime during which nothing should be added.
    async fn let_loop_run() {
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
    }

    async fn get_now<T: Item>(q: &DelayingQueue<T>) -> T {
        timeout(PATIENCE, q.get())
            .await
            .expect("an item is ready")
            .expect("the queue is not shut down")
    }

    /// Shutting down stops the waiting loop, and `add_after` is ignored after.
    #[tokio::test(start_paused = true)]
    async fn shut_down_stops_the_waiting_loop() {
        let q = DelayingQueue::new();
        q.add_after("foo", Duration::from_secs(1));
        wait_for_waiting_queue_to_fill(&q).await;
        assert!(!q.waiting_loop_stopped());
        q.shut_down();
        let_loop_run().await;
        assert!(q.waiting_loop_stopped());
        q.add_after("bar", Duration::from_secs(1));
        assert!(q.inbox_is_empty());
        assert_eq!(timeout(PATIENCE, q.get()).await.expect("answers"), None);
    }

    /// Dropping the last handle ends the loop too: no task outlives its queue.
    #[tokio::test(start_paused = true)]
    async fn dropping_the_queue_ends_the_waiting_loop() {
        let q: DelayingQueue<&str> = DelayingQueue::new();
        q.add_after("foo", Duration::from_secs(1));
        wait_for_waiting_queue_to_fill(&q).await;
        let task = q.shared.waiting_loop.lock().take().expect("the loop runs");
        drop(q);
        let result = timeout(PATIENCE, task).await.expect("the loop ends");
        assert!(result.is_ok() || result.is_err_and(|e| e.is_cancelled()));
    }

    /// The tests of `insert` (exercise `ex6-delaying-insert`): client-go's cases of
    /// items waiting for their time, and the heap checked against a model.
    mod ex6_delaying_insert {
        use super::*;

        /// TestSimpleQueue: an item added after 50 ms is ready after 60 ms, and only
        /// once, heartbeats or not.
        #[tokio::test(start_paused = true)]
        async fn test_simple_queue() {
            let q = DelayingQueue::new();
            let first = "foo";

            q.add_after(first, Duration::from_millis(50));
            wait_for_waiting_queue_to_fill(&q).await;
            assert_eq!(q.len(), 0, "should not have added");

            advance(Duration::from_millis(60)).await;
            wait_for_added(&q, 1).await;
            let item = get_now(&q).await;
            q.done(&item);

            // Step past the next heartbeat.
            advance(Duration::from_secs(10)).await;
            let_loop_run().await;
            assert_eq!(q.len(), 0, "should not have added");
            q.shut_down();
        }

        /// TestDeduping: the same item added twice waits once, and the earlier ready
        /// time wins whichever comes first.
        #[tokio::test(start_paused = true)]
        async fn test_deduping() {
            let q = DelayingQueue::new();
            let first = "foo";

            q.add_after(first, Duration::from_millis(50));
            wait_for_waiting_queue_to_fill(&q).await;
            q.add_after(first, Duration::from_millis(70));
            wait_for_waiting_queue_to_fill(&q).await;
            assert_eq!(q.len(), 0, "should not have added");

            // Step past the first block, we should receive now.
            advance(Duration::from_millis(60)).await;
            wait_for_added(&q, 1).await;
            let item = get_now(&q).await;
            q.done(&item);

            // Step past the second add.
            advance(Duration::from_millis(20)).await;
            let_loop_run().await;
            assert_eq!(q.len(), 0, "should not have added");

            // Test again, but this time the earlier should override.
            q.add_after(first, Duration::from_millis(50));
            q.add_after(first, Duration::from_millis(30));
            wait_for_waiting_queue_to_fill(&q).await;
            assert_eq!(q.len(), 0, "should not have added");

            advance(Duration::from_millis(40)).await;
            wait_for_added(&q, 1).await;
            let item = get_now(&q).await;
            q.done(&item);

            // Step past the second add.
            advance(Duration::from_millis(20)).await;
            let_loop_run().await;
            assert_eq!(q.len(), 0, "should not have added");
            q.shut_down();
        }

        /// TestAddTwoFireEarly: items come out in the order of their ready times, also
        /// one added after others are waiting.
        #[tokio::test(start_paused = true)]
        async fn test_add_two_fire_early() {
            let q = DelayingQueue::new();
            let (first, second, third) = ("foo", "bar", "baz");

            q.add_after(first, Duration::from_secs(1));
            q.add_after(second, Duration::from_millis(50));
            wait_for_waiting_queue_to_fill(&q).await;
            assert_eq!(q.len(), 0, "should not have added");

            advance(Duration::from_millis(60)).await;
            wait_for_added(&q, 1).await;
            assert_eq!(get_now(&q).await, second);

            q.add_after(third, Duration::from_secs(2));

            advance(Duration::from_secs(1)).await;
            wait_for_added(&q, 1).await;
            assert_eq!(get_now(&q).await, first);

            advance(Duration::from_secs(2)).await;
            wait_for_added(&q, 1).await;
            assert_eq!(get_now(&q).await, third);
            q.shut_down();
        }

        /// TestCopyShifting: three items ready at once come out in the order of their
        /// ready times, not of their adds.
        #[tokio::test(start_paused = true)]
        async fn test_copy_shifting() {
            let q = DelayingQueue::new();
            let (first, second, third) = ("foo", "bar", "baz");

            q.add_after(first, Duration::from_secs(1));
            q.add_after(second, Duration::from_millis(500));
            q.add_after(third, Duration::from_millis(250));
            wait_for_waiting_queue_to_fill(&q).await;
            assert_eq!(q.len(), 0, "should not have added");

            advance(Duration::from_secs(2)).await;
            wait_for_added(&q, 3).await;
            assert_eq!(get_now(&q).await, third);
            assert_eq!(get_now(&q).await, second);
            assert_eq!(get_now(&q).await, first);
            q.shut_down();
        }

        /// The heap hands entries out in time order, and `fix` after an earlier time
        /// keeps it a heap (checked against a sorted model).
        #[test]
        fn heap_pops_in_ready_order_after_fixes() {
            let base = Instant::now();
            let mut heap = WaitForPriorityQueue::new();
            let mut known = HashMap::new();
            // A fixed pseudo-random sequence of (item, delay) with repeats.
            let mut x: u64 = 0x2545_f491_4f6c_dd1d;
            let mut model: std::collections::HashMap<u32, Duration> =
                std::collections::HashMap::new();
            for _ in 0..2_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let item = (x % 300) as u32;
                let delay = Duration::from_millis((x >> 20) % 10_000 + 1);
                insert(&mut heap, &mut known, WaitFor::new(item, base + delay));
                model
                    .entry(item)
                    .and_modify(|d| *d = (*d).min(delay))
                    .or_insert(delay);
            }
            assert_eq!(heap.len(), model.len());
            let mut last = base;
            let mut popped = 0;
            while let Some(entry) = heap.pop() {
                assert!(entry.ready_at >= last, "out of order");
                assert_eq!(base + model[&entry.data], entry.ready_at);
                last = entry.ready_at;
                popped += 1;
            }
            assert_eq!(popped, model.len());
        }
    }
}
