//! ControllerRevisions: mirrors kubernetes'
//! `pkg/registry/apps/controllerrevision/strategy.go` (`strategy`: nothing to
//! prepare; `ValidateControllerRevisionCreate` and `…Update`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::apps::validation;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The controller revision registry's strategy.
#[derive(Debug)]
pub struct ControllerRevisionStrategy;

impl Strategy for ControllerRevisionStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator
                .subschema_for::<k8s_openapi::api::apps::v1::ControllerRevision>(),
        )
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_controller_revision(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_controller_revision_update(&new.data, &old.data)
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::CONTROLLER_REVISION
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::CONTROLLER_REVISION
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::CONTROLLER_REVISION
    }

    fn new_object(&self) -> Value {
        json!({"data": null, "revision": 0})
    }
}
