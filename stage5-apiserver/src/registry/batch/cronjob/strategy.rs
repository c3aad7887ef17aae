//! CronJobs: mirrors kubernetes' `pkg/registry/batch/cronjob/strategy.go`
//! (`cronJobStrategy`, `cronJobStatusStrategy`).

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

/// The cron job registry's strategy.
#[derive(Debug)]
pub struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    fn openapi_schema(
        &self,
        generator: &mut SchemaGenerator,
    ) -> Option<SchemaObject> {
        Some(generator.subschema_for::<k8s_openapi::api::batch::v1::CronJob>())
    }

    fn set_defaults(&self, obj: &mut Object) {
        defaults::set_object_defaults_cron_job(obj);
    }

    /// Mirrors `cronJobStrategy.PrepareForCreate`: no status.
    fn prepare_for_create(&self, obj: &mut Object) {
        obj.data["status"] = json!({});
    }

    fn validate_fields(&self, obj: &Object) -> ErrorList {
        validation::validate_cron_job(obj.name(), &obj.data)
    }

    fn has_status_subresource(&self) -> bool {
        true
    }

    fn table_handler(&self) -> &'static TableHandler {
        &internalversion::CRON_JOB
    }

    fn patch_meta(&self) -> &'static StructMeta {
        &patch_meta::CRON_JOB
    }

    fn field_schema(&self) -> &'static Schema {
        &typeconverter::CRON_JOB
    }

    fn new_object(&self) -> Value {
        json!({"spec": {"schedule": "", "jobTemplate": {"metadata": {"creationTimestamp": null}, "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": null}}}}}, "status": {}})
    }
}
