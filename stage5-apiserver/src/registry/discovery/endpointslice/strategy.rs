//! EndpointSlices: mirrors kubernetes' `pkg/registry/discovery/endpointslice/strategy.go`
//! (`endpointSliceStrategy`: no status; the generation moves with anything
//! but the metadata, and with the labels).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::discovery::validation;
use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The endpoint slice registry's strategy.
#[derive(Debug)]
pub struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator
                .subschema_for::<k8s_openapi::api::discovery::v1::EndpointSlice>(),
        )
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_endpoint_slice(obj);
    }

    /// Mirrors `endpointSliceStrategy.PrepareForUpdate`: the generation moves
    /// when anything outside the metadata changed, or the labels did.
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        let changed = next.data != current.data
            || next.metadata.labels != current.metadata.labels;
        next.metadata.generation =
            current.metadata.generation.map(|g| g + i64::from(changed));
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_endpoint_slice(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_endpoint_slice_update(&new.data, &old.data)
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::ENDPOINT_SLICE
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::ENDPOINT_SLICE
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::ENDPOINT_SLICE
    }

    fn new_object(&self) -> Value {
        json!({"addressType": "", "endpoints": null})
    }
}
