//! The REST verbs of one generic resource: mirrors apiserver's
//! `pkg/endpoints/handlers` (`ListResource`, `GetResource`, `CreateResource`,
//! `UpdateResource`, `PatchResource`, `DeleteResource`) over the `rest.Storage` that
//! `registry/generic/registry.Store` builds, with the parts of each resource's
//! strategy that matter here (`PrepareForCreate`, name validation,
//! `FillObjectMetaSystemFields`).
//!
//! One entry point, [`serve_api`], serves every `/api` and `/apis` path: it parses
//! the path ([`request_info`](crate::request_info)), answers discovery, finds the
//! resource in the registry and dispatches on the HTTP method:
//!
//! | Method  | Collection          | Object             |
//! |---------|---------------------|--------------------|
//! | GET     | list, or watch      | get, or watch      |
//! | POST    | create              | 405                |
//! | PUT     | 405                 | update             |
//! | PATCH   | 405                 | patch, or apply    |
//! | DELETE  | 405                 | delete             |

mod apply;
mod binding;
mod create;
mod delete;
mod get;
mod installer;
pub mod negotiation;
pub mod patch;
pub mod response;
pub mod responsewriters;
mod rest;
pub mod subresource;
mod update;
pub mod watch;

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::app_state::AppState;
use crate::discovery;
use crate::request_info::ApiPath;
use crate::status::ApiError;

use self::create::create;
use self::delete::delete;
use self::get::{get, list};
use self::installer::{Action, ResourceRoute, Route};
use self::patch::patch;
use self::rest::{read_body, read_object_body};
use self::update::update;
use self::watch::serve_watch;

pub use self::get::{list_options, watch_options};
pub use self::response::list_response;
pub use self::rest::QueryParams;

/// The entry point of every `/api` and `/apis` request.
pub async fn serve_api(
    State(state): State<Arc<AppState>>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    // `genericapirequest.UserFrom(ctx)`: who the authentication filter found.
    let user = parts
        .extensions
        .get::<crate::auth::User>()
        .map(|u| u.0.as_str());
    match handle(
        &state,
        &parts.method,
        &parts.uri,
        &parts.headers,
        user,
        body,
    )
    .await
    {
        Ok(response) => response,
        Err(error) => {
            if error.code() >= 500 {
                tracing::warn!(uri = %parts.uri, message = ?error.status.message, "request failed");
            }
            error.into_response()
        }
    }
}

/// Decides the request ([`installer::route`]), then one call per route.
async fn handle(
    state: &Arc<AppState>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    user: Option<&str>,
    body: Body,
) -> Result<Response, ApiError> {
    match installer::route(state, method, uri, headers)? {
        Route::Discovery(path) => discovery_document(state, path),
        Route::AccessReview { kind, api_version } => {
            let body =
                read_object_body(state, headers, body, &api_version, kind).await?;
            crate::access_review::create(kind, &body)
        }
        Route::Resource(route) => {
            // `WriteObjectNegotiated`/`ErrorNegotiated`: every answer of a
            // resource, errors too, in the media type the client accepts.
            let media_type = headers
                .get(header::ACCEPT)
                .and_then(|accept| accept.to_str().ok())
                .and_then(negotiation::negotiate_media_type_options)
                .map(|options| options.media_type)
                .unwrap_or_default();
            let response = serve_resource(state, *route, headers, user, body)
                .await
                .unwrap_or_else(IntoResponse::into_response);
            Ok(responsewriters::negotiated(response, media_type).await)
        }
    }
}

/// Mirrors `pkg/endpoints/discovery`'s handlers: the document of a discovery
/// path, or 404 for a group or version this server does not serve.
fn discovery_document(
    state: &AppState,
    path: ApiPath,
) -> Result<Response, ApiError> {
    let document = match path {
        ApiPath::CoreVersions => Some(discovery::core_versions()),
        ApiPath::Groups => Some(discovery::group_list(state)),
        ApiPath::Group(group) => discovery::group(state, &group),
        ApiPath::Resources { group, version } => {
            discovery::resource_list(state, &group, &version)
        }
        ApiPath::Resource(_) => None,
    };
    document
        .map(|d| Json(d).into_response())
        .ok_or_else(ApiError::path_not_found)
}

/// One action on one resource: reads the body the action takes, then calls
/// its handler.
async fn serve_resource(
    state: &Arc<AppState>,
    route: ResourceRoute,
    headers: &HeaderMap,
    user: Option<&str>,
    body: Body,
) -> Result<Response, ApiError> {
    let ResourceRoute {
        resource,
        request,
        query,
        manager,
        action,
    } = route;
    let resource = &resource;
    let info = &resource.info;
    let namespace = request.namespace.as_deref();
    let name = request.name.as_deref().unwrap_or_default();
    let (api_version, kind) = (info.api_version(), info.kind);
    match action {
        Action::List | Action::Get | Action::Watch => {
            // `GetResource`/`ListResource` negotiate the answer first: 406 before
            // anything else.
            let accept = headers
                .get(header::ACCEPT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default();
            let media = negotiation::negotiate_output_media_type(&accept)?;
            match action {
                Action::Watch => {
                    let (options, predicate) =
                        watch_options(info, &query, request.name.as_deref())?;
                    let transform = response::transform_for(&media, &query)?;
                    serve_watch(
                        state,
                        resource,
                        namespace,
                        options,
                        predicate,
                        transform,
                        media.media_type,
                    )
                    .await
                }
                Action::List => list(resource, namespace, &query, &media).await,
                _ => get(resource, namespace, name, &query, &media).await,
            }
        }
        Action::Create => {
            let body =
                read_object_body(state, headers, body, &api_version, kind).await?;
            create(&state.registry, resource, &request, &manager, user, &body).await
        }
        Action::Update => {
            let body =
                read_object_body(state, headers, body, &api_version, kind).await?;
            update(resource, namespace, name, &manager, &body).await
        }
        Action::Apply => {
            let body = read_body(state, headers, body).await?;
            apply::apply(&state.registry, resource, namespace, name, &query, &body)
                .await
        }
        Action::Patch(patch_type) => {
            let body = read_body(state, headers, body).await?;
            crate::fieldmanager::validate_patch_options(
                query.str("fieldManager"),
                query.get("force").is_some(),
                false,
            )?;
            patch(resource, namespace, name, patch_type, &manager, &body).await
        }
        Action::Delete => {
            let body = read_object_body(
                state,
                headers,
                body,
                &api_version,
                "DeleteOptions",
            )
            .await?;
            delete(state, resource, namespace, name, &query, &body).await
        }
        Action::GetSubresource(sub) => {
            subresource::get(resource, namespace, name, sub).await
        }
        Action::UpdateSubresource(sub) => {
            let (api_version, kind) = sub.body_type(info);
            let body =
                read_object_body(state, headers, body, &api_version, kind).await?;
            subresource::put(resource, namespace, name, sub, &manager, &body).await
        }
        Action::Bind => {
            let body =
                read_object_body(state, headers, body, &api_version, "Binding")
                    .await?;
            binding::bind(resource, namespace, name, &body).await
        }
        Action::Evict => {
            let body =
                read_object_body(state, headers, body, "policy/v1", "Eviction")
                    .await?;
            let eviction: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|e| {
                    ApiError::bad_request(format!(
                        "the body of the request could not be decoded: {e}"
                    ))
                })?;
            let options = serde_json::to_vec(&eviction["deleteOptions"])
                .ok()
                .filter(|o| o.as_slice() != b"null")
                .unwrap_or_default();
            let options = delete::delete_options(&Default::default(), &options)?;
            crate::registry::core::pod::storage::eviction::evict(
                &state.registry,
                resource,
                namespace.unwrap_or_default(),
                name,
                &eviction,
                options,
            )
            .await
        }
        Action::PatchSubresource(sub, patch_type) => {
            let body = read_body(state, headers, body).await?;
            subresource::patch(
                resource, namespace, name, sub, patch_type, &manager, &body,
            )
            .await
        }
    }
}
