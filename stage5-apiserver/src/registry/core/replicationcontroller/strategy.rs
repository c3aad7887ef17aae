//! ReplicationControllers: mirrors kubernetes'
//! `pkg/registry/core/replicationcontroller/strategy.go` (`rcStrategy`:
//! `PrepareForCreate`, `PrepareForUpdate`, `DefaultGarbageCollectionPolicy`;
//! `rcStatusStrategy`; `ControllerToSelectableFields`, whose `status.replicas` is
//! the resource's field label) and the `scale` subresource of its `storage.go`
//! (`ScaleREST`, `scaleFromRC`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::core::validation;
use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The replication controller registry's strategy.
#[derive(Debug)]
pub struct ReplicationControllerStrategy;

impl Strategy for ReplicationControllerStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator
                .subschema_for::<k8s_openapi::api::core::v1::ReplicationController>(
                ),
        )
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_replication_controller(obj);
    }

    /// Mirrors `rcStrategy.PrepareForCreate`: a new controller has no status.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({"replicas": 0});
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_replication_controller(&obj.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn has_scale_subresource(&self) -> bool {
        true
    }

    /// Mirrors `scaleFromRC`: the selector is a plain label map
    /// (`labels.SelectorFromSet`), `k=v` pairs sorted by key.
    fn scale_selector(&self, obj: &Object) -> String {
        let pairs: Vec<String> = obj.data["spec"]["selector"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        pairs.join(",")
    }

    /// Mirrors `rcStrategy.DefaultGarbageCollectionPolicy` for `v1`:
    /// `OrphanDependents`, as the API has always done for controllers.
    fn orphans_dependents_by_default(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::REPLICATION_CONTROLLER
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::REPLICATION_CONTROLLER
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::REPLICATION_CONTROLLER
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"template": null}, "status": {"replicas": 0}})
    }
}
