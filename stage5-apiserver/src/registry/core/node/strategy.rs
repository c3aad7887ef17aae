//! Nodes: mirrors kubernetes' `pkg/registry/core/node/strategy.go`
//! (`nodeStrategy`, `nodeStatusStrategy`; `NodeToSelectableFields`, whose
//! `spec.unschedulable` is the resource's field label).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use serde_json::{Value, json};
use structured_merge_diff::schema::Schema;

use crate::printers::{TableHandler, internalversion};
use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::registry::rest::Strategy;

/// The node registry's strategy.
#[derive(Debug)]
pub struct NodeStrategy;

impl Strategy for NodeStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::Node>())
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::NODE
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::NODE
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::NODE
    }

    fn new_object(&self) -> Value {
        json!({"spec": {}, "status": {}})
    }
}
