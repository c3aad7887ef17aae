//! ReplicaSets: mirrors kubernetes' `pkg/registry/apps/replicaset/strategy.go`
//! (`rsStrategy`: `PrepareForCreate`, `PrepareForUpdate`; `rsStatusStrategy`;
//! `ReplicaSetToSelectableFields`, whose `status.replicas` is the resource's field
//! label) and the `scale` subresource of its `storage.go` (`ScaleREST`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The replica set registry's strategy.
#[derive(Debug)]
pub struct ReplicaSetStrategy;

impl Strategy for ReplicaSetStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::apps::v1::ReplicaSet>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_replica_set(obj);
    }

    /// Mirrors `rsStrategy.PrepareForCreate`: a new replica set has no status.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({});
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn has_scale_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::REPLICASET
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::REPLICA_SET
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::REPLICA_SET
    }

    fn new_object(&self) -> Value {
        json!({
            "spec": {"selector": null, "template": {
                "metadata": {"creationTimestamp": null},
                "spec": {"containers": null}}},
            "status": {"replicas": 0},
        })
    }
}
