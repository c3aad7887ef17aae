//! Deployments: mirrors kubernetes' `pkg/registry/apps/deployment/strategy.go`
//! (`deploymentStrategy`: `PrepareForCreate`, `PrepareForUpdate`;
//! `deploymentStatusStrategy`) and the `scale` subresource of its `storage.go`
//! (`ScaleREST`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::registry::rest::{Strategy, keep_status, next_generation};

/// The deployment registry's strategy.
#[derive(Debug)]
pub struct DeploymentStrategy;

impl Strategy for DeploymentStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::apps::v1::Deployment>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_deployment(obj);
    }

    /// Mirrors `deploymentStrategy.PrepareForCreate`: a new deployment has no
    /// status.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({});
    }

    /// Mirrors `deploymentStrategy.PrepareForUpdate`: the status stays, and the
    /// generation moves on a change of the spec or of the annotations (which
    /// the deployment copies to its replica sets).
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        keep_status(next, current);
        next.metadata.generation = next_generation(next, current, true);
    }

    /// Mirrors `deploymentStatusStrategy.PrepareForUpdate`: the labels stay
    /// (and the spec); the annotations change, as the Deployment controller
    /// writes the revision annotation with the status.
    fn prepare_for_status_update(&self, next: &mut Object, written: &ObjectMeta) {
        next.metadata.annotations = written.annotations.clone();
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn has_scale_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::DEPLOYMENT
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::DEPLOYMENT
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::DEPLOYMENT
    }

    fn new_object(&self) -> Value {
        json!({
            "spec": {"selector": null, "strategy": {}, "template": {
                "metadata": {"creationTimestamp": null},
                "spec": {"containers": null}}},
            "status": {},
        })
    }
}
