//! VolumeAttachments: mirrors kubernetes'
//! `pkg/registry/storage/volumeattachment/strategy.go` (`volumeAttachmentStrategy`:
//! no unconditional update, a fixed spec; `volumeAttachmentStatusStrategy`,
//! whose writes keep the labels and annotations as `ResetObjectMetaForStatus`
//! does).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::storage::validation;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The volume attachment registry's strategy.
#[derive(Debug)]
pub struct VolumeAttachmentStrategy;

impl Strategy for VolumeAttachmentStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator
                .subschema_for::<k8s_openapi::api::storage::v1::VolumeAttachment>(),
        )
    }

    /// Mirrors `volumeAttachmentStrategy.PrepareForCreate`: not attached yet.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({"attached": false});
    }

    /// Mirrors `volumeAttachmentStatusStrategy.PrepareForUpdate`
    /// (`metav1.ResetObjectMetaForStatus`): a status write changes no metadata.
    fn prepare_for_status_update(&self, _next: &mut Object, _written: &ObjectMeta) {}

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_volume_attachment(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_volume_attachment_update(&new.data, &old.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::VOLUME_ATTACHMENT
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::VOLUME_ATTACHMENT
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::VOLUME_ATTACHMENT
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"attacher": "", "source": {}, "nodeName": ""}, "status": {"attached": false}})
    }
}
