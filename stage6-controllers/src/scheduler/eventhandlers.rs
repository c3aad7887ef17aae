//! The scheduler's informer event handlers: pods waiting for a node go to the
//! queue, bound pods to the cache, and node changes (and bound pods leaving)
//! move unschedulable pods back.
//!
//! Mirrors kube-scheduler's
//! [eventhandlers.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/eventhandlers.go)
//! (`addAllEventHandlers`, `assignedPod`, `responsibleForPod`,
//! `addPodToSchedulingQueue`, `updatePodInSchedulingQueue`,
//! `deletePodFromSchedulingQueue`, `addPodToCache`, `updatePodInCache`,
//! `deletePodFromCache`, `addNodeToCache`, `updateNodeInCache`) and the
//! queue's `isPodUpdated` and the framework's `nodeSchedulingPropertiesChange`.
//! Without queueing hints, every qualifying event moves every unschedulable
//! pod, as upstream with `SchedulerQueueingHints` off.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use stage4_shared_informer::{
    FactoryInformer, FilteringResourceEventHandler, InformerError, KubeSource,
    ResourceEventHandlerFuncs,
};

use super::cache::{node_name, pod_key};
use super::scheduler::SchedulerCore;

/// Mirrors `assignedPod`: the pod has a node.
#[must_use]
pub fn assigned_pod(pod: &Pod) -> bool {
    node_name(pod).is_some()
}

/// Mirrors `responsibleForPod`: the pod names this scheduler (an empty name is
/// the default scheduler, as the API server defaults it).
#[must_use]
pub fn responsible_for_pod(pod: &Pod, scheduler_name: &str) -> bool {
    let name = pod
        .spec
        .as_ref()
        .and_then(|s| s.scheduler_name.as_deref())
        .filter(|n| !n.is_empty())
        .unwrap_or(super::scheduler::DEFAULT_SCHEDULER_NAME);
    name == scheduler_name
}

/// Mirrors `isPodUpdated`: the pods differ in more than their status and
/// bookkeeping (`resourceVersion`, `generation`, `managedFields`). The
/// scheduler's own `PodScheduled` condition is not an update.
#[must_use]
pub fn is_pod_updated(old: &Pod, new: &Pod) -> bool {
    let strip = |pod: &Pod| {
        let mut pod = pod.clone();
        pod.metadata.resource_version = None;
        pod.metadata.generation = None;
        pod.metadata.managed_fields = None;
        pod.status = None;
        pod
    };
    strip(old) != strip(new)
}

/// Mirrors `nodeSchedulingPropertiesChange`: whether the update can make a pod
/// fit that did not (unschedulable flag, allocatable, labels, taints, or a
/// condition's status changed; heartbeats are not a change).
#[must_use]
pub fn node_scheduling_properties_change(new: &Node, old: &Node) -> bool {
    let unschedulable = |n: &Node| {
        n.spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false)
    };
    let allocatable =
        |n: &Node| n.status.as_ref().and_then(|s| s.allocatable.clone());
    let taints = |n: &Node| n.spec.as_ref().and_then(|s| s.taints.clone());
    let conditions = |n: &Node| -> BTreeMap<String, String> {
        n.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect()
    };
    unschedulable(new) != unschedulable(old)
        || allocatable(new) != allocatable(old)
        || new.metadata.labels != old.metadata.labels
        || taints(new) != taints(old)
        || conditions(new) != conditions(old)
}

/// Mirrors `addAllEventHandlers` for the pod and node informers.
///
/// # Errors
///
/// When an informer has already stopped.
pub(crate) fn add_all_event_handlers(
    core: &Arc<SchedulerCore>,
    pods: &FactoryInformer<KubeSource, Pod>,
    nodes: &FactoryInformer<KubeSource, Node>,
) -> Result<(), InformerError> {
    // Bound pods: the scheduler cache.
    let (added, updated, deleted) =
        (Arc::clone(core), Arc::clone(core), Arc::clone(core));
    pods.add_event_handler(FilteringResourceEventHandler::new(
        assigned_pod,
        ResourceEventHandlerFuncs::new()
            // addPodToCache
            .add_func(move |pod: &Arc<Pod>, _| added.cache.add_pod(pod))
            // updatePodInCache
            .update_func(move |_, new: &Arc<Pod>| updated.cache.add_pod(new))
            // deletePodFromCache: its resources are free now.
            .delete_func(move |pod| {
                if let Some(pod) = pod.object() {
                    deleted.cache.remove_pod(&pod_key(pod));
                }
                deleted
                    .queue
                    .move_all_to_active_or_backoff_queue("AssignedPodDelete");
            }),
    ))?;

    // Pods waiting for this scheduler: the queue.
    let name = core.scheduler_name.clone();
    let (added, updated, deleted) =
        (Arc::clone(core), Arc::clone(core), Arc::clone(core));
    pods.add_event_handler(FilteringResourceEventHandler::new(
        move |pod: &Pod| !assigned_pod(pod) && responsible_for_pod(pod, &name),
        ResourceEventHandlerFuncs::new()
            // addPodToSchedulingQueue
            .add_func(move |pod: &Arc<Pod>, _| added.queue.add(pod_key(pod)))
            // updatePodInSchedulingQueue
            .update_func(move |old: &Arc<Pod>, new: &Arc<Pod>| {
                if old.metadata.resource_version != new.metadata.resource_version
                    && is_pod_updated(old, new)
                {
                    updated.queue.update(pod_key(new));
                }
            })
            // deletePodFromSchedulingQueue (also when it got a node).
            .delete_func(move |pod| {
                if let Some(pod) = pod.object() {
                    deleted.queue.delete(&pod_key(pod));
                }
            }),
    ))?;

    // Nodes: new room for unschedulable pods.
    let (added, updated) = (Arc::clone(core), Arc::clone(core));
    nodes.add_event_handler(
        ResourceEventHandlerFuncs::new()
            // addNodeToCache
            .add_func(move |_node: &Arc<Node>, _| {
                added.queue.move_all_to_active_or_backoff_queue("NodeAdd");
            })
            // updateNodeInCache
            .update_func(move |old: &Arc<Node>, new: &Arc<Node>| {
                if node_scheduling_properties_change(new, old) {
                    updated
                        .queue
                        .move_all_to_active_or_backoff_queue("NodeUpdate");
                }
            }),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).expect("pod")
    }

    fn node(value: serde_json::Value) -> Node {
        serde_json::from_value(value).expect("node")
    }

    /// Mirrors `TestSkipPodUpdate`'s idea through `isPodUpdated`: status and
    /// bookkeeping are not updates, labels and spec are.
    #[test]
    fn test_is_pod_updated() {
        let old = pod(
            json!({"metadata": {"name": "p", "resourceVersion": "1"}, "spec": {"containers": []}}),
        );
        let status_only = pod(json!({
            "metadata": {"name": "p", "resourceVersion": "2"},
            "spec": {"containers": []},
            "status": {"conditions": [{"type": "PodScheduled", "status": "False"}]},
        }));
        assert!(!is_pod_updated(&old, &status_only));
        let labels = pod(
            json!({"metadata": {"name": "p", "resourceVersion": "3", "labels": {"a": "b"}}, "spec": {"containers": []}}),
        );
        assert!(is_pod_updated(&old, &labels));
    }

    #[test]
    fn test_responsible_for_pod() {
        let default = pod(json!({"spec": {"containers": []}}));
        let other =
            pod(json!({"spec": {"containers": [], "schedulerName": "other"}}));
        assert!(responsible_for_pod(&default, "default-scheduler"));
        assert!(!responsible_for_pod(&other, "default-scheduler"));
        assert!(responsible_for_pod(&other, "other"));
    }

    /// Mirrors `TestNodeSchedulingPropertiesChange`'s cases: heartbeats are no
    /// change; cordon, allocatable, labels, taints and Ready are.
    #[test]
    fn test_node_scheduling_properties_change() {
        let base = json!({
            "metadata": {"name": "n", "labels": {"a": "b"}},
            "spec": {},
            "status": {
                "allocatable": {"cpu": "1"},
                "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-01-01T00:00:00Z"}],
            },
        });
        let old = node(base.clone());
        let mut heartbeat = base.clone();
        heartbeat["status"]["conditions"][0]["lastHeartbeatTime"] =
            json!("2024-01-01T00:01:00Z");
        assert!(!node_scheduling_properties_change(&node(heartbeat), &old));
        for change in [
            ("/spec/unschedulable", json!(true)),
            ("/status/allocatable/cpu", json!("2")),
            ("/metadata/labels/a", json!("c")),
            (
                "/spec/taints",
                json!([{"key": "k", "effect": "NoSchedule"}]),
            ),
            ("/status/conditions/0/status", json!("False")),
        ] {
            let mut changed = base.clone();
            let (path, value) = change;
            let (parent, leaf) = path.rsplit_once('/').expect("path");
            let target = changed.pointer_mut(parent).expect("parent");
            if let Ok(index) = leaf.parse::<usize>() {
                target[index] = value;
            } else {
                target[leaf] = value;
            }
            assert!(
                node_scheduling_properties_change(&node(changed), &old),
                "{path}"
            );
        }
    }
}
