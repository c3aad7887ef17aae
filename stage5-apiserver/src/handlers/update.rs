//! `PUT` on an object: mirrors apiserver's `pkg/endpoints/handlers/update.go`
//! (`UpdateResource`), a guaranteed update with the client's resourceVersion as
//! precondition.

use axum::http::StatusCode;
use axum::response::Response;

use crate::registry::RegisteredResource;
use crate::status::ApiError;
use stage5_storage::Object;
use stage5_storage::{Preconditions, object_key, parse_resource_version};

use super::rest::{
    Rejection, conflict, decode_body, ensure_namespace, json_response,
    record_and_finish, update_or_reject_dropping_managed_fields,
};

/// Mirrors `UpdateResource` → `Store.Update` → `GuaranteedUpdate`: the body replaces
/// the object. A resourceVersion in the body is a precondition (stale → 409
/// Conflict); without one the update is unconditional (`AllowUnconditionalUpdate`).
/// uid and creationTimestamp are kept. Updating a missing object is 404 (no
/// create-on-update). Before the new object is stored, `BeforeUpdate`'s validation
/// runs ([`validate_update`](crate::registry::rest::validate_update)): a bad label or
/// annotation is 422. The fields the update set or changed become `manager`'s
/// (an `Update` entry in `managedFields`).
pub(crate) async fn update(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    manager: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = resource.info.clone();
    let manager = manager.to_string();
    let mut obj = decode_body(&info, body)?;
    if obj.name() != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({name})",
            obj.name()
        )));
    }
    ensure_namespace(&info, &mut obj, namespace)?;
    let wanted_rv = obj.resource_version().to_string();
    parse_resource_version(&wanted_rv)?;
    // `Store.Update`: a kind that does not `AllowUnconditionalUpdate` needs
    // the resourceVersion the client read.
    if wanted_rv.is_empty() && !resource.strategy.allow_unconditional_update() {
        return Err(ApiError::invalid(
            &info.qualified_resource(),
            name,
            "metadata.resourceVersion",
            "Invalid value: 0: must be specified for an update",
        ));
    }
    let key = object_key(&info, namespace, name);
    let update = move |current: &Object, rejected: &Rejection| {
        if !wanted_rv.is_empty() && wanted_rv != current.resource_version() {
            return Err(conflict(&info, current.name()));
        }
        // A uid in the body is a precondition.
        Preconditions {
            uid: obj.metadata.uid.clone().filter(|uid| !uid.is_empty()),
            resource_version: None,
        }
        .check(&info, current)?;
        let mut next = obj.clone();
        next.metadata.uid = current.metadata.uid.clone();
        record_and_finish(&info, next, current, &manager, rejected)
    };
    let updated =
        update_or_reject_dropping_managed_fields(resource, key, update).await?;
    Ok(json_response(StatusCode::OK, &updated))
}
