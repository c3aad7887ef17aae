//! How the registry runs the object rules: mirrors apiserver's
//! `pkg/registry/rest` (`BeforeCreate` and `BeforeUpdate`, which call the
//! strategy's `Validate` and `ValidateUpdate`), `names.SimpleNameGenerator`
//! (`generateName`) and `rest.FillObjectMetaSystemFields` (uid and
//! creationTimestamp).
//!
//! The rules themselves are apimachinery's
//! ([`apimachinery::api::validation::objectmeta`],
//! [`apimachinery::util::validation`]); which name rule a kind uses is its
//! strategy's ([`crate::registry`]).

use apimachinery::api::validation::objectmeta::{
    NameRule, validate_object_meta, validate_object_meta_update,
};
use apimachinery::util::validation::field::FieldError;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, Time};
use rand::RngExt as _;
use stage5_storage::{Object, ResourceInfo};

use crate::status::ApiError;

/// Mirrors `rest.BeforeCreate`'s `strategy.Validate`: every served kind's
/// `ValidateX` starts with `ValidateObjectMeta` under its name rule. Errors are
/// answered as `apierrors.NewInvalid` (422).
pub fn validate_create(info: &ResourceInfo, obj: &Object) -> Result<(), ApiError> {
    let errors =
        validate_object_meta(&obj.metadata, info.namespaced, name_rule(info));
    invalid(info, obj.name(), &errors)
}

/// Mirrors `rest.BeforeUpdate`: `validateCommonFields` (`ValidateObjectMetaAccessor`
/// with path-segment names, then `ValidateObjectMetaAccessorUpdate`) followed by
/// the strategy's `ValidateUpdate`, which for every served kind starts with
/// `ValidateObjectMetaUpdate`, and for Pods, ConfigMaps and Secrets also runs the
/// create validation (`validatePodMetadataAndSpec`, `ValidateConfigMap`,
/// `ValidateSecret`).
///
/// So one bad label is reported three or four times in `details.causes`, as
/// kube-apiserver does (kubernetes/kubernetes#130656), while the message lists it
/// once: `NewInvalid`'s aggregate drops repeated messages.
pub fn validate_update(
    info: &ResourceInfo,
    new: &Object,
    old: &Object,
) -> Result<(), ApiError> {
    let mut errors =
        validate_object_meta(&new.metadata, info.namespaced, NameRule::PathSegment);
    // Twice, as upstream: once in `validateCommonFields`, once at the start of
    // the strategy's `ValidateUpdate`.
    errors.extend(validate_object_meta_update(&new.metadata, &old.metadata));
    errors.extend(validate_object_meta_update(&new.metadata, &old.metadata));
    let revalidates =
        info.group.is_empty() && matches!(info.kind, "Pod" | "ConfigMap" | "Secret");
    if revalidates {
        errors.extend(validate_object_meta(
            &new.metadata,
            info.namespaced,
            name_rule(info),
        ));
    }
    invalid(info, new.name(), &errors)
}

/// The rule a kind's strategy uses: Namespaces are RFC 1123 labels
/// (`ValidateNamespace`), every other served kind a subdomain.
fn name_rule(info: &ResourceInfo) -> NameRule {
    if info.group.is_empty() && info.kind == "Namespace" {
        NameRule::DnsLabel
    } else {
        NameRule::DnsSubdomain
    }
}

/// `apierrors.NewInvalid(kind.GroupKind(), name, errs)` when there are errors.
fn invalid(
    info: &ResourceInfo,
    name: &str,
    errors: &[FieldError],
) -> Result<(), ApiError> {
    if errors.is_empty() {
        return Ok(());
    }
    let causes: Vec<StatusCause> = errors.iter().map(FieldError::to_cause).collect();
    Err(ApiError::invalid_causes(
        info.group, info.kind, name, causes,
    ))
}

// ---------------------------------------------------------------------------------
// System fields
// ---------------------------------------------------------------------------------

/// Mirrors `names.SimpleNameGenerator.GenerateName`: the base (cut to leave room)
/// and five random lowercase consonants and digits.
pub fn generate_name(base: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    const MAX_BASE: usize = 63 - 5;
    let base: String = base.chars().take(MAX_BASE).collect();
    let mut rng = rand::rng();
    let suffix: String = (0..5)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect();
    format!("{base}{suffix}")
}

/// A random (version 4) UUID, as `uuid.NewUUID` gives `metadata.uid`.
pub fn new_uid() -> String {
    let mut bytes: [u8; 16] = rand::rng().random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Now, truncated to seconds as `metav1.Now()` serializes.
pub fn now() -> Time {
    let now = k8s_openapi::jiff::Timestamp::now();
    let secs =
        k8s_openapi::jiff::Timestamp::from_second(now.as_second()).unwrap_or(now);
    Time(secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::util::validation::is_dns1123_subdomain;

    #[test]
    fn generated_names_and_uids() {
        let name = generate_name("web-");
        assert!(name.starts_with("web-") && name.len() == 9, "{name}");
        assert!(is_dns1123_subdomain(&name).is_empty());
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_ne!(uid, new_uid());
    }
}
