//! `PATCH` on an object: mirrors apiserver's `pkg/endpoints/handlers/patch.go`
//! (`PatchResource`): the patch types, and applying one inside a guaranteed update.
//!
//! | Content-Type                               | Here (upstream's `patchMechanism`)                          |
//! |--------------------------------------------|-------------------------------------------------------------|
//! | `application/json-patch+json`              | JSON Patch (RFC 6902), the `json-patch` crate (`jsonPatcher`) |
//! | `application/merge-patch+json`             | JSON merge patch (RFC 7386), the same crate (`jsonPatcher`) |
//! | `application/strategic-merge-patch+json`   | strategic merge patch, apimachinery's [`strategic_merge_patch`] over the kind's patch metadata (`smpPatcher`) |
//! | `application/apply-patch+yaml`             | server-side apply, [`apply`](super::apply) over the [`fieldmanager`](crate::fieldmanager) |
//!
//! Both RFC patches go through the `json-patch` crate, as kube-apiserver's go
//! through `github.com/evanphx/json-patch`. As upstream's `applyJSPatch`: a JSON
//! Patch that does not decode is 400, one of more than 10,000 operations is 413,
//! and one whose operation fails (a `test` that does not match, a path that does
//! not exist) is 422 `Invalid` with `NewGenericServerResponse`'s message. The
//! crate applies the operations atomically: a failed patch changes nothing.
//!
//! A strategic merge patch differs from a merge patch for lists whose field is
//! tagged `patchStrategy:"merge"`: it merges them item by item by the field's
//! merge key (`containers` by `name`, so `kubectl patch` adding a sidecar keeps
//! the other containers) or as a set (`finalizers`), where a merge patch
//! replaces them; and it has directives (`$patch`, `$retainKeys`,
//! `$deleteFromPrimitiveList/…`, `$setElementOrder/…`). Its errors are
//! `interpretStrategicMergePatchError`'s: 400 for a malformed directive list,
//! 422 for a list of lists, 500 with no reason for the rest (an unknown
//! `$patch`, an item without its merge key), as upstream answers them.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use crate::registry::RegisteredResource;
use crate::status::ApiError;
use apimachinery::util::strategicpatch::{
    MergeError, StructMeta, strategic_merge_patch,
};
use stage5_storage::Object;
use stage5_storage::{StorageError, object_key};

use super::rest::{
    Rejection, check_name, check_type, check_version_and_fill_uid, json_response,
    record_and_finish, update_or_reject_dropping_managed_fields,
};

/// Mirrors `PatchResource`: inside `GuaranteedUpdate`, the current object is
/// encoded, patched (RFC 6902, RFC 7386 or a strategic merge patch over the
/// kind's patch metadata) and decoded again.
/// As upstream's `patcher.applyPatch`, the patched object's name and namespace
/// must still be the URL's ([`check_name`]: 400, also for a patch that removes
/// them). A resourceVersion in the patch is a precondition (409); a patch that
/// removes the uid keeps the stored one, and one that changes it is 422. The
/// patched object is validated as an update
/// ([`validate_update`](crate::registry::rest::validate_update)) before it is
/// stored: a changed uid (`field is immutable`), a bad label or annotation is 422.
pub(crate) async fn patch(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    patch_type: PatchType,
    manager: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = resource.info.clone();
    let manager = manager.to_string();
    let patch = Patch::decode(patch_type, body)?;
    let key = object_key(&info, namespace, name);
    let schema = resource.strategy.patch_meta();
    let namespace = namespace.map(str::to_string);
    let name = name.to_string();
    let update = move |current: &Object, rejected: &Rejection| {
        let mut value = serde_json::to_value(current)
            .map_err(|e| StorageError::Internal(e.to_string()))?;
        if let Err(error) = patch.apply(&mut value, schema) {
            return Err(rejected.reject(error));
        }
        let mut next: Object = serde_json::from_value(value).map_err(|e| {
            StorageError::BadRequest(format!("the patched object is not valid: {e}"))
        })?;
        check_type(&info, &next).map_err(|e| {
            StorageError::BadRequest(e.status.message.unwrap_or_default())
        })?;
        next.types = Some(info.type_meta());
        check_name(&info, &mut next, namespace.as_deref(), &name)
            .map_err(|error| rejected.reject(error))?;
        check_version_and_fill_uid(&info, &mut next, current)?;
        crate::registry::strategy_for(&info).set_defaults(&mut next);
        record_and_finish(&info, next, current, &manager, rejected)
    };
    let patched =
        update_or_reject_dropping_managed_fields(resource, key, update).await?;
    Ok(json_response(StatusCode::OK, &patched))
}

/// The patch types this server applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`.
    Json,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply,
}

/// The media types accepted for PATCH.
pub const SUPPORTED: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
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
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => {
                Ok(PatchType::StrategicMerge)
            }
            "application/apply-patch+yaml" => Ok(PatchType::Apply),
            _ => Err(ApiError::unsupported_media_type(content_type, SUPPORTED)),
        }
    }
}

/// Upstream's `maxJSONPatchOperations`: the most operations one JSON Patch may hold.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// A decoded patch body, ready to apply to each attempt's current object.
#[derive(Clone, Debug)]
pub(crate) enum Patch {
    /// RFC 6902 operations.
    Json(json_patch::Patch),
    /// An RFC 7386 merge patch.
    Merge(Value),
    /// A strategic merge patch (a JSON object, its directives still in it).
    StrategicMerge(Value),
}

impl Patch {
    /// Mirrors the decoding half of `applyJSPatch`: 400 for a body that is not a
    /// patch of its type, 413 for a JSON Patch over [`MAX_JSON_PATCH_OPERATIONS`].
    pub(crate) fn decode(
        patch_type: PatchType,
        body: &[u8],
    ) -> Result<Patch, ApiError> {
        let undecodable = |e: serde_json::Error| {
            ApiError::bad_request(format!(
                "the body of the request could not be decoded: {e}"
            ))
        };
        match patch_type {
            // Apply is served by `handlers/apply.rs`; not through a subresource.
            PatchType::Apply => Err(ApiError::unsupported_media_type(
                "application/apply-patch+yaml",
                &SUPPORTED[..3],
            )),
            PatchType::Json => {
                let patch: json_patch::Patch =
                    serde_json::from_slice(body).map_err(undecodable)?;
                if patch.0.len() > MAX_JSON_PATCH_OPERATIONS {
                    return Err(ApiError::request_entity_too_large(format!(
                        "The allowed maximum operations in a JSON patch is \
                         {MAX_JSON_PATCH_OPERATIONS}, got {}",
                        patch.0.len()
                    )));
                }
                Ok(Patch::Json(patch))
            }
            PatchType::Merge => {
                let patch: Value =
                    serde_json::from_slice(body).map_err(undecodable)?;
                if !patch.is_object() {
                    return Err(ApiError::bad_request(
                        "a merge patch must be a JSON object",
                    ));
                }
                Ok(Patch::Merge(patch))
            }
            // Mirrors `strategicPatchObject`'s decoding into a
            // `map[string]interface{}`: `null` is an empty patch, any other
            // non-object is 400 with `encoding/json`'s message.
            PatchType::StrategicMerge => {
                let patch: Value =
                    serde_json::from_slice(body).map_err(undecodable)?;
                let json_type = match &patch {
                    Value::Null => {
                        return Ok(Patch::StrategicMerge(Value::Object(
                            Default::default(),
                        )));
                    }
                    Value::Object(_) => return Ok(Patch::StrategicMerge(patch)),
                    Value::Array(_) => "array",
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "bool",
                };
                Err(ApiError::bad_request(format!(
                    "json: cannot unmarshal {json_type} into Go value of type \
                     map[string]interface {{}}"
                )))
            }
        }
    }

    /// Applies the patch to `target`, an object of the kind `schema` describes
    /// (`jsonpatch.Patch.Apply`, `jsonpatch.MergePatch` or
    /// `strategicpatch.StrategicMergeMapPatch`). A JSON Patch operation that
    /// fails leaves `target` unchanged and is 422 `Invalid`, as upstream
    /// answers it; a strategic merge patch that fails leaves it unchanged too.
    pub(crate) fn apply(
        &self,
        target: &mut Value,
        schema: &'static StructMeta,
    ) -> Result<(), ApiError> {
        match self {
            Patch::Json(patch) => json_patch::patch(target, &patch.0).map_err(|e| {
                tracing::debug!(error = %e, "a JSON patch failed");
                ApiError::unprocessable()
            }),
            Patch::Merge(patch) => {
                json_patch::merge(target, patch);
                Ok(())
            }
            Patch::StrategicMerge(patch) => {
                *target = strategic_merge_patch(target, patch, schema).map_err(|e| {
                    tracing::debug!(kind = schema.go_type, error = %e, "a strategic merge patch failed");
                    ApiError::from(e)
                })?;
                Ok(())
            }
        }
    }
}

impl From<MergeError> for ApiError {
    /// Mirrors `interpretStrategicMergePatchError`, then `ErrorToAPIStatus` for
    /// what stays a plain error: 400 for a malformed directive, 422 for a list of
    /// lists, 500 with no reason and the error's text for the rest.
    fn from(error: MergeError) -> Self {
        match error {
            MergeError::BadPatchFormatForPrimitiveList
            | MergeError::BadPatchFormatForRetainKeys
            | MergeError::BadPatchFormatForSetElementOrderList => {
                ApiError::bad_request(error.to_string())
            }
            MergeError::NoListOfLists => ApiError::unprocessable(),
            MergeError::Other(message) => ApiError::unknown(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::util::strategicpatch::meta as patch_meta;
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
            let text = patch.to_string();
            Patch::Merge(patch)
                .apply(&mut target, &patch_meta::METADATA_ONLY)
                .expect("a merge applies");
            assert_eq!(target, want, "{text}");
        }
    }

    fn json_patch(body: serde_json::Value) -> Result<Patch, ApiError> {
        Patch::decode(PatchType::Json, body.to_string().as_bytes())
    }

    #[test]
    fn rfc6902_operations_apply_in_order() {
        let mut target =
            json!({"metadata": {"labels": {"app": "web"}}, "spec": {"replicas": 1}});
        json_patch(json!([
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "add", "path": "/metadata/labels/tier", "value": "front"},
            {"op": "remove", "path": "/metadata/labels/app"},
            {"op": "copy", "from": "/metadata/labels/tier", "path": "/metadata/labels/copy"},
        ]))
        .expect("decodes")
        .apply(&mut target, &patch_meta::METADATA_ONLY)
        .expect("applies");
        assert_eq!(
            target,
            json!({"metadata": {"labels": {"tier": "front", "copy": "front"}},
                   "spec": {"replicas": 3}})
        );
    }

    #[test]
    fn a_failed_operation_is_422_and_changes_nothing() {
        let before = json!({"spec": {"replicas": 1}, "metadata": {"name": "a"}});
        let mut target = before.clone();
        let error = json_patch(json!([
            {"op": "replace", "path": "/spec/replicas", "value": 5},
            {"op": "test", "path": "/metadata/name", "value": "b"},
        ]))
        .expect("decodes")
        .apply(&mut target, &patch_meta::METADATA_ONLY)
        .expect_err("the test fails");
        assert_eq!(error.code(), 422);
        assert_eq!(error.status.reason.as_deref(), Some("Invalid"));
        assert_eq!(
            error.status.message.as_deref(),
            Some("the server rejected our request due to an error in our request")
        );
        assert_eq!(target, before, "atomic: the first operation is undone");
        let missing = json_patch(json!([{"op": "remove", "path": "/spec/nothing"}]))
            .expect("decodes")
            .apply(&mut target, &patch_meta::METADATA_ONLY)
            .expect_err("no such path");
        assert_eq!(missing.code(), 422);
    }

    #[test]
    fn bad_json_patches_are_400_and_too_many_operations_413() {
        for body in [
            json!({"op": "add"}),
            json!([{"op": "frobnicate", "path": "/a"}]),
            json!([{"op": "add", "value": 1}]),
        ] {
            let error = json_patch(body.clone()).expect_err("not a JSON patch");
            assert_eq!(error.code(), 400, "{body}");
            assert_eq!(error.status.reason.as_deref(), Some("BadRequest"));
        }
        let ops: Vec<_> = (0..=MAX_JSON_PATCH_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "", "value": {}}))
            .collect();
        let error = json_patch(json!(ops)).expect_err("too many");
        assert_eq!(error.code(), 413);
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "Request entity too large: The allowed maximum operations in a JSON \
                 patch is 10000, got 10001"
            )
        );
    }

    #[test]
    fn a_strategic_merge_patch_merges_containers_and_must_be_an_object() {
        let patch = Patch::decode(
            PatchType::StrategicMerge,
            br#"{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}"#,
        )
        .expect("decodes");
        let mut pod =
            json!({"spec": {"containers": [{"name": "web", "image": "nginx"}]}});
        patch.apply(&mut pod, &patch_meta::POD).expect("applies");
        assert_eq!(
            pod["spec"]["containers"],
            json!([
                {"name": "sidecar", "image": "busybox"},
                {"name": "web", "image": "nginx"},
            ])
        );
        let mut unchanged = pod.clone();
        Patch::decode(PatchType::StrategicMerge, b"null")
            .expect("null is an empty patch")
            .apply(&mut unchanged, &patch_meta::POD)
            .expect("applies");
        assert_eq!(unchanged, pod);
        let error = Patch::decode(PatchType::StrategicMerge, b"[1]")
            .expect_err("not an object");
        assert_eq!(error.code(), 400);
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "json: cannot unmarshal array into Go value of type \
                 map[string]interface {}"
            )
        );
        let bad =
            Patch::decode(PatchType::StrategicMerge, br#"{"spec":{"$patch":"x"}}"#)
                .expect("decodes")
                .apply(&mut pod, &patch_meta::POD)
                .expect_err("unknown directive");
        assert_eq!(bad.code(), 500);
        assert_eq!(bad.status.reason, None);
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
            PatchType::from_content_type("application/json-patch+json").ok(),
            Some(PatchType::Json)
        );
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml").ok(),
            Some(PatchType::Apply)
        );
        assert_eq!(
            PatchType::from_content_type("application/yaml")
                .err()
                .map(|e| e.code()),
            Some(415)
        );
    }

    #[test]
    fn merge_errors_answer_as_upstreams_handler() {
        assert_eq!(
            ApiError::from(MergeError::BadPatchFormatForRetainKeys).code(),
            400
        );
        assert_eq!(
            ApiError::from(MergeError::BadPatchFormatForPrimitiveList).code(),
            400
        );
        assert_eq!(
            ApiError::from(MergeError::BadPatchFormatForSetElementOrderList).code(),
            400
        );
        assert_eq!(ApiError::from(MergeError::NoListOfLists).code(), 422);
        let unknown = ApiError::from(MergeError::Other(
            "unknown patch type: frobnicate in map: map[$patch:frobnicate]".into(),
        ));
        assert_eq!(unknown.code(), 500);
        assert_eq!(unknown.status.reason, None);
        assert_eq!(
            unknown.status.message.as_deref(),
            Some("unknown patch type: frobnicate in map: map[$patch:frobnicate]")
        );
    }
}
