//! PersistentVolumeClaims: mirrors kubernetes'
//! `pkg/registry/core/persistentvolumeclaim/strategy.go`
//! (`persistentvolumeclaimStrategy`, `persistentvolumeclaimStatusStrategy`).

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

/// The persistent volume claim registry's strategy.
#[derive(Debug)]
pub struct PersistentVolumeClaimStrategy;

impl Strategy for PersistentVolumeClaimStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator
                .subschema_for::<k8s_openapi::api::core::v1::PersistentVolumeClaim>(
                ),
        )
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_persistent_volume_claim(obj);
    }

    /// Mirrors `persistentvolumeclaimStrategy.PrepareForCreate`: a new claim has
    /// no status but the phase its defaults give, `Pending`.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({"phase": "Pending"});
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_persistent_volume_claim(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_persistent_volume_claim_update(&new.data, &old.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::PERSISTENT_VOLUME_CLAIM
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::PERSISTENT_VOLUME_CLAIM
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::PERSISTENT_VOLUME_CLAIM
    }

    fn new_object(&self) -> Value {
        json!({"spec": {}, "status": {}})
    }
}
