//! CSIDrivers: mirrors kubernetes' `pkg/registry/storage/csidriver/strategy.go`
//! (`csiDriverStrategy`: no unconditional update; the generation moves with
//! the spec).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::storage::validation;
use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The CSI driver registry's strategy.
#[derive(Debug)]
pub struct CsiDriverStrategy;

impl Strategy for CsiDriverStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::storage::v1::CSIDriver>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_csi_driver(obj);
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_csi_driver(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_csi_driver_update(&new.data, &old.data)
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::CSI_DRIVER
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::CSI_DRIVER
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::CSI_DRIVER
    }

    fn new_object(&self) -> Value {
        json!({"spec": {}})
    }
}
