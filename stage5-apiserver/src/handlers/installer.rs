//! Which handler answers a request: mirrors apiserver's
//! `pkg/endpoints/installer.go` (`APIInstaller.registerResourceHandlers`, which
//! registers for each resource path the actions its storage supports: `LIST`,
//! `WATCH`, `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, and the subresources'),
//! and the discovery routes of `pkg/endpoints/discovery`.
//!
//! Upstream registers one go-restful route per path and verb at start. Here the
//! one generic route family (`/api/...`, `/apis/...`) is decided per request,
//! once, into a [`Route`]: everything that can be refused before a body is read
//! (an unknown path, a verb the path does not serve, a bad query, an
//! unsupported patch type) is refused here, in the order kube-apiserver
//! refuses it. The handlers' module then only calls.
//!
//! | Path (`namespaces/{ns}/` where the resource is namespaced) | Verbs            | Action             |
//! |----------------------------------------------------------|------------------|--------------------|
//! | `/api`, `/apis`, `/apis/{g}`, `/api/v1`, `/apis/{g}/{v}` | GET              | [`Route::Discovery`] |
//! | `/apis/authorization.k8s.io/v1/selfsubject…reviews`      | POST             | [`Route::AccessReview`] |
//! | `…/{resource}`                                           | GET, POST        | list or watch, create |
//! | `…/{resource}/{name}`                                    | GET, PUT, PATCH, DELETE | get or watch, update, patch or apply, delete |
//! | `…/{resource}/{name}/{status\|scale}`                    | GET, PUT, PATCH  | the subresource's  |
//! | `…/pods/{name}/binding`                                  | POST             | [`Action::Bind`]   |
//! | `…/pods/{name}/eviction`                                 | POST             | [`Action::Evict`]  |

use axum::http::{HeaderMap, Method, Uri, header};

use super::patch::PatchType;
use super::rest::QueryParams;
use super::subresource::Subresource;
use crate::app_state::AppState;
use crate::registry::RegisteredResource;
use crate::request_info::{self, ApiPath, ResourceRequest};
use crate::status::ApiError;

/// One request, decided.
pub(crate) enum Route {
    /// A discovery document (`GET` only).
    Discovery(ApiPath),
    /// A self access review (`POST` only), of this kind.
    AccessReview {
        /// `SelfSubjectAccessReview` or `SelfSubjectRulesReview`.
        kind: &'static str,
        /// `authorization.k8s.io/v1`.
        api_version: String,
    },
    /// An action on one served resource.
    Resource(Box<ResourceRoute>),
}

/// An action on one served resource, with what every action needs.
pub(crate) struct ResourceRoute {
    /// The resource (behind a storage that stores nothing for `dryRun=All`).
    pub(crate) resource: RegisteredResource,
    /// The path's parts.
    pub(crate) request: ResourceRequest,
    /// The query string.
    pub(crate) query: QueryParams,
    /// The manager of an `Update` in `managedFields` (`managerOrUserAgent`).
    pub(crate) manager: String,
    /// What to do.
    pub(crate) action: Action,
}

/// The actions `registerResourceHandlers` registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// `GET` of a collection (`LIST`).
    List,
    /// `GET` of a collection or object with `watch=true`, or under `/watch/`.
    Watch,
    /// `GET` of an object.
    Get,
    /// `POST` to a collection.
    Create,
    /// `PUT` of an object.
    Update,
    /// `PATCH` of an object with a JSON, merge or strategic merge patch.
    Patch(PatchType),
    /// `PATCH` of an object with `application/apply-patch+yaml`.
    Apply,
    /// `DELETE` of an object.
    Delete,
    /// `GET` of a subresource.
    GetSubresource(Subresource),
    /// `PUT` of a subresource.
    UpdateSubresource(Subresource),
    /// `PATCH` of a subresource.
    PatchSubresource(Subresource, PatchType),
    /// `POST` of a pod's `binding` (`BindingREST`).
    Bind,
    /// `POST` of a pod's `eviction` (`EvictionREST`).
    Evict,
}

/// Decides what a request is, or why it is refused before anything else
/// happens: 503 while shutting down, 404 for an unknown path, 405 for a verb
/// the path does not serve, 400 for a bad query, 422 for bad `dryRun` values,
/// 415 for an unsupported patch type.
pub(crate) fn route(
    state: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<Route, ApiError> {
    if state.shutdown.is_cancelled() {
        // Mirrors `--shutdown-send-retry-after`: new requests during shutdown are
        // told to retry.
        return Err(ApiError::shutting_down());
    }
    let path =
        request_info::parse(uri.path()).ok_or_else(ApiError::path_not_found)?;
    let request = match path {
        ApiPath::Resource(request) => request,
        discovery => {
            if method != Method::GET {
                return Err(ApiError::method_not_supported(
                    "discovery",
                    method.as_str(),
                ));
            }
            return Ok(Route::Discovery(discovery));
        }
    };
    if let Some(route) = access_review(&request, method)? {
        return Ok(route);
    }
    let resource = state
        .registry
        .find(&request.group, &request.version, &request.resource)
        .ok_or_else(ApiError::path_not_found)?;
    // A cluster-scoped resource has no namespaced paths.
    if !resource.info.namespaced && request.namespace.is_some() {
        return Err(ApiError::path_not_found());
    }
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
    let resource = if dry_run {
        crate::dry_run::resource(resource)
    } else {
        resource.clone()
    };
    let action = action(&resource, &request, &query, method, headers)?;
    Ok(Route::Resource(Box::new(ResourceRoute {
        resource,
        request,
        query,
        manager,
        action,
    })))
}

/// The self access reviews' routes: `POST` only, and only the two kinds.
fn access_review(
    request: &ResourceRequest,
    method: &Method,
) -> Result<Option<Route>, ApiError> {
    if request.group != crate::access_review::GROUP
        || request.version != crate::access_review::VERSION
        || request.namespace.is_some()
        || request.name.is_some()
    {
        return Ok(None);
    }
    let kind = crate::access_review::kind_of(&request.resource)
        .ok_or_else(ApiError::path_not_found)?;
    if *method != Method::POST {
        return Err(ApiError::method_not_supported(
            &request.resource,
            method.as_str(),
        ));
    }
    Ok(Some(Route::AccessReview {
        kind,
        api_version: format!("{}/{}", request.group, request.version),
    }))
}

/// The action of a verb on a resource path, as `registerResourceHandlers`
/// registered it; 405 for a verb the path does not serve.
fn action(
    resource: &RegisteredResource,
    request: &ResourceRequest,
    query: &QueryParams,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Action, ApiError> {
    let info = &resource.info;
    let verb_error = |verb: &str| ApiError::method_not_supported(info.plural, verb);
    if let Some(sub) = request.subresource.as_deref() {
        if sub == "binding" && resource.strategy.has_binding_subresource() {
            if request.name.is_none() {
                return Err(ApiError::path_not_found());
            }
            return match *method {
                Method::POST => Ok(Action::Bind),
                ref other => Err(ApiError::method_not_supported(
                    &format!("{}/binding", info.plural),
                    other.as_str(),
                )),
            };
        }
        if sub == "eviction" && resource.strategy.has_eviction_subresource() {
            if request.name.is_none() {
                return Err(ApiError::path_not_found());
            }
            return match *method {
                Method::POST => Ok(Action::Evict),
                ref other => Err(ApiError::method_not_supported(
                    &format!("{}/eviction", info.plural),
                    other.as_str(),
                )),
            };
        }
        let sub = Subresource::of(info, sub)?;
        if request.name.is_none() {
            return Err(ApiError::path_not_found());
        }
        return match *method {
            Method::GET => Ok(Action::GetSubresource(sub)),
            Method::PUT => Ok(Action::UpdateSubresource(sub)),
            Method::PATCH => {
                Ok(Action::PatchSubresource(sub, patch_type_of(headers)?))
            }
            ref other => Err(verb_error(other.as_str())),
        };
    }
    let watch = request.legacy_watch || query.is_watch()?;
    match (method.clone(), request.name.is_some()) {
        (Method::GET, _) if watch => Ok(Action::Watch),
        (Method::GET, false) => Ok(Action::List),
        (Method::GET, true) => Ok(Action::Get),
        (Method::POST, false) => Ok(Action::Create),
        (Method::PUT, true) => Ok(Action::Update),
        (Method::PATCH, true) => match patch_type_of(headers)? {
            PatchType::Apply => Ok(Action::Apply),
            patch_type => Ok(Action::Patch(patch_type)),
        },
        (Method::DELETE, true) => Ok(Action::Delete),
        (Method::POST, true) => Err(verb_error("create")),
        (Method::PUT, false) => Err(verb_error("update")),
        (Method::PATCH, false) => Err(verb_error("patch")),
        (Method::DELETE, false) => Err(verb_error("deletecollection")),
        (other, _) => Err(verb_error(other.as_str())),
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
