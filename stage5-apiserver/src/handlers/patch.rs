//! `PATCH` on an object: mirrors apiserver's `pkg/endpoints/handlers/patch.go`
//! (`PatchResource`): the patch types, and applying one inside a guaranteed update.
//!
//! | Content-Type                               | Here                                        |
//! |--------------------------------------------|---------------------------------------------|
//! | `application/merge-patch+json`             | JSON merge patch (RFC 7386)                 |
//! | `application/strategic-merge-patch+json`   | treated as a JSON merge patch (see below)   |
//! | `application/json-patch+json`, apply-patch | 415 UnsupportedMediaType                    |
//!
//! A strategic merge patch differs from a merge patch only for lists whose schema
//! names a merge key (`containers` by `name`, for example): strategic merge merges
//! such lists item by item, merge patch replaces them. Patches that set scalars and
//! maps, which is what `kubectl label`, `kubectl annotate` and these tests send,
//! give the same result either way.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use crate::registry::RegisteredResource;
use crate::status::ApiError;
use crate::validation;
use stage5_storage::Object;
use stage5_storage::{
    Preconditions, StorageError, object_key, parse_resource_version,
};

use super::rest::*;

/// Mirrors `PatchResource` for merge patches: inside `GuaranteedUpdate`, the current
/// object is encoded, patched (RFC 7386) and decoded again. A resourceVersion in the
/// patch is a precondition; uid cannot change (409). The patched object is
/// validated as an update ([`validation::validate_update`]) before it is stored:
/// a changed name or namespace (`field is immutable`), a bad label or annotation
/// is 422. (Upstream's `checkName` answers a changed name or namespace with 400
/// before that.)
pub(crate) async fn patch(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    _patch_type: PatchType,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = resource.info.clone();
    let patch: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request could not be decoded: {e}"
        ))
    })?;
    if !patch.is_object() {
        return Err(ApiError::bad_request("a merge patch must be a JSON object"));
    }
    let key = object_key(&info, namespace, name);
    let rejection = Rejection::default();
    let rejected = rejection.clone();
    let patched = resource
        .dyn_storage
        .guaranteed_update(
            key,
            Preconditions::default(),
            Box::new(move |current: &Object| {
                rejected.clear();
                let mut value = serde_json::to_value(current)
                    .map_err(|e| StorageError::Internal(e.to_string()))?;
                merge_patch(&mut value, &patch);
                let mut next: Object = serde_json::from_value(value).map_err(|e| {
                    StorageError::BadRequest(format!("the patched object is not valid: {e}"))
                })?;
                check_type(&info, &next)
                    .map_err(|e| StorageError::BadRequest(e.status.message.unwrap_or_default()))?;
                next.types = Some(info.type_meta());
                if next.metadata.uid != current.metadata.uid {
                    return Err(StorageError::Conflict {
                        plural: info.plural.to_string(),
                        name: current.name().to_string(),
                        message:
                            "Precondition failed: UID in precondition does not match the object"
                                .into(),
                    });
                }
                if next.resource_version() != current.resource_version() {
                    parse_resource_version(next.resource_version())?;
                    return Err(conflict(&info, current.name()));
                }
                next.metadata.creation_timestamp = current.metadata.creation_timestamp.clone();
                validation::validate_update(&info, &next, current)
                    .map_err(|error| rejected.reject(error))?;
                next.metadata.resource_version = None;
                Ok(next)
            }),
        )
        .await
        .map_err(|error| rejection.or(error))?;
    Ok(json_response(StatusCode::OK, &patched))
}

/// The patch types this server applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`, applied as a merge patch.
    StrategicMerge,
}

/// The media types accepted for PATCH.
pub const SUPPORTED: &[&str] = &[
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

impl PatchType {
    /// The patch type of a `Content-Type`, or 415.
    pub fn from_content_type(content_type: &str) -> Result<PatchType, ApiError> {
        let media = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => {
                Ok(PatchType::StrategicMerge)
            }
            _ => Err(ApiError::unsupported_media_type(content_type, SUPPORTED)),
        }
    }
}

/// Mirrors `jsonpatch.MergePatch` (RFC 7386): objects merge key by key, `null`
/// deletes a key, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target_map) = target {
        for (key, value) in patch_map {
            if value.is_null() {
                target_map.remove(key);
            } else {
                merge_patch(
                    target_map.entry(key.clone()).or_insert(Value::Null),
                    value,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc7386_examples() {
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (json!(["a"]), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
            (
                json!({}),
                json!({"a": {"bb": {"ccc": null}}}),
                json!({"a": {"bb": {}}}),
            ),
        ];
        for (mut target, patch, want) in cases {
            merge_patch(&mut target, &patch);
            assert_eq!(target, want, "{patch}");
        }
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::from_content_type(
                "application/merge-patch+json; charset=utf-8"
            )
            .ok(),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/json-patch+json")
                .err()
                .map(|e| e.code()),
            Some(415)
        );
    }
}
