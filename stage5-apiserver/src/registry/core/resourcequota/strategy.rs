//! ResourceQuotas: mirrors kubernetes' `pkg/registry/core/resourcequota/strategy.go`
//! (`resourcequotaStrategy`, `resourcequotaStatusStrategy`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::core::validation;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The resource quota registry's strategy.
#[derive(Debug)]
pub struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::ResourceQuota>())
    }

    /// Mirrors `resourcequotaStrategy.PrepareForCreate`: a new quota has no
    /// status (the quota controller fills `hard` and `used`).
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({});
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_resource_quota(&obj.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::RESOURCE_QUOTA
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::RESOURCE_QUOTA
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::RESOURCE_QUOTA
    }

    fn new_object(&self) -> Value {
        json!({"spec": {}, "status": {}})
    }
}
