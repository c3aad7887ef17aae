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
