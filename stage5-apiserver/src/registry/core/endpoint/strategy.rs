//! Endpoints: mirrors kubernetes' `pkg/registry/core/endpoint/strategy.go`
//! (`endpointsStrategy`: no status, `Validate` and `ValidateUpdate` over
//! `ValidateEndpoints`). The endpoints controller writes one per service.

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

/// The endpoints registry's strategy.
#[derive(Debug)]
pub struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::Endpoints>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_endpoints(obj);
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_endpoints(&obj.data)
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::ENDPOINTS
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::ENDPOINTS
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::ENDPOINTS
    }

    fn new_object(&self) -> Value {
        json!({})
    }
}
