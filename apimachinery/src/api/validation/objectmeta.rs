//! Object metadata rules: mirrors apimachinery's
//! [`pkg/api/validation/objectmeta.go`] (`ValidateObjectMeta`,
//! `ValidateObjectMetaUpdate`, `ValidateAnnotations`, `NameIsDNSSubdomain`,
//! `NameIsDNSLabel`, `ValidateNamespaceName`, `maskTrailingDash`) and
//! `pkg/apis/meta/v1/validation` (`ValidateLabels`).
//!
//! | Field                 | Rule (Go)                                            |
//! |-----------------------|------------------------------------------------------|
//! | `metadata.name`       | the kind's name rule: `NameIsDNSSubdomain`, or       |
//! |                       | `ValidateNamespaceName` (an RFC 1123 label)          |
//! | `metadata.namespace`  | `ValidateNamespaceName`                              |
//! | `metadata.labels`     | `ValidateLabels`: `IsQualifiedName`, `IsValidLabelValue` |
//! | `metadata.annotations`| `ValidateAnnotations`: keys lowercased, 256 KiB total |
//!
//! Which name rule a kind uses is its registry strategy's choice (the server's
//! `registry/` module); the rules themselves are here.
//!
//! [`pkg/api/validation/objectmeta.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/api/validation/objectmeta.go

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::util::validation::field::{ErrorList, FieldError};
use crate::util::validation::{
    TOTAL_ANNOTATION_SIZE_LIMIT_B, is_dns1035_label, is_dns1123_label,
    is_dns1123_subdomain, is_path_segment_name, is_path_segment_prefix,
    is_qualified_name, is_valid_label_value,
};

/// Mirrors `maskTrailingDash`: a `generateName` may end in `-`, so the check sees
/// the last two bytes replaced by `a` (upstream's slice, kept as is; a one-byte
/// `-` becomes `a` here, where Go would panic).
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(_) => {
            let keep = name.len().saturating_sub(2);
            let kept = name.get(..keep).unwrap_or("");
            format!("{kept}a")
        }
        None => name.to_string(),
    }
}

/// Mirrors `ValidateNameFunc`: how a kind's names are checked. `prefix` is true for
/// a `generateName`, which gets a suffix appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: most kinds (`ValidatePodName`, `ValidateConfigMapName`,
    /// `ValidateNodeName`, `ValidateDeploymentName`, …).
    DnsSubdomain,
    /// `NameIsDNSLabel`, which is `ValidateNamespaceName`.
    DnsLabel,
    /// `NameIsDNS1035Label`, which is `ValidateServiceName`.
    Dns1035Label,
    /// `validatePathSegment` (`rest.BeforeUpdate`'s common checks).
    PathSegment,
}

impl NameRule {
    /// Runs the rule: mirrors `NameIsDNSSubdomain`, `NameIsDNSLabel` and
    /// `validatePathSegment`.
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        match self {
            NameRule::PathSegment if prefix => is_path_segment_prefix(name),
            NameRule::PathSegment => is_path_segment_name(name),
            NameRule::Dns1035Label => {
                let name = if prefix {
                    mask_trailing_dash(name)
                } else {
                    name.to_string()
                };
                is_dns1035_label(&name)
            }
            NameRule::DnsSubdomain | NameRule::DnsLabel => {
                let name = if prefix {
                    mask_trailing_dash(name)
                } else {
                    name.to_string()
                };
                if self == NameRule::DnsLabel {
                    is_dns1123_label(&name)
                } else {
                    is_dns1123_subdomain(&name)
                }
            }
        }
    }
}

/// Mirrors `ValidateNamespaceName` (`NameIsDNSLabel`): namespace names, both a
/// namespaced object's `metadata.namespace` and a Namespace's `metadata.name`.
pub fn validate_namespace_name(name: &str, prefix: bool) -> Vec<String> {
    NameRule::DnsLabel.check(name, prefix)
}

/// Mirrors `v1validation.ValidateLabels`: every key a qualified name
/// (`ValidateLabelName`), every value a label value.
pub fn validate_labels(labels: &BTreeMap<String, String>, field: &str) -> ErrorList {
    let mut errors = ErrorList::new();
    for (key, value) in labels {
        for msg in is_qualified_name(key) {
            errors.push(FieldError::invalid(field, key, msg));
        }
        for msg in is_valid_label_value(value) {
            errors.push(FieldError::invalid(field, value, msg));
        }
    }
    errors
}

/// Mirrors `ValidateAnnotations`: every key a qualified name once lowercased
/// (case does not matter), and at most 256 KiB of keys and values together
/// ([`validate_annotations_size`]).
pub fn validate_annotations(
    annotations: &BTreeMap<String, String>,
    field: &str,
) -> ErrorList {
    let mut errors = ErrorList::new();
    for key in annotations.keys() {
        for msg in is_qualified_name(&key.to_lowercase()) {
            errors.push(FieldError::invalid(field, key, msg));
        }
    }
    if validate_annotations_size(annotations).is_err() {
        errors.push(FieldError::too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT_B));
    }
    errors
}

/// Mirrors `ValidateAnnotationsSize`: the bytes of every key and value, or an
/// error past [`TOTAL_ANNOTATION_SIZE_LIMIT_B`] (exactly the limit is allowed).
pub fn validate_annotations_size(
    annotations: &BTreeMap<String, String>,
) -> Result<usize, String> {
    let total: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B {
        Err(format!(
            "annotations size {total} is larger than limit {TOTAL_ANNOTATION_SIZE_LIMIT_B}"
        ))
    } else {
        Ok(total)
    }
}

/// Mirrors `ValidateObjectMetaAccessor` (what `ValidateObjectMeta` runs) under
/// `metadata`: `generateName` and `name` by the kind's rule, the namespace
/// (required and an RFC 1123 label for namespaced kinds, forbidden otherwise),
/// labels and annotations. Generation, owner references, finalizers and managed
/// fields are not checked here.
pub fn validate_object_meta(
    meta: &ObjectMeta,
    requires_namespace: bool,
    name_rule: NameRule,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let generate_name = meta.generate_name.as_deref().unwrap_or("");
    if !generate_name.is_empty() {
        for msg in name_rule.check(generate_name, true) {
            errors.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                msg,
            ));
        }
    }
    let name = meta.name.as_deref().unwrap_or("");
    if name.is_empty() {
        errors.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in name_rule.check(name, false) {
            errors.push(FieldError::invalid("metadata.name", name, msg));
        }
    }
    let namespace = meta.namespace.as_deref().unwrap_or("");
    if requires_namespace {
        if namespace.is_empty() {
            errors.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in validate_namespace_name(namespace, false) {
                errors.push(FieldError::invalid(
                    "metadata.namespace",
                    namespace,
                    msg,
                ));
            }
        }
    } else if !namespace.is_empty() {
        errors.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    errors.extend(validate_labels_and_annotations(meta));
    errors
}

fn validate_labels_and_annotations(meta: &ObjectMeta) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(labels) = &meta.labels {
        errors.extend(validate_labels(labels, "metadata.labels"));
    }
    if let Some(annotations) = &meta.annotations {
        errors.extend(validate_annotations(annotations, "metadata.annotations"));
    }
    errors
}

/// Mirrors `ValidateObjectMetaAccessorUpdate` under `metadata`: name, namespace
/// and uid are immutable (`field is immutable`), labels and annotations as on
/// create. The resourceVersion and timestamps are settled by the handlers before
/// this runs, as `BeforeUpdate` settles them, and so is a missing uid.
pub fn validate_object_meta_update(new: &ObjectMeta, old: &ObjectMeta) -> ErrorList {
    let mut errors = ErrorList::new();
    let immutable = [
        ("metadata.name", &new.name, &old.name),
        ("metadata.namespace", &new.namespace, &old.namespace),
        ("metadata.uid", &new.uid, &old.uid),
    ];
    for (field, new_value, old_value) in immutable {
        if new_value != old_value {
            errors.push(FieldError::invalid(
                field,
                new_value.as_deref().unwrap_or(""),
                "field is immutable",
            ));
        }
    }
    errors.extend(validate_labels_and_annotations(new));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::validation::tests::LABEL_KEY_REGEX_MSG;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn labels_report_key_and_value_against_the_map() {
        let errors = validate_labels(
            &map(&[("a b", "ok"), ("good", &"v".repeat(64)), ("fine", "")]),
            "metadata.labels",
        );
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                format!(
                    "metadata.labels: Invalid value: \"a b\": name part {LABEL_KEY_REGEX_MSG}"
                ),
                format!(
                    "metadata.labels: Invalid value: \"{}\": must be no more than 63 bytes",
                    "v".repeat(64)
                ),
            ]
        );
        assert_eq!(
            errors[0].to_cause().reason.as_deref(),
            Some("FieldValueInvalid")
        );
    }

    #[test]
    fn annotation_keys_are_checked_lowercased() {
        let annotations = map(&[("Example.COM/Some_Key", "x"), ("a b", "")]);
        let errors = validate_annotations(&annotations, "metadata.annotations");
        assert_eq!(errors.len(), 1, "{errors:?}");
        // The original key is quoted, though the lowercased one was checked.
        assert_eq!(
            errors[0].to_string(),
            format!(
                "metadata.annotations: Invalid value: \"a b\": name part {LABEL_KEY_REGEX_MSG}"
            )
        );
        // The same key is not a valid label key: labels keep case.
        assert!(!is_qualified_name("Example.COM/Some_Key").is_empty());
    }

    #[test]
    fn annotations_may_total_exactly_256_kib() {
        let limit = TOTAL_ANNOTATION_SIZE_LIMIT_B;
        assert_eq!(limit, 262_144);
        let exact = map(&[("k", &"v".repeat(limit - 1))]);
        assert_eq!(validate_annotations_size(&exact), Ok(limit));
        assert!(validate_annotations(&exact, "metadata.annotations").is_empty());
        let over = map(&[("k", &"v".repeat(limit - 2)), ("kk", "")]);
        assert_eq!(
            validate_annotations_size(&over),
            Err("annotations size 262145 is larger than limit 262144".to_string())
        );
        let errors = validate_annotations(&over, "metadata.annotations");
        assert_eq!(
            errors,
            [FieldError::too_long("metadata.annotations", limit)]
        );
        assert_eq!(
            errors[0].to_string(),
            "metadata.annotations: Too long: may not be more than 262144 bytes"
        );
        let cause = errors[0].to_cause();
        assert_eq!(cause.reason.as_deref(), Some("FieldValueTooLong"));
        assert_eq!(
            cause.message.as_deref(),
            Some("Too long: may not be more than 262144 bytes")
        );
    }

    #[test]
    fn object_meta_namespace_name_and_scope() {
        let meta = ObjectMeta {
            name: Some("p".into()),
            namespace: Some("BAD_NS".into()),
            ..ObjectMeta::default()
        };
        let errors = validate_object_meta(&meta, true, NameRule::DnsSubdomain);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "metadata.namespace");
        let too_long = "n".repeat(300);
        assert_eq!(
            validate_namespace_name(&too_long, false),
            ["must be no more than 63 characters"]
        );
        let missing = validate_object_meta(
            &ObjectMeta::default(),
            true,
            NameRule::DnsSubdomain,
        );
        let messages: Vec<String> =
            missing.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "metadata.name: Required value: name or generateName is required",
                "metadata.namespace: Required value",
            ]
        );
        let cluster = ObjectMeta {
            name: Some("n".into()),
            namespace: Some("x".into()),
            ..ObjectMeta::default()
        };
        let forbidden = validate_object_meta(&cluster, false, NameRule::DnsLabel);
        assert_eq!(
            forbidden[0].to_string(),
            "metadata.namespace: Forbidden: not allowed on this type"
        );
        assert_eq!(forbidden[0].error_type.reason(), "FieldValueForbidden");
    }

    #[test]
    fn generate_name_may_end_in_a_dash() {
        assert!(NameRule::DnsSubdomain.check("web-", true).is_empty());
        assert!(NameRule::DnsLabel.check("ns-", true).is_empty());
        assert_eq!(NameRule::DnsSubdomain.check("Web-", true).len(), 1);
        assert_eq!(NameRule::DnsSubdomain.check("web-", false).len(), 1);
        assert_eq!(
            NameRule::PathSegment.check("..", false),
            ["may not be '..'"]
        );
        assert_eq!(
            NameRule::PathSegment.check("a/b%", false),
            ["may not contain '/'", "may not contain '%'"]
        );
    }

    #[test]
    fn updates_keep_name_and_namespace() {
        let old = ObjectMeta {
            name: Some("a".into()),
            namespace: Some("n1".into()),
            ..ObjectMeta::default()
        };
        let new = ObjectMeta {
            name: Some("b".into()),
            ..old.clone()
        };
        let errors = validate_object_meta_update(&new, &old);
        assert_eq!(
            errors[0].to_string(),
            "metadata.name: Invalid value: \"b\": field is immutable"
        );
    }
}
