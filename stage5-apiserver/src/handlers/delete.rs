//! `DELETE` on an object: mirrors apiserver's `pkg/endpoints/handlers/delete.go`
//! (`DeleteResource`): the `DeleteOptions` (preconditions, grace period,
//! propagation policy) read and validated, then the registry's delete
//! ([`registry::delete`], the generic `Store.Delete`).

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use crate::app_state::AppState;
use crate::registry::RegisteredResource;
use crate::status::ApiError;
use crate::{namespace_deletion, namespace_lifecycle};
use stage5_storage::{Preconditions, object_key};

use super::rest::{QueryParams, json_response};
use crate::registry::generic::registry::{self, DeleteOptions, PropagationPolicy};

/// Mirrors `DeleteResource` → `Store.Delete`: optional `DeleteOptions` in the body
/// (or the query) with `preconditions` (uid, resourceVersion; a mismatch is 409),
/// `gracePeriodSeconds` and `propagationPolicy`. An object without finalizers and
/// without a grace period goes at once; otherwise it is marked for deletion and
/// stays until they are done. The answer is the object's last state, or the
/// marked object, with 200, like `ReturnDeletedObject` stores; kubectl and
/// kube-client accept it as they accept a `Status`. `default`, `kube-system` and `kube-public` may
/// not be deleted ([`namespace_lifecycle::admit_delete`]); any other namespace
/// is marked terminating and answered, and the namespace controller deletes its
/// content and then it ([`namespace_deletion`]).
pub(crate) async fn delete(
    state: &AppState,
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    query: &QueryParams,
    body: &[u8],
) -> Result<Response, ApiError> {
    let options = delete_options(query, body)?;
    if resource.strategy.delete_terminates() {
        namespace_lifecycle::admit_delete(name)?;
        let namespace =
            namespace_deletion::delete(resource, name, options.preconditions)
                .await?;
        state.namespace_deletions.notify_one();
        return Ok(json_response(StatusCode::OK, &namespace));
    }
    let key = object_key(&resource.info, namespace, name);
    let deleted = registry::delete(resource, key, options).await?;
    Ok(json_response(StatusCode::OK, &deleted))
}

/// Reads `DeleteOptions` from the body (what kubectl and client-go send) and
/// the query (`gracePeriodSeconds`, `propagationPolicy`, `orphanDependents`),
/// and validates them as `ValidateDeleteOptions`: an unknown propagation policy,
/// or `orphanDependents` with a policy, is 422.
pub(crate) fn delete_options(
    query: &QueryParams,
    body: &[u8],
) -> Result<DeleteOptions, ApiError> {
    let options: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Default::default())
    } else {
        serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the DeleteOptions could not be decoded: {e}"
            ))
        })?
    };
    let precondition = |name: &str| {
        options
            .get("preconditions")
            .and_then(|p| p.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let grace_period_seconds =
        match options.get("gracePeriodSeconds").and_then(Value::as_i64) {
            Some(seconds) => Some(seconds),
            None => query.number::<i64>("gracePeriodSeconds")?,
        };
    let policy = options
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| query.get("propagationPolicy").map(str::to_string))
        .filter(|p| !p.is_empty());
    let orphan_dependents =
        match options.get("orphanDependents").and_then(Value::as_bool) {
            Some(orphan) => Some(orphan),
            None => query.bool("orphanDependents")?,
        };
    let invalid = |field: &str, message: String| {
        ApiError::invalid("DeleteOptions.meta.k8s.io", "", field, &message)
    };
    let propagation_policy = match policy.as_deref() {
        None => None,
        Some(value) => Some(PropagationPolicy::parse(value).ok_or_else(|| {
            invalid(
                "propagationPolicy",
                format!(
                    "Unsupported value: \"{value}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                ),
            )
        })?),
    };
    if orphan_dependents.is_some() && propagation_policy.is_some() {
        return Err(invalid(
            "propagationPolicy",
            "Invalid value: \"null\": orphanDependents and deletionPropagation cannot be both set".into(),
        ));
    }
    Ok(DeleteOptions {
        preconditions: Preconditions {
            uid: precondition("uid"),
            resource_version: precondition("resourceVersion"),
        },
        grace_period_seconds,
        propagation_policy,
        orphan_dependents,
    })
}
