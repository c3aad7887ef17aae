//! Mirrors the parts of kubernetes' `pkg/apis/apps/validation/validation.go`
//! the apps kinds served besides Deployments and ReplicaSets meet:
//! `ValidateStatefulSet` and `ValidateStatefulSetUpdate`, `ValidateDaemonSet`
//! and `ValidateDaemonSetUpdate`, `ValidateControllerRevisionCreate` and
//! `ValidateControllerRevisionUpdate`.

use apimachinery::util::validation::field::{ErrorList, FieldError};
use serde_json::Value;

use crate::apis::{immutable, non_negative, text, validate_selector_and_template};

/// Mirrors `ValidateStatefulSetSpec`: the replicas and history limit are not
/// negative, the pod management policy is known, and the selector selects
/// the template.
pub fn validate_stateful_set(sts: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &sts["spec"];
    errors.extend(non_negative(&spec["replicas"], "spec.replicas"));
    errors.extend(non_negative(
        &spec["minReadySeconds"],
        "spec.minReadySeconds",
    ));
    let policy = text(&spec["podManagementPolicy"]);
    if !matches!(policy, "OrderedReady" | "Parallel") {
        errors.push(FieldError::invalid(
            "spec.podManagementPolicy",
            policy,
            "must be 'OrderedReady' or 'Parallel'",
        ));
    }
    validate_selector_and_template(spec, "spec", "statefulset", &mut errors);
    errors
}

/// The spec fields a StatefulSet update may change, as
/// `ValidateStatefulSetUpdate` lists them.
const STS_MUTABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// Mirrors `ValidateStatefulSetUpdate`: only [`STS_MUTABLE`] may change.
pub fn validate_stateful_set_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_stateful_set(new);
    let fixed = |spec: &Value| {
        let mut spec = spec.clone();
        if let Some(map) = spec.as_object_mut() {
            map.retain(|k, _| !STS_MUTABLE.contains(&k.as_str()));
        }
        spec
    };
    if fixed(&new["spec"]) != fixed(&old["spec"]) {
        errors.push(FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errors
}

/// Mirrors `ValidateDaemonSetSpec`: the selector selects the template, whose
/// pods restart `Always`, and the update strategy is known.
pub fn validate_daemon_set(ds: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &ds["spec"];
    validate_selector_and_template(spec, "spec", "daemonset", &mut errors);
    let restart = text(&spec["template"]["spec"]["restartPolicy"]);
    if restart != "Always" {
        errors.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            restart,
            &["Always"],
        ));
    }
    let strategy = text(&spec["updateStrategy"]["type"]);
    if !matches!(strategy, "RollingUpdate" | "OnDelete") {
        errors.push(FieldError::not_supported(
            "spec.updateStrategy.type",
            strategy,
            &["OnDelete", "RollingUpdate"],
        ));
    }
    errors
}

/// Mirrors `ValidateDaemonSetUpdate`: the selector is fixed.
pub fn validate_daemon_set_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_daemon_set(new);
    errors.extend(immutable(
        &new["spec"]["selector"],
        &old["spec"]["selector"],
        "spec.selector",
    ));
    errors
}

/// Mirrors `ValidateControllerRevisionCreate`: `data` is required and the
/// revision is not negative.
pub fn validate_controller_revision(revision: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    if revision["data"].is_null() {
        errors.push(FieldError::required("data", "data is mandatory"));
    }
    errors.extend(non_negative(&revision["revision"], "revision"));
    errors
}

/// Mirrors `ValidateControllerRevisionUpdate`: `data` is fixed.
pub fn validate_controller_revision_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_controller_revision(new);
    errors.extend(immutable(&new["data"], &old["data"], "data"));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sts() -> Value {
        json!({"spec": {"replicas": 2, "serviceName": "web",
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"restartPolicy": "Always",
                    "containers": [{"name": "c", "image": "nginx"}]}}}})
    }

    #[test]
    fn a_stateful_set_may_change_only_some_fields() {
        let old = sts();
        assert!(validate_stateful_set(&old).is_empty());
        let mut scaled = old.clone();
        scaled["spec"]["replicas"] = json!(5);
        assert!(validate_stateful_set_update(&scaled, &old).is_empty());
        let mut renamed = old.clone();
        renamed["spec"]["serviceName"] = json!("other");
        let errors = validate_stateful_set_update(&renamed, &old);
        assert_eq!(errors[0].field, "spec");
        assert!(errors[0].detail.starts_with("updates to statefulset spec"));
    }

    #[test]
    fn a_daemon_set_keeps_its_selector_and_restarts_always() {
        let mut ds = sts();
        ds["spec"]["updateStrategy"] = json!({"type": "RollingUpdate"});
        assert!(validate_daemon_set(&ds).is_empty());
        let mut next = ds.clone();
        next["spec"]["selector"] = json!({"matchLabels": {"app": "web", "x": "y"}});
        next["spec"]["template"]["metadata"]["labels"]["x"] = json!("y");
        let errors = validate_daemon_set_update(&next, &ds);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].detail, "field is immutable");
        ds["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            validate_daemon_set(&ds)[0].error_body(),
            "Unsupported value: \"Never\": supported values: \"Always\""
        );
    }

    #[test]
    fn a_revision_keeps_its_data() {
        let old = json!({"data": {"a": 1}, "revision": 1});
        let new = json!({"data": {"a": 2}, "revision": 1});
        assert_eq!(
            validate_controller_revision_update(&new, &old)[0].field,
            "data"
        );
        assert_eq!(
            validate_controller_revision(&json!({"revision": 1}))[0].field,
            "data"
        );
    }
}
