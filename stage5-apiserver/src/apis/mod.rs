//! The validation of each served group's kinds: mirrors kubernetes'
//! `pkg/apis/<group>/validation/validation.go`, which each kind's
//! `strategy.go` calls from `Validate` and `ValidateUpdate`.
//!
//! Upstream validates the internal Go types field by field. The objects here
//! are the stored v1 JSON, so each function reads the fields it checks, and
//! checks what a client meets first: the fields a kind requires, the values a
//! field allows, the fields an update may not change, and the selectors that
//! must select their own template. Messages and field paths are upstream's.
//!
//! | Go (`pkg/apis/…/validation`)           | Rust                         |
//! |----------------------------------------|------------------------------|
//! | `core/validation` (services, endpoints, volumes and claims, RCs, quotas) | [`core::validation`] |
//! | `apps/validation` (StatefulSets, DaemonSets, ControllerRevisions) | [`apps::validation`] |
//! | `batch/validation` (Jobs, CronJobs)     | [`batch::validation`]        |
//! | `certificates/validation`               | [`certificates::validation`] |
//! | `discovery/validation` (EndpointSlices) | [`discovery::validation`]    |
//! | `policy/validation` (PodDisruptionBudgets) | [`policy::validation`]    |
//! | `storage/validation` (CSI kinds, StorageClasses, VolumeAttachments) | [`storage::validation`] |
//! | `node/validation` (RuntimeClasses)      | [`node::validation`]         |

use apimachinery::labels::{matches_labels, parse_label_selector, selector_string};
use apimachinery::util::validation::field::{ErrorList, FieldError};
use serde_json::Value;

/// `pkg/apis/core`.
pub mod core {
    pub mod validation;
}
/// `pkg/apis/apps`.
pub mod apps {
    pub mod validation;
}
/// `pkg/apis/batch`.
pub mod batch {
    pub mod validation;
}
/// `pkg/apis/certificates`.
pub mod certificates {
    pub mod validation;
}
/// `pkg/apis/discovery`.
pub mod discovery {
    pub mod validation;
}
/// `pkg/apis/policy`.
pub mod policy {
    pub mod validation;
}
/// `pkg/apis/storage`.
pub mod storage {
    pub mod validation;
}
/// `pkg/apis/node`.
pub mod node {
    pub mod validation;
}

/// The text of a JSON string, or `""`.
pub(crate) fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The items of a JSON list, or none.
pub(crate) fn items(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// Whether a JSON value is absent or empty (`null`, `""`, `{}`, `[]`), as Go's
/// zero values are.
pub(crate) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Go's `%v` of a JSON value in a message (`map[app:web]`, `[a b]`): close
/// enough to read, as upstream prints the bad value of a struct.
pub(crate) fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_value(v)))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
        Value::Array(list) => {
            let inner: Vec<String> = list.iter().map(go_value).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Null => "nil".into(),
        other => other.to_string(),
    }
}

/// Mirrors `ValidateImmutableField`: `field is immutable` when `new` differs
/// from `old`.
pub(crate) fn immutable(
    new: &Value,
    old: &Value,
    field: &str,
) -> Option<FieldError> {
    (new != old)
        .then(|| FieldError::invalid(field, &go_value(new), "field is immutable"))
}

/// Mirrors `ValidateNonnegativeField`.
pub(crate) fn non_negative(value: &Value, field: &str) -> Option<FieldError> {
    value.as_i64().filter(|n| *n < 0).map(|n| {
        FieldError::invalid_number(field, n, "must be greater than or equal to 0")
    })
}

/// The template labels a `LabelSelector` (its JSON form) must select, as the
/// workload validations (`ValidateDeploymentSpec`, `ValidateStatefulSetSpec`,
/// `ValidateDaemonSetSpec`, …) check them: a selector is required and not empty,
/// and must select the template's labels.
pub(crate) fn validate_selector_and_template(
    spec: &Value,
    path: &str,
    kind: &str,
    errors: &mut ErrorList,
) {
    let selector = &spec["selector"];
    if is_empty(&selector["matchLabels"]) && is_empty(&selector["matchExpressions"])
    {
        if selector.is_null() {
            errors.push(FieldError::required(&format!("{path}.selector"), ""));
        } else {
            errors.push(FieldError::invalid(
                &format!("{path}.selector"),
                "",
                format!("empty selector is invalid for {kind}"),
            ));
        }
        return;
    }
    let labels = labels_of(&spec["template"]["metadata"]["labels"]);
    let selects = parse_label_selector(&selector_string(selector))
        .map(|s| matches_labels(&s, Some(&labels)))
        .unwrap_or(false);
    if !selects {
        errors.push(FieldError::invalid(
            &format!("{path}.template.metadata.labels"),
            &go_value(&spec["template"]["metadata"]["labels"]),
            "`selector` does not match template `labels`",
        ));
    }
    validate_pod_template(&spec["template"], &format!("{path}.template"), errors);
}

/// A JSON label map as a sorted map.
pub(crate) fn labels_of(
    value: &Value,
) -> std::collections::BTreeMap<String, String> {
    value
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), text(v).to_string()))
        .collect()
}

/// The part of `ValidatePodTemplateSpec` every workload's create meets first:
/// at least one container, each with a name and an image.
pub(crate) fn validate_pod_template(
    template: &Value,
    path: &str,
    errors: &mut ErrorList,
) {
    let containers = items(&template["spec"]["containers"]);
    if containers.is_empty() {
        errors.push(FieldError::required(&format!("{path}.spec.containers"), ""));
    }
    for (i, container) in containers.iter().enumerate() {
        if text(&container["name"]).is_empty() {
            errors.push(FieldError::required(
                &format!("{path}.spec.containers[{i}].name"),
                "",
            ));
        }
        if text(&container["image"]).is_empty() {
            errors.push(FieldError::required(
                &format!("{path}.spec.containers[{i}].image"),
                "",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_selector_must_select_its_template() {
        let mut errors = ErrorList::new();
        let spec = json!({
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}},
        });
        validate_selector_and_template(&spec, "spec", "statefulset", &mut errors);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "spec.template.metadata.labels");
        assert_eq!(
            errors[0].error_body(),
            "Invalid value: \"map[app:db]\": `selector` does not match template `labels`"
        );
        let mut errors = ErrorList::new();
        validate_selector_and_template(
            &json!({}),
            "spec",
            "statefulset",
            &mut errors,
        );
        assert_eq!(errors[0].field, "spec.selector");
        assert_eq!(errors[0].error_body(), "Required value");
    }

    #[test]
    fn field_errors_word_numbers_and_sets_as_upstream() {
        assert_eq!(
            FieldError::invalid_number("spec.ports[0].port", 70000, "x")
                .error_body(),
            "Invalid value: 70000: x"
        );
        assert_eq!(
            FieldError::not_supported(
                "spec.type",
                "Weird",
                &["NodePort", "ClusterIP"]
            )
            .error_body(),
            "Unsupported value: \"Weird\": supported values: \"ClusterIP\", \"NodePort\""
        );
        assert_eq!(
            FieldError::duplicate("spec.ports[1].name", "http").error_body(),
            "Duplicate value: \"http\""
        );
    }
}
