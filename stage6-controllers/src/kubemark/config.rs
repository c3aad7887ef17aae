//! A hollow kubelet's configuration: the part of kubemark's
//! `GetHollowKubeletConfig` (`pkg/kubemark/hollow_kubelet.go`) and of the
//! kubelet's `KubeletConfiguration` that a kubelet without containers uses.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::time::Duration;

use apimachinery::api::resource::{QuantityError, parse_quantity};

/// The most hollow nodes that get distinct pod CIDRs (`10.244.0.0/24` up to
/// `10.255.255.0/24`).
pub const MAX_NODE_INDEX: u32 = 12 * 256 - 1;

/// What can be wrong with a [`HollowKubeletConfig`].
#[derive(Debug, thiserror::Error)]
pub enum HollowKubeletError {
    /// A capacity flag is not a quantity.
    #[error("the node's {resource} capacity {value:?} is not a quantity")]
    InvalidQuantity {
        /// `cpu`, `memory` or `ephemeral-storage`.
        resource: &'static str,
        /// What was given.
        value: String,
        /// Why it does not parse.
        #[source]
        source: QuantityError,
    },
    /// The node index has no pod CIDR left.
    #[error(
        "node index {0} is past {MAX_NODE_INDEX}, the last with its own pod CIDR"
    )]
    NodeIndexOutOfRange(u32),
}

/// How a [`HollowKubelet`](super::HollowKubelet) behaves: kubemark's `HollowKubeletOptions` and the
/// kubelet configuration fields that matter here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HollowKubeletConfig {
    /// The Node's name (and its Lease's).
    pub node_name: String,
    /// This node's number among the hollow nodes: its pod CIDR is
    /// `10.<244 + index / 256>.<index % 256>.0/24` (pod IPs from `.2`) and its
    /// InternalIP `10.240.0.1` plus the index.
    pub node_index: u32,
    /// `status.capacity` and `allocatable` cpu. Default `"4"`.
    pub cpu: String,
    /// Memory. Default `"8Gi"`.
    pub memory: String,
    /// `maxPods`. Default 110.
    pub pods: u32,
    /// Ephemeral storage. Default `"100Gi"`.
    pub ephemeral_storage: String,
    /// `nodeInfo.kubeletVersion`. Default `v1.36.0-mini`.
    pub kubelet_version: String,
    /// `--node-labels`: added to the default labels.
    pub node_labels: BTreeMap<String, String>,
    /// `nodeLeaseDurationSeconds`. Default 40.
    pub node_lease_duration_seconds: i32,
    /// How often the Lease is renewed. Default 10 s (a quarter of the
    /// duration, upstream's `NodeLeaseRenewIntervalFraction`).
    pub node_lease_renew_interval: Duration,
    /// `nodeStatusUpdateFrequency`: how often the status is computed. Default
    /// 10 s.
    pub node_status_update_frequency: Duration,
    /// `nodeStatusReportFrequency`: the longest time between two status
    /// reports (the `Ready` heartbeat). Default 5 minutes.
    pub node_status_report_frequency: Duration,
    /// From a pod's arrival on the node to its Running status. Default 1 s.
    pub pod_start_delay: Duration,
    /// The longest a deleted pod takes to stop (its grace period if shorter).
    /// Default 1 s.
    pub pod_stop_delay: Duration,
}

impl HollowKubeletConfig {
    /// A hollow kubelet for `node_name`, number `node_index`, with kubemark's
    /// defaults (see the fields).
    #[must_use]
    pub fn new(node_name: impl Into<String>, node_index: u32) -> Self {
        HollowKubeletConfig {
            node_name: node_name.into(),
            node_index,
            cpu: "4".into(),
            memory: "8Gi".into(),
            pods: 110,
            ephemeral_storage: "100Gi".into(),
            kubelet_version: "v1.36.0-mini".into(),
            node_labels: BTreeMap::new(),
            node_lease_duration_seconds: 40,
            node_lease_renew_interval: Duration::from_secs(10),
            node_status_update_frequency: Duration::from_secs(10),
            node_status_report_frequency: Duration::from_secs(5 * 60),
            pod_start_delay: Duration::from_secs(1),
            pod_stop_delay: Duration::from_secs(1),
        }
    }

    /// Sets the cpu capacity (a quantity: `"4"`, `"3500m"`).
    #[must_use]
    pub fn cpu(mut self, cpu: impl Into<String>) -> Self {
        self.cpu = cpu.into();
        self
    }

    /// Sets the memory capacity (`"8Gi"`).
    #[must_use]
    pub fn memory(mut self, memory: impl Into<String>) -> Self {
        self.memory = memory.into();
        self
    }

    /// Sets `maxPods`.
    #[must_use]
    pub fn pods(mut self, pods: u32) -> Self {
        self.pods = pods;
        self
    }

    /// Sets the ephemeral-storage capacity.
    #[must_use]
    pub fn ephemeral_storage(mut self, storage: impl Into<String>) -> Self {
        self.ephemeral_storage = storage.into();
        self
    }

    /// Sets the reported kubelet version.
    #[must_use]
    pub fn kubelet_version(mut self, version: impl Into<String>) -> Self {
        self.kubelet_version = version.into();
        self
    }

    /// Adds a node label.
    #[must_use]
    pub fn node_label(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.node_labels.insert(key.into(), value.into());
        self
    }

    /// Sets the Lease's duration and renew interval.
    #[must_use]
    pub fn node_lease(
        mut self,
        duration_seconds: i32,
        renew_interval: Duration,
    ) -> Self {
        self.node_lease_duration_seconds = duration_seconds;
        self.node_lease_renew_interval = renew_interval;
        self
    }

    /// Sets `nodeStatusUpdateFrequency` and `nodeStatusReportFrequency`.
    #[must_use]
    pub fn node_status_frequencies(
        mut self,
        update: Duration,
        report: Duration,
    ) -> Self {
        self.node_status_update_frequency = update;
        self.node_status_report_frequency = report;
        self
    }

    /// Sets the pod start delay.
    #[must_use]
    pub fn pod_start_delay(mut self, delay: Duration) -> Self {
        self.pod_start_delay = delay;
        self
    }

    /// Sets the pod stop delay.
    #[must_use]
    pub fn pod_stop_delay(mut self, delay: Duration) -> Self {
        self.pod_stop_delay = delay;
        self
    }

    /// The node's InternalIP: `10.240.0.1` plus the index.
    #[must_use]
    pub fn internal_ip(&self) -> Ipv4Addr {
        Ipv4Addr::from(
            u32::from(Ipv4Addr::new(10, 240, 0, 1)).saturating_add(self.node_index),
        )
    }

    /// The node's first pod-CIDR address (`10.244.<index>.0` for the first 256).
    pub(crate) fn pod_network(&self) -> Ipv4Addr {
        Ipv4Addr::from(
            u32::from(Ipv4Addr::new(10, 244, 0, 0))
                .saturating_add(self.node_index << 8),
        )
    }

    /// The node's pod CIDR, `spec.podCIDR`.
    #[must_use]
    pub fn pod_cidr(&self) -> String {
        format!("{}/24", self.pod_network())
    }

    /// Checks the capacities and the index.
    pub(crate) fn validate(&self) -> Result<(), HollowKubeletError> {
        for (resource, value) in [
            ("cpu", &self.cpu),
            ("memory", &self.memory),
            ("ephemeral-storage", &self.ephemeral_storage),
        ] {
            parse_quantity(value).map_err(|source| {
                HollowKubeletError::InvalidQuantity {
                    resource,
                    value: value.clone(),
                    source,
                }
            })?;
        }
        if self.node_index > MAX_NODE_INDEX {
            return Err(HollowKubeletError::NodeIndexOutOfRange(self.node_index));
        }
        Ok(())
    }
}
