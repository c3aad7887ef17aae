//! The hollow node's flags: mirrors `cmd/kubemark/app/hollow_node.go`
//! (`hollowNodeConfig` and its `addFlags`), as clap arguments that
//! `hollow-node` and `mini-cluster` both flatten into their command lines.
//! How many nodes a process runs is each binary's own flag (`--nodes`).

use std::time::Duration;

use clap::Args;
use stage5_apiserver::app::options::parse_duration;

use super::{HollowKubelet, HollowKubeletConfig, HollowKubeletError};

/// The flags of every hollow node a process runs.
#[derive(Clone, Debug, Args)]
pub struct HollowNodeOptions {
    /// The nodes are named `<prefix><index>`.
    #[arg(long, default_value = "hollow-node-")]
    pub name_prefix: String,
    /// The first node's index (its pod CIDR is `10.244.<index>.0/24`): give
    /// each hollow-node process its own range.
    #[arg(long, default_value_t = 0)]
    pub first_index: u32,
    /// Each node's cpu capacity (a quantity: 4, 3500m).
    #[arg(long, default_value = "4")]
    pub cpu: String,
    /// Each node's memory capacity (8Gi, 16G).
    #[arg(long, default_value = "8Gi")]
    pub memory: String,
    /// Each node's pod capacity (`maxPods`).
    #[arg(long, default_value_t = 110)]
    pub pods: u32,
    /// Each node's ephemeral-storage capacity.
    #[arg(long, default_value = "100Gi")]
    pub ephemeral_storage: String,
    /// The kubelet version the nodes report.
    #[arg(long, default_value = "v1.36.0-mini")]
    pub kubelet_version: String,
    /// How often a node computes its status (`nodeStatusUpdateFrequency`).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub node_status_update_frequency: Duration,
    /// The longest time between two status reports, the Ready heartbeat
    /// (`nodeStatusReportFrequency`).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub node_status_report_frequency: Duration,
    /// How long a node Lease lasts (`nodeLeaseDurationSeconds`); it is renewed
    /// every quarter of that.
    #[arg(long, default_value_t = 40)]
    pub node_lease_duration_seconds: i32,
    /// From a pod's arrival on a node to its Running status.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub pod_start_delay: Duration,
    /// The longest a deleted pod takes to stop (its grace period if shorter).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub pod_stop_delay: Duration,
}

impl HollowNodeOptions {
    /// The configuration of the node with `index`.
    pub fn kubelet_config(&self, index: u32) -> HollowKubeletConfig {
        let renew = Duration::from_secs(
            u64::try_from(self.node_lease_duration_seconds).unwrap_or(40),
        ) / 4;
        HollowKubeletConfig::new(format!("{}{index}", self.name_prefix), index)
            .cpu(self.cpu.clone())
            .memory(self.memory.clone())
            .pods(self.pods)
            .ephemeral_storage(self.ephemeral_storage.clone())
            .kubelet_version(self.kubelet_version.clone())
            .node_lease(self.node_lease_duration_seconds, renew)
            .node_status_frequencies(
                self.node_status_update_frequency,
                self.node_status_report_frequency,
            )
            .pod_start_delay(self.pod_start_delay)
            .pod_stop_delay(self.pod_stop_delay)
    }

    /// `nodes` hollow kubelets from `--first-index` on, writing through
    /// `client`; an error names the first bad flag.
    pub fn kubelets(
        &self,
        client: &kube::Client,
        nodes: u32,
    ) -> Result<Vec<HollowKubelet>, HollowKubeletError> {
        let last = self.first_index.saturating_add(nodes);
        (self.first_index..last)
            .map(|index| {
                HollowKubelet::new(client.clone(), self.kubelet_config(index))
            })
            .collect()
    }
}
