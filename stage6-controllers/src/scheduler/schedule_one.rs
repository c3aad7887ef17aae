//! One scheduling attempt: filter the nodes, score those left, pick the best,
//! bind; or say why no node fits.
//!
//! Mirrors kube-scheduler's
//! [schedule_one.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/schedule_one.go):
//! `ScheduleOne`, `skipPodSchedule`, `schedulePod`, `findNodesThatFitPod`,
//! `findNodesThatPassFilters`, `prioritizeNodes`, `selectHost`, `assume`,
//! `bind` (with `DefaultBinder.Bind`'s `Binding`), `handleSchedulingFailure`,
//! `truncateMessage` and `updatePod`.
//!
//! [`select_host`] takes the highest total score and breaks ties at random, by
//! reservoir sampling, as upstream's `selectHost` did until v1.34 (newer
//! releases pop a heap whose ties are ordered by a random number: the same
//! distribution).
//!
//! Where this differs: the binding cycle runs before the next pod is popped
//! (upstream binds in a goroutine and goes on scheduling); every node is
//! filtered, in name order (upstream stops after
//! `numFeasibleNodesToFind` nodes past 100 and rotates its starting node);
//! there are no nominated nodes, extenders or preemption (`PostFilter`).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod, PodCondition};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::Selector;
use rand::RngExt as _;
use serde_json::json;

use super::cache::{Snapshot, node_name};
use super::eventhandlers::responsible_for_pod;
use super::framework::{
    CycleState, Diagnosis, FitError, Framework, NodeInfo, NodePluginScores, Status,
};
use super::scheduler::SchedulerCore;
use super::scheduling_queue::Failure;
use crate::events::{EventType, pod_reference};

/// Mirrors `validation.NoteLengthLimit`: the longest Event note.
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// Mirrors `ErrNoNodesAvailable`'s message.
pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";

/// Mirrors `ScheduleResult`: where the pod goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleResult {
    /// Mirrors `SuggestedHost`.
    pub suggested_host: String,
    /// Mirrors `EvaluatedNodes`: nodes filtered.
    pub evaluated_nodes: usize,
    /// Mirrors `FeasibleNodes`: nodes that passed the filters.
    pub feasible_nodes: usize,
}

/// Why [`schedule_pod`] found no node.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// Mirrors `ErrNoNodesAvailable`: the cluster has no nodes.
    #[error("{NO_NODES_AVAILABLE}")]
    NoNodesAvailable,
    /// Mirrors `*FitError`: no node passed the filters.
    #[error("{0}")]
    Fit(FitError),
    /// A plugin failed with an error (not a rejection).
    #[error("{}", .0.message())]
    Framework(Status),
}

impl ScheduleError {
    /// Mirrors the status `schedulingCycle` turns the error into:
    /// `NoNodesAvailable` and fit errors are rejections, the rest errors.
    #[must_use]
    pub fn failure(&self) -> Failure {
        match self {
            ScheduleError::NoNodesAvailable | ScheduleError::Fit(_) => {
                Failure::Unschedulable
            }
            ScheduleError::Framework(_) => Failure::Error,
        }
    }
}

// ANCHOR: schedule_pod
/// Mirrors `schedulePod`: runs the filters and scores of `framework` for `pod`
/// over `snapshot`, and picks a node.
///
/// # Errors
///
/// [`ScheduleError`] when there are no nodes, none fits, or a plugin failed.
pub fn schedule_pod(
    framework: &Framework,
    snapshot: &Snapshot,
    pod: &Pod,
    rng: &mut impl rand::Rng,
) -> Result<ScheduleResult, ScheduleError> {
    if snapshot.num_nodes() == 0 {
        return Err(ScheduleError::NoNodesAvailable);
    }
    let mut state = CycleState::new();
    let (feasible, diagnosis) =
        find_nodes_that_fit_pod(framework, &mut state, pod, snapshot)
            .map_err(ScheduleError::Framework)?;
    let evaluated_nodes = feasible.len() + diagnosis.node_to_status.len();
    match feasible.as_slice() {
        [] => Err(ScheduleError::Fit(FitError {
            num_all_nodes: snapshot.num_nodes(),
            diagnosis,
        })),
        // When only one node is left, it is the one.
        [only] => Ok(ScheduleResult {
            suggested_host: only.name().to_string(),
            evaluated_nodes,
            feasible_nodes: 1,
        }),
        _ => {
            let priority_list =
                prioritize_nodes(framework, &mut state, pod, &feasible)
                    .map_err(ScheduleError::Framework)?;
            let suggested_host =
                select_host(&priority_list, rng).ok_or_else(|| {
                    ScheduleError::Framework(Status::error("empty priorityList"))
                })?;
            Ok(ScheduleResult {
                suggested_host,
                evaluated_nodes,
                feasible_nodes: feasible.len(),
            })
        }
    }
}
// ANCHOR_END: schedule_pod

/// Mirrors `findNodesThatFitPod` and `findNodesThatPassFilters`: the nodes
/// that pass every filter, and why the others did not.
///
/// # Errors
///
/// A `PreFilter` or `Filter` status with [`Code::Error`](super::framework::Code::Error).
pub fn find_nodes_that_fit_pod<'a>(
    framework: &Framework,
    state: &mut CycleState,
    pod: &Pod,
    snapshot: &'a Snapshot,
) -> Result<(Vec<&'a NodeInfo>, Diagnosis), Status> {
    let mut diagnosis = Diagnosis::default();
    let status = framework.run_pre_filter_plugins(state, pod);
    if !status.is_success() {
        if !status.is_rejected() {
            return Err(status);
        }
        // Every node has the same status.
        diagnosis.pre_filter_msg = status.message();
        for info in snapshot.node_infos() {
            diagnosis
                .node_to_status
                .insert(info.name().to_string(), status.clone());
        }
        diagnosis.add_plugin_status(&status);
        return Ok((Vec::new(), diagnosis));
    }
    let mut feasible = Vec::new();
    for info in snapshot.node_infos() {
        let status = framework.run_filter_plugins(state, pod, info);
        if status.is_success() {
            feasible.push(info);
        } else if status.is_rejected() {
            diagnosis.add_plugin_status(&status);
            diagnosis
                .node_to_status
                .insert(info.name().to_string(), status);
        } else {
            return Err(status);
        }
    }
    Ok((feasible, diagnosis))
}

/// Mirrors `prioritizeNodes`: every node's weighted score; 1 each without
/// score plugins.
///
/// # Errors
///
/// A `PreScore` or `Score` status that is not a success.
pub fn prioritize_nodes(
    framework: &Framework,
    state: &mut CycleState,
    pod: &Pod,
    nodes: &[&NodeInfo],
) -> Result<Vec<NodePluginScores>, Status> {
    if !framework.has_score_plugins() {
        return Ok(nodes
            .iter()
            .map(|info| NodePluginScores {
                name: info.name().to_string(),
                scores: Vec::new(),
                total_score: 1,
            })
            .collect());
    }
    let status = framework.run_pre_score_plugins(state, pod, nodes);
    if !status.is_success() {
        return Err(status);
    }
    framework.run_score_plugins(state, pod, nodes)
}

/// Mirrors `selectHost`: the node with the highest total score; among equal
/// ones each has the same chance (reservoir sampling). `None` for an empty
/// list.
pub fn select_host(
    node_scores: &[NodePluginScores],
    rng: &mut impl rand::Rng,
) -> Option<String> {
    let (first, rest) = node_scores.split_first()?;
    let mut max_score = first.total_score;
    let mut selected = &first.name;
    let mut count_of_max_score = 1_u32;
    for node in rest {
        if node.total_score > max_score {
            max_score = node.total_score;
            selected = &node.name;
            count_of_max_score = 1;
        } else if node.total_score == max_score {
            count_of_max_score += 1;
            if rng.random_range(0..count_of_max_score) == 0 {
                // Replace the candidate with probability 1/count.
                selected = &node.name;
            }
        }
    }
    Some(selected.clone())
}

/// Mirrors `truncateMessage`: at most [`NOTE_LENGTH_LIMIT`] bytes, ending in
/// `" ..."` when cut (at a character boundary).
#[must_use]
pub fn truncate_message(message: &str) -> String {
    if message.len() <= NOTE_LENGTH_LIMIT {
        return message.to_string();
    }
    let suffix = " ...";
    let mut end = NOTE_LENGTH_LIMIT - suffix.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{suffix}", &message[..end])
}

/// Mirrors `podutil.UpdatePodCondition`'s decision: the condition to write,
/// or `None` when the pod already has it (same status, reason and message).
/// The transition time moves only when the status does.
#[must_use]
pub fn updated_pod_condition(
    pod: &Pod,
    mut condition: PodCondition,
) -> Option<PodCondition> {
    let existing = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|conditions| {
            conditions.iter().find(|c| c.type_ == condition.type_)
        });
    match existing {
        Some(old)
            if old.status == condition.status
                && old.reason == condition.reason
                && old.message == condition.message
                && old.last_probe_time.is_none() =>
        {
            None
        }
        Some(old) if old.status == condition.status => {
            condition
                .last_transition_time
                .clone_from(&old.last_transition_time);
            Some(condition)
        }
        _ => Some(condition),
    }
}

impl SchedulerCore {
    // ANCHOR: schedule_one
    /// Mirrors `ScheduleOne` for the pod under `key`, popped in scheduling
    /// cycle `cycle`. The caller marks the key done.
    pub(crate) async fn schedule_one(&self, key: &str, cycle: u64) {
        let Some((namespace, name)) = key.split_once('/') else {
            return;
        };
        let Ok(pod) = self.pod_lister.namespaced(namespace).get(name) else {
            // Deleted since it was queued.
            return;
        };
        if node_name(&pod).is_some()
            || !responsible_for_pod(&pod, &self.scheduler_name)
        {
            self.queue.forget(key);
            return;
        }
        if self.skip_pod_schedule(&pod, key).await {
            return;
        }
        let everything = Selector::default();
        let snapshot = self.cache.update_snapshot(
            &self.node_lister.list(&everything),
            &self.pod_lister.list(&everything),
        );
        let result =
            schedule_pod(&self.framework, &snapshot, &pod, &mut rand::rng());
        match result {
            Ok(result) => self.binding_cycle(&pod, key, cycle, result).await,
            Err(error) => {
                tracing::debug!(pod = key, %error, "unable to schedule pod");
                self.handle_scheduling_failure(&pod, key, cycle, &error)
                    .await;
            }
        }
    }
    // ANCHOR_END: schedule_one

    /// Mirrors `skipPodSchedule`: a pod being deleted, or one already assumed.
    async fn skip_pod_schedule(&self, pod: &Pod, key: &str) -> bool {
        if pod.metadata.deletion_timestamp.is_some() {
            self.recorder
                .eventf(
                    &pod_reference(pod),
                    EventType::Warning,
                    "FailedScheduling",
                    "Scheduling",
                    &format!("skip schedule deleting pod: {key}"),
                )
                .await;
            return true;
        }
        self.cache.is_assumed_pod(key)
    }

    /// Mirrors `assume`, then `bindingCycle` with `bind` and `finishBinding`,
    /// or `handleBindingCycleError`.
    async fn binding_cycle(
        &self,
        pod: &Arc<Pod>,
        key: &str,
        cycle: u64,
        result: ScheduleResult,
    ) {
        let node = result.suggested_host;
        let mut assumed = Pod::clone(pod);
        if let Some(spec) = assumed.spec.as_mut() {
            spec.node_name = Some(node.clone());
        }
        self.cache.assume_pod(Arc::new(assumed));
        match self.bind(pod, &node).await {
            Ok(()) => {
                self.queue.forget(key);
                tracing::debug!(
                    pod = key,
                    node,
                    evaluated = result.evaluated_nodes,
                    feasible = result.feasible_nodes,
                    "successfully bound pod to node"
                );
                self.recorder
                    .eventf(
                        &pod_reference(pod),
                        EventType::Normal,
                        "Scheduled",
                        "Binding",
                        &format!("Successfully assigned {key} to {node}"),
                    )
                    .await;
            }
            Err(error) => {
                self.cache.forget_pod(key);
                // The resources it held in the cache are free again.
                self.queue
                    .move_all_to_active_or_backoff_queue("AssignedPodDelete");
                let error = ScheduleError::Framework(Status::error(format!(
                    "binding rejected: {error}"
                )));
                self.handle_scheduling_failure(pod, key, cycle, &error)
                    .await;
            }
        }
    }

    /// Mirrors `DefaultBinder.Bind`: `POST pods/{name}/binding` with the pod's
    /// uid as a precondition.
    async fn bind(&self, pod: &Pod, node: &str) -> Result<(), kube::Error> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let binding = Binding {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(namespace.to_string()),
                uid: pod.metadata.uid.clone(),
                ..Default::default()
            },
            target: ObjectReference {
                kind: Some("Node".into()),
                name: Some(node.to_string()),
                ..ObjectReference::default()
            },
        };
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        pods.create_subresource::<_, serde_json::Value>(
            "binding",
            name,
            &PostParams::default(),
            &binding,
        )
        .await
        .map(drop)
    }

    /// Mirrors `handleSchedulingFailure`: back to the queue (unless the pod is
    /// gone or bound meanwhile), a `FailedScheduling` Warning event, and the
    /// `PodScheduled=False` condition with reason `Unschedulable` (or
    /// `SchedulerError`) and the same message.
    async fn handle_scheduling_failure(
        &self,
        pod: &Pod,
        key: &str,
        cycle: u64,
        error: &ScheduleError,
    ) {
        let failure = error.failure();
        let reason = match failure {
            Failure::Unschedulable => "Unschedulable",
            Failure::Error => "SchedulerError",
        };
        let message = error.to_string();
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        match self.pod_lister.namespaced(namespace).get(name) {
            Ok(cached) if node_name(&cached).is_none() => {
                self.queue.add_unschedulable_if_not_present(
                    key.to_string(),
                    cycle,
                    failure,
                );
            }
            Ok(_) => tracing::info!(
                pod = key,
                "pod has been assigned to a node; not queued again"
            ),
            Err(_) => {
                tracing::info!(pod = key, "pod doesn't exist in informer cache")
            }
        }
        self.recorder
            .eventf(
                &pod_reference(pod),
                EventType::Warning,
                "FailedScheduling",
                "Scheduling",
                &truncate_message(&message),
            )
            .await;
        let condition = PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some(reason.into()),
            message: Some(message),
            last_transition_time: Some(apimachinery::apis::meta::v1::time::now()),
            ..PodCondition::default()
        };
        if let Err(error) = self.update_pod(pod, condition).await {
            tracing::warn!(pod = key, %error, "error updating pod");
        }
    }

    /// Mirrors `updatePod` (through `util.PatchPodStatus`): a strategic merge
    /// patch of `pods/status` with the condition, when it changed.
    async fn update_pod(
        &self,
        pod: &Pod,
        condition: PodCondition,
    ) -> Result<(), kube::Error> {
        let Some(condition) = updated_pod_condition(pod, condition) else {
            return Ok(());
        };
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let mut condition = serde_json::to_value(&condition).unwrap_or_default();
        // A probe time left from before is dropped, as upstream's new condition has none.
        condition["lastProbeTime"] = serde_json::Value::Null;
        let patch = json!({"status": {"conditions": [condition]}});
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        pods.patch_status(name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::Node;
    use rand::SeedableRng as _;
    use rand::rngs::StdRng;
    use serde_json::{Value, json};

    use super::*;
    use crate::scheduler::cache::Cache;

    fn total_scores(scores: &[NodePluginScores]) -> BTreeMap<&str, i64> {
        scores
            .iter()
            .map(|s| (s.name.as_str(), s.total_score))
            .collect()
    }

    fn scores(list: &[(&str, i64)]) -> Vec<NodePluginScores> {
        list.iter()
            .map(|(name, score)| NodePluginScores {
                name: (*name).to_string(),
                scores: Vec::new(),
                total_score: *score,
            })
            .collect()
    }

    /// Mirrors `TestSelectHost`: the highest score wins; ties may go to any of
    /// the tied nodes, and over many draws each is picked.
    #[test]
    fn test_select_host() {
        let mut rng = StdRng::seed_from_u64(1);
        let cases: [(&str, Vec<NodePluginScores>, &[&str]); 4] = [
            (
                "unique properly ordered scores",
                scores(&[("node1.1", 1), ("node2.1", 2)]),
                &["node2.1"],
            ),
            (
                "equal scores",
                scores(&[
                    ("node1.1", 1),
                    ("node1.2", 2),
                    ("node1.3", 2),
                    ("node2.1", 2),
                ]),
                &["node1.2", "node1.3", "node2.1"],
            ),
            (
                "out of order scores",
                scores(&[
                    ("node1.1", 3),
                    ("node1.2", 3),
                    ("node2.1", 2),
                    ("node3.1", 1),
                    ("node1.3", 3),
                ]),
                &["node1.1", "node1.2", "node1.3"],
            ),
            ("empty priority list", Vec::new(), &[]),
        ];
        for (name, list, possible) in cases {
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..100 {
                match select_host(&list, &mut rng) {
                    Some(host) => {
                        assert!(possible.contains(&host.as_str()), "{name}: {host}");
                        seen.insert(host);
                    }
                    None => assert!(possible.is_empty(), "{name}"),
                }
            }
            assert_eq!(
                seen.len(),
                possible.len(),
                "{name}: every tied node is picked"
            );
        }
    }

    #[test]
    fn test_truncate_message() {
        assert_eq!(truncate_message("short"), "short");
        let long = "x".repeat(2000);
        let cut = truncate_message(&long);
        assert_eq!(cut.len(), NOTE_LENGTH_LIMIT);
        assert!(cut.ends_with(" ..."));
        let multibyte = "é".repeat(1000);
        assert!(truncate_message(&multibyte).len() <= NOTE_LENGTH_LIMIT);
    }

    fn node(name: &str, cpu: &str, extra: Value) -> Arc<Node> {
        let mut value = json!({
            "metadata": {"name": name},
            "spec": {},
            "status": {
                "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        });
        if let (Some(target), Value::Object(extra)) =
            (value["spec"].as_object_mut(), extra)
        {
            target.extend(extra);
        }
        Arc::new(serde_json::from_value(value).expect("node"))
    }

    fn pod(name: &str, cpu: &str, node: Option<&str>) -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "nodeName": node,
                    "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}],
                },
            }))
            .expect("pod"),
        )
    }

    fn schedule(
        nodes: &[Arc<Node>],
        pods: &[Arc<Pod>],
        pod: &Pod,
    ) -> Result<ScheduleResult, ScheduleError> {
        let snapshot = Cache::new().update_snapshot(nodes, pods);
        schedule_pod(
            &Framework::default_profile("default-scheduler"),
            &snapshot,
            pod,
            &mut StdRng::seed_from_u64(7),
        )
    }

    /// Mirrors `TestSchedulerSchedulePod`'s shapes: no nodes, no fit (with
    /// upstream's message), one fit, the least allocated of several.
    #[test]
    fn test_scheduler_schedule_pod() {
        let big = pod("big", "8", None);
        assert_eq!(
            schedule(&[], &[], &big),
            Err(ScheduleError::NoNodesAvailable)
        );
        assert_eq!(
            ScheduleError::NoNodesAvailable.to_string(),
            "no nodes available to schedule pods"
        );

        let nodes = [
            node("node-a", "4", json!({})),
            node("node-b", "4", json!({})),
            node("node-c", "4", json!({})),
        ];
        let error = schedule(&nodes, &[], &big).expect_err("no fit");
        assert_eq!(
            error.to_string(),
            "0/3 nodes are available: 3 Insufficient cpu."
        );
        let ScheduleError::Fit(fit) = error else {
            panic!("fit error")
        };
        assert_eq!(
            fit.diagnosis
                .unschedulable_plugins
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            ["NodeResourcesFit"]
        );

        let cordoned = [
            node("node-a", "4", json!({"unschedulable": true})),
            node(
                "node-b",
                "4",
                json!({"taints": [{"key": "k", "value": "v", "effect": "NoExecute"}]}),
            ),
            node("node-c", "4", json!({})),
        ];
        let small = pod("small", "1", None);
        let result = schedule(&cordoned, &[], &small).expect("fits");
        assert_eq!(result.suggested_host, "node-c");
        assert_eq!((result.evaluated_nodes, result.feasible_nodes), (3, 1));
        assert_eq!(
            schedule(&cordoned, &[], &big)
                .expect_err("none")
                .to_string(),
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {k: v}, \
             1 node(s) were unschedulable."
        );

        // Least allocated: node-a is busy, node-b less, node-c idle.
        let existing =
            [pod("x", "3", Some("node-a")), pod("y", "1", Some("node-b"))];
        let result = schedule(&nodes, &existing, &small).expect("fits");
        assert_eq!(result.suggested_host, "node-c");
        assert_eq!(result.feasible_nodes, 3);
    }

    /// The scores behind that choice, per node.
    #[test]
    fn test_prioritize_nodes() {
        let nodes = [
            node("node-a", "4", json!({})),
            node("node-b", "4", json!({})),
        ];
        let snapshot =
            Cache::new().update_snapshot(&nodes, &[pod("x", "2", Some("node-a"))]);
        let framework = Framework::default_profile("default-scheduler");
        let small = pod("small", "1", None);
        let mut state = CycleState::new();
        let infos: Vec<&NodeInfo> = snapshot.node_infos().iter().collect();
        let list = prioritize_nodes(&framework, &mut state, &small, &infos)
            .expect("scores");
        // cpu: (4000 - 3000) * 100 / 4000 = 25 and (4000 - 1000) * 100 / 4000 = 75;
        // memory: 8Gi - 200Mi (x has no memory request) - 200Mi, and 8Gi - 200Mi.
        let want: BTreeMap<&str, i64> =
            [("node-a", (25 + 95) / 2), ("node-b", (75 + 97) / 2)].into();
        assert_eq!(total_scores(&list), want);
    }

    /// `podutil.UpdatePodCondition`: no write when nothing changed; the
    /// transition time stays while the status does.
    #[test]
    fn test_updated_pod_condition() {
        let condition = |message: &str| PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("Unschedulable".into()),
            message: Some(message.into()),
            last_transition_time: Some(apimachinery::apis::meta::v1::time::now()),
            ..PodCondition::default()
        };
        let mut pod = Pod::clone(&pod("p", "1", None));
        assert!(updated_pod_condition(&pod, condition("a")).is_some());
        let earlier = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        );
        let mut existing = condition("a");
        existing.last_transition_time = Some(earlier.clone());
        pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
            conditions: Some(vec![existing]),
            ..Default::default()
        });
        assert_eq!(updated_pod_condition(&pod, condition("a")), None);
        let changed = updated_pod_condition(&pod, condition("b")).expect("changed");
        assert_eq!(changed.last_transition_time, Some(earlier));
    }
}
