//! Pods: mirrors kubernetes' `pkg/registry/core/pod/strategy.go`
//! (`podStrategy`: `PrepareForCreate`, `PrepareForUpdate`, `Validate`,
//! `ValidateUpdate`; `podStatusStrategy`; `ToSelectableFields`, whose
//! `spec.nodeName` and `status.phase` are the resource's field labels) with
//! `pkg/apis/core/helper/qos` (`GetPodQOS`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use serde_json::{Map, Value, json};
use stage5_storage::{Object, ResourceInfo};
use structured_merge_diff::schema::Schema;

use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::registry::rest::Strategy;

/// The pod registry's strategy.
#[derive(Debug)]
pub struct PodStrategy;

impl Strategy for PodStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::Pod>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_pod(obj);
    }

    /// Mirrors `podStrategy.PrepareForCreate`: a new pod's status is `Pending`
    /// with its QoS class, whatever the client sent.
    fn prepare_for_create(&self, pod: &mut Object) {
        let qos = pod_qos(&pod.data);
        pod.data["status"] = json!({"phase": "Pending", "qosClass": qos});
    }

    /// Mirrors `podStrategy.ValidateUpdate`, which runs the create's metadata
    /// checks again (`validatePodMetadataAndSpec`) after
    /// `ValidateObjectMetaUpdate`.
    fn validate_update(
        &self,
        info: &ResourceInfo,
        new: &Object,
        old: &Object,
    ) -> ErrorList {
        let mut errors =
            apimachinery::api::validation::objectmeta::validate_object_meta_update(
                &new.metadata,
                &old.metadata,
            );
        errors.extend(self.validate(info, new));
        errors
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn has_binding_subresource(&self) -> bool {
        true
    }

    fn has_eviction_subresource(&self) -> bool {
        true
    }

    /// Mirrors `podStrategy.CheckGracefulDelete`: the requested period, else the
    /// pod's `terminationGracePeriodSeconds` (else 0); 0 for a pod no node runs
    /// (unscheduled) or one that has finished; a negative period is 1.
    fn check_graceful_delete(
        &self,
        pod: &Object,
        requested: Option<i64>,
    ) -> Option<i64> {
        let spec = &pod.data["spec"];
        let mut period = requested
            .or_else(|| spec["terminationGracePeriodSeconds"].as_i64())
            .unwrap_or(0);
        if spec["nodeName"].as_str().is_none_or(str::is_empty) {
            period = 0;
        }
        if matches!(
            pod.data["status"]["phase"].as_str(),
            Some("Failed" | "Succeeded")
        ) {
            period = 0;
        }
        Some(if period < 0 { 1 } else { period })
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::POD
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::POD
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::POD
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"containers": null}, "status": {}})
    }
}

/// Mirrors `qos.GetPodQOS`: `Guaranteed` when every container limits cpu and
/// memory to what it requests, `BestEffort` when none requests or limits
/// anything, `Burstable` otherwise.
fn pod_qos(pod: &Value) -> &'static str {
    let containers = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| pod["spec"][list].as_array())
        .flatten();
    let mut any = false;
    let mut guaranteed = true;
    for container in containers {
        let requests = container["resources"]["requests"].as_object();
        let limits = container["resources"]["limits"].as_object();
        let has = |m: Option<&Map<String, Value>>| m.is_some_and(|m| !m.is_empty());
        any |= has(requests) || has(limits);
        for resource in ["cpu", "memory"] {
            let limit = limits.and_then(|l| l.get(resource));
            let request = requests.and_then(|r| r.get(resource)).or(limit);
            if limit.is_none() || request != limit {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_follows_requests_and_limits() {
        let with = |resources: Value| json!({"spec": {"containers": [{"name": "a", "resources": resources}]}});
        assert_eq!(pod_qos(&with(json!({}))), "BestEffort");
        assert_eq!(
            pod_qos(&with(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            pod_qos(&with(json!({"requests": {"cpu": "1"}}))),
            "Burstable"
        );
    }
}
