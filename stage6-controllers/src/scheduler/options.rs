//! The scheduler's flags: mirrors `cmd/kube-scheduler/app/options` with the
//! few settings of a `KubeSchedulerConfiguration` that matter here (its
//! profile's `schedulerName`, `podInitialBackoffSeconds`,
//! `podMaxBackoffSeconds`, `podMaxInUnschedulablePodsDuration`), as clap
//! arguments that `mini-scheduler` and `mini-cluster` both flatten.

use std::time::Duration;

use clap::Args;
use stage5_apiserver::app::options::parse_duration;

use super::{DEFAULT_SCHEDULER_NAME, SchedulerConfig};

/// The scheduler's flags.
#[derive(Clone, Debug, Args)]
pub struct SchedulerOptions {
    /// The `schedulerName` this scheduler serves (its profile's name).
    #[arg(long, default_value = DEFAULT_SCHEDULER_NAME)]
    pub scheduler_name: String,
    /// The first retry's delay (`podInitialBackoffSeconds`).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub pod_initial_backoff: Duration,
    /// The longest retry delay (`podMaxBackoffSeconds`).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub pod_max_backoff: Duration,
    /// How long an unschedulable pod waits for a cluster event before it is
    /// tried again anyway (`podMaxInUnschedulablePodsDuration`).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub pod_max_in_unschedulable_pods_duration: Duration,
}

impl SchedulerOptions {
    /// The scheduler's configuration.
    pub fn config(&self) -> SchedulerConfig {
        SchedulerConfig::default()
            .scheduler_name(self.scheduler_name.clone())
            .pod_initial_backoff(self.pod_initial_backoff)
            .pod_max_backoff(self.pod_max_backoff)
            .pod_max_in_unschedulable_pods_duration(
                self.pod_max_in_unschedulable_pods_duration,
            )
    }
}
