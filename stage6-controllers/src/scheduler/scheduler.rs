//! [`Scheduler`]: watches the pods no node runs yet and the nodes, and binds
//! each pod to the node that fits it best, one pod at a time.
//!
//! Mirrors kube-scheduler's
//! [scheduler.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/scheduler.go)
//! (`Scheduler`, `New`, `Run`) with
//! [cmd/kube-scheduler/app/server.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/cmd/kube-scheduler/app/server.go)'s
//! informers: a pod informer without finished pods
//! (`status.phase!=Succeeded,status.phase!=Failed`, as upstream's
//! `newPodInformer`) and a node informer, from two stage 4 factories (a
//! factory's list tweak applies to every type, and nodes have no
//! `status.phase`).
//!
//! ```text
//!  pod informer ──unassigned, ours──► SchedulingQueue ──pop──► schedule_one ──► pods/binding
//!        │                                  ▲                      │
//!        └──assigned──► Cache (assumed)     │ node added/changed,  ├─► FailedScheduling event
//!  node informer ───────────────────────────┘ bound pod deleted    └─► PodScheduled=False
//! ```
//!
//! # Shutdown
//!
//! [`Scheduler::run`] owns every task it starts: the informers (through their
//! factories), the unschedulable-pods flush loop and the scheduling loop. When
//! the token is cancelled it stops the attempt in flight, closes the queue,
//! shuts the factories down and waits for all of them before it returns.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use stage4_shared_informer::{KubeSource, Lister, SharedInformerFactory};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::cache::Cache;
use super::eventhandlers::add_all_event_handlers;
use super::framework::Framework;
use super::scheduling_queue::{
    DEFAULT_POD_INITIAL_BACKOFF_DURATION, DEFAULT_POD_MAX_BACKOFF_DURATION,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, SchedulingQueue,
};
use crate::events::EventRecorder;

/// Mirrors `v1.DefaultSchedulerName`.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// The field selector of upstream's `newPodInformer`: finished pods hold no
/// resources and need no scheduling.
pub const POD_INFORMER_FIELD_SELECTOR: &str =
    "status.phase!=Succeeded,status.phase!=Failed";

/// How a [`Scheduler`] behaves: upstream's `KubeSchedulerConfiguration`
/// fields that exist here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// The profile's `schedulerName`: pods naming another scheduler are left
    /// alone. Default `default-scheduler`.
    pub scheduler_name: String,
    /// `podInitialBackoffSeconds`: the first retry's delay. Default 1 s.
    pub pod_initial_backoff: Duration,
    /// `podMaxBackoffSeconds`: the longest retry delay. Default 10 s.
    pub pod_max_backoff: Duration,
    /// How long an unschedulable pod waits for an event before it is retried
    /// anyway (`podMaxInUnschedulablePodsDuration`). Default 5 minutes.
    pub pod_max_in_unschedulable_pods_duration: Duration,
    /// How often that is checked (upstream's 30 s `flushUnschedulablePodsLeftover`
    /// period).
    pub unschedulable_pods_flush_interval: Duration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            scheduler_name: DEFAULT_SCHEDULER_NAME.to_string(),
            pod_initial_backoff: DEFAULT_POD_INITIAL_BACKOFF_DURATION,
            pod_max_backoff: DEFAULT_POD_MAX_BACKOFF_DURATION,
            pod_max_in_unschedulable_pods_duration:
                DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
            unschedulable_pods_flush_interval: Duration::from_secs(30),
        }
    }
}

impl SchedulerConfig {
    /// Sets [`scheduler_name`](Self::scheduler_name).
    #[must_use]
    pub fn scheduler_name(mut self, name: impl Into<String>) -> Self {
        self.scheduler_name = name.into();
        self
    }

    /// Sets [`pod_initial_backoff`](Self::pod_initial_backoff).
    #[must_use]
    pub fn pod_initial_backoff(mut self, backoff: Duration) -> Self {
        self.pod_initial_backoff = backoff;
        self
    }

    /// Sets [`pod_max_backoff`](Self::pod_max_backoff).
    #[must_use]
    pub fn pod_max_backoff(mut self, backoff: Duration) -> Self {
        self.pod_max_backoff = backoff;
        self
    }

    /// Sets [`pod_max_in_unschedulable_pods_duration`](Self::pod_max_in_unschedulable_pods_duration).
    #[must_use]
    pub fn pod_max_in_unschedulable_pods_duration(
        mut self,
        duration: Duration,
    ) -> Self {
        self.pod_max_in_unschedulable_pods_duration = duration;
        self
    }

    /// Sets [`unschedulable_pods_flush_interval`](Self::unschedulable_pods_flush_interval).
    #[must_use]
    pub fn unschedulable_pods_flush_interval(mut self, interval: Duration) -> Self {
        self.unschedulable_pods_flush_interval = interval;
        self
    }
}

/// Mirrors kube-scheduler's `Scheduler` before `Run`: a client, a
/// configuration and a profile.
pub struct Scheduler {
    client: kube::Client,
    config: SchedulerConfig,
    framework: Framework,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("config", &self.config)
            .field("framework", &self.framework)
            .finish_non_exhaustive()
    }
}

/// What the scheduling loop and the event handlers share once the scheduler
/// runs: upstream's `Scheduler` fields (`Cache`, `SchedulingQueue`, the
/// profile, the client) with the listers.
pub(crate) struct SchedulerCore {
    pub(crate) client: kube::Client,
    pub(crate) scheduler_name: String,
    pub(crate) framework: Framework,
    pub(crate) queue: SchedulingQueue,
    pub(crate) cache: Cache,
    pub(crate) pod_lister: Lister<Pod>,
    pub(crate) node_lister: Lister<Node>,
    pub(crate) recorder: EventRecorder,
}

impl Scheduler {
    /// Mirrors `scheduler.New` with the default profile
    /// ([`Framework::default_profile`]) named after `config.scheduler_name`.
    /// Writes go through `client`; so do the informers' lists and watches
    /// (build it with kube's retries off, as stage 3's
    /// `KubeListerWatcher::client` does).
    #[must_use]
    pub fn new(client: kube::Client, config: SchedulerConfig) -> Self {
        let framework = Framework::default_profile(config.scheduler_name.clone());
        Scheduler {
            client,
            config,
            framework,
        }
    }

    /// Schedules with `framework` instead of the default profile (its profile
    /// name should be the config's `scheduler_name`).
    #[must_use]
    pub fn with_framework(mut self, framework: Framework) -> Self {
        self.framework = framework;
        self
    }

    /// Mirrors `Scheduler.Run`: starts the informers, waits for their caches,
    /// then schedules pods one at a time until `shutdown` is cancelled, and
    /// returns once everything it started has stopped (see the module docs).
    pub async fn run(self, shutdown: CancellationToken) {
        let Scheduler {
            client,
            config,
            framework,
        } = self;
        let pods_factory = SharedInformerFactory::builder(
            KubeSource::new(client.clone()),
            Duration::ZERO,
        )
        .tweak_list_options(|options| {
            options.field_selector = POD_INFORMER_FIELD_SELECTOR.to_string();
        })
        .build();
        let nodes_factory = SharedInformerFactory::new(
            KubeSource::new(client.clone()),
            Duration::ZERO,
        );
        let pods = pods_factory.pods();
        let nodes = nodes_factory.nodes();
        let core = Arc::new(SchedulerCore {
            recorder: EventRecorder::new(
                client.clone(),
                config.scheduler_name.clone(),
            ),
            client,
            scheduler_name: config.scheduler_name.clone(),
            framework,
            queue: SchedulingQueue::new(
                config.pod_initial_backoff,
                config.pod_max_backoff,
                config.pod_max_in_unschedulable_pods_duration,
            ),
            cache: Cache::new(),
            pod_lister: pods.lister(),
            node_lister: nodes.lister(),
        });
        let tasks = TaskTracker::new();
        match add_all_event_handlers(&core, &pods.informer(), &nodes.informer()) {
            Ok(()) => {
                pods_factory.start();
                nodes_factory.start();
                let synced = tokio::join!(
                    pods_factory.wait_for_cache_sync(&shutdown),
                    nodes_factory.wait_for_cache_sync(&shutdown),
                );
                tracing::info!(?synced, scheduler = %core.scheduler_name, "caches synced");
                tasks.spawn(flush_loop(
                    core.queue.clone(),
                    config.unschedulable_pods_flush_interval,
                    shutdown.clone(),
                ));
                scheduling_loop(&core, &shutdown).await;
            }
            Err(error) => {
                tracing::error!(%error, "could not add the scheduler's event handlers")
            }
        }
        core.queue.close();
        tasks.close();
        tokio::join!(
            pods_factory.shutdown(),
            nodes_factory.shutdown(),
            tasks.wait()
        );
        tracing::info!(scheduler = %core.scheduler_name, "scheduler stopped");
    }
}

/// Mirrors `wait.UntilWithContext(ctx, sched.ScheduleOne, 0)`: pops and
/// schedules until the queue closes or `shutdown` is cancelled (which also
/// abandons the attempt in flight).
async fn scheduling_loop(core: &SchedulerCore, shutdown: &CancellationToken) {
    while !shutdown.is_cancelled() {
        let next = tokio::select! {
            () = shutdown.cancelled() => break,
            next = core.queue.pop() => next,
        };
        let Some((key, cycle)) = next else { break };
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = core.schedule_one(&key, cycle) => {}
        }
        core.queue.done(&key);
    }
}

/// Mirrors the queue's `go wait.Until(p.flushUnschedulablePodsLeftover, 30s)`.
async fn flush_loop(
    queue: SchedulingQueue,
    interval: Duration,
    shutdown: CancellationToken,
) {
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = ticker.tick() => queue.flush_unschedulable_pods_leftover(),
        }
    }
}
