//! `NodeUnschedulable`: a cordoned node (`spec.unschedulable: true`) takes no
//! new pods, unless a pod tolerates the `node.kubernetes.io/unschedulable`
//! `NoSchedule` taint.
//!
//! Mirrors kube-scheduler's
//! [nodeunschedulable/node_unschedulable.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go)
//! (`NodeUnschedulable.Filter`, `ErrReasonUnschedulable`). `kubectl cordon`
//! sets the field; `kubectl uncordon` clears it.

use k8s_openapi::api::core::v1::{Pod, Taint};

use super::taint_toleration::tolerations_tolerate_taint;
use crate::scheduler::framework::interface::{
    Code, CycleState, FilterPlugin, Plugin, Status,
};
use crate::scheduler::framework::types::NodeInfo;

/// Mirrors `ErrReasonUnschedulable`.
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";

/// Mirrors `v1.TaintNodeUnschedulable`.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// Mirrors `NodeUnschedulable`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeUnschedulable;

impl Plugin for NodeUnschedulable {
    fn name(&self) -> &'static str {
        "NodeUnschedulable"
    }
}

impl FilterPlugin for NodeUnschedulable {
    /// Mirrors `NodeUnschedulable.Filter`: `UnschedulableAndUnresolvable` on a
    /// cordoned node, unless the pod tolerates the unschedulable taint.
    fn filter(
        &self,
        _state: &CycleState,
        pod: &Pod,
        node_info: &NodeInfo,
    ) -> Status {
        let unschedulable = node_info
            .node()
            .spec
            .as_ref()
            .and_then(|spec| spec.unschedulable)
            .unwrap_or(false);
        if !unschedulable {
            return Status::success();
        }
        let taint = Taint {
            key: TAINT_NODE_UNSCHEDULABLE.into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        };
        let tolerations = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.tolerations.as_deref())
            .unwrap_or_default();
        if tolerations_tolerate_taint(tolerations, &taint) {
            return Status::success();
        }
        Status::new(
            Code::UnschedulableAndUnresolvable,
            [ERR_REASON_UNSCHEDULABLE],
        )
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::Node;
    use serde_json::json;

    use super::*;

    /// Mirrors `TestNodeUnschedulable`, case by case.
    #[test]
    fn test_node_unschedulable() {
        let cases = [
            (
                "Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
                json!({}),
                true,
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    [ERR_REASON_UNSCHEDULABLE],
                ),
            ),
            (
                "Schedule pod to normal node",
                json!({}),
                false,
                Status::success(),
            ),
            (
                "Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
                json!({"tolerations": [
                    {"key": TAINT_NODE_UNSCHEDULABLE, "effect": "NoSchedule"}
                ]}),
                true,
                Status::success(),
            ),
        ];
        for (name, mut spec, unschedulable, want) in cases {
            spec["containers"] = json!([]);
            let pod: Pod =
                serde_json::from_value(json!({"spec": spec})).expect(name);
            let node: Node = serde_json::from_value(json!({
                "metadata": {"name": "n"},
                "spec": {"unschedulable": unschedulable},
            }))
            .expect(name);
            let node_info = NodeInfo::new(Arc::new(node));
            let got = NodeUnschedulable.filter(&CycleState::new(), &pod, &node_info);
            assert_eq!(got, want, "{name}");
        }
    }
}
