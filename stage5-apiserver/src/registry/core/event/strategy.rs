//! Events: mirrors kubernetes' `pkg/registry/core/event/strategy.go`
//! (`eventStrategy`; `ToSelectableFields`, whose `involvedObject.*`, `reason`,
//! `reportingComponent` and `type` are the resource's field labels). The same
//! registry serves `events.k8s.io/v1` through a conversion
//! ([`crate::events_v1`]), with the field labels renamed (`regarding.*`,
//! `reportingController`) and its own strategy here.

use apimachinery::util::managedfields::typeconverter;
use serde_json::{Value, json};
use structured_merge_diff::schema::Schema;

use crate::printers::{TableHandler, internalversion};
use schemars::{Schema as SchemaObject, SchemaGenerator};

use crate::registry::rest::Strategy;

/// The core `v1` event registry's strategy.
#[derive(Debug)]
pub struct EventStrategy;

impl Strategy for EventStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::core::v1::Event>())
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::EVENT
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::EVENT
    }

    fn new_object(&self) -> Value {
        json!({"involvedObject": {}, "source": {}})
    }
}

/// The `events.k8s.io/v1` view of the same registry: printed and applied as
/// the one internal Event type upstream has.
#[derive(Debug)]
pub struct EventsV1Strategy;

impl Strategy for EventsV1Strategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::events::v1::Event>())
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::EVENT_V1
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::EVENT
    }

    fn new_object(&self) -> Value {
        json!({"involvedObject": {}, "source": {}})
    }
}
