//! RuntimeClasses: mirrors kubernetes' `pkg/registry/node/runtimeclass/strategy.go`
//! (`strategy`: no unconditional update; the handler is fixed).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::node::validation;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

// ANCHOR: strategy
/// The runtime class registry's strategy.
#[derive(Debug)]
pub struct RuntimeClassStrategy;

impl Strategy for RuntimeClassStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::node::v1::RuntimeClass>())
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_runtime_class(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_runtime_class_update(&new.data, &old.data)
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::RUNTIME_CLASS
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::RUNTIME_CLASS
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::RUNTIME_CLASS
    }

    fn new_object(&self) -> Value {
        json!({"handler": ""})
    }
}
// ANCHOR_END: strategy
