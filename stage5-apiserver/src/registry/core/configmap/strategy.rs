//! ConfigMaps: mirrors kubernetes' `pkg/registry/core/configmap/strategy.go`
//! (`strategy`: `Validate`, and `ValidateUpdate`, which runs `ValidateConfigMap`
//! again after `ValidateObjectMetaUpdate`).

use apimachinery::api::validation::objectmeta::validate_object_meta_update;
use apimachinery::util::validation::field::ErrorList;
use stage5_storage::{Object, ResourceInfo};

use crate::printers::{TableHandler, internalversion};
use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::registry::rest::Strategy;

/// The configmap registry's strategy.
#[derive(Debug)]
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::ConfigMap>())
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
        &internalversion::CONFIGMAP
    }
}
