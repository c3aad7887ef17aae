//! The fan-out from one informer to many handlers: the sharedProcessor.
//!
//! Mirrors client-go's `sharedProcessor` (tools/cache/shared_informer.go):
//! `addListener`, `removeListener`, `distribute`, `run`, `shouldResync` and
//! `resyncCheckPeriodChanged`, with the listeners kept, as upstream does now, in a
//! map from listener to "is syncing".
//!
//! # Locking
//! One `parking_lot::RwLock` over the listener map. `distribute` takes it for
//! reading; adding, removing and the resync bookkeeping take it for writing.
//! `distribute` never blocks (a listener's `add` only queues), so the lock is never
//! held across an await.

use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::RwLock;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::handler::Notification;
use crate::listener::ProcessorListener;

// ANCHOR: struct
/// Mirrors `sharedProcessor`.
pub(crate) struct SharedProcessor<K> {
    state: RwLock<ProcessorState<K>>,
    tracker: TaskTracker,
}

struct ProcessorState<K> {
    /// listener id → (listener, whether it is syncing now). Every listener starts
    /// syncing, so it receives the informer's first list even when that list
    /// arrives as `Sync`/`Replaced`.
    listeners: HashMap<u64, (Arc<ProcessorListener<K>>, bool)>,
    /// Whether `run` has started the listeners' tasks (client-go's
    /// `listenersStarted`).
    started: bool,
    /// Whether `run` has finished: nothing can be added any more.
    stopped: bool,
}
// ANCHOR_END: struct

impl<K: Send + Sync + 'static> SharedProcessor<K> {
    pub(crate) fn new() -> Self {
        Self {
            state: RwLock::new(ProcessorState {
                listeners: HashMap::new(),
                started: false,
                stopped: false,
            }),
            tracker: TaskTracker::new(),
        }
    }

    // ANCHOR: add_listener
    /// Mirrors `sharedProcessor.addListener`: registers the listener as syncing, and
    /// starts it at once if the processor is running. Returns false (and closes
    /// the listener) after `run` has ended.
    pub(crate) fn add_listener(&self, listener: Arc<ProcessorListener<K>>) -> bool {
        let mut state = self.state.write();
        if state.stopped {
            listener.close();
            return false;
        }
        if state.started {
            listener.start(&self.tracker);
        }
        state.listeners.insert(listener.id, (listener, true));
        true
    }

    /// Mirrors `sharedProcessor.removeListener`: forgets the listener and closes it.
    /// Removing an unknown or already removed listener is a no-op.
    pub(crate) fn remove_listener(&self, id: u64) {
        let removed = self.state.write().listeners.remove(&id);
        if let Some((listener, _)) = removed {
            listener.close();
        }
    }
    // ANCHOR_END: add_listener

    // ANCHOR: distribute
    /// Mirrors `sharedProcessor.distribute`: a sync notification goes to the
    /// listeners that are syncing now, any other to every listener.
    pub(crate) fn distribute(&self, notification: &Notification<K>, sync: bool) {
        // ANCHOR: ex4-distribute
        let state = self.state.read();
        for (listener, is_syncing) in state.listeners.values() {
            if !sync || *is_syncing {
                listener.add(notification.clone());
            }
        }
        // ANCHOR_END: ex4-distribute
    }
    // ANCHOR_END: distribute

    // ANCHOR: run
    /// Mirrors `sharedProcessor.run`: starts every listener, waits for `shutdown`,
    /// then closes them all and waits until every listener task has ended.
    pub(crate) async fn run(&self, shutdown: CancellationToken) {
        {
            let mut state = self.state.write();
            for (listener, _) in state.listeners.values() {
                listener.start(&self.tracker);
            }
            state.started = true;
        }
        shutdown.cancelled().await;
        {
            let mut state = self.state.write();
            for (_, (listener, _)) in state.listeners.drain() {
                listener.close();
            }
            state.started = false;
            state.stopped = true;
        }
        self.tracker.close();
        self.tracker.wait().await;
    }
    // ANCHOR_END: run

    // ANCHOR: should_resync
    /// Mirrors `sharedProcessor.shouldResync`: marks each listener syncing or not
    /// for the coming resync, schedules the next resync of those that are, and
    /// says whether any is.
    pub(crate) fn should_resync(&self) -> bool {
        // ANCHOR: ex4-should-resync
        let now = tokio::time::Instant::now();
        let mut state = self.state.write();
        let mut resync_needed = false;
        for (listener, is_syncing) in state.listeners.values_mut() {
            *is_syncing = listener.should_resync(now);
            if *is_syncing {
                resync_needed = true;
                listener.determine_next_resync(now);
            }
        }
        resync_needed
        // ANCHOR_END: ex4-should-resync
    }

    /// Mirrors `sharedProcessor.resyncCheckPeriodChanged`: re-derives every
    /// listener's period from what it asked for and the new check period.
    pub(crate) fn resync_check_period_changed(&self, resync_check_period: Duration) {
        let state = self.state.read();
        for (listener, _) in state.listeners.values() {
            listener.set_resync_period(determine_resync_period(
                listener.requested_resync_period,
                resync_check_period,
            ));
        }
    }
    // ANCHOR_END: should_resync

    /// The number of registered listeners.
    pub(crate) fn len(&self) -> usize {
        self.state.read().listeners.len()
    }

    /// (pending, high-water mark) of each listener, for metrics and tests.
    pub(crate) fn listener_stats(&self) -> Vec<ListenerStats> {
        self.state
            .read()
            .listeners
            .values()
            .map(|(l, syncing)| ListenerStats {
                id: l.id,
                resync_due: l.should_resync(tokio::time::Instant::now()),
                pending: l.pending(),
                high_water_mark: l.high_water_mark(),
                resync_period: l.resync_period(),
                is_syncing: *syncing,
            })
            .collect()
    }
}

/// What one listener's queue looks like right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerStats {
    /// The listener's id (the same as its registration's).
    pub id: u64,
    /// Notifications queued for the handler and not yet handled.
    pub pending: usize,
    /// The most that were ever pending at once.
    pub high_water_mark: usize,
    /// The resync period in force (0 = none).
    pub resync_period: Duration,
    /// Whether the listener takes part in the current resync.
    pub is_syncing: bool,
    /// Whether its next resync is due now (it will sync at the informer's next
    /// check).
    pub resync_due: bool,
}

// ANCHOR: determine_resync_period
/// Mirrors client-go's `determineResyncPeriod`: a listener's period given what it
/// asked for and the informer's check period. No resync asked → 0; an informer that
/// never resyncs → 0; a period below the check period is raised to it.
pub fn determine_resync_period(desired: Duration, check: Duration) -> Duration {
    // ANCHOR: ex4-resync-period
    if desired.is_zero() {
        return desired;
    }
    if check.is_zero() {
        tracing::warn!(
            ?desired,
            "resync period ignored: this shared informer does not resync"
        );
        return Duration::ZERO;
    }
    if desired < check {
        tracing::warn!(
            ?desired,
            ?check,
            "resync period raised to the informer's resync check period"
        );
        return check;
    }
    desired
    // ANCHOR_END: ex4-resync-period
}
// ANCHOR_END: determine_resync_period

/// Unit tests of `distribute` and `should_resync` (the `ex4-distribute` and
/// `ex4-should-resync` regions) on a processor with hand-made listeners, without an
/// informer around them. The informer scenarios that use them are in
/// `tests/shared_informer.rs`.
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::mpsc;
    use tokio::time::Instant;

    use super::*;
    use crate::handler::{DeletedObject, ResourceEventHandler};
    use crate::listener::SyncTracker;

    const SECOND: Duration = Duration::from_secs(1);

    /// Reports each notification as `add 1`, `update 1->2` or `delete 3`.
    struct Recorder(mpsc::UnboundedSender<String>);

    impl ResourceEventHandler<u32> for Recorder {
        fn on_add(&self, obj: &Arc<u32>, _: bool) {
            let _ = self.0.send(format!("add {obj}"));
        }
        fn on_update(&self, old: &Arc<u32>, new: &Arc<u32>) {
            let _ = self.0.send(format!("update {old}->{new}"));
        }
        fn on_delete(&self, obj: &DeletedObject<u32>) {
            let what = obj.object().map(|o| o.to_string()).unwrap_or_default();
            let _ = self.0.send(format!("delete {what}"));
        }
    }

    /// A listener with this resync period, registered in `processor`, and the
    /// receiving end of its handler's reports.
    fn listener(
        processor: &SharedProcessor<u32>,
        resync_period: Duration,
        now: Instant,
    ) -> (Arc<ProcessorListener<u32>>, mpsc::UnboundedReceiver<String>) {
        let (reports, received) = mpsc::unbounded_channel();
        let listener = Arc::new(ProcessorListener::new(
            Arc::new(Recorder(reports)),
            resync_period,
            resync_period,
            now,
            Arc::new(SyncTracker::new(Box::new(|| true))),
        ));
        assert!(processor.add_listener(Arc::clone(&listener)));
        (listener, received)
    }

    fn is_syncing(processor: &SharedProcessor<u32>, id: u64) -> bool {
        processor
            .state
            .read()
            .listeners
            .get(&id)
            .is_some_and(|(_, s)| *s)
    }

    fn set_syncing(processor: &SharedProcessor<u32>, id: u64, syncing: bool) {
        if let Some((_, flag)) = processor.state.write().listeners.get_mut(&id) {
            *flag = syncing;
        }
    }

    fn add(n: u32) -> Notification<u32> {
        Notification::Add {
            new: Arc::new(n),
            is_in_initial_list: false,
        }
    }

    fn update(old: u32, new: u32) -> Notification<u32> {
        Notification::Update {
            old: Arc::new(old),
            new: Arc::new(new),
        }
    }

    fn delete(n: u32) -> Notification<u32> {
        Notification::Delete {
            old: DeletedObject::Object(Arc::new(n)),
        }
    }

    /// Receives `n` reports, each within a (paused-clock) minute.
    async fn next_n(
        received: &mut mpsc::UnboundedReceiver<String>,
        n: usize,
    ) -> Vec<String> {
        let mut reports = Vec::new();
        for _ in 0..n {
            let report = tokio::time::timeout(60 * SECOND, received.recv())
                .await
                .expect("a notification in time")
                .expect("the listener is running");
            reports.push(report);
        }
        reports
    }

    mod ex4_distribute {
        use super::*;

        #[tokio::test(start_paused = true)]
        async fn ex4_distribute_sends_syncs_only_to_the_syncing_listeners() {
            let processor = SharedProcessor::new();
            let now = Instant::now();
            let (syncing, mut syncing_rx) = listener(&processor, SECOND, now);
            let (quiet, mut quiet_rx) = listener(&processor, Duration::ZERO, now);
            set_syncing(&processor, quiet.id, false);
            processor.distribute(&add(1), false);
            processor.distribute(&update(1, 1), true);
            processor.distribute(&delete(1), false);
            assert_eq!((syncing.pending(), quiet.pending()), (3, 2));

            let shutdown = CancellationToken::new();
            let check = async {
                assert_eq!(
                    next_n(&mut syncing_rx, 3).await,
                    ["add 1", "update 1->1", "delete 1"]
                );
                assert_eq!(next_n(&mut quiet_rx, 2).await, ["add 1", "delete 1"]);
                shutdown.cancel();
            };
            tokio::time::timeout(60 * SECOND, async {
                tokio::join!(processor.run(shutdown.clone()), check)
            })
            .await
            .expect("the processor stops");
        }

        #[tokio::test(start_paused = true)]
        async fn ex4_distribute_gives_a_new_listener_the_syncs_of_the_first_list() {
            // A listener starts out syncing, so an informer's first list reaches it
            // even when it arrives as Sync notifications.
            let processor = SharedProcessor::new();
            let (first, _first_rx) =
                listener(&processor, Duration::ZERO, Instant::now());
            let (second, _second_rx) =
                listener(&processor, Duration::ZERO, Instant::now());
            processor.distribute(&update(7, 7), true);
            assert_eq!((first.pending(), second.pending()), (1, 1));
        }

        #[tokio::test(start_paused = true)]
        async fn ex4_distribute_with_no_listener_syncing_sends_a_sync_to_nobody() {
            let processor = SharedProcessor::new();
            let (a, _a_rx) = listener(&processor, SECOND, Instant::now());
            let (b, _b_rx) = listener(&processor, SECOND, Instant::now());
            set_syncing(&processor, a.id, false);
            set_syncing(&processor, b.id, false);
            processor.distribute(&update(7, 7), true);
            assert_eq!((a.pending(), b.pending()), (0, 0));
            processor.distribute(&update(7, 8), false);
            assert_eq!((a.pending(), b.pending()), (1, 1));
        }
    }

    mod ex4_should_resync {
        use super::*;

        /// The listener-level half of client-go's `TestListenerResyncPeriods`:
        /// listeners of no resync, 2 s and 3 s, asked every second.
        #[tokio::test(start_paused = true)]
        async fn ex4_should_resync_marks_only_the_listeners_that_are_due() {
            let processor = SharedProcessor::new();
            let start = Instant::now();
            let (never, _never_rx) = listener(&processor, Duration::ZERO, start);
            let (every2, _every2_rx) = listener(&processor, 2 * SECOND, start);
            let (every3, _every3_rx) = listener(&processor, 3 * SECOND, start);
            let syncing = || {
                [&never, &every2, &every3]
                    .map(|listener| is_syncing(&processor, listener.id))
            };
            // Every listener starts syncing (for the first list); the first check
            // clears the flags of those not due.
            assert_eq!(syncing(), [true, true, true]);
            let mut seen = Vec::new();
            for second in 0..=6 {
                tokio::time::advance(start + second * SECOND - Instant::now()).await;
                seen.push((processor.should_resync(), syncing()));
            }
            let nobody = (false, [false, false, false]);
            assert_eq!(
                seen,
                [
                    nobody,                       // 0 s
                    nobody,                       // 1 s
                    (true, [false, true, false]), // 2 s
                    (true, [false, false, true]), // 3 s
                    (true, [false, true, false]), // 4 s
                    nobody,                       // 5 s
                    (true, [false, true, true]),  // 6 s
                ]
            );
        }

        #[tokio::test(start_paused = true)]
        async fn ex4_should_resync_schedules_the_next_resync_from_now() {
            let processor = SharedProcessor::new();
            let start = Instant::now();
            let (every2, _rx) = listener(&processor, 2 * SECOND, start);
            // Asked late, at 3 s: the next resync is due at 5 s, not at 4 s.
            tokio::time::advance(3 * SECOND).await;
            assert!(processor.should_resync());
            tokio::time::advance(SECOND).await;
            assert!(!processor.should_resync());
            assert!(!is_syncing(&processor, every2.id));
            tokio::time::advance(SECOND).await;
            assert!(processor.should_resync());
            assert!(is_syncing(&processor, every2.id));
        }
    }
}
