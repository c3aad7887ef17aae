//! `mini-scheduler`: kube-scheduler at its simplest.
//!
//! One profile (`default-scheduler`) with the plugins that decide most
//! placements: `NodeUnschedulable` (cordoned nodes), `TaintToleration` (taints,
//! and the taints a NotReady node would carry), `NodeResourcesFit` (requests
//! against allocatable; least allocated scores highest). Pods wait in a
//! [`SchedulingQueue`] over the workqueue's rate-limiting queue; a pod that
//! fits nowhere gets a `FailedScheduling` event and `PodScheduled=False`, and
//! is tried again when a node joins or changes.
//!
//! | kube-scheduler (Go)                                        | here (Rust)                                  |
//! |------------------------------------------------------------|----------------------------------------------|
//! | `scheduler.go`: `Scheduler`, `New`, `Run`                  | [`Scheduler`], [`Scheduler::new`], [`Scheduler::run`], [`SchedulerConfig`] |
//! | `eventhandlers.go`: `addAllEventHandlers`, `assignedPod`, `responsibleForPod` | [`eventhandlers`]               |
//! | `schedule_one.go`: `ScheduleOne`, `schedulePod`, `findNodesThatFitPod`, `prioritizeNodes`, `selectHost`, `handleSchedulingFailure` | [`schedule_one`]: [`schedule_pod`], [`find_nodes_that_fit_pod`], [`prioritize_nodes`], [`select_host`] |
//! | `backend/queue/scheduling_queue.go`: `PriorityQueue`       | [`SchedulingQueue`]                          |
//! | `backend/cache/cache.go`, `snapshot.go`                    | [`Cache`], [`Snapshot`]                      |
//! | `framework/…`                                              | [`framework`]                                |
//! | `cmd/kube-scheduler`                                       | the `mini-scheduler` binary                  |

pub mod cache;
pub mod eventhandlers;
pub mod framework;
pub mod options;
pub mod schedule_one;
#[allow(clippy::module_inception)]
pub mod scheduler;
pub mod scheduling_queue;

pub use cache::{Cache, Snapshot};
pub use options::SchedulerOptions;
pub use schedule_one::{
    ScheduleError, ScheduleResult, find_nodes_that_fit_pod, prioritize_nodes,
    schedule_pod, select_host,
};
pub use scheduler::{DEFAULT_SCHEDULER_NAME, Scheduler, SchedulerConfig};
pub use scheduling_queue::{Failure, SchedulingQueue};
