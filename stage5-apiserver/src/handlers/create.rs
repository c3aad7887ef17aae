//! `POST` on a collection: mirrors apiserver's `pkg/endpoints/handlers/create.go`
//! (`CreateResource`), with the strategy's `PrepareForCreate`, `generateName` and
//! the namespace rules.

use axum::http::StatusCode;
use axum::response::Response;

use crate::namespace_lifecycle;
use crate::registry::rest;
use crate::registry::{RegisteredResource, Registry};
use crate::request_info::ResourceRequest;
use crate::status::ApiError;
use stage5_storage::{StorageError, object_key};

use super::rest::{
    GENERATE_NAME_ATTEMPTS, decode_body, ensure_namespace, json_response,
};

/// Mirrors `CreateResource` → `Store.Create`: `BeforeCreate` (namespace,
/// generateName, `FillObjectMetaSystemFields`, then `ValidateObjectMeta`: name,
/// namespace, labels, annotations; see [`rest::validate_create`]), the
/// NamespaceLifecycle admission ([`namespace_lifecycle::admit_create`]: 404 for a
/// namespace that does not exist, 403 for one being deleted), then the storage's
/// create. Answers 201 with the stored object, or 422 `Invalid` with one
/// cause per broken rule. The creating manager's fields are recorded as an
/// `Update` entry in `managedFields` ([`crate::fieldmanager`]).
pub(crate) async fn create(
    registry: &Registry,
    resource: &RegisteredResource,
    request: &ResourceRequest,
    manager: &str,
    user: Option<&str>,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = &resource.info;
    let namespace = request.namespace.as_deref();
    if info.namespaced && namespace.is_none() {
        return Err(ApiError::method_not_supported(info.plural, "create"));
    }
    let mut obj = decode_body(info, body)?;
    ensure_namespace(info, &mut obj, namespace)?;
    // Mirrors `CreateResource`'s `FieldManager.UpdateNoErrors` from an empty
    // object, before `BeforeCreate` adds the system fields.
    crate::fieldmanager::update_no_errors(info, None, &mut obj, manager, None);
    let generate = obj
        .metadata
        .generate_name
        .clone()
        .filter(|g| !g.is_empty() && obj.name().is_empty());
    rest::fill_object_meta_system_fields(&mut obj);
    resource.strategy.prepare_for_create(&mut obj);
    resource.strategy.prepare_for_create_by(&mut obj, user);
    rest::omit_empty_metadata(&mut obj.metadata);
    let attempts = if generate.is_some() {
        GENERATE_NAME_ATTEMPTS
    } else {
        1
    };
    let mut last_error = None;
    for _ in 0..attempts {
        if let Some(base) = &generate {
            obj.metadata.name = Some(rest::generate_name(base));
        }
        // `BeforeCreate`'s `strategy.Validate`, once the name is generated and
        // before anything is stored: 422 with every broken rule.
        rest::validate_create(info, &obj)?;
        let name = obj.name().to_string();
        // Validating admission, after `BeforeCreate`: NamespaceLifecycle.
        namespace_lifecycle::admit_create(registry, info, &name, namespace).await?;
        // `Store.Create`'s `BeginCreate` hook: a service's addresses.
        resource
            .strategy
            .begin_create(resource.dyn_storage.as_ref(), &mut obj)
            .await?;
        let key = object_key(info, namespace, &name);
        let mut created =
            resource.dyn_storage.create(key.clone(), obj.clone()).await;
        // `CreateResource`'s `isTooLargeError` retry: once more without
        // `managedFields`, which can be large and are safe to drop.
        if matches!(created, Err(StorageError::RequestTooLarge)) {
            let mut slim = obj.clone();
            slim.metadata.managed_fields = None;
            created = resource.dyn_storage.create(key, slim).await;
        }
        match created {
            Ok(created) => return Ok(json_response(StatusCode::CREATED, &created)),
            Err(error @ StorageError::AlreadyExists { .. })
                if generate.is_some() =>
            {
                last_error = Some(error);
            }
            Err(error) => return Err(error.into()),
        }
    }
    Err(last_error
        .map(ApiError::from)
        .unwrap_or_else(|| ApiError::bad_request("create failed")))
}
