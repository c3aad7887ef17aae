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
mod create;
mod delete;
mod get;
pub mod negotiation;
pub mod patch;
pub mod response;
mod rest;
pub mod subresource;
mod update;

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::app_state::AppState;
use crate::discovery;
use crate::request_info::{self, ApiPath};
use crate::status::ApiError;
use crate::watch::serve_watch;

use self::create::create;
use self::delete::delete;
use self::get::{get, list};
use self::patch::{PatchType, patch};
use self::rest::*;
use self::subresource::Subresource;
use self::update::update;

pub use self::get::{list_options, list_response, watch_options};
pub use self::rest::QueryParams;

/// The entry point of every `/api` and `/apis` request.
pub async fn serve_api(
    State(state): State<Arc<AppState>>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    match handle(&state, &parts.method, &parts.uri, &parts.headers, body).await {
        Ok(response) => response,
        Err(error) => {
            if error.code() >= 500 {
                tracing::warn!(uri = %parts.uri, message = ?error.status.message, "request failed");
            }
            error.into_response()
        }
    }
}

async fn handle(
    state: &Arc<AppState>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if state.shutdown.is_cancelled() {
        // Mirrors `--shutdown-send-retry-after`: new requests during shutdown are
        // told to retry.
        return Err(ApiError::shutting_down());
    }
    let path =
        request_info::parse(uri.path()).ok_or_else(ApiError::path_not_found)?;
    let request = match path {
        ApiPath::Resource(request) => request,
        discovery_path => {
            if method != Method::GET {
                return Err(ApiError::method_not_supported(
                    "discovery",
                    method.as_str(),
                ));
            }
            let document = match discovery_path {
                ApiPath::CoreVersions => Some(discovery::core_versions()),
                ApiPath::Groups => Some(discovery::group_list(state)),
                ApiPath::Group(group) => discovery::group(state, &group),
                ApiPath::Resources { group, version } => {
                    discovery::resource_list(state, &group, &version)
                }
                ApiPath::Resource(_) => None,
            };
            return document
                .map(|d| Json(d).into_response())
                .ok_or_else(ApiError::path_not_found);
        }
    };
    if request.group == crate::access_review::GROUP
        && request.version == crate::access_review::VERSION
        && request.namespace.is_none()
        && request.name.is_none()
    {
        let kind = crate::access_review::kind_of(&request.resource)
            .ok_or_else(ApiError::path_not_found)?;
        if *method != Method::POST {
            return Err(ApiError::method_not_supported(
                &request.resource,
                method.as_str(),
            ));
        }
        let api_version = format!("{}/{}", request.group, request.version);
        let body =
            read_object_body(state, headers, body, &api_version, kind).await?;
        return crate::access_review::create(kind, &body);
    }
    let resource = state
        .registry
        .find(&request.group, &request.version, &request.resource)
        .ok_or_else(ApiError::path_not_found)?;
    // A cluster-scoped resource has no namespaced paths.
    if !resource.info.namespaced && request.namespace.is_some() {
        return Err(ApiError::path_not_found());
    }
    // The manager of an `Update` in `managedFields` (`managerOrUserAgent`).
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let query = QueryParams::from_uri(uri)?;
    let manager = crate::fieldmanager::manager_or_user_agent(
        query.str("fieldManager"),
        user_agent,
    );
    // `dryRun=All`: the write runs against a storage that stores nothing.
    let options_kind = match *method {
        Method::POST => "CreateOptions",
        Method::PUT => "UpdateOptions",
        Method::PATCH => "PatchOptions",
        _ => "DeleteOptions",
    };
    let dry_run = *method != Method::GET
        && crate::dry_run::parse(&query.all("dryRun"), options_kind)?;
    let dry_run_resource = dry_run.then(|| crate::dry_run::resource(resource));
    let resource = dry_run_resource.as_ref().unwrap_or(resource);
    if let Some(sub) = request.subresource.as_deref() {
        let sub = Subresource::of(&resource.info, sub)?;
        let Some(name) = request.name.as_deref() else {
            return Err(ApiError::path_not_found());
        };
        let namespace = request.namespace.as_deref();
        let info = &resource.info;
        return match method.clone() {
            Method::GET => subresource::get(resource, namespace, name, sub).await,
            Method::PUT => {
                let (api_version, kind) = sub.body_type(info);
                let body =
                    read_object_body(state, headers, body, &api_version, kind)
                        .await?;
                subresource::put(resource, namespace, name, sub, &manager, &body)
                    .await
            }
            Method::PATCH => {
                let patch_type = patch_type_of(headers)?;
                let body = read_body(state, headers, body).await?;
                subresource::patch(
                    resource, namespace, name, sub, patch_type, &manager, &body,
                )
                .await
            }
            other => {
                Err(ApiError::method_not_supported(info.plural, other.as_str()))
            }
        };
    }
    let info = &resource.info;
    let verb_error =
        |verb: &str| Err(ApiError::method_not_supported(info.plural, verb));
    let namespace = request.namespace.as_deref();
    let (api_version, kind) = (info.api_version(), info.kind);
    let watch = request.legacy_watch || query.is_watch()?;
    match (method.clone(), request.name.as_deref()) {
        (Method::GET, name) => {
            // `GetResource`/`ListResource` negotiate the answer first: 406 before
            // anything else.
            let accept = headers
                .get(header::ACCEPT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default();
            let media = negotiation::negotiate_output_media_type(&accept)?;
            match name {
                _ if watch => {
                    let (options, predicate) = watch_options(info, &query, name)?;
                    let transform = response::transform_for(&media, &query)?;
                    serve_watch(
                        state, resource, namespace, options, predicate, transform,
                    )
                    .await
                }
                None => list(resource, namespace, &query, &media).await,
                Some(name) => get(resource, namespace, name, &query, &media).await,
            }
        }
        (Method::POST, None) => {
            let body =
                read_object_body(state, headers, body, &api_version, kind).await?;
            create(&state.registry, resource, &request, &manager, &body).await
        }
        (Method::PUT, Some(name)) => {
            let body =
                read_object_body(state, headers, body, &api_version, kind).await?;
            update(resource, namespace, name, &manager, &body).await
        }
        (Method::PATCH, Some(name)) => {
            let patch_type = patch_type_of(headers)?;
            let body = read_body(state, headers, body).await?;
            if patch_type == PatchType::Apply {
                return apply::apply(
                    &state.registry,
                    resource,
                    namespace,
                    name,
                    &query,
                    &body,
                )
                .await;
            }
            crate::fieldmanager::validate_patch_options(
                query.str("fieldManager"),
                query.get("force").is_some(),
                false,
            )?;
            patch(resource, namespace, name, patch_type, &manager, &body).await
        }
        (Method::DELETE, Some(name)) => {
            let body = read_object_body(
                state,
                headers,
                body,
                &api_version,
                "DeleteOptions",
            )
            .await?;
            delete(state, resource, namespace, name, &body).await
        }
        (Method::POST, Some(_)) => verb_error("create"),
        (Method::PUT, None) => verb_error("update"),
        (Method::PATCH, None) => verb_error("patch"),
        (Method::DELETE, None) => verb_error("deletecollection"),
        (other, _) => verb_error(other.as_str()),
    }
}

/// The patch type a `PATCH` request's `Content-Type` names, or 415.
fn patch_type_of(headers: &HeaderMap) -> Result<PatchType, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    PatchType::from_content_type(content_type)
}
