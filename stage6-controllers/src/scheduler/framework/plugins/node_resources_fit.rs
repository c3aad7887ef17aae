//! `NodeResourcesFit`: a pod fits a node when its requests fit in the node's
//! `status.allocatable` minus what the pods already there request; among the
//! nodes it fits, the least allocated scores highest.
//!
//! Mirrors kube-scheduler's
//! [noderesources/fit.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/framework/plugins/noderesources/fit.go)
//! (`Fit.PreFilter`, `Fit.Filter`, `Fits`, `fitsRequest`,
//! `computePodResourceRequest`, `Fit.PreScore`, `Fit.Score`),
//! [resource_allocation.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/framework/plugins/noderesources/resource_allocation.go)
//! (`resourceAllocationScorer.score`, `calculateResourceAllocatableRequest`)
//! and
//! [least_allocated.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/framework/plugins/noderesources/least_allocated.go)
//! (`leastResourceScorer`, `leastRequestedScore`): the default `LeastAllocated`
//! scoring strategy over cpu and memory, weight 1 each.
//!
//! The filter compares the requests as written; the score counts a container
//! without a cpu or memory request as 100m and 200 MiB
//! (`NonMissingContainerRequests`), so that pods without requests still
//! spread. Extended resources and `ignoredResources` are not supported.

use k8s_openapi::api::core::v1::Pod;

use crate::scheduler::framework::interface::{
    Code, CycleState, FilterPlugin, MAX_NODE_SCORE, Plugin, PreFilterPlugin,
    PreScorePlugin, ScorePlugin, Status,
};
use crate::scheduler::framework::types::{
    NodeInfo, RequestsOf, Resource, pod_requests,
};

/// Mirrors `names.NodeResourcesFit`.
pub const NAME: &str = "NodeResourcesFit";

/// Mirrors `preFilterStateKey`.
const PRE_FILTER_STATE_KEY: &str = "PreFilterNodeResourcesFit";

/// Mirrors `preScoreStateKey`.
const PRE_SCORE_STATE_KEY: &str = "PreScoreNodeResourcesFit";

/// A resource the scorer weighs (upstream's `config.ResourceSpec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoredResource {
    /// `cpu`, in millicores.
    Cpu,
    /// `memory`, in bytes.
    Memory,
    /// `ephemeral-storage`, in bytes.
    EphemeralStorage,
}

/// Mirrors `preFilterState`: the pod's requests.
#[derive(Clone, Copy, Debug)]
struct PreFilterState(Resource);

/// Mirrors `preScoreState`: the pod's non-zero requests.
#[derive(Clone, Copy, Debug)]
struct PreScoreState(Resource);

/// Mirrors `InsufficientResource`: which resource is short on a node, and by
/// how much.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsufficientResource {
    /// `cpu`, `memory`, `ephemeral-storage` or `pods`.
    pub resource_name: &'static str,
    /// The filter's reason (`Insufficient cpu`, `Too many pods`).
    pub reason: &'static str,
    /// What the pod requests.
    pub requested: i64,
    /// What the pods on the node request.
    pub used: i64,
    /// The node's allocatable amount.
    pub capacity: i64,
}

/// Mirrors `Fit` with the `LeastAllocated` scoring strategy.
#[derive(Clone, Debug)]
pub struct NodeResourcesFit {
    /// Mirrors `ScoringStrategy.Resources`: what the score weighs, and how
    /// much.
    resources: Vec<(ScoredResource, i64)>,
}

impl Default for NodeResourcesFit {
    /// Upstream's defaults: cpu and memory, weight 1 each.
    fn default() -> Self {
        NodeResourcesFit {
            resources: vec![(ScoredResource::Cpu, 1), (ScoredResource::Memory, 1)],
        }
    }
}

impl NodeResourcesFit {
    /// A plugin scoring `resources` with their weights (upstream validates
    /// weights between 1 and 100).
    #[must_use]
    pub fn with_resources(resources: Vec<(ScoredResource, i64)>) -> Self {
        NodeResourcesFit { resources }
    }
}

/// Mirrors `computePodResourceRequest`: the requests the filter compares.
#[must_use]
pub fn compute_pod_resource_request(pod: &Pod) -> Resource {
    pod_requests(pod, RequestsOf::Requested)
}

/// Mirrors `Fits`: what the node lacks for the pod, if anything.
#[must_use]
pub fn fits(pod: &Pod, node_info: &NodeInfo) -> Vec<InsufficientResource> {
    fits_request(&compute_pod_resource_request(pod), node_info)
}

/// Mirrors `fitsRequest`: the pod count first, then each requested resource
/// against `allocatable - requested`.
fn fits_request(
    pod_request: &Resource,
    node_info: &NodeInfo,
) -> Vec<InsufficientResource> {
    let mut insufficient = Vec::with_capacity(4);
    let allocatable = node_info.allocatable();
    let used = node_info.requested();
    let pods = i64::try_from(node_info.pods().len()).unwrap_or(i64::MAX);
    if pods + 1 > allocatable.allowed_pod_number {
        insufficient.push(InsufficientResource {
            resource_name: "pods",
            reason: "Too many pods",
            requested: 1,
            used: pods,
            capacity: allocatable.allowed_pod_number,
        });
    }
    if pod_request.is_zero() {
        return insufficient;
    }
    let checks = [
        (
            "cpu",
            "Insufficient cpu",
            pod_request.milli_cpu,
            used.milli_cpu,
            allocatable.milli_cpu,
        ),
        (
            "memory",
            "Insufficient memory",
            pod_request.memory,
            used.memory,
            allocatable.memory,
        ),
        (
            "ephemeral-storage",
            "Insufficient ephemeral-storage",
            pod_request.ephemeral_storage,
            used.ephemeral_storage,
            allocatable.ephemeral_storage,
        ),
    ];
    for (resource_name, reason, requested, used, capacity) in checks {
        if requested > 0 && requested > capacity - used {
            insufficient.push(InsufficientResource {
                resource_name,
                reason,
                requested,
                used,
                capacity,
            });
        }
    }
    insufficient
}

/// Mirrors `leastRequestedScore`: the unused share of `capacity` after
/// `requested`, from 0 to [`MAX_NODE_SCORE`] (0 for no capacity or too much
/// requested).
#[must_use]
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

impl Plugin for NodeResourcesFit {
    fn name(&self) -> &'static str {
        NAME
    }
}

impl PreFilterPlugin for NodeResourcesFit {
    /// Mirrors `Fit.PreFilter`: computes the pod's requests once.
    fn pre_filter(&self, state: &mut CycleState, pod: &Pod) -> Status {
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState(compute_pod_resource_request(pod)),
        );
        Status::success()
    }
}

impl FilterPlugin for NodeResourcesFit {
    /// Mirrors `Fit.Filter`: `Unschedulable` with every insufficient
    /// resource's reason.
    fn filter(
        &self,
        state: &CycleState,
        _pod: &Pod,
        node_info: &NodeInfo,
    ) -> Status {
        let Some(PreFilterState(pod_request)) = state.read(PRE_FILTER_STATE_KEY)
        else {
            return Status::error(format!(
                "error reading {PRE_FILTER_STATE_KEY:?} from cycleState: not found"
            ));
        };
        let insufficient = fits_request(pod_request, node_info);
        if insufficient.is_empty() {
            return Status::success();
        }
        Status::new(Code::Unschedulable, insufficient.iter().map(|r| r.reason))
    }
}

impl PreScorePlugin for NodeResourcesFit {
    /// Mirrors `Fit.PreScore`: computes the pod's non-zero requests once.
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _nodes: &[&NodeInfo],
    ) -> Status {
        state.write(
            PRE_SCORE_STATE_KEY,
            PreScoreState(pod_requests(pod, RequestsOf::NonZero)),
        );
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesFit {
    /// Mirrors `Fit.Score` with `leastResourceScorer`: the weighted mean of
    /// [`least_requested_score`] over the scored resources the node has
    /// (`calculateResourceAllocatableRequest` skips those it has none of).
    fn score(
        &self,
        state: &CycleState,
        pod: &Pod,
        node_info: &NodeInfo,
    ) -> Result<i64, Status> {
        let pod_request = match state.read(PRE_SCORE_STATE_KEY) {
            Some(PreScoreState(request)) => *request,
            None => pod_requests(pod, RequestsOf::NonZero),
        };
        let allocatable = node_info.allocatable();
        let non_zero = node_info.non_zero_requested();
        let requested = node_info.requested();
        let (mut node_score, mut weight_sum) = (0, 0);
        for (resource, weight) in &self.resources {
            let (capacity, total) = match resource {
                ScoredResource::Cpu => (
                    allocatable.milli_cpu,
                    non_zero.milli_cpu + pod_request.milli_cpu,
                ),
                ScoredResource::Memory => {
                    (allocatable.memory, non_zero.memory + pod_request.memory)
                }
                ScoredResource::EphemeralStorage => (
                    allocatable.ephemeral_storage,
                    requested.ephemeral_storage + pod_request.ephemeral_storage,
                ),
            };
            if capacity == 0 {
                continue;
            }
            node_score += least_requested_score(total, capacity) * weight;
            weight_sum += weight;
        }
        Ok(if weight_sum == 0 {
            0
        } else {
            node_score / weight_sum
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::Node;
    use serde_json::{Map, Value, json};

    use super::*;

    /// Mirrors `framework.Resource{MilliCPU, Memory, EphemeralStorage}` in the
    /// tests.
    fn r(milli_cpu: i64, memory: i64) -> Resource {
        Resource {
            milli_cpu,
            memory,
            ..Resource::default()
        }
    }

    /// Mirrors `Resource.ResourceList()`: every amount, zeros included.
    fn resource_list(resource: &Resource) -> Value {
        json!({
            "cpu": format!("{}m", resource.milli_cpu),
            "memory": resource.memory.to_string(),
            "pods": resource.allowed_pod_number.to_string(),
            "ephemeral-storage": resource.ephemeral_storage.to_string(),
        })
    }

    /// Mirrors `newResourcePod`: one container per usage.
    fn new_resource_pod(usage: &[Resource]) -> Pod {
        let containers: Vec<Value> = usage
            .iter()
            .enumerate()
            .map(|(i, u)| json!({"name": format!("c{i}"), "resources": {"requests": resource_list(u)}}))
            .collect();
        serde_json::from_value(json!({"spec": {"containers": containers}}))
            .expect("pod")
    }

    /// Mirrors `newResourceInitPod`.
    fn new_resource_init_pod(mut pod: Pod, usage: &[Resource]) -> Pod {
        let init = new_resource_pod(usage).spec.expect("spec").containers;
        pod.spec.as_mut().expect("spec").init_containers = Some(init);
        pod
    }

    /// Mirrors `newResourceOverheadPod`.
    fn new_resource_overhead_pod(mut pod: Pod, cpu: &str, memory: &str) -> Pod {
        let overhead = serde_json::from_value(json!({"cpu": cpu, "memory": memory}))
            .expect("overhead");
        pod.spec.as_mut().expect("spec").overhead = Some(overhead);
        pod
    }

    /// `framework.NewNodeInfo(pods...)` then `SetNode` of a node with this
    /// allocatable.
    fn node_info(allocatable: Value, pods: &[Pod]) -> NodeInfo {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "node"},
            "status": {"capacity": allocatable, "allocatable": allocatable},
        }))
        .expect("node");
        let mut info = NodeInfo::new(Arc::new(node));
        for pod in pods {
            info.add_pod(Arc::new(pod.clone()));
        }
        info
    }

    /// Mirrors `makeAllocatableResources(milliCPU, memory, pods, 0, storage, 0)`.
    fn allocatable(milli_cpu: i64, memory: i64, pods: i64, storage: i64) -> Value {
        json!({
            "cpu": format!("{milli_cpu}m"),
            "memory": memory.to_string(),
            "pods": pods.to_string(),
            "ephemeral-storage": storage.to_string(),
        })
    }

    fn run_filter(pod: &Pod, info: &NodeInfo) -> Status {
        let fit = NodeResourcesFit::default();
        let mut state = CycleState::new();
        assert!(fit.pre_filter(&mut state, pod).is_success());
        fit.filter(&state, pod, info)
    }

    fn insufficient(
        name: &'static str,
        requested: i64,
        used: i64,
        capacity: i64,
    ) -> InsufficientResource {
        let reason = match name {
            "cpu" => "Insufficient cpu",
            "memory" => "Insufficient memory",
            _ => "Insufficient ephemeral-storage",
        };
        InsufficientResource {
            resource_name: name,
            reason,
            requested,
            used,
            capacity,
        }
    }

    /// Mirrors `TestEnoughRequests` (the cpu, memory and overhead cases; the
    /// extended-resource cases have no counterpart here).
    #[test]
    fn test_enough_requests() {
        let empty = || {
            serde_json::from_value::<Pod>(json!({"spec": {"containers": []}}))
                .expect("pod")
        };
        let cases: Vec<(&str, Pod, Pod, Vec<InsufficientResource>)> = vec![
            (
                "no resources requested always fits",
                empty(),
                new_resource_pod(&[r(10, 20)]),
                vec![],
            ),
            (
                "too many resources fails",
                new_resource_pod(&[r(1, 1)]),
                new_resource_pod(&[r(10, 20)]),
                vec![
                    insufficient("cpu", 1, 10, 10),
                    insufficient("memory", 1, 20, 20),
                ],
            ),
            (
                "too many resources fails due to init container cpu",
                new_resource_init_pod(new_resource_pod(&[r(1, 1)]), &[r(3, 1)]),
                new_resource_pod(&[r(8, 19)]),
                vec![insufficient("cpu", 3, 8, 10)],
            ),
            (
                "too many resources fails due to highest init container cpu",
                new_resource_init_pod(
                    new_resource_pod(&[r(1, 1)]),
                    &[r(3, 1), r(2, 1)],
                ),
                new_resource_pod(&[r(8, 19)]),
                vec![insufficient("cpu", 3, 8, 10)],
            ),
            (
                "too many resources fails due to init container memory",
                new_resource_init_pod(new_resource_pod(&[r(1, 1)]), &[r(1, 3)]),
                new_resource_pod(&[r(9, 19)]),
                vec![insufficient("memory", 3, 19, 20)],
            ),
            (
                "too many resources fails due to highest init container memory",
                new_resource_init_pod(
                    new_resource_pod(&[r(1, 1)]),
                    &[r(1, 3), r(1, 2)],
                ),
                new_resource_pod(&[r(9, 19)]),
                vec![insufficient("memory", 3, 19, 20)],
            ),
            (
                "init container fits because it's the max, not sum, of containers and init containers",
                new_resource_init_pod(new_resource_pod(&[r(1, 1)]), &[r(1, 1)]),
                new_resource_pod(&[r(9, 19)]),
                vec![],
            ),
            (
                "multiple init containers fit because it's the max, not sum, of containers and init containers",
                new_resource_init_pod(
                    new_resource_pod(&[r(1, 1)]),
                    &[r(1, 1), r(1, 1)],
                ),
                new_resource_pod(&[r(9, 19)]),
                vec![],
            ),
            (
                "both resources fit",
                new_resource_pod(&[r(1, 1)]),
                new_resource_pod(&[r(5, 5)]),
                vec![],
            ),
            (
                "one resource memory fits",
                new_resource_pod(&[r(2, 1)]),
                new_resource_pod(&[r(9, 5)]),
                vec![insufficient("cpu", 2, 9, 10)],
            ),
            (
                "one resource cpu fits",
                new_resource_pod(&[r(1, 2)]),
                new_resource_pod(&[r(5, 19)]),
                vec![insufficient("memory", 2, 19, 20)],
            ),
            (
                "equal edge case",
                new_resource_pod(&[r(5, 1)]),
                new_resource_pod(&[r(5, 19)]),
                vec![],
            ),
            (
                "equal edge case for init container",
                new_resource_init_pod(new_resource_pod(&[r(4, 1)]), &[r(5, 1)]),
                new_resource_pod(&[r(5, 19)]),
                vec![],
            ),
            (
                "resources + pod overhead fits",
                new_resource_overhead_pod(new_resource_pod(&[r(1, 1)]), "3m", "13"),
                new_resource_pod(&[r(5, 5)]),
                vec![],
            ),
            (
                "requests + overhead does not fit for memory",
                new_resource_overhead_pod(new_resource_pod(&[r(1, 1)]), "1m", "15"),
                new_resource_pod(&[r(5, 5)]),
                vec![insufficient("memory", 16, 5, 20)],
            ),
        ];
        for (name, pod, existing, want) in cases {
            let info = node_info(allocatable(10, 20, 32, 20), &[existing]);
            let want_status = if want.is_empty() {
                Status::success()
            } else {
                Status::new(Code::Unschedulable, want.iter().map(|r| r.reason))
            };
            assert_eq!(run_filter(&pod, &info), want_status, "{name}");
            assert_eq!(fits(&pod, &info), want, "{name}");
        }
    }

    /// Mirrors `TestPreFilterDisabled`.
    #[test]
    fn test_pre_filter_disabled() {
        let pod: Pod = serde_json::from_value(json!({"spec": {"containers": []}}))
            .expect("pod");
        let info = node_info(json!({}), &[]);
        let got =
            NodeResourcesFit::default().filter(&CycleState::new(), &pod, &info);
        assert_eq!(
            got,
            Status::error(
                r#"error reading "PreFilterNodeResourcesFit" from cycleState: not found"#
            )
        );
    }

    /// Mirrors `TestNotEnoughRequests`: a node allowing one pod, which it has.
    #[test]
    fn test_not_enough_requests() {
        let empty =
            serde_json::from_value::<Pod>(json!({"spec": {"containers": []}}))
                .expect("pod");
        let cases = [
            (
                "even without specified resources predicate fails when there's no space for additional pod",
                empty,
                new_resource_pod(&[r(10, 20)]),
            ),
            (
                "even if both resources fit predicate fails when there's no space for additional pod",
                new_resource_pod(&[r(1, 1)]),
                new_resource_pod(&[r(5, 5)]),
            ),
            (
                "even for equal edge case predicate fails when there's no space for additional pod",
                new_resource_pod(&[r(5, 1)]),
                new_resource_pod(&[r(5, 19)]),
            ),
            (
                "even for equal edge case predicate fails when there's no space for additional pod due to init container",
                new_resource_init_pod(new_resource_pod(&[r(5, 1)]), &[r(5, 1)]),
                new_resource_pod(&[r(5, 19)]),
            ),
        ];
        for (name, pod, existing) in cases {
            let info = node_info(allocatable(10, 20, 1, 0), &[existing]);
            assert_eq!(
                run_filter(&pod, &info),
                Status::new(Code::Unschedulable, ["Too many pods"]),
                "{name}"
            );
        }
    }

    /// Mirrors `TestStorageRequests`.
    #[test]
    fn test_storage_requests() {
        let storage = |bytes: i64| Resource {
            ephemeral_storage: bytes,
            ..Resource::default()
        };
        let cases = [
            (
                "due to container scratch disk",
                new_resource_pod(&[r(1, 1)]),
                new_resource_pod(&[r(10, 10)]),
                Status::new(Code::Unschedulable, ["Insufficient cpu"]),
            ),
            (
                "pod fit",
                new_resource_pod(&[r(1, 1)]),
                new_resource_pod(&[r(2, 10)]),
                Status::success(),
            ),
            (
                "storage ephemeral local storage request exceeds allocatable",
                new_resource_pod(&[storage(25)]),
                new_resource_pod(&[r(2, 2)]),
                Status::new(Code::Unschedulable, ["Insufficient ephemeral-storage"]),
            ),
            (
                "pod fits",
                new_resource_pod(&[storage(10)]),
                new_resource_pod(&[r(2, 2)]),
                Status::success(),
            ),
        ];
        for (name, pod, existing, want) in cases {
            let info = node_info(allocatable(10, 20, 32, 20), &[existing]);
            assert_eq!(run_filter(&pod, &info), want, "{name}");
        }
    }

    /// Mirrors `st.MakePod().Req(...)...`: one container per request map.
    fn make_pod(requests: &[(&str, &str)]) -> Pod {
        let containers: Vec<Value> = requests
            .iter()
            .map(|(cpu, memory)| json!({"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}))
            .collect();
        serde_json::from_value(json!({"spec": {"containers": containers}}))
            .expect("pod")
    }

    /// Mirrors `st.MakeNode().Name(name).Capacity(...)`.
    fn make_node(name: &str, capacity: &[(&str, &str)]) -> Node {
        let list: Map<String, Value> = capacity
            .iter()
            .map(|(k, v)| ((*k).to_string(), Value::from(*v)))
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "status": {"capacity": list, "allocatable": list},
        }))
        .expect("node")
    }

    /// Mirrors `TestLeastAllocatedScoringStrategy` (the cases with valid
    /// weights over cpu and memory).
    #[test]
    fn test_least_allocated_scoring_strategy() {
        type Case<'a> = (
            &'a str,
            Vec<(&'a str, &'a str)>,
            Vec<Node>,
            Vec<(&'a str, Pod)>,
            Vec<i64>,
            Vec<(ScoredResource, i64)>,
        );
        let default = || vec![(ScoredResource::Cpu, 1), (ScoredResource::Memory, 1)];
        let two_nodes = |cpu1: &str, mem1: &str, cpu2: &str, mem2: &str| {
            vec![
                make_node("node1", &[("cpu", cpu1), ("memory", mem1)]),
                make_node("node2", &[("cpu", cpu2), ("memory", mem2)]),
            ]
        };
        let no_containers = || make_pod(&[]);
        let cases: Vec<Case> = vec![
            (
                "nothing scheduled, nothing requested",
                vec![],
                two_nodes("4000", "10000", "4000", "10000"),
                vec![],
                vec![MAX_NODE_SCORE, MAX_NODE_SCORE],
                default(),
            ),
            (
                "nothing scheduled, resources requested, differently sized nodes",
                vec![("1000", "2000"), ("2000", "3000")],
                two_nodes("4000", "10000", "6000", "10000"),
                vec![],
                vec![37, 50],
                default(),
            ),
            (
                "no resources requested, pods scheduled",
                vec![],
                two_nodes("4000", "10000", "4000", "10000"),
                vec![
                    ("node1", no_containers()),
                    ("node1", no_containers()),
                    ("node2", no_containers()),
                    ("node2", no_containers()),
                ],
                vec![MAX_NODE_SCORE, MAX_NODE_SCORE],
                default(),
            ),
            (
                "no resources requested, pods scheduled with resources",
                vec![],
                two_nodes("10000", "20000", "10000", "20000"),
                vec![
                    ("node1", make_pod(&[("3000", "0")])),
                    ("node1", make_pod(&[("3000", "0")])),
                    ("node2", make_pod(&[("3000", "0")])),
                    ("node2", make_pod(&[("3000", "5000")])),
                ],
                vec![70, 57],
                default(),
            ),
            (
                "resources requested, pods scheduled with resources",
                vec![("1000", "2000"), ("2000", "3000")],
                two_nodes("10000", "20000", "10000", "20000"),
                vec![
                    ("node1", make_pod(&[("3000", "0")])),
                    ("node2", make_pod(&[("3000", "5000")])),
                ],
                vec![57, 45],
                default(),
            ),
            (
                "resources requested, pods scheduled with resources, differently sized nodes",
                vec![("1000", "2000"), ("2000", "3000")],
                two_nodes("10000", "20000", "10000", "50000"),
                vec![
                    ("node1", make_pod(&[("3000", "0")])),
                    ("node2", make_pod(&[("3000", "5000")])),
                ],
                vec![57, 60],
                default(),
            ),
            (
                "requested resources exceed node capacity",
                vec![("3000", "0")],
                two_nodes("4000", "10000", "4000", "10000"),
                vec![
                    ("node1", make_pod(&[("3000", "0")])),
                    ("node2", make_pod(&[("3000", "5000")])),
                ],
                vec![50, 25],
                default(),
            ),
            (
                "zero node resources, pods scheduled with resources",
                vec![],
                vec![make_node("node1", &[]), make_node("node2", &[])],
                vec![
                    ("node1", make_pod(&[("3000", "0")])),
                    ("node2", make_pod(&[("3000", "5000")])),
                ],
                vec![0, 0],
                default(),
            ),
            (
                "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
                vec![("1000", "2000"), ("2000", "3000")],
                two_nodes("4000", "10000", "6000", "10000"),
                vec![],
                vec![41, 50],
                vec![(ScoredResource::Memory, 2), (ScoredResource::Cpu, 1)],
            ),
        ];
        for (name, requests, nodes, existing, want, resources) in cases {
            let pod = make_pod(&requests);
            let fit = NodeResourcesFit::with_resources(resources);
            let mut infos: BTreeMap<String, NodeInfo> = nodes
                .into_iter()
                .map(|n| {
                    (
                        n.metadata.name.clone().unwrap_or_default(),
                        NodeInfo::new(Arc::new(n)),
                    )
                })
                .collect();
            for (node, pod) in existing {
                infos.get_mut(node).expect("node").add_pod(Arc::new(pod));
            }
            let infos: Vec<&NodeInfo> = infos.values().collect();
            let mut state = CycleState::new();
            assert!(fit.pre_score(&mut state, &pod, &infos).is_success());
            let got: Vec<i64> = infos
                .iter()
                .map(|info| fit.score(&state, &pod, info).expect("score"))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn test_least_requested_score() {
        assert_eq!(least_requested_score(0, 4000), MAX_NODE_SCORE);
        assert_eq!(least_requested_score(3000, 4000), 25);
        assert_eq!(least_requested_score(5000, 4000), 0);
        assert_eq!(least_requested_score(1, 0), 0);
    }
}
