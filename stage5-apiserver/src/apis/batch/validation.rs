//! Mirrors the parts of kubernetes' `pkg/apis/batch/validation/validation.go`
//! Jobs and CronJobs meet: `ValidateJob`, `ValidateJobUpdate`,
//! `ValidateCronJobCreate` and `ValidateCronJobUpdate`.

use apimachinery::util::validation::field::{ErrorList, FieldError};
use serde_json::Value;

use crate::apis::{
    immutable, non_negative, text, validate_pod_template,
    validate_selector_and_template,
};

/// Mirrors `validateJobSpec` (under `path`), what a Job and a CronJob's job
/// template share: counts not negative, pods that restart `OnFailure` or
/// `Never`, a known completion mode where one is set.
pub fn validate_job_spec(spec: &Value, path: &str, errors: &mut ErrorList) {
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
    ] {
        errors.extend(non_negative(&spec[field], &format!("{path}.{field}")));
    }
    if spec["activeDeadlineSeconds"].as_i64() == Some(0) {
        errors.push(FieldError::invalid_number(
            &format!("{path}.activeDeadlineSeconds"),
            0,
            "must be greater than 0",
        ));
    }
    let restart = text(&spec["template"]["spec"]["restartPolicy"]);
    if !matches!(restart, "OnFailure" | "Never") {
        let field = format!("{path}.template.spec.restartPolicy");
        errors.push(if restart.is_empty() {
            FieldError::required(&field, "valid values: \"OnFailure\", \"Never\"")
        } else {
            FieldError::not_supported(&field, restart, &["OnFailure", "Never"])
        });
    }
    if let Some(mode) = spec["completionMode"].as_str()
        && !matches!(mode, "NonIndexed" | "Indexed")
    {
        errors.push(FieldError::not_supported(
            &format!("{path}.completionMode"),
            mode,
            &["Indexed", "NonIndexed"],
        ));
    }
}

/// Mirrors `ValidateJob` (`ValidateJobSpec`): the shared rules, and a selector
/// (generated unless `manualSelector`) that selects the template.
pub fn validate_job(job: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    validate_job_spec(&job["spec"], "spec", &mut errors);
    validate_selector_and_template(&job["spec"], "spec", "job", &mut errors);
    errors
}

/// Mirrors `ValidateJobUpdate` with the default options: the selector, the
/// completion mode and (unless the job is `Indexed`) the completions are
/// fixed, and so is the pod template (upstream lets a suspended job that never
/// started change its scheduling directives, which nothing here schedules
/// differently).
pub fn validate_job_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_job(new);
    let (new_spec, old_spec) = (&new["spec"], &old["spec"]);
    errors.extend(immutable(
        &new_spec["selector"],
        &old_spec["selector"],
        "spec.selector",
    ));
    errors.extend(immutable(
        &new_spec["completionMode"],
        &old_spec["completionMode"],
        "spec.completionMode",
    ));
    if text(&new_spec["completionMode"]) != "Indexed" {
        errors.extend(immutable(
            &new_spec["completions"],
            &old_spec["completions"],
            "spec.completions",
        ));
    }
    let suspended_never_started = old_spec["suspend"].as_bool() == Some(true)
        && old["status"]["startTime"].is_null();
    if !suspended_never_started {
        errors.extend(immutable(
            &new_spec["template"],
            &old_spec["template"],
            "spec.template",
        ));
    }
    errors
}

/// Whether `schedule` parses as robfig/cron's `ParseStandard` reads it: a
/// descriptor (`@hourly`, `@every 5m`, …) or five fields of numbers, names,
/// ranges, steps, lists, `*` and `?`.
pub fn schedule_error(schedule: &str) -> Option<String> {
    if schedule.contains("TZ") {
        return Some(
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
                .into(),
        );
    }
    if let Some(descriptor) = schedule.strip_prefix('@') {
        let known = [
            "yearly", "annually", "monthly", "weekly", "daily", "midnight", "hourly",
        ];
        return (!known.contains(&descriptor) && !descriptor.starts_with("every "))
            .then(|| format!("unrecognized descriptor: {schedule}"));
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: {schedule}",
            fields.len()
        ));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "*?,-/".contains(c);
    fields
        .iter()
        .find(|f| !f.chars().all(allowed))
        .map(|f| format!("failed to parse int from {f}"))
}

/// Mirrors `ValidateCronJobCreate`: a name short enough for the jobs it makes
/// (52), a schedule that parses, a known concurrency policy, and the job
/// template's spec.
pub fn validate_cron_job(name: &str, cron_job: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    if name.len() > 52 {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        ));
    }
    let spec = &cron_job["spec"];
    let schedule = text(&spec["schedule"]);
    if schedule.is_empty() {
        errors.push(FieldError::required("spec.schedule", ""));
    } else if let Some(problem) = schedule_error(schedule) {
        errors.push(FieldError::invalid("spec.schedule", schedule, problem));
    }
    let policy = text(&spec["concurrencyPolicy"]);
    if !matches!(policy, "Allow" | "Forbid" | "Replace") {
        errors.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            policy,
            &["Allow", "Forbid", "Replace"],
        ));
    }
    for field in [
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    ] {
        errors.extend(non_negative(&spec[field], &format!("spec.{field}")));
    }
    let job = &spec["jobTemplate"]["spec"];
    validate_job_spec(job, "spec.jobTemplate.spec", &mut errors);
    validate_pod_template(
        &job["template"],
        "spec.jobTemplate.spec.template",
        &mut errors,
    );
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job() -> Value {
        json!({"spec": {"completionMode": "NonIndexed", "completions": 1,
            "selector": {"matchLabels": {"job-name": "pi"}},
            "template": {"metadata": {"labels": {"job-name": "pi"}},
                "spec": {"restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "perl"}]}}}})
    }

    #[test]
    fn a_jobs_pods_do_not_restart_always_and_its_template_is_fixed() {
        let old = job();
        assert!(validate_job(&old).is_empty());
        let mut always = old.clone();
        always["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        assert_eq!(
            validate_job(&always)[0].field,
            "spec.template.spec.restartPolicy"
        );
        let mut changed = old.clone();
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("x");
        assert_eq!(
            validate_job_update(&changed, &old)[0].field,
            "spec.template"
        );
        let mut suspended = old.clone();
        suspended["spec"]["suspend"] = json!(true);
        changed["spec"]["suspend"] = json!(true);
        assert!(validate_job_update(&changed, &suspended).is_empty());
    }

    #[test]
    fn schedules_parse_as_cron_reads_them() {
        assert_eq!(schedule_error("*/5 * * * *"), None);
        assert_eq!(schedule_error("@hourly"), None);
        assert_eq!(schedule_error("0 0 * * MON-FRI"), None);
        assert!(schedule_error("* * *").is_some());
        assert!(schedule_error("CRON_TZ=UTC * * * * *").is_some());
        let mut cron = json!({"spec": {
            "schedule": "nope", "concurrencyPolicy": "Allow",
            "jobTemplate": {"spec": job()["spec"].clone()}}});
        assert_eq!(validate_cron_job("c", &cron)[0].field, "spec.schedule");
        cron["spec"]["schedule"] = json!("* * * * *");
        assert!(validate_cron_job("c", &cron).is_empty());
    }
}
