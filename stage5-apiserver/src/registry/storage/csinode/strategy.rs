//! CSINodes: mirrors kubernetes' `pkg/registry/storage/csinode/strategy.go`
//! (`csinodeStrategy`: no unconditional update). A kubelet writes its node's
//! one, named as the node, when it starts.

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::storage::validation;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The CSI node registry's strategy.
#[derive(Debug)]
pub struct CsiNodeStrategy;

impl Strategy for CsiNodeStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::storage::v1::CSINode>())
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_csi_node(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_csi_node_update(&new.data, &old.data)
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::CSI_NODE
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::CSI_NODE
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::CSI_NODE
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"drivers": null}})
    }
}
