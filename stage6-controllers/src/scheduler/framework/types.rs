//! What the scheduler knows about a node when it decides: [`NodeInfo`] (the
//! node, the pods on it, and the sums of their requests as [`Resource`]s), and
//! why a pod fits nowhere ([`FitError`], [`Diagnosis`]).
//!
//! Mirrors kube-scheduler's
//! [types.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/framework/types.go)
//! (`NodeInfo`, `Resource`, `FitError`, `Diagnosis`, `NoNodeAvailableMsg`) and
//! component-helpers'
//! [resource/helpers.go](https://github.com/kubernetes/component-helpers/blob/v0.36.0/resource/helpers.go)
//! (`PodRequests` with `NonMissingContainerRequests`).
//!
//! Only cpu, memory, ephemeral-storage and the pod count are tracked: extended
//! and hugepages resources (upstream's `ScalarResources`), pod-level resources
//! and in-place resize are not.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::interface::Status;
use apimachinery::api::resource::parse_quantity;

/// Mirrors `DefaultMilliCPURequest`: the cpu a container without a cpu
/// request counts for when nodes are scored (100m).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;

/// Mirrors `DefaultMemoryRequest`: the memory a container without a memory
/// request counts for when nodes are scored (200 MiB).
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// Mirrors `Resource`: amounts of the resources the scheduler tracks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resource {
    /// cpu, in thousandths of a core.
    pub milli_cpu: i64,
    /// memory, in bytes.
    pub memory: i64,
    /// ephemeral-storage, in bytes.
    pub ephemeral_storage: i64,
    /// pods (meaningful in a node's allocatable only).
    pub allowed_pod_number: i64,
}

impl Resource {
    /// Mirrors `NewResource(rl)`: cpu as `MilliValue`, the others as `Value`.
    /// Names other than cpu, memory, ephemeral-storage and pods are ignored, and
    /// so is a value that does not parse (the API server validates them).
    #[must_use]
    pub fn from_resource_list(
        list: Option<&BTreeMap<String, WireQuantity>>,
    ) -> Self {
        let mut resource = Resource::default();
        for (name, quantity) in list.into_iter().flatten() {
            resource.add_named(name, quantity);
        }
        resource
    }

    /// Adds one `name: quantity` entry of a resource list.
    fn add_named(&mut self, name: &str, quantity: &WireQuantity) {
        let Ok(quantity) = parse_quantity(&quantity.0) else {
            tracing::debug!(name, quantity = %quantity.0, "ignoring a quantity that does not parse");
            return;
        };
        match name {
            "cpu" => self.milli_cpu += quantity.milli_value(),
            "memory" => self.memory += quantity.value(),
            "ephemeral-storage" => self.ephemeral_storage += quantity.value(),
            "pods" => self.allowed_pod_number += quantity.value(),
            _ => {}
        }
    }

    /// Mirrors `Add`.
    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        self.allowed_pod_number += other.allowed_pod_number;
    }

    /// Mirrors `SetMaxResource`: each amount becomes the larger of the two.
    pub fn set_max_resource(&mut self, other: &Resource) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
        self.allowed_pod_number =
            self.allowed_pod_number.max(other.allowed_pod_number);
    }

    /// Whether nothing is requested (upstream's check before comparing).
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0 && self.memory == 0 && self.ephemeral_storage == 0
    }
}

/// Which requests [`pod_requests`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestsOf {
    /// The requests as written (what filters compare).
    Requested,
    /// With [`DEFAULT_MILLI_CPU_REQUEST`] and [`DEFAULT_MEMORY_REQUEST`] for a
    /// container that requests no cpu or no memory (upstream's
    /// `NonMissingContainerRequests`, what the least-allocated score counts).
    NonZero,
}

/// One container's requests, with the defaults of `of`.
fn container_requests(container: &Container, of: RequestsOf) -> Resource {
    let requests = container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref());
    let mut resource = Resource::from_resource_list(requests);
    if of == RequestsOf::NonZero {
        let has = |name: &str| requests.is_some_and(|r| r.contains_key(name));
        if !has("cpu") {
            resource.milli_cpu = DEFAULT_MILLI_CPU_REQUEST;
        }
        if !has("memory") {
            resource.memory = DEFAULT_MEMORY_REQUEST;
        }
    }
    resource
}

/// Mirrors component-helpers' `PodRequests`: the sum of the containers'
/// requests; each init container runs alone (with the restartable, sidecar
/// init containers started before it), so the pod needs the larger of the sum
/// and the largest init step; then the pod's `overhead`.
#[must_use]
pub fn pod_requests(pod: &Pod, of: RequestsOf) -> Resource {
    let Some(spec) = pod.spec.as_ref() else {
        return Resource::default();
    };
    let mut requests = Resource::default();
    for container in &spec.containers {
        requests.add(&container_requests(container, of));
    }
    let mut restartable_init = Resource::default();
    let mut init = Resource::default();
    for container in spec.init_containers.iter().flatten() {
        let container_requests = container_requests(container, of);
        let step = if container.restart_policy.as_deref() == Some("Always") {
            // A sidecar keeps running next to the containers.
            requests.add(&container_requests);
            restartable_init.add(&container_requests);
            restartable_init
        } else {
            let mut step = restartable_init;
            step.add(&container_requests);
            step
        };
        init.set_max_resource(&step);
    }
    requests.set_max_resource(&init);
    requests.add(&Resource::from_resource_list(spec.overhead.as_ref()));
    requests.allowed_pod_number = 0;
    requests
}

/// Mirrors `NodeInfo`: a node, the pods the scheduler counts on it (bound or
/// assumed), and what they request.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    node: Arc<Node>,
    pods: Vec<Arc<Pod>>,
    requested: Resource,
    non_zero_requested: Resource,
    allocatable: Resource,
}

impl NodeInfo {
    /// Mirrors `NewNodeInfo()` then `SetNode(node)`: no pods yet.
    #[must_use]
    pub fn new(node: Arc<Node>) -> Self {
        let allocatable = Resource::from_resource_list(
            node.status.as_ref().and_then(|s| s.allocatable.as_ref()),
        );
        NodeInfo {
            node,
            pods: Vec::new(),
            requested: Resource::default(),
            non_zero_requested: Resource::default(),
            allocatable,
        }
    }

    /// Mirrors `AddPod`: counts `pod` and its requests on this node.
    pub fn add_pod(&mut self, pod: Arc<Pod>) {
        self.requested
            .add(&pod_requests(&pod, RequestsOf::Requested));
        self.non_zero_requested
            .add(&pod_requests(&pod, RequestsOf::NonZero));
        self.pods.push(pod);
    }

    /// Mirrors `Node()`.
    #[must_use]
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// The node's name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.node.metadata.name.as_deref().unwrap_or_default()
    }

    /// Mirrors `Pods`: the pods counted on this node.
    #[must_use]
    pub fn pods(&self) -> &[Arc<Pod>] {
        &self.pods
    }

    /// Mirrors `Requested`: the sum of the pods' requests.
    #[must_use]
    pub fn requested(&self) -> &Resource {
        &self.requested
    }

    /// Mirrors `NonZeroRequested`: the same with the default requests of
    /// containers that request no cpu or memory.
    #[must_use]
    pub fn non_zero_requested(&self) -> &Resource {
        &self.non_zero_requested
    }

    /// Mirrors `Allocatable`: the node's `status.allocatable`.
    #[must_use]
    pub fn allocatable(&self) -> &Resource {
        &self.allocatable
    }
}

/// Mirrors `NoNodeAvailableMsg`.
pub const NO_NODE_AVAILABLE_MSG: &str = "nodes are available";

/// Mirrors `Diagnosis`: why each node was filtered out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnosis {
    /// Mirrors `NodeToStatus`: the failed status of each filtered node.
    pub node_to_status: BTreeMap<String, Status>,
    /// Mirrors `UnschedulablePlugins`: the plugins that rejected the pod.
    pub unschedulable_plugins: BTreeSet<&'static str>,
    /// Mirrors `PreFilterMsg`: a `PreFilter` rejection, which holds for every
    /// node.
    pub pre_filter_msg: String,
    /// Mirrors `PostFilterMsg` (always empty: there is no preemption here).
    pub post_filter_msg: String,
}

impl Diagnosis {
    /// Mirrors `AddPluginStatus`.
    pub fn add_plugin_status(&mut self, status: &Status) {
        if !status.plugin().is_empty() && status.is_rejected() {
            self.unschedulable_plugins.insert(status.plugin());
        }
    }
}

/// Mirrors `FitError`: the pod fits on none of `num_all_nodes` nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FitError {
    /// Mirrors `NumAllNodes`.
    pub num_all_nodes: usize,
    /// Mirrors `Diagnosis`.
    pub diagnosis: Diagnosis,
}

impl fmt::Display for FitError {
    /// Mirrors `FitError.Error()`: `0/X nodes are available: <PreFilterMsg>.`
    /// or `0/X nodes are available: <n reason>, <m reason>.` (the reasons
    /// counted over the nodes and sorted as strings), then the `PostFilter`
    /// message, e.g. `0/3 nodes are available: 3 Insufficient cpu.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0/{} {NO_NODE_AVAILABLE_MSG}:", self.num_all_nodes)?;
        let diagnosis = &self.diagnosis;
        if diagnosis.pre_filter_msg.is_empty() {
            let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
            for status in diagnosis.node_to_status.values() {
                for reason in status.reasons() {
                    *reasons.entry(reason).or_default() += 1;
                }
            }
            let mut histogram: Vec<String> = reasons
                .into_iter()
                .map(|(reason, count)| format!("{count} {reason}"))
                .collect();
            histogram.sort();
            if !histogram.is_empty() {
                write!(f, " {}.", histogram.join(", "))?;
            }
        } else {
            write!(f, " {}.", diagnosis.pre_filter_msg)?;
        }
        if !diagnosis.post_filter_msg.is_empty() {
            write!(f, " {}.", diagnosis.post_filter_msg)?;
        }
        Ok(())
    }
}

impl std::error::Error for FitError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::framework::interface::Code;
    use serde_json::json;

    fn pod(spec: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec}))
            .expect("pod")
    }

    /// The example of upstream's `computePodResourceRequest` doc: init
    /// containers run one at a time, containers together.
    #[test]
    fn test_compute_pod_resource_request_example() {
        let p = pod(json!({
            "initContainers": [
                {"name": "ic1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                {"name": "ic2", "resources": {"requests": {"cpu": "2", "memory": "3G"}}},
            ],
            "containers": [
                {"name": "c1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                {"name": "c2", "resources": {"requests": {"cpu": "1", "memory": "1G"}}},
            ],
        }));
        let requests = pod_requests(&p, RequestsOf::Requested);
        assert_eq!(requests.milli_cpu, 3000);
        assert_eq!(requests.memory, 3_000_000_000);
    }

    /// A sidecar (restartable init container) adds to the containers' sum.
    #[test]
    fn test_pod_requests_sidecar_and_overhead() {
        let p = pod(json!({
            "initContainers": [
                {"name": "sidecar", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "500m"}}},
                {"name": "init", "resources": {"requests": {"cpu": "1"}}},
            ],
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            "overhead": {"cpu": "100m", "memory": "10Mi"},
        }));
        let requests = pod_requests(&p, RequestsOf::Requested);
        // max(1 + 0.5, 0.5 + 1) + 0.1
        assert_eq!(requests.milli_cpu, 1600);
        assert_eq!(requests.memory, 10 << 20);
    }

    /// Containers without cpu or memory requests count the defaults when
    /// scoring; an explicit zero stays zero.
    #[test]
    fn test_non_zero_requests() {
        let p = pod(json!({"containers": [
            {"name": "a"},
            {"name": "b", "resources": {"requests": {"cpu": "0", "memory": "1Mi"}}},
        ]}));
        let non_zero = pod_requests(&p, RequestsOf::NonZero);
        assert_eq!(non_zero.milli_cpu, DEFAULT_MILLI_CPU_REQUEST);
        assert_eq!(non_zero.memory, DEFAULT_MEMORY_REQUEST + (1 << 20));
        let requested = pod_requests(&p, RequestsOf::Requested);
        assert_eq!(requested.milli_cpu, 0);
        assert_eq!(requested.memory, 1 << 20);
    }

    /// Mirrors `TestFitError_Error`'s shapes: counted, sorted reasons.
    #[test]
    fn test_fit_error_error() {
        let mut diagnosis = Diagnosis::default();
        for (node, reasons) in [
            ("n1", vec!["Insufficient cpu"]),
            ("n2", vec!["Insufficient cpu", "Insufficient memory"]),
            ("n3", vec!["node(s) were unschedulable"]),
        ] {
            diagnosis
                .node_to_status
                .insert(node.into(), Status::new(Code::Unschedulable, reasons));
        }
        let error = FitError {
            num_all_nodes: 3,
            diagnosis,
        };
        assert_eq!(
            error.to_string(),
            "0/3 nodes are available: 1 Insufficient memory, \
             1 node(s) were unschedulable, 2 Insufficient cpu."
        );
        let pre_filter = FitError {
            num_all_nodes: 2,
            diagnosis: Diagnosis {
                pre_filter_msg: "no".into(),
                ..Diagnosis::default()
            },
        };
        assert_eq!(pre_filter.to_string(), "0/2 nodes are available: no.");
    }
}
