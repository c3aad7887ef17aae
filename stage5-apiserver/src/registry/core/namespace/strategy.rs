//! Namespaces: mirrors kubernetes' `pkg/registry/core/namespace/strategy.go`
//! (`namespaceStrategy`: `PrepareForCreate`, `PrepareForUpdate`, `Validate` with
//! `ValidateNamespaceName`; `namespaceStatusStrategy`; `namespaceFinalizeStrategy`)
//! and the registry's own `Delete` in its `storage/storage.go`, which only marks
//! a namespace `Terminating` (the namespace controller finishes it).

use apimachinery::api::validation::objectmeta::NameRule;
use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::printers::{TableHandler, internalversion};
use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::registry::rest::{Strategy, keep_status, next_generation};

/// The namespace registry's strategy.
#[derive(Debug)]
pub struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::Namespace>())
    }

    /// Mirrors `namespaceStrategy.PrepareForCreate`: phase `Active`, and the
    /// `kubernetes` finalizer unless the spec names finalizers already.
    fn prepare_for_create(&self, namespace: &mut Object) {
        namespace.data["status"] = json!({ "phase": "Active" });
        let spec = &mut namespace.data["spec"];
        if spec
            .get("finalizers")
            .is_none_or(|f| f.as_array().is_none_or(Vec::is_empty))
        {
            spec["finalizers"] = json!(["kubernetes"]);
        }
    }

    /// Mirrors `namespaceStrategy.PrepareForUpdate`: the status stays, and so
    /// does `spec.finalizers`, which only `…/finalize` changes.
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        keep_status(next, current);
        keep_finalizers(next, current);
        next.metadata.generation = next_generation(next, current, false);
    }

    /// `ValidateNamespace`: a namespace's name is an RFC 1123 label.
    fn name_rule(&self) -> NameRule {
        NameRule::DnsLabel
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn has_finalize_subresource(&self) -> bool {
        true
    }

    /// Mirrors `ShouldDeleteNamespaceDuringUpdate`: a terminating namespace
    /// goes only once its `spec.finalizers` are gone too (its `finalize`
    /// write), not on a write of its status.
    fn should_delete_during_update(&self, namespace: &Object) -> bool {
        namespace.data["spec"]["finalizers"]
            .as_array()
            .is_none_or(Vec::is_empty)
    }

    fn delete_terminates(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::NAMESPACE
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::NAMESPACE
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::NAMESPACE
    }

    fn new_object(&self) -> Value {
        json!({"spec": {}, "status": {}})
    }
}

/// The live namespace's `spec.finalizers` in `next`, or none if it has none.
fn keep_finalizers(next: &mut Object, current: &Object) {
    let Value::Object(next_data) = &mut next.data else {
        return;
    };
    let finalizers = current.data.get("spec").and_then(|s| s.get("finalizers"));
    match (finalizers, next_data.get_mut("spec")) {
        (Some(finalizers), Some(Value::Object(spec))) => {
            spec.insert("finalizers".into(), finalizers.clone());
        }
        (Some(finalizers), _) => {
            next_data.insert("spec".into(), json!({"finalizers": finalizers}));
        }
        (None, Some(Value::Object(spec))) => {
            spec.remove("finalizers");
        }
        (None, _) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    fn prepare_for_create(namespace: &mut Object) {
        NamespaceStrategy.prepare_for_create(namespace);
    }

    #[test]
    fn a_new_namespace_is_active_with_the_kubernetes_finalizer() {
        let mut namespace = Object::new(&ResourceInfo::NAMESPACES, None, "team-a");
        prepare_for_create(&mut namespace);
        assert_eq!(namespace.data["status"], json!({"phase": "Active"}));
        assert_eq!(namespace.data["spec"]["finalizers"], json!(["kubernetes"]));

        let mut own = Object::new(&ResourceInfo::NAMESPACES, None, "team-b")
            .with_data(json!({"spec": {"finalizers": ["example.com/keep"]}}));
        prepare_for_create(&mut own);
        assert_eq!(own.data["spec"]["finalizers"], json!(["example.com/keep"]));
    }
}
