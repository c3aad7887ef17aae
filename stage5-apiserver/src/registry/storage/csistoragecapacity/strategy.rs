//! CSIStorageCapacities: mirrors kubernetes'
//! `pkg/registry/storage/csistoragecapacity/strategy.go` (`csiStorageCapacityStrategy`:
//! no unconditional update).

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

/// The CSI storage capacity registry's strategy.
#[derive(Debug)]
pub struct CsiStorageCapacityStrategy;

impl Strategy for CsiStorageCapacityStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator
                .subschema_for::<k8s_openapi::api::storage::v1::CSIStorageCapacity>(
                ),
        )
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_csi_storage_capacity(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_csi_storage_capacity_update(&new.data, &old.data)
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::CSI_STORAGE_CAPACITY
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::CSI_STORAGE_CAPACITY
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::CSI_STORAGE_CAPACITY
    }

    fn new_object(&self) -> Value {
        json!({"storageClassName": ""})
    }
}
