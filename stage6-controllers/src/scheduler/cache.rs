//! [`Cache`]: the pods the scheduler has placed but the informer has not shown
//! bound yet (assumed pods), and [`Snapshot`]: every node with the pods on it,
//! taken at the start of a scheduling cycle.
//!
//! Mirrors kube-scheduler's
//! [backend/cache/cache.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/backend/cache/cache.go)
//! (`AssumePod`, `ForgetPod`, `AddPod` confirming an assumed pod, `RemovePod`,
//! `IsAssumedPod`, `UpdateSnapshot`) and
//! [backend/cache/snapshot.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/backend/cache/snapshot.go).
//!
//! Upstream's cache keeps its own `NodeInfo` per node, updated by the
//! informers' events, and copies only what changed into the snapshot. Here the
//! informers' listers are the source: [`Cache::update_snapshot`] builds every
//! `NodeInfo` again from the nodes and the bound pods they list, plus the
//! assumed pods. That is O(nodes + pods) per scheduled pod, fine for a mini
//! cluster. Assumed pods never expire (upstream's default since 1.24: an
//! assumed pod waits for its informer event or its deletion).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use parking_lot::Mutex;

use super::framework::NodeInfo;

/// `namespace/name`: the key of a pod in the queue and the cache (client-go's
/// `MetaNamespaceKeyFunc`).
#[must_use]
pub fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The node a pod is bound to, if any.
#[must_use]
pub fn node_name(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
}

/// Mirrors `Snapshot`: the nodes, sorted by name, with the pods counted on
/// them.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    node_infos: Vec<NodeInfo>,
}

impl Snapshot {
    /// A snapshot of these nodes (in this order).
    #[must_use]
    pub fn new(node_infos: Vec<NodeInfo>) -> Self {
        Snapshot { node_infos }
    }

    /// Mirrors `NodeInfos().List()`.
    #[must_use]
    pub fn node_infos(&self) -> &[NodeInfo] {
        &self.node_infos
    }

    /// Mirrors `NumNodes`.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.node_infos.len()
    }

    /// Mirrors `NodeInfos().Get(name)`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&NodeInfo> {
        self.node_infos.iter().find(|info| info.name() == name)
    }
}

/// Mirrors `cacheImpl`, reduced to the assumed pods (see the module docs).
#[derive(Debug, Default)]
pub struct Cache {
    /// Mirrors `assumedPods` with their `podStates`: key → the pod with
    /// `spec.nodeName` set to where it was placed.
    assumed: Mutex<HashMap<String, Arc<Pod>>>,
}

impl Cache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Cache::default()
    }

    /// Mirrors `AssumePod`: counts `pod` (its `spec.nodeName` set) on its node
    /// until the informer shows it bound.
    pub fn assume_pod(&self, pod: Arc<Pod>) {
        self.assumed.lock().insert(pod_key(&pod), pod);
    }

    /// Mirrors `ForgetPod`: the binding failed, the pod is not on the node.
    pub fn forget_pod(&self, key: &str) {
        self.assumed.lock().remove(key);
    }

    /// Mirrors `AddPod`/`UpdatePod` of a bound pod: an assumed pod is
    /// confirmed, and its informer copy counts from now on.
    pub fn add_pod(&self, pod: &Pod) {
        self.assumed.lock().remove(&pod_key(pod));
    }

    /// Mirrors `RemovePod`.
    pub fn remove_pod(&self, key: &str) {
        self.assumed.lock().remove(key);
    }

    /// Mirrors `IsAssumedPod`.
    #[must_use]
    pub fn is_assumed_pod(&self, key: &str) -> bool {
        self.assumed.lock().contains_key(key)
    }

    /// How many pods are assumed.
    #[must_use]
    pub fn assumed_len(&self) -> usize {
        self.assumed.lock().len()
    }

    /// Mirrors `UpdateSnapshot`: every node of `nodes`, sorted by name, with
    /// the bound pods of `pods` on it and the assumed pods.
    #[must_use]
    pub fn update_snapshot(
        &self,
        nodes: &[Arc<Node>],
        pods: &[Arc<Pod>],
    ) -> Snapshot {
        let mut infos: BTreeMap<&str, NodeInfo> = nodes
            .iter()
            .map(|node| {
                (
                    node.metadata.name.as_deref().unwrap_or_default(),
                    NodeInfo::new(Arc::clone(node)),
                )
            })
            .collect();
        let mut bound = HashSet::new();
        for pod in pods {
            if let Some(node) = node_name(pod) {
                bound.insert(pod_key(pod));
                if let Some(info) = infos.get_mut(node) {
                    info.add_pod(Arc::clone(pod));
                }
            }
        }
        for (key, pod) in self.assumed.lock().iter() {
            if !bound.contains(key)
                && let Some(info) =
                    node_name(pod).and_then(|node| infos.get_mut(node))
            {
                info.add_pod(Arc::clone(pod));
            }
        }
        Snapshot::new(infos.into_values().collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str) -> Arc<Node> {
        Arc::new(
            serde_json::from_value(json!({"metadata": {"name": name}, "status": {"allocatable": {"pods": "10"}}}))
                .expect("node"),
        )
    }

    fn pod(name: &str, node: Option<&str>) -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"containers": [], "nodeName": node},
            }))
            .expect("pod"),
        )
    }

    /// Mirrors `TestAssumePodScheduled` and `TestAddPodAfterExpiration`'s
    /// shape: an assumed pod counts until the informer shows it bound, and
    /// counts once then.
    #[test]
    fn test_assume_pod_counts_once() {
        let cache = Cache::new();
        let nodes = [node("b"), node("a")];
        cache.assume_pod(pod("p", Some("a")));
        assert!(cache.is_assumed_pod("ns/p"));
        let snapshot =
            cache.update_snapshot(&nodes, &[pod("p", None), pod("q", Some("b"))]);
        let names: Vec<&str> =
            snapshot.node_infos().iter().map(NodeInfo::name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(snapshot.get("a").map(|i| i.pods().len()), Some(1));
        assert_eq!(snapshot.get("b").map(|i| i.pods().len()), Some(1));

        // The informer shows it bound before the confirmation: still once.
        let snapshot = cache.update_snapshot(&nodes, &[pod("p", Some("a"))]);
        assert_eq!(snapshot.get("a").map(|i| i.pods().len()), Some(1));
        cache.add_pod(&pod("p", Some("a")));
        assert!(!cache.is_assumed_pod("ns/p"));
        assert_eq!(cache.assumed_len(), 0);
    }

    /// Mirrors `TestForgetPod`.
    #[test]
    fn test_forget_pod() {
        let cache = Cache::new();
        cache.assume_pod(pod("p", Some("a")));
        cache.forget_pod("ns/p");
        let snapshot = cache.update_snapshot(&[node("a")], &[]);
        assert_eq!(snapshot.get("a").map(|i| i.pods().len()), Some(0));
        assert_eq!(snapshot.num_nodes(), 1);
    }
}
