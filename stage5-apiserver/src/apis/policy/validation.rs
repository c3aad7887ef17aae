//! Mirrors the part of kubernetes' `pkg/apis/policy/validation/validation.go`
//! a PodDisruptionBudget meets: `ValidatePodDisruptionBudgetSpec`.

use apimachinery::util::validation::field::{ErrorList, FieldError};
use serde_json::Value;

use crate::apis::{go_value, text};

/// Mirrors `ValidatePodDisruptionBudgetSpec`: `minAvailable` and
/// `maxUnavailable` exclude each other, each a non-negative count or a
/// percentage (at most 100%), and the eviction policy is known.
pub fn validate_pod_disruption_budget(pdb: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &pdb["spec"];
    let (min, max) = (&spec["minAvailable"], &spec["maxUnavailable"]);
    if !min.is_null() && !max.is_null() {
        errors.push(FieldError::invalid(
            "spec",
            &go_value(spec),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (value, field) in [(min, "spec.minAvailable"), (max, "spec.maxUnavailable")]
    {
        errors.extend(int_or_percent_error(value, field));
    }
    let policy = text(&spec["unhealthyPodEvictionPolicy"]);
    if !policy.is_empty() && !matches!(policy, "IfHealthyBudget" | "AlwaysAllow") {
        errors.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            policy,
            &["AlwaysAllow", "IfHealthyBudget"],
        ));
    }
    errors
}

/// Mirrors `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn int_or_percent_error(value: &Value, field: &str) -> Option<FieldError> {
    match value {
        Value::Number(n) => n.as_i64().filter(|n| *n < 0).map(|n| {
            FieldError::invalid_number(
                field,
                n,
                "must be greater than or equal to 0",
            )
        }),
        Value::String(s) => match s.strip_suffix('%').map(str::parse::<i64>) {
            Some(Ok(p)) if (0..=100).contains(&p) => None,
            Some(Ok(_)) => Some(FieldError::invalid(
                field,
                s,
                "must not be greater than 100%",
            )),
            _ => Some(FieldError::invalid(
                field,
                s,
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_budget_sets_one_bound_a_count_or_a_percentage() {
        assert!(
            validate_pod_disruption_budget(
                &json!({"spec": {"minAvailable": "50%"}})
            )
            .is_empty()
        );
        let both = json!({"spec": {"minAvailable": 1, "maxUnavailable": 1}});
        assert_eq!(
            validate_pod_disruption_budget(&both)[0].detail,
            "minAvailable and maxUnavailable cannot be both set"
        );
        let errors = validate_pod_disruption_budget(
            &json!({"spec": {"maxUnavailable": "150%"}}),
        );
        assert_eq!(errors[0].detail, "must not be greater than 100%");
    }
}
