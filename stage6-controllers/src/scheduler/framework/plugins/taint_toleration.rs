//! `TaintToleration`: a node's `NoSchedule` and `NoExecute` taints keep away
//! every pod that does not tolerate them; here also the taints a NotReady node
//! would carry.
//!
//! Mirrors kube-scheduler's
//! [tainttoleration/taint_toleration.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go)
//! (`TaintToleration.Filter`; the `PreferNoSchedule` score is not here) and
//! component-helpers'
//! [scheduling/corev1/helpers.go](https://github.com/kubernetes/component-helpers/blob/v0.36.0/scheduling/corev1/helpers.go)
//! (`FindMatchingUntoleratedTaint`, `TolerationsTolerateTaint`) with
//! k8s.io/api's `Toleration.ToleratesTaint`.
//!
//! # NotReady nodes
//!
//! Upstream's scheduler never reads a node's conditions. The node lifecycle
//! controller turns them into taints (`doNoScheduleTaintingPass`:
//! `Ready=False` → `node.kubernetes.io/not-ready:NoSchedule`, `Ready=Unknown`
//! → `node.kubernetes.io/unreachable:NoSchedule`, the pressure conditions →
//! their taints, `spec.unschedulable` → `node.kubernetes.io/unschedulable`),
//! the NodeTaint admission plugin gives every new node `not-ready` until its
//! kubelet reports Ready, and this filter keeps pods off them. There is no node
//! lifecycle controller in this workspace yet, so [`taints_by_condition`]
//! computes the same taints from the node as the filter sees it, and the
//! filter checks them with the node's own. A node without a Ready condition is
//! `not-ready`. A node whose kubelet stopped renewing its lease stays Ready
//! here (upstream's controller would mark it `Unknown` after the 40 s grace
//! period).

use k8s_openapi::api::core::v1::{Node, Pod, Taint, Toleration};

use crate::scheduler::framework::interface::{
    Code, CycleState, FilterPlugin, Plugin, Status,
};
use crate::scheduler::framework::types::NodeInfo;

/// Mirrors `v1.TaintNodeNotReady`.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";

/// Mirrors `v1.TaintNodeUnreachable`.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Mirrors the node lifecycle controller's `nodeConditionToTaintKeyStatusMap`:
/// `(condition, status, taint key)`.
const CONDITION_TAINTS: [(&str, &str, &str); 6] = [
    ("Ready", "False", TAINT_NODE_NOT_READY),
    ("Ready", "Unknown", TAINT_NODE_UNREACHABLE),
    (
        "MemoryPressure",
        "True",
        "node.kubernetes.io/memory-pressure",
    ),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];

/// Mirrors what the node lifecycle controller's `doNoScheduleTaintingPass`
/// (and the NodeTaint admission plugin, for a node with no Ready condition
/// yet) would put on `node`: `NoSchedule` taints for its conditions and for
/// `spec.unschedulable`. See the module docs.
#[must_use]
pub fn taints_by_condition(node: &Node) -> Vec<Taint> {
    let no_schedule = |key: &str| Taint {
        key: key.to_string(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    };
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let mut taints: Vec<Taint> = CONDITION_TAINTS
        .iter()
        .filter(|(kind, status, _)| {
            conditions
                .iter()
                .any(|c| c.type_ == *kind && c.status == *status)
        })
        .map(|(_, _, key)| no_schedule(key))
        .collect();
    if !conditions.iter().any(|c| c.type_ == "Ready") {
        taints.push(no_schedule(TAINT_NODE_NOT_READY));
    }
    if node
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false)
    {
        taints.push(no_schedule(
            super::node_unschedulable::TAINT_NODE_UNSCHEDULABLE,
        ));
    }
    taints
}

/// Mirrors `Toleration.ToleratesTaint`: an empty effect matches every effect,
/// an empty key every key; `Exists` matches any value, `Equal` (the default)
/// only the same value.
#[must_use]
pub fn tolerates_taint(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    if let Some(key) = toleration.key.as_deref().filter(|k| !k.is_empty())
        && key != taint.key
    {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        "Exists" => true,
        _ => false,
    }
}

/// Mirrors `TolerationsTolerateTaint`: whether any toleration tolerates `taint`.
#[must_use]
pub fn tolerations_tolerate_taint(
    tolerations: &[Toleration],
    taint: &Taint,
) -> bool {
    tolerations.iter().any(|t| tolerates_taint(t, taint))
}

/// Mirrors `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`:
/// the first `NoSchedule` or `NoExecute` taint no toleration tolerates.
#[must_use]
pub fn find_matching_untolerated_taint<'a>(
    taints: impl IntoIterator<Item = &'a Taint>,
    tolerations: &[Toleration],
) -> Option<&'a Taint> {
    taints.into_iter().find(|taint| {
        matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerations_tolerate_taint(tolerations, taint)
    })
}

/// Mirrors `TaintToleration` (its filter).
#[derive(Clone, Copy, Debug, Default)]
pub struct TaintToleration;

impl Plugin for TaintToleration {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }
}

impl FilterPlugin for TaintToleration {
    /// Mirrors `TaintToleration.Filter`, over the node's taints and
    /// [`taints_by_condition`]: `UnschedulableAndUnresolvable` with
    /// `node(s) had untolerated taint {key: value}`.
    fn filter(
        &self,
        _state: &CycleState,
        pod: &Pod,
        node_info: &NodeInfo,
    ) -> Status {
        let node = node_info.node();
        let own = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_deref())
            .unwrap_or_default();
        let derived = taints_by_condition(node);
        let tolerations = pod
            .spec
            .as_ref()
            .and_then(|s| s.tolerations.as_deref())
            .unwrap_or_default();
        match find_matching_untolerated_taint(
            own.iter().chain(&derived),
            tolerations,
        ) {
            None => Status::success(),
            Some(taint) => Status::new(
                Code::UnschedulableAndUnresolvable,
                [format!(
                    "node(s) had untolerated taint {{{}: {}}}",
                    taint.key,
                    taint.value.as_deref().unwrap_or_default()
                )],
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;

    fn toleration(value: Value) -> Toleration {
        serde_json::from_value(value).expect("toleration")
    }

    fn taint(value: Value) -> Taint {
        serde_json::from_value(value).expect("taint")
    }

    /// Mirrors k8s.io/api's `TestTolerationToleratesTaint`.
    #[test]
    fn test_toleration_tolerates_taint() {
        let cases = [
            (
                "toleration and taint have the same key and effect, and operator is Exists, and taint has no value, expect tolerated",
                json!({"key": "foo", "operator": "Exists", "effect": "NoSchedule"}),
                json!({"key": "foo", "effect": "NoSchedule"}),
                true,
            ),
            (
                "toleration and taint have the same key and effect, and operator is Exists, and taint has some value, expect tolerated",
                json!({"key": "foo", "operator": "Exists", "effect": "NoSchedule"}),
                json!({"key": "foo", "value": "bar", "effect": "NoSchedule"}),
                true,
            ),
            (
                "toleration and taint have the same effect, toleration has empty key and operator is Exists, means match all taints, expect tolerated",
                json!({"key": "", "operator": "Exists", "effect": "NoSchedule"}),
                json!({"key": "foo", "value": "bar", "effect": "NoSchedule"}),
                true,
            ),
            (
                "toleration and taint have the same key, effect and value, and operator is Equal, expect tolerated",
                json!({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}),
                json!({"key": "foo", "value": "bar", "effect": "NoSchedule"}),
                true,
            ),
            (
                "toleration and taint have the same key and effect, but different values, and operator is Equal, expect not tolerated",
                json!({"key": "foo", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}),
                json!({"key": "foo", "value": "value2", "effect": "NoSchedule"}),
                false,
            ),
            (
                "toleration and taint have the same key and value, but different effects, and operator is Equal, expect not tolerated",
                json!({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}),
                json!({"key": "foo", "value": "bar", "effect": "NoExecute"}),
                false,
            ),
        ];
        for (name, t, tn, want) in cases {
            assert_eq!(tolerates_taint(&toleration(t), &taint(tn)), want, "{name}");
        }
    }

    fn node(value: Value) -> NodeInfo {
        let mut value = value;
        value["metadata"] = json!({"name": "nodeA"});
        NodeInfo::new(Arc::new(serde_json::from_value(value).expect("node")))
    }

    fn pod(tolerations: Value) -> Pod {
        serde_json::from_value(
            json!({"spec": {"containers": [], "tolerations": tolerations}}),
        )
        .expect("pod")
    }

    fn ready(status: &str) -> Value {
        json!({"conditions": [{"type": "Ready", "status": status}]})
    }

    /// Mirrors `TestTaintTolerationFilter`'s cases, on Ready nodes.
    #[test]
    fn test_taint_toleration_filter() {
        let untolerated = |key: &str, value: &str| {
            Status::new(
                Code::UnschedulableAndUnresolvable,
                [format!("node(s) had untolerated taint {{{key}: {value}}}")],
            )
        };
        let cases = [
            (
                "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
                json!([]),
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                untolerated("dedicated", "user1"),
            ),
            (
                "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                Status::success(),
            ),
            (
                "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
                json!([{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}]),
                json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                untolerated("dedicated", "user1"),
            ),
            (
                "A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
                json!([{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]),
                json!([{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                Status::success(),
            ),
            (
                "A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, can't be scheduled onto the node",
                json!([{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}]),
                json!([{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                untolerated("foo", "bar"),
            ),
            (
                "The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
                json!([{"key": "foo", "operator": "Equal", "value": "bar"}]),
                json!([{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                Status::success(),
            ),
            (
                "The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
                json!([{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}]),
                json!([{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}]),
                Status::success(),
            ),
            (
                "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
                json!([]),
                json!([{"key": "dedicated", "value": "user1", "effect": "PreferNoSchedule"}]),
                Status::success(),
            ),
        ];
        for (name, tolerations, taints, want) in cases {
            let node_info =
                node(json!({"spec": {"taints": taints}, "status": ready("True")}));
            let got = TaintToleration.filter(
                &CycleState::new(),
                &pod(tolerations),
                &node_info,
            );
            assert_eq!(got, want, "{name}");
        }
    }

    /// NotReady, Unknown and condition-less nodes are tainted as the node
    /// lifecycle controller and the NodeTaint admission plugin would; a pod
    /// tolerating `not-ready` still lands on a NotReady node.
    #[test]
    fn test_not_ready_nodes_are_filtered() {
        let cases = [
            (ready("True"), json!([]), Status::success()),
            (
                ready("False"),
                json!([]),
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    [
                        "node(s) had untolerated taint {node.kubernetes.io/not-ready: }",
                    ],
                ),
            ),
            (
                ready("Unknown"),
                json!([]),
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    [
                        "node(s) had untolerated taint {node.kubernetes.io/unreachable: }",
                    ],
                ),
            ),
            (
                json!({}),
                json!([]),
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    [
                        "node(s) had untolerated taint {node.kubernetes.io/not-ready: }",
                    ],
                ),
            ),
            (
                ready("False"),
                json!([{"key": TAINT_NODE_NOT_READY, "operator": "Exists"}]),
                Status::success(),
            ),
        ];
        for (status, tolerations, want) in cases {
            let node_info = node(json!({"status": status}));
            let got = TaintToleration.filter(
                &CycleState::new(),
                &pod(tolerations),
                &node_info,
            );
            assert_eq!(got, want, "{status}");
        }
    }
}
