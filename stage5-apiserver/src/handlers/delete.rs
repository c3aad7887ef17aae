//! `DELETE` on an object: mirrors apiserver's `pkg/endpoints/handlers/delete.go`
//! (`DeleteResource`), with the body's preconditions.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use crate::app_state::AppState;
use crate::registry::RegisteredResource;
use crate::status::ApiError;
use crate::{namespace_deletion, namespace_lifecycle};
use stage5_storage::{Preconditions, object_key};

use super::rest::json_response;

/// Mirrors `DeleteResource` → `Store.Delete`: optional `DeleteOptions` in the body
/// with `preconditions` (uid, resourceVersion; a mismatch is 409). Deletion is
/// immediate (no grace period, no finalizers), and the answer is the object's last
/// state with 200, like `ReturnDeletedObject` stores; kubectl and kube-client accept
/// it as they accept a `Status`. `default`, `kube-system` and `kube-public` may
/// not be deleted ([`namespace_lifecycle::admit_delete`]); any other namespace
/// is marked terminating and answered, and the namespace controller deletes its
/// content and then it ([`namespace_deletion`]).
pub(crate) async fn delete(
    state: &AppState,
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let mut preconditions = Preconditions::default();
    if !body.iter().all(u8::is_ascii_whitespace) {
        let options: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the DeleteOptions could not be decoded: {e}"
            ))
        })?;
        let field = |name: &str| {
            options
                .get("preconditions")
                .and_then(|p| p.get(name))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        preconditions.uid = field("uid");
        preconditions.resource_version = field("resourceVersion");
    }
    if resource.strategy.delete_terminates() {
        namespace_lifecycle::admit_delete(name)?;
        let namespace =
            namespace_deletion::delete(resource, name, preconditions).await?;
        state.namespace_deletions.notify_one();
        return Ok(json_response(StatusCode::OK, &namespace));
    }
    let key = object_key(&resource.info, namespace, name);
    let deleted = resource.dyn_storage.delete(key, preconditions).await?;
    Ok(json_response(StatusCode::OK, &deleted))
}
