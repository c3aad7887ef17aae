//! Secrets: mirrors kubernetes' `pkg/registry/core/secret/strategy.go`
//! (`strategy`: `Validate`, and `ValidateUpdate`, which runs `ValidateSecret`
//! again after `ValidateObjectMetaUpdate`; `SelectableFields`, whose `type` is
//! the resource's field label) and `SetDefaults_Secret`.

use apimachinery::api::validation::objectmeta::validate_object_meta_update;
use apimachinery::util::validation::field::ErrorList;
use stage5_storage::{Object, ResourceInfo};

use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::registry::rest::Strategy;

/// The secret registry's strategy.
#[derive(Debug)]
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::Secret>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_secret(obj);
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        new: &Object,
        old: &Object,
    ) -> ErrorList {
        let mut errors = validate_object_meta_update(&new.metadata, &old.metadata);
        errors.extend(self.validate(info, new));
        errors
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::SECRET
    }
}
