//! StatefulSets: mirrors kubernetes' `pkg/registry/apps/statefulset/strategy.go`
//! (`statefulSetStrategy`, `statefulSetStatusStrategy`) and the `scale`
//! subresource of its `storage.go` (`ScaleREST`, `scaleFromStatefulSet`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::apps::validation;
use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The stateful set registry's strategy.
#[derive(Debug)]
pub struct StatefulSetStrategy;

impl Strategy for StatefulSetStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::apps::v1::StatefulSet>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_stateful_set(obj);
    }

    /// Mirrors `statefulSetStrategy.PrepareForCreate`: a new set has no status.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({"replicas": 0, "availableReplicas": 0});
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_stateful_set(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_stateful_set_update(&new.data, &old.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn has_scale_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::STATEFUL_SET
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::STATEFUL_SET
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::STATEFUL_SET
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"selector": null, "template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": null}}, "serviceName": "", "updateStrategy": {}}, "status": {"replicas": 0, "availableReplicas": 0}})
    }
}
