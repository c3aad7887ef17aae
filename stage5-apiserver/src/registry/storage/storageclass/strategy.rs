//! StorageClasses: mirrors kubernetes' `pkg/registry/storage/storageclass/strategy.go`
//! (`storageClassStrategy`).

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

/// The storage class registry's strategy.
#[derive(Debug)]
pub struct StorageClassStrategy;

impl Strategy for StorageClassStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator.subschema_for::<k8s_openapi::api::storage::v1::StorageClass>(),
        )
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_storage_class(obj);
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_storage_class(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_storage_class_update(&new.data, &old.data)
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::STORAGE_CLASS
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::STORAGE_CLASS
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::STORAGE_CLASS
    }

    fn new_object(&self) -> Value {
        json!({"provisioner": ""})
    }
}
