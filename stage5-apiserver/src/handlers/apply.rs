//! `PATCH` with `Content-Type: application/apply-patch+yaml`: mirrors
//! apiserver's `pkg/endpoints/handlers/patch.go` for `types.ApplyPatchType`
//! (the `applyPatcher`, with `forceAllowCreate`).
//!
//! The body is the caller's configuration, in YAML or JSON. It is applied by
//! [`fieldmanager::apply`] to the live object inside a guaranteed update; when
//! there is no object yet it is applied to an empty one and created (201),
//! after the NamespaceLifecycle admission and the create's validation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::http::StatusCode;
use axum::response::Response;
use stage5_storage::{Object, ResourceInfo, StorageError, object_key};

use crate::fieldmanager;
use crate::namespace_lifecycle;
use crate::registry::{RegisteredResource, Registry};
use crate::registry::{rest, strategy_for};
use crate::status::ApiError;

use super::rest::{
    QueryParams, Rejection, check_name, check_version_and_fill_uid, finish_update,
    json_response, update_or_create_or_reject,
};

/// Mirrors `PatchResource` with an apply patch: `fieldManager` is required
/// (422), `force` optional; the configuration must be of the resource's kind
/// (400). Answers 201 with the created object, 200 with the updated one, or
/// 409 with the conflicts.
pub(crate) async fn apply(
    registry: &Registry,
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    query: &QueryParams,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = resource.info.clone();
    let manager = query.str("fieldManager").to_string();
    let force = query.bool("force")?.unwrap_or(false);
    fieldmanager::validate_patch_options(&manager, false, true)?;
    let config = fieldmanager::decode_apply_body(body)?;
    let key = object_key(&info, namespace, name);
    // Admission for the create an apply may become (`forceAllowCreate`).
    match resource.dyn_storage.get(key.clone()).await {
        Ok(_) => {}
        Err(StorageError::NotFound { .. }) => {
            namespace_lifecycle::admit_create(registry, &info, name, namespace)
                .await?;
        }
        Err(error) => return Err(error.into()),
    }
    let created = Arc::new(AtomicBool::new(false));
    let was_created = Arc::clone(&created);
    let namespace_owned = namespace.map(str::to_string);
    let name_owned = name.to_string();
    let update = move |current: &Object, rejected: &Rejection| {
        let creating = current.metadata.uid.is_none();
        created.store(creating, Ordering::Relaxed);
        let next = fieldmanager::apply(&info, current, &config, &manager, force)
            .map_err(|error| rejected.reject(error))?;
        let ns = namespace_owned.as_deref();
        if creating {
            before_create(&info, next, ns, &name_owned)
                .map_err(|error| rejected.reject(error))
        } else {
            before_update(&info, next, current, ns, &name_owned, rejected)
        }
    };
    let stored = update_or_create_or_reject(resource, key, true, update).await?;
    let code = if was_created.load(Ordering::Relaxed) {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(json_response(code, &stored))
}

/// `BeforeCreate` for an apply that creates: the system fields, the
/// namespace's defaults, and the create's validation.
fn before_create(
    info: &ResourceInfo,
    mut next: Object,
    namespace: Option<&str>,
    name: &str,
) -> Result<Object, ApiError> {
    check_name(info, &mut next, namespace, name)?;
    rest::fill_object_meta_system_fields(&mut next);
    next.metadata.resource_version = None;
    let strategy = strategy_for(info);
    strategy.set_defaults(&mut next);
    strategy.prepare_for_create(&mut next);
    rest::validate_create(info, &next)?;
    Ok(next)
}

/// The update half, as a patch's: the name must be the URL's (400), a missing
/// uid is the live one's and a different one 422, a resourceVersion in the configuration is a precondition, and the
/// result is validated as an update.
fn before_update(
    info: &ResourceInfo,
    mut next: Object,
    current: &Object,
    namespace: Option<&str>,
    name: &str,
    rejected: &Rejection,
) -> Result<Object, StorageError> {
    check_name(info, &mut next, namespace, name)
        .map_err(|error| rejected.reject(error))?;
    strategy_for(info).set_defaults(&mut next);
    check_version_and_fill_uid(info, &mut next, current)?;
    finish_update(info, next, current, rejected)
}
