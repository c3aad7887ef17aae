//! Services: mirrors kubernetes' `pkg/registry/core/service/strategy.go`
//! (`svcStrategy`: `PrepareForCreate`, `PrepareForUpdate`, `Validate`,
//! `ValidateUpdate`; `serviceStatusStrategy`; `SelectableFields`, whose
//! `spec.clusterIP` and `spec.type` are the resource's field labels) and its
//! `storage/storage.go` (`BeginCreate`, with [`storage::alloc`]: the cluster IP
//! and node ports). Service names are DNS-1035 labels (`ValidateServiceName`).

use apimachinery::api::validation::objectmeta::NameRule;
use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use futures::future::BoxFuture;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::{Object, Storage};
use structured_merge_diff::schema::Schema;

use crate::apis::core::validation;
use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::{Strategy, keep_status, next_generation};
use crate::status::ApiError;

/// The service registry's strategy.
#[derive(Debug)]
pub struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::Service>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_service(obj);
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035Label
    }

    /// Mirrors `svcStrategy.PrepareForCreate`: a new service has no status.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({"loadBalancer": {}});
    }

    fn begin_create<'a>(
        &'a self,
        storage: &'a dyn Storage,
        obj: &'a mut Object,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(super::storage::alloc::alloc_for_create(storage, obj))
    }

    /// Mirrors `svcStrategy.PrepareForUpdate` and the storage's
    /// `patchAllocatedValues`: the status stays, and what was allocated stays
    /// when the write left it out.
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        keep_status(next, current);
        super::storage::alloc::patch_allocated_values(&mut next.data, &current.data);
        next.metadata.generation = next_generation(next, current, false);
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_service(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_service_update(&new.data, &old.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::SERVICE
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::SERVICE
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::SERVICE
    }

    fn new_object(&self) -> Value {
        json!({"spec": {}, "status": {"loadBalancer": {}}})
    }
}
