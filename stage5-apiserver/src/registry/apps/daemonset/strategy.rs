//! DaemonSets: mirrors kubernetes' `pkg/registry/apps/daemonset/strategy.go`
//! (`daemonSetStrategy`: `PrepareForCreate` and `PrepareForUpdate` keep the
//! template generation, which `apps/v1` shows as the annotation
//! `deprecated.daemonset.template.generation`; `daemonSetStatusStrategy`).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::apps::validation;
use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::{Strategy, keep_status, next_generation};

/// The daemon set registry's strategy.
#[derive(Debug)]
pub struct DaemonSetStrategy;

impl Strategy for DaemonSetStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::apps::v1::DaemonSet>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_daemon_set(obj);
    }

    /// Mirrors `daemonSetStrategy.PrepareForCreate`: no status, and template
    /// generation 1.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({"currentNumberScheduled": 0,
            "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0});
        set_template_generation(obj, 1);
    }

    /// Mirrors `daemonSetStrategy.PrepareForUpdate`: the status stays; a new
    /// template moves the template generation and the generation, any other
    /// spec change the generation alone.
    fn prepare_for_update(&self, next: &mut Object, current: &Object) {
        keep_status(next, current);
        let generation = template_generation(current);
        let template_changed =
            next.data["spec"]["template"] != current.data["spec"]["template"];
        set_template_generation(next, generation + i64::from(template_changed));
        next.metadata.generation = next_generation(next, current, false);
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_daemon_set(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_daemon_set_update(&new.data, &old.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::DAEMON_SET
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::DAEMON_SET
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::DAEMON_SET
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"selector": null, "template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": null}}, "updateStrategy": {}}, "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}})
    }
}

/// The annotation `apps/v1` keeps the internal `spec.templateGeneration` in
/// (`Convert_apps_DaemonSet_To_v1_DaemonSet`).
pub const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The template generation `obj` carries (1 when it has none).
fn template_generation(obj: &Object) -> i64 {
    obj.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(|g| g.parse().ok())
        .unwrap_or(1)
}

fn set_template_generation(obj: &mut Object, generation: i64) {
    obj.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(TEMPLATE_GENERATION.into(), generation.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    #[test]
    fn a_new_template_moves_the_template_generation() {
        let mut ds = Object::new(&ResourceInfo::DAEMON_SETS, Some("ns"), "agent")
            .with_data(json!({"spec": {"template": {"spec": {"containers": [{"image": "a"}]}}}}));
        DaemonSetStrategy.prepare_for_create(&mut ds);
        ds.metadata.generation = Some(1);
        assert_eq!(template_generation(&ds), 1);
        let mut next = ds.clone();
        next.data["spec"]["minReadySeconds"] = json!(5);
        DaemonSetStrategy.prepare_for_update(&mut next, &ds);
        assert_eq!(
            (template_generation(&next), next.metadata.generation),
            (1, Some(2))
        );
        let mut newer = next.clone();
        newer.data["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!("b");
        DaemonSetStrategy.prepare_for_update(&mut newer, &next);
        assert_eq!(
            (template_generation(&newer), newer.metadata.generation),
            (2, Some(3))
        );
    }
}
