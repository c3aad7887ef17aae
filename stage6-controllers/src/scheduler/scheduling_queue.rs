//! [`SchedulingQueue`]: the pods waiting to be scheduled, as keys
//! (`namespace/name`), over the workqueue's [`RateLimitingQueue`].
//!
//! Mirrors kube-scheduler's
//! [backend/queue/scheduling_queue.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/backend/queue/scheduling_queue.go)
//! (`PriorityQueue`: `Add`, `Update`, `Delete`, `Pop`, `Done`,
//! `AddUnschedulableIfNotPresent`, `MoveAllToActiveOrBackoffQueue`,
//! `flushUnschedulablePodsLeftover`) with its three parts mapped onto the
//! workqueue:
//!
//! | upstream            | here                                                              |
//! |---------------------|-------------------------------------------------------------------|
//! | `activeQ`           | the ready queue of the [`RateLimitingQueue`] (`add`, `get`)       |
//! | `podBackoffQ`       | its delaying heap, through `add_rate_limited` with an [`ItemExponentialFailureRateLimiter`] of `podInitialBackoffDuration` (1 s) doubling up to `podMaxBackoffDuration` (10 s), as `calculateBackoffDuration` |
//! | `unschedulablePods` | a map of keys to the time they were put there                     |
//!
//! A pod that failed because no node fits waits in the unschedulable pods
//! until a cluster event (a node added or changed, a bound pod deleted) moves
//! it to the backoff queue, or until it has waited
//! `podMaxInUnschedulablePodsDuration` (5 minutes). A pod that failed for
//! another reason (an API error) goes to the backoff queue at once. A move
//! request during the pod's scheduling cycle sends it to the backoff queue
//! instead of the unschedulable pods (`moveRequestCycle`), so that an event
//! that raced with the cycle is not lost.
//!
//! Where this differs: the active queue is FIFO (upstream's is a heap ordered
//! by priority, then by when the pod was added); the backoff counts from the
//! move, not from the pod's last attempt, and grows with every move until the
//! pod is scheduled or deleted ([`SchedulingQueue::forget`]); there are no
//! queueing hints: every event moves every unschedulable pod.

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::workqueue::{ItemExponentialFailureRateLimiter, RateLimitingQueue};

/// Mirrors `DefaultPodInitialBackoffDuration`.
pub const DEFAULT_POD_INITIAL_BACKOFF_DURATION: Duration = Duration::from_secs(1);

/// Mirrors `DefaultPodMaxBackoffDuration`.
pub const DEFAULT_POD_MAX_BACKOFF_DURATION: Duration = Duration::from_secs(10);

/// Mirrors `DefaultPodMaxInUnschedulablePodsDuration`.
pub const DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION: Duration =
    Duration::from_secs(5 * 60);

/// Why a scheduling attempt failed, which decides where the pod waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No node fits (`Unschedulable`): wait for a cluster event.
    Unschedulable,
    /// Anything else (`SchedulerError`): retry after the backoff.
    Error,
}

/// Mirrors `PriorityQueue`'s mutable state.
#[derive(Debug, Default)]
struct State {
    /// Mirrors `unschedulablePods`: key → when it was put there.
    unschedulable_pods: HashMap<String, Instant>,
    /// Mirrors `schedulingCycle`: incremented by every pop.
    scheduling_cycle: u64,
    /// Mirrors `moveRequestCycle`: the cycle of the last move request.
    move_request_cycle: Option<u64>,
}

/// Mirrors `PriorityQueue` (see the module docs). A cheap handle.
#[derive(Clone)]
pub struct SchedulingQueue {
    queue: RateLimitingQueue<String>,
    state: std::sync::Arc<Mutex<State>>,
    pod_max_in_unschedulable_pods_duration: Duration,
}

impl std::fmt::Debug for SchedulingQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchedulingQueue")
            .field("queue", &self.queue)
            .field("state", &*self.state.lock())
            .finish()
    }
}

impl SchedulingQueue {
    /// Mirrors `NewPriorityQueue` with `WithPodInitialBackoffDuration`,
    /// `WithPodMaxBackoffDuration` and `WithPodMaxInUnschedulablePodsDuration`.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (the workqueue's waiting loop is a task).
    #[must_use]
    pub fn new(
        pod_initial_backoff: Duration,
        pod_max_backoff: Duration,
        pod_max_in_unschedulable_pods_duration: Duration,
    ) -> Self {
        let queue = RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
            pod_initial_backoff,
            pod_max_backoff,
        ));
        SchedulingQueue {
            queue,
            state: std::sync::Arc::default(),
            pod_max_in_unschedulable_pods_duration,
        }
    }

    /// Mirrors `Add`: a new pod goes to the active queue.
    pub fn add(&self, key: String) {
        self.state.lock().unschedulable_pods.remove(&key);
        self.queue.add(key);
    }

    /// Mirrors `Update` of a pod that changed (other than its status): one
    /// waiting in the unschedulable pods may fit now and goes to the backoff
    /// queue. A pod queued, backing off or being scheduled stays where it is
    /// (its key is all the queue holds; the informer has the new pod).
    pub fn update(&self, key: String) {
        let was_unschedulable =
            self.state.lock().unschedulable_pods.remove(&key).is_some();
        if was_unschedulable {
            self.queue.add_rate_limited(key);
        }
    }

    /// Mirrors `Delete`: the pod is gone (or bound by someone else). A key still
    /// in the queue is skipped when popped, as its pod is not in the informer.
    pub fn delete(&self, key: &str) {
        self.state.lock().unschedulable_pods.remove(key);
        self.queue.forget(&key.to_string());
    }

    /// Mirrors `Pop`: waits for the next pod, and says in which scheduling
    /// cycle it is tried. `None` once the queue is shut down.
    pub async fn pop(&self) -> Option<(String, u64)> {
        let key = self.queue.get().await?;
        let mut state = self.state.lock();
        state.scheduling_cycle += 1;
        Some((key, state.scheduling_cycle))
    }

    /// Mirrors `Done`: the pod's attempt is over (a key added meanwhile is
    /// queued again).
    pub fn done(&self, key: &str) {
        self.queue.done(&key.to_string());
    }

    /// Mirrors forgetting a pod's backoff once it is scheduled (upstream drops
    /// its `QueuedPodInfo`).
    pub fn forget(&self, key: &str) {
        self.queue.forget(&key.to_string());
    }

    /// Mirrors `AddUnschedulableIfNotPresent` after a failed attempt in
    /// `pod_scheduling_cycle`: see the module docs.
    pub fn add_unschedulable_if_not_present(
        &self,
        key: String,
        pod_scheduling_cycle: u64,
        failure: Failure,
    ) {
        let mut state = self.state.lock();
        let moved_meanwhile = state
            .move_request_cycle
            .is_some_and(|cycle| cycle >= pod_scheduling_cycle);
        if failure == Failure::Error || moved_meanwhile {
            state.unschedulable_pods.remove(&key);
            drop(state);
            self.queue.add_rate_limited(key);
        } else {
            state.unschedulable_pods.insert(key, Instant::now());
        }
    }

    /// Mirrors `MoveAllToActiveOrBackoffQueue(event)`: every unschedulable pod
    /// goes to the backoff queue, and the move request is remembered for the
    /// cycle in flight.
    pub fn move_all_to_active_or_backoff_queue(&self, event: &str) {
        let moved: Vec<String> = {
            let mut state = self.state.lock();
            state.move_request_cycle = Some(state.scheduling_cycle);
            state
                .unschedulable_pods
                .drain()
                .map(|(key, _)| key)
                .collect()
        };
        if !moved.is_empty() {
            tracing::debug!(
                event,
                pods = moved.len(),
                "moving unschedulable pods to the backoff queue"
            );
        }
        for key in moved {
            self.queue.add_rate_limited(key);
        }
    }

    /// Mirrors `flushUnschedulablePodsLeftover`: pods unschedulable for longer
    /// than `podMaxInUnschedulablePodsDuration` go to the backoff queue.
    pub fn flush_unschedulable_pods_leftover(&self) {
        let moved: Vec<String> = {
            let mut state = self.state.lock();
            let max = self.pod_max_in_unschedulable_pods_duration;
            let old: Vec<String> = state
                .unschedulable_pods
                .iter()
                .filter(|(_, since)| since.elapsed() > max)
                .map(|(key, _)| key.clone())
                .collect();
            for key in &old {
                state.unschedulable_pods.remove(key);
            }
            old
        };
        for key in moved {
            self.queue.add_rate_limited(key);
        }
    }

    /// Whether `key` waits in the unschedulable pods.
    #[must_use]
    pub fn is_unschedulable(&self, key: &str) -> bool {
        self.state.lock().unschedulable_pods.contains_key(key)
    }

    /// Mirrors `PendingPods`' count: active, backing off and unschedulable.
    #[must_use]
    pub fn num_unschedulable_pods(&self) -> usize {
        self.state.lock().unschedulable_pods.len()
    }

    /// Mirrors `Close`: `pop` returns `None` from now on.
    pub fn close(&self) {
        self.queue.shut_down();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> SchedulingQueue {
        SchedulingQueue::new(
            DEFAULT_POD_INITIAL_BACKOFF_DURATION,
            DEFAULT_POD_MAX_BACKOFF_DURATION,
            DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        )
    }

    async fn pop_within(
        q: &SchedulingQueue,
        within: Duration,
    ) -> Option<(String, u64)> {
        tokio::time::timeout(within, q.pop()).await.ok().flatten()
    }

    /// Mirrors `TestPriorityQueue_Add` (FIFO here) and the cycle count.
    #[tokio::test(start_paused = true)]
    async fn test_priority_queue_add() {
        let q = queue();
        q.add("ns/a".into());
        q.add("ns/b".into());
        q.add("ns/a".into());
        assert_eq!(
            pop_within(&q, Duration::from_secs(1)).await,
            Some(("ns/a".into(), 1))
        );
        assert_eq!(
            pop_within(&q, Duration::from_secs(1)).await,
            Some(("ns/b".into(), 2))
        );
        q.done("ns/a");
        q.done("ns/b");
        assert_eq!(pop_within(&q, Duration::from_secs(60)).await, None);
    }

    /// Mirrors `TestPriorityQueue_AddUnschedulableIfNotPresent`: an
    /// unschedulable pod waits for an event, not for a timer.
    #[tokio::test(start_paused = true)]
    async fn test_priority_queue_add_unschedulable_if_not_present() {
        let q = queue();
        q.add("ns/p".into());
        let (key, cycle) =
            pop_within(&q, Duration::from_secs(1)).await.expect("pod");
        q.add_unschedulable_if_not_present(
            key.clone(),
            cycle,
            Failure::Unschedulable,
        );
        q.done(&key);
        assert!(q.is_unschedulable("ns/p"));
        assert_eq!(pop_within(&q, Duration::from_secs(60)).await, None);
    }

    /// Mirrors `TestPriorityQueue_MoveAllToActiveOrBackoffQueue`: an event
    /// moves the pod to the backoff queue, it pops after the initial backoff.
    #[tokio::test(start_paused = true)]
    async fn test_priority_queue_move_all_to_active_or_backoff_queue() {
        let q = queue();
        q.add("ns/p".into());
        let (key, cycle) =
            pop_within(&q, Duration::from_secs(1)).await.expect("pod");
        q.add_unschedulable_if_not_present(
            key.clone(),
            cycle,
            Failure::Unschedulable,
        );
        q.done(&key);
        q.move_all_to_active_or_backoff_queue("NodeAdd");
        assert_eq!(q.num_unschedulable_pods(), 0);
        let start = Instant::now();
        let (key, cycle) = pop_within(&q, Duration::from_secs(5))
            .await
            .expect("backoff");
        assert_eq!(start.elapsed(), DEFAULT_POD_INITIAL_BACKOFF_DURATION);
        // The second time the backoff doubles.
        q.add_unschedulable_if_not_present(
            key.clone(),
            cycle,
            Failure::Unschedulable,
        );
        q.done(&key);
        q.move_all_to_active_or_backoff_queue("NodeUpdate");
        let start = Instant::now();
        pop_within(&q, Duration::from_secs(5))
            .await
            .expect("backoff");
        assert_eq!(start.elapsed(), 2 * DEFAULT_POD_INITIAL_BACKOFF_DURATION);
    }

    /// Mirrors the `moveRequestCycle` cases of
    /// `TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff`: an event
    /// during the cycle sends the failed pod to the backoff queue.
    #[tokio::test(start_paused = true)]
    async fn test_priority_queue_move_request_during_cycle() {
        let q = queue();
        q.add("ns/p".into());
        let (key, cycle) =
            pop_within(&q, Duration::from_secs(1)).await.expect("pod");
        q.move_all_to_active_or_backoff_queue("NodeAdd");
        q.add_unschedulable_if_not_present(
            key.clone(),
            cycle,
            Failure::Unschedulable,
        );
        q.done(&key);
        assert!(!q.is_unschedulable("ns/p"));
        assert!(pop_within(&q, Duration::from_secs(2)).await.is_some());
    }

    /// An error (not a misfit) goes straight to the backoff queue.
    #[tokio::test(start_paused = true)]
    async fn test_priority_queue_error_backs_off() {
        let q = queue();
        q.add("ns/p".into());
        let (key, cycle) =
            pop_within(&q, Duration::from_secs(1)).await.expect("pod");
        q.add_unschedulable_if_not_present(key.clone(), cycle, Failure::Error);
        q.done(&key);
        assert!(pop_within(&q, Duration::from_millis(900)).await.is_none());
        assert!(pop_within(&q, Duration::from_millis(200)).await.is_some());
    }

    /// Mirrors `TestPriorityQueue_flushUnschedulablePodsLeftover`.
    #[tokio::test(start_paused = true)]
    async fn test_priority_queue_flush_unschedulable_pods_leftover() {
        let q = queue();
        q.add("ns/p".into());
        let (key, cycle) =
            pop_within(&q, Duration::from_secs(1)).await.expect("pod");
        q.add_unschedulable_if_not_present(
            key.clone(),
            cycle,
            Failure::Unschedulable,
        );
        q.done(&key);
        tokio::time::advance(Duration::from_secs(60)).await;
        q.flush_unschedulable_pods_leftover();
        assert!(q.is_unschedulable("ns/p"));
        tokio::time::advance(DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION).await;
        q.flush_unschedulable_pods_leftover();
        assert!(!q.is_unschedulable("ns/p"));
        assert!(pop_within(&q, Duration::from_secs(2)).await.is_some());
    }

    /// Mirrors `TestPriorityQueue_Update` of an unschedulable pod, and
    /// `TestPriorityQueue_Delete`.
    #[tokio::test(start_paused = true)]
    async fn test_priority_queue_update_and_delete() {
        let q = queue();
        q.add("ns/p".into());
        let (key, cycle) =
            pop_within(&q, Duration::from_secs(1)).await.expect("pod");
        q.add_unschedulable_if_not_present(
            key.clone(),
            cycle,
            Failure::Unschedulable,
        );
        q.done(&key);
        q.update("ns/p".into());
        assert!(!q.is_unschedulable("ns/p"));
        assert!(pop_within(&q, Duration::from_secs(2)).await.is_some());
        q.done("ns/p");
        q.add_unschedulable_if_not_present(
            "ns/p".into(),
            99,
            Failure::Unschedulable,
        );
        q.delete("ns/p");
        assert_eq!(q.num_unschedulable_pods(), 0);
        q.close();
        assert_eq!(pop_within(&q, Duration::from_secs(1)).await, None);
    }
}
