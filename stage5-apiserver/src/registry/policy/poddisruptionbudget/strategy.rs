//! PodDisruptionBudgets: mirrors kubernetes'
//! `pkg/registry/policy/poddisruptionbudget/strategy.go`
//! (`podDisruptionBudgetStrategy`: no unconditional update;
//! `podDisruptionBudgetStatusStrategy`). Evictions read and spend a budget
//! ([`crate::registry::core::pod::storage::eviction`]).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::policy::validation;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The pod disruption budget registry's strategy.
#[derive(Debug)]
pub struct PodDisruptionBudgetStrategy;

impl Strategy for PodDisruptionBudgetStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(
            generator
                .subschema_for::<k8s_openapi::api::policy::v1::PodDisruptionBudget>(
                ),
        )
    }

    /// Mirrors `podDisruptionBudgetStrategy.PrepareForCreate`: no status.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({"disruptionsAllowed": 0, "currentHealthy": 0,
            "desiredHealthy": 0, "expectedPods": 0});
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_pod_disruption_budget(&obj.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::POD_DISRUPTION_BUDGET
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::POD_DISRUPTION_BUDGET
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::POD_DISRUPTION_BUDGET
    }

    fn new_object(&self) -> Value {
        json!({"spec": {}, "status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}})
    }
}
