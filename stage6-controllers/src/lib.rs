//! # Stage 6: controllers
//!
//! A controller turns what an informer (stage 4) saw into work: its event handlers
//! put the key of every changed object into a work queue, and a few workers take
//! keys out, reconcile, and put a key back, later, when that failed. This stage
//! rebuilds that machinery, starting with client-go's `util/workqueue` in
//! [`workqueue`]; the controllers built on it come later.
//!
//! | client-go (Go), `util/workqueue`                        | here (Rust)                         |
//! |---------------------------------------------------------|-------------------------------------|
//! | `queue.go`: `Typed[T]`, `NewTyped`, `NewTypedWithConfig` | [`workqueue::Queue`], [`Queue::new`](workqueue::Queue::new), [`Queue::with_config`](workqueue::Queue::with_config) |
//! | `Add`, `Len`, `Get`, `Done`                             | `add`, `len`, `get().await`, `done` |
//! | `ShutDown`, `ShutDownWithDrain`, `ShuttingDown`          | `shut_down`, `shut_down_with_drain().await`, `shutting_down` |
//! | `TypedQueueConfig`, `Queue[T]`, `DefaultQueue`           | [`workqueue::QueueConfig`], [`workqueue::QueueStorage`], [`workqueue::DefaultQueue`] |
//! | `T comparable`                                           | [`workqueue::Item`]                 |
//! | `delaying_queue.go`: `delayingType`, `AddAfter`          | [`workqueue::DelayingQueue`], `add_after` |
//! | `waitForPriorityQueue`, `insert`, `waitingLoop`, `maxWait` | private `WaitForPriorityQueue`, `insert`, `waiting_loop`; [`workqueue::MAX_WAIT`] |
//! | `rate_limiting_queue.go`: `rateLimitingType`             | [`workqueue::RateLimitingQueue`]    |
//! | `AddRateLimited`, `Forget`, `NumRequeues`                | `add_rate_limited`, `forget`, `num_requeues` |
//! | `default_rate_limiters.go`: `TypedRateLimiter[T]`        | [`workqueue::RateLimiter`]          |
//! | `ItemExponentialFailureRateLimiter`, `ItemFastSlowRateLimiter` | [`workqueue::ItemExponentialFailureRateLimiter`], [`workqueue::ItemFastSlowRateLimiter`] |
//! | `BucketRateLimiter` over `golang.org/x/time/rate`        | [`workqueue::BucketRateLimiter`]    |
//! | `MaxOfRateLimiter`, `WithMaxWaitRateLimiter`             | [`workqueue::MaxOfRateLimiter`], [`workqueue::WithMaxWaitRateLimiter`] |
//! | `DefaultTypedControllerRateLimiter`, `DefaultTypedItemBasedRateLimiter` | [`workqueue::default_controller_rate_limiter`], [`workqueue::default_item_based_rate_limiter`] |
//! | `metrics.go`: `MetricsProvider`, `SetProvider`, the metric interfaces | [`workqueue::MetricsProvider`], [`workqueue::set_provider`], [`workqueue::GaugeMetric`] and the others |
//! | component-base's `metrics/prometheus/workqueue`          | [`workqueue::PrometheusMetricsProvider`] |
//! | kube-scheduler `pkg/scheduler`: `Scheduler`, `New`, `Run`; `cmd/kube-scheduler` | [`scheduler::Scheduler`], [`scheduler::Scheduler::new`], [`scheduler::Scheduler::run`], [`scheduler::SchedulerConfig`]; `mini-scheduler` |
//! | `schedule_one.go`: `ScheduleOne`, `schedulePod`, `findNodesThatFitPod`, `prioritizeNodes`, `selectHost` | [`scheduler::schedule_one`]: [`scheduler::schedule_pod`], [`scheduler::find_nodes_that_fit_pod`], [`scheduler::prioritize_nodes`], [`scheduler::select_host`] |
//! | `eventhandlers.go`, `backend/queue` (`PriorityQueue`), `backend/cache` | [`scheduler::eventhandlers`], [`scheduler::SchedulingQueue`], [`scheduler::Cache`] |
//! | `framework` (`Status`, `CycleState`, `NodeInfo`, `FitError`, `frameworkImpl`) and the plugins `NodeUnschedulable`, `TaintToleration`, `NodeResourcesFit` | [`scheduler::framework`] |
//! | kubemark `pkg/kubemark`: `HollowKubelet`; `cmd/kubemark --morph=kubelet` | [`kubemark::HollowKubelet`], [`kubemark::HollowKubeletConfig`]; `hollow-node` |
//! | kubelet `kubelet_node_status.go`, `nodestatus` setters; component-helpers `lease` controller | [`kubemark::node_status`], [`kubemark::NodeLeaseController`] |
//! | apimachinery `pkg/api/resource`: `Quantity`, `ParseQuantity`, `Value`, `MilliValue` | [`apimachinery::api::resource::Quantity`], [`apimachinery::api::resource::parse_quantity`] |
//! | client-go `tools/events`: `EventRecorder.Eventf`; apimachinery `metav1.Now`, `NowMicro` | [`events::EventRecorder`]; [`apimachinery::apis::meta::v1::now`], [`apimachinery::apis::meta::v1::now_micro`] |
//!
//! | kubernetes (Go), `pkg/controller/deployment`             | here (Rust)                         |
//! |---------------------------------------------------------|-------------------------------------|
//! | `deployment_controller.go`: `DeploymentController`, `NewDeploymentController` | [`deployment::deployment_controller::DeploymentController`], [`DeploymentController::new`](deployment::deployment_controller::DeploymentController::new) |
//! | `addDeployment`, `updateDeployment`, `deleteDeployment`, `addReplicaSet`, `updateReplicaSet`, `deleteReplicaSet`, `deletePod` | private `add_deployment`, …, `delete_pod`, registered by `new` |
//! | `syncDeployment`, `getReplicaSetsForDeployment`, `getPodMapForDeployment`, `maxRetries` | private `sync_deployment`, `get_replica_sets_for_deployment`, `get_pod_map_for_deployment`; [`deployment::deployment_controller::MAX_RETRIES`] |
//! | `sync.go`: `sync`, `syncStatusOnly`, `getAllReplicaSetsAndSyncRevision`, `getNewReplicaSet`, `scaleReplicaSet(AndRecordEvent)`, `syncDeploymentStatus`, `isScalingEvent` | private methods of the same names |
//! | `scale` with `GetProportion`, `cleanupDeployment`, `calculateStatus` | [`deployment::sync::scale_targets`], [`deployment::sync::cleanup_candidates`] (the decisions), [`deployment::sync::calculate_status`] |
//! | `rolling.go`: `rolloutRolling`; `reconcileNewReplicaSet`, `reconcileOldReplicaSets`, `cleanupUnhealthyReplicas`, `scaleDownOldReplicaSetsForRollingUpdate` | private `rollout_rolling`; [`deployment::rolling::reconcile_new_replica_set`] and the others, returning [`deployment::sync::Resize`]s |
//! | `recreate.go`: `rolloutRecreate`; `scaleDownOldReplicaSetsForRecreate`, `oldPodsRunning`, `scaleUpNewReplicaSetForRecreate` | private `rollout_recreate`; [`deployment::recreate::old_pods_running`] and the others |
//! | `progress.go`: `syncRolloutStatus`, `getReplicaFailures`, `requeueStuckDeployment` | private `sync_rollout_status` over [`deployment::progress::rollout_status`]; [`deployment::progress::get_replica_failures`]; [`deployment::progress::stuck_deployment_requeue`] |
//! | `util/deployment_util.go`: `ResolveFenceposts`, `MaxSurge`, `MaxUnavailable`, `NewRSNewReplicas`, `FindNewReplicaSet`, `EqualIgnoreHash`, `DeploymentComplete`, `SetDeploymentCondition`, … | [`deployment::util::deployment_util`]: `resolve_fenceposts`, `max_surge`, … |
//! | `controller_utils.go`: `ComputeHash`, `FilterActiveReplicaSets`, `ReplicaSetsBySizeNewer`/`Older` | [`deployment::util::deployment_util::compute_hash`] and the others, next to their only user |
//!
//! ## One key, from a handler to a worker and back
//!
//! ```text
//!  informer handler ──add──► Queue ──get──► worker ──done──► (dirty? queued again)
//!                              ▲                │
//!                              │        failed: add_rate_limited
//!                              │                ▼
//!                     waiting loop ◄── RateLimiter::when ──► DelayingQueue heap
//! ```

/// `cmd/kube-controller-manager/app`: the controller manager and its flags.
pub mod app {
    pub mod client;
    pub mod controllermanager;
    pub mod logs;
    pub mod options;
}
pub mod controller;
pub mod controller_ref_manager;
pub mod controller_utils;
pub mod events;
pub mod kubemark;
pub mod record;
pub mod scheduler;
pub mod workqueue;

/// `pkg/controller/replicaset`.
pub mod replicaset {
    pub mod replica_set;
}

/// `pkg/controller/deployment`: the Deployment controller, one file per Go
/// file; the controller's methods are spread over them as in Go.
pub mod deployment {
    pub mod deployment_controller;
    pub mod progress;
    pub mod recreate;
    pub mod rolling;
    pub mod sync;

    /// `pkg/controller/deployment/util`.
    pub mod util {
        pub mod deployment_util;
    }
}

pub mod garbagecollector;
