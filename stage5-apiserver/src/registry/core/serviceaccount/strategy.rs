//! ServiceAccounts: mirrors kubernetes' `pkg/registry/core/serviceaccount/strategy.go`
//! (`strategy`: `PrepareForCreate` and `PrepareForUpdate` run
//! `cleanSecretReferences`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::{Strategy, next_generation};

/// The service account registry's strategy.
#[derive(Debug)]
pub struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::ServiceAccount>())
    }

    /// Mirrors `strategy.PrepareForCreate`'s `cleanSecretReferences`.
    fn prepare_for_create(&self, obj: &mut Object) {
        clean_secret_references(obj);
    }

    /// Mirrors `strategy.PrepareForUpdate`'s `cleanSecretReferences`.
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        clean_secret_references(next);
        next.metadata.generation = next_generation(next, current, false);
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::SERVICE_ACCOUNT
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::SERVICE_ACCOUNT
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::SERVICE_ACCOUNT
    }

    fn new_object(&self) -> Value {
        json!({})
    }
}

/// Mirrors `cleanSecretReferences`: each of `secrets` keeps only its name.
fn clean_secret_references(obj: &mut Object) {
    if let Some(secrets) = obj.data.get_mut("secrets").and_then(Value::as_array_mut)
    {
        for secret in secrets.iter_mut() {
            *secret = json!({"name": secret["name"]});
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    #[test]
    fn secret_references_keep_only_their_names() {
        let mut sa = Object::new(&ResourceInfo::SERVICE_ACCOUNTS, Some("ns"), "builder")
            .with_data(json!({"secrets": [{"name": "token", "namespace": "other", "uid": "u"}]}));
        ServiceAccountStrategy.prepare_for_create(&mut sa);
        assert_eq!(sa.data["secrets"], json!([{"name": "token"}]));
    }
}
