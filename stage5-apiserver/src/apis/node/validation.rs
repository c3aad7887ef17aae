//! Mirrors kubernetes' `pkg/apis/node/validation/validation.go`:
//! `ValidateRuntimeClass` and `ValidateRuntimeClassUpdate`.

use apimachinery::util::validation::field::{ErrorList, FieldError};
use apimachinery::util::validation::is_dns1123_label;
use serde_json::Value;

use crate::apis::{immutable, text};

/// Mirrors `ValidateRuntimeClass`: the handler is a DNS label.
pub fn validate_runtime_class(class: &Value) -> ErrorList {
    let handler = text(&class["handler"]);
    if handler.is_empty() {
        return vec![FieldError::required("handler", "")];
    }
    is_dns1123_label(handler)
        .into_iter()
        .map(|message| FieldError::invalid("handler", handler, message))
        .collect()
}

/// Mirrors `ValidateRuntimeClassUpdate`: the handler is fixed.
pub fn validate_runtime_class_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_runtime_class(new);
    errors.extend(immutable(&new["handler"], &old["handler"], "handler"));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_handler_is_a_fixed_dns_label() {
        assert!(validate_runtime_class(&json!({"handler": "runc"})).is_empty());
        assert_eq!(validate_runtime_class(&json!({}))[0].field, "handler");
        assert_eq!(
            validate_runtime_class(&json!({"handler": "Run C"})).len(),
            1
        );
        let errors = validate_runtime_class_update(
            &json!({"handler": "kata"}),
            &json!({"handler": "runc"}),
        );
        assert_eq!(errors[0].detail, "field is immutable");
    }
}
