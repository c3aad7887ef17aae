//! Jobs: mirrors kubernetes' `pkg/registry/batch/job/strategy.go` (`jobStrategy`:
//! `PrepareForCreate` with `generateSelectorIfNeeded`, `PrepareForUpdate`,
//! `DefaultGarbageCollectionPolicy`; `jobStatusStrategy`; `JobToSelectableFields`,
//! whose `status.successful` is the resource's field label).

use apimachinery::util::managedfields::typeconverter;
use apimachinery::util::strategicpatch::{StructMeta, meta as patch_meta};
use apimachinery::util::validation::field::ErrorList;
use schemars::{Schema as SchemaObject, SchemaGenerator};
use serde_json::{Value, json};
use stage5_storage::Object;
use structured_merge_diff::schema::Schema;

use crate::apis::batch::validation;
use crate::defaults;
use crate::printers::{TableHandler, internalversion};
use crate::registry::rest::Strategy;

/// The job registry's strategy.
#[derive(Debug)]
pub struct JobStrategy;

impl Strategy for JobStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::batch::v1::Job>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_job(obj);
    }

    /// Mirrors `jobStrategy.PrepareForCreate`: the selector the job's pods are
    /// found by, unless the client chose one (`generateSelectorIfNeeded`), and
    /// no status.
    fn prepare_for_create(&self, obj: &mut Object) {
        generate_selector_if_needed(obj);
        obj.data["status"] = json!({});
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_job(&obj.data)
    }

    fn validate_fields_update(&self, new: &Object, old: &Object) -> ErrorList {
        validation::validate_job_update(&new.data, &old.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    /// Mirrors `jobStrategy.DefaultGarbageCollectionPolicy` for `batch/v1`:
    /// `OrphanDependents`, so a job deleted without a policy leaves its pods.
    fn orphans_dependents_by_default(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::JOB
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::JOB
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::JOB
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": null}}}, "status": {}})
    }
}

/// The labels a job's pods carry and its selector selects (`batch.JobNameLabel`,
/// `batch.ControllerUidLabel`, and their legacy names).
const JOB_NAME_LABELS: [&str; 2] = ["batch.kubernetes.io/job-name", "job-name"];
const CONTROLLER_UID_LABELS: [&str; 2] =
    ["batch.kubernetes.io/controller-uid", "controller-uid"];

/// Mirrors `generateSelectorIfNeeded`: unless `spec.manualSelector`, the
/// template gets the job-name and controller-uid labels (each only if absent)
/// and the selector is the job's uid.
fn generate_selector_if_needed(obj: &mut Object) {
    if obj.data["spec"]["manualSelector"].as_bool() == Some(true) {
        return;
    }
    let name = obj.name().to_string();
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let spec = &mut obj.data["spec"];
    let labels = &mut spec["template"]["metadata"]["labels"];
    if !labels.is_object() {
        *labels = json!({});
    }
    if let Some(labels) = labels.as_object_mut() {
        for (key, value) in JOB_NAME_LABELS
            .iter()
            .map(|k| (k, &name))
            .chain(CONTROLLER_UID_LABELS.iter().map(|k| (k, &uid)))
        {
            labels
                .entry(key.to_string())
                .or_insert_with(|| json!(value));
        }
    }
    let selector = &mut spec["selector"];
    if !selector.is_object() {
        *selector = json!({});
    }
    selector["matchLabels"][CONTROLLER_UID_LABELS[0]] = json!(uid);
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    #[test]
    fn a_job_selects_its_pods_by_its_uid() {
        let mut job = Object::new(&ResourceInfo::JOBS, Some("ns"), "pi")
            .with_data(json!({"spec": {"template": {"spec": {"containers": []}}}}));
        job.metadata.uid = Some("u-1".into());
        JobStrategy.prepare_for_create(&mut job);
        let labels = &job.data["spec"]["template"]["metadata"]["labels"];
        assert_eq!(labels["job-name"], "pi");
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], "u-1");
        assert_eq!(
            job.data["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        let mut manual = Object::new(&ResourceInfo::JOBS, Some("ns"), "m")
            .with_data(json!({"spec": {"manualSelector": true, "selector": {"matchLabels": {"a": "b"}}}}));
        JobStrategy.prepare_for_create(&mut manual);
        assert_eq!(
            manual.data["spec"]["selector"],
            json!({"matchLabels": {"a": "b"}})
        );
    }
}
