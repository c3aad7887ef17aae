//! `POST …/pods/{name}/binding`: mirrors kubernetes'
//! `pkg/registry/core/pod/storage/storage.go` (`BindingREST.Create`,
//! `assignPod`, `setPodHostAndAnnotations`) and `ValidatePodBinding`.
//!
//! A scheduler binds a pod to a node with a `Binding` (`metadata.name` the pod's,
//! `target` the node): the pod's `spec.nodeName` is set, the binding's
//! annotations are merged into the pod's, and its `PodScheduled` condition
//! becomes `True`, in one guaranteed update, only if the pod is not bound yet,
//! not being deleted and has no scheduling gates. A binding's `uid` and
//! `resourceVersion` are preconditions on the pod. The answer is a `Status`
//! `Success` with 201.
//!
//! | Refusal                                       | Answer (as upstream)                     |
//! |-----------------------------------------------|------------------------------------------|
//! | the body's name is not the URL's              | 400                                      |
//! | `target.kind` not `Node`, no `target.name`    | 500 (upstream's aggregate is a plain error) |
//! | no such pod                                   | 404                                      |
//! | a stale uid or resourceVersion                | 409                                      |
//! | already bound, being deleted, gated           | 409 on `pods/binding` with the reason    |

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use stage5_storage::{Object, Preconditions, StorageError, object_key};

use super::rest::{Rejection, update_or_reject_with};
use crate::registry::RegisteredResource;
use crate::registry::rest::now;
use crate::status::ApiError;

/// Mirrors `BindingREST.Create` for the pod `name`.
pub(crate) async fn bind(
    pods: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let binding: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request could not be decoded: {e}"
        ))
    })?;
    let meta = &binding["metadata"];
    if meta["name"].as_str().unwrap_or_default() != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let node = validate_pod_binding(&binding)?;
    let annotations = meta["annotations"].as_object().cloned().unwrap_or_default();
    let preconditions = Preconditions {
        uid: meta["uid"]
            .as_str()
            .filter(|u| !u.is_empty())
            .map(str::to_string),
        resource_version: meta["resourceVersion"]
            .as_str()
            .filter(|v| !v.is_empty())
            .map(str::to_string),
    };
    let key = object_key(&pods.info, namespace, name);
    update_or_reject_with(
        pods,
        key,
        preconditions,
        move |current: &Object, rejected: &Rejection| {
            set_pod_host_and_annotations(current, &node, &annotations)
                .map_err(|reason| rejected.reject(already_assigned(current, reason)))
        },
    )
    .await?;
    Ok(crate::status::success(StatusCode::CREATED))
}

/// Mirrors `ValidatePodBinding`: `target.kind` empty or `Node`, `target.name`
/// set. Upstream returns the field errors as a plain aggregate, which the handler
/// answers with 500 and its text.
fn validate_pod_binding(binding: &Value) -> Result<String, ApiError> {
    let target = &binding["target"];
    let mut errors = Vec::new();
    let kind = target["kind"].as_str().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        errors.push(format!(
            "target.kind: Unsupported value: {}: supported values: \"Node\", \"<empty>\"",
            apimachinery::util::validation::field::go_quote(kind)
        ));
    }
    let node = target["name"].as_str().unwrap_or_default();
    if node.is_empty() {
        errors.push("target.name: Required value".to_string());
    }
    match errors.as_slice() {
        [] => Ok(node.to_string()),
        [one] => Err(ApiError::unknown(one.clone())),
        many => Err(ApiError::unknown(format!("[{}]", many.join(", ")))),
    }
}

/// Mirrors `setPodHostAndAnnotations`' update function: the pod bound to
/// `node`, or why it cannot be.
fn set_pod_host_and_annotations(
    current: &Object,
    node: &str,
    annotations: &serde_json::Map<String, Value>,
) -> Result<Object, String> {
    let pod = current;
    if pod.metadata.deletion_timestamp.is_some() {
        return Err(format!(
            "pod {} is being deleted, cannot be assigned to a host",
            pod.name()
        ));
    }
    let bound = pod.data["spec"]["nodeName"].as_str().unwrap_or_default();
    if !bound.is_empty() {
        return Err(format!(
            "pod {} is already assigned to node {}",
            pod.name(),
            apimachinery::util::validation::field::go_quote(bound)
        ));
    }
    if pod.data["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|gates| !gates.is_empty())
    {
        return Err(format!(
            "pod {} has non-empty .spec.schedulingGates",
            pod.name()
        ));
    }
    let mut next = current.clone();
    next.data["spec"]["nodeName"] = json!(node);
    if !annotations.is_empty() {
        let merged = next
            .metadata
            .annotations
            .get_or_insert_with(Default::default);
        for (key, value) in annotations {
            merged
                .insert(key.clone(), value.as_str().unwrap_or_default().to_string());
        }
    }
    update_pod_condition(&mut next.data, "PodScheduled", "True");
    next.metadata.resource_version = None;
    Ok(next)
}

/// Mirrors `podutil.UpdatePodCondition`: the condition of `type_` gets
/// `status`; its `lastTransitionTime` moves only when its status changes (a new
/// condition gets now).
pub(crate) fn update_pod_condition(pod: &mut Value, type_: &str, status: &str) {
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    let conditions = pod["status"]
        .as_object_mut()
        .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
    let Some(Value::Array(conditions)) = conditions else {
        return;
    };
    let now = serde_json::to_value(now()).unwrap_or(Value::Null);
    match conditions.iter_mut().find(|c| c["type"] == type_) {
        Some(condition) => {
            if condition["status"] != status {
                condition["status"] = json!(status);
                condition["lastTransitionTime"] = now;
            }
        }
        None => conditions.push(json!({
            "type": type_,
            "status": status,
            "lastProbeTime": null,
            "lastTransitionTime": now,
        })),
    }
}

/// Mirrors `assignPod`'s error: what is not already an API status is a
/// conflict on `pods/binding`.
fn already_assigned(pod: &Object, reason: String) -> ApiError {
    ApiError::from(StorageError::Conflict {
        plural: "pods/binding".into(),
        name: pod.name().to_string(),
        message: reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    fn pod(spec: Value) -> Object {
        Object::new(&ResourceInfo::PODS, Some("default"), "web-0")
            .with_data(json!({"spec": spec, "status": {"phase": "Pending"}}))
    }

    #[test]
    fn a_binding_sets_the_node_the_annotations_and_the_condition() {
        let annotations = json!({"scheduler": "mini"});
        let bound = set_pod_host_and_annotations(
            &pod(json!({"containers": []})),
            "node-1",
            annotations.as_object().unwrap(),
        )
        .expect("binds");
        assert_eq!(bound.data["spec"]["nodeName"], "node-1");
        assert_eq!(bound.metadata.annotations.unwrap()["scheduler"], "mini");
        let condition = &bound.data["status"]["conditions"][0];
        assert_eq!(condition["type"], "PodScheduled");
        assert_eq!(condition["status"], "True");
        assert!(condition["lastTransitionTime"].is_string());
    }

    #[test]
    fn a_bound_gated_or_deleted_pod_is_refused_with_upstreams_reason() {
        let none = serde_json::Map::new();
        let bound = pod(json!({"nodeName": "n"}));
        assert_eq!(
            set_pod_host_and_annotations(&bound, "m", &none).unwrap_err(),
            "pod web-0 is already assigned to node \"n\""
        );
        let gated = pod(json!({"schedulingGates": [{"name": "g"}]}));
        assert_eq!(
            set_pod_host_and_annotations(&gated, "m", &none).unwrap_err(),
            "pod web-0 has non-empty .spec.schedulingGates"
        );
        let mut deleting = pod(json!({}));
        deleting.metadata.deletion_timestamp = Some(now());
        assert!(
            set_pod_host_and_annotations(&deleting, "m", &none)
                .unwrap_err()
                .contains("is being deleted")
        );
    }

    #[test]
    fn a_binding_needs_a_node_target() {
        let error = validate_pod_binding(&json!({"target": {"kind": "Pod"}}))
            .expect_err("invalid");
        assert_eq!(error.code(), 500);
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]"
            )
        );
        assert_eq!(
            validate_pod_binding(&json!({"target": {"name": "n1"}})).unwrap(),
            "n1"
        );
    }

    #[test]
    fn a_condition_moves_its_transition_time_only_on_a_change() {
        let mut data = json!({"status": {"conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "t0"}
        ]}});
        update_pod_condition(&mut data, "PodScheduled", "True");
        assert_eq!(data["status"]["conditions"][0]["lastTransitionTime"], "t0");
        update_pod_condition(&mut data, "PodScheduled", "False");
        assert_ne!(data["status"]["conditions"][0]["lastTransitionTime"], "t0");
    }
}
