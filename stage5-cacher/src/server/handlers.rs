//! The REST verbs of one generic resource: mirrors apiserver's `pkg/endpoints/handlers`
//! (`ListResource`, `GetResource`, `CreateResource`, `UpdateResource`, `PatchResource`,
//! `DeleteResource`) over the `rest.Storage` that `registry/generic/registry.Store` builds, with
//! the parts of each resource's strategy that matter here (`PrepareForCreate`, name validation,
//! `FillObjectMetaSystemFields`).
//!
//! One entry point, [`serve_api`], serves every `/api` and `/apis` path: it parses the path
//! ([`request_info`](crate::server::request_info)), answers discovery, finds the resource in the
//! registry and dispatches on the HTTP method:
//!
//! | Method  | Collection          | Object             |
//! |---------|---------------------|--------------------|
//! | GET     | list, or watch      | get, or watch      |
//! | POST    | create              | 405                |
//! | PUT     | 405                 | update             |
//! | PATCH   | 405                 | patch              |
//! | DELETE  | 405                 | delete             |

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;
use stage3_reflector::{ListOptions, ResourceVersionMatch, WatchOptions};

use crate::object::{Object, ResourceInfo, SelectionPredicate};
use crate::server::AppState;
use crate::server::discovery;
use crate::server::patch::{PatchType, merge_patch};
use crate::server::registry::RegisteredResource;
use crate::server::request_info::{self, ApiPath, ResourceRequest};
use crate::server::status::ApiError;
use crate::server::validation;
use crate::server::watch::serve_watch;
use crate::storage::{
    ListResult, Preconditions, StorageError, list_prefix, object_key, parse_resource_version,
};

/// How often a create with `generateName` retries a name that already exists (upstream retries
/// since 1.30).
const GENERATE_NAME_ATTEMPTS: usize = 8;

/// The query string as name/value pairs (the first value of a name wins).
#[derive(Debug, Default)]
pub struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    /// Parses a URI's query; a malformed one is 400.
    pub fn from_uri(uri: &Uri) -> Result<QueryParams, ApiError> {
        Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map(|Query(pairs)| QueryParams(pairs))
            .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))
    }

    /// The value of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `name`, or `""`.
    pub fn str(&self, name: &str) -> &str {
        self.get(name).unwrap_or("")
    }

    /// A boolean parameter (`true`/`1`/`false`/`0`; absent or empty is `None`), or 400.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.get(name) {
            None | Some("") => Ok(None),
            Some("true" | "1" | "True") => Ok(Some(true)),
            Some("false" | "0" | "False") => Ok(Some(false)),
            Some(other) => Err(ApiError::bad_request(format!(
                "invalid value {other:?} for query parameter {name:?}: must be true or false"
            ))),
        }
    }

    fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, ApiError> {
        match self.get(name) {
            None | Some("") => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid value {text:?} for query parameter {name:?}: must be a non-negative integer"
                ))
            }),
        }
    }

    /// Whether the request asks for a watch (`watch=true` or `watch=1`).
    pub fn is_watch(&self) -> Result<bool, ApiError> {
        Ok(self.bool("watch")?.unwrap_or(false))
    }
}

/// The entry point of every `/api` and `/apis` request.
pub async fn serve_api(State(state): State<Arc<AppState>>, request: Request) -> Response {
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
        // Mirrors `--shutdown-send-retry-after`: new requests during shutdown are told to retry.
        return Err(ApiError::shutting_down());
    }
    let path = request_info::parse(uri.path()).ok_or_else(ApiError::path_not_found)?;
    let request = match path {
        ApiPath::Resource(request) => request,
        discovery_path => {
            if method != Method::GET {
                return Err(ApiError::method_not_supported("discovery", method.as_str()));
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
    let resource = state
        .registry
        .find(&request.group, &request.version, &request.resource)
        .ok_or_else(ApiError::path_not_found)?;
    if request.subresource.is_some() {
        return Err(ApiError::path_not_found());
    }
    // A cluster-scoped resource has no namespaced paths.
    if !resource.info.namespaced && request.namespace.is_some() {
        return Err(ApiError::path_not_found());
    }
    let query = QueryParams::from_uri(uri)?;
    let info = &resource.info;
    let verb_error = |verb: &str| Err(ApiError::method_not_supported(info.plural, verb));
    let namespace = request.namespace.as_deref();
    let watch = request.legacy_watch || query.is_watch()?;
    match (method.clone(), request.name.as_deref()) {
        (Method::GET, _) if watch => {
            let (options, predicate) = watch_options(info, &query, request.name.as_deref())?;
            serve_watch(state, resource, namespace, options, predicate).await
        }
        (Method::GET, None) => list(resource, namespace, &query).await,
        (Method::GET, Some(name)) => get(resource, namespace, name).await,
        (Method::POST, None) => {
            require_json(headers)?;
            let body = read_body(state, headers, body).await?;
            create(resource, &request, &body).await
        }
        (Method::PUT, Some(name)) => {
            require_json(headers)?;
            let body = read_body(state, headers, body).await?;
            update(resource, namespace, name, &body).await
        }
        (Method::PATCH, Some(name)) => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let patch_type = PatchType::from_content_type(content_type)?;
            let body = read_body(state, headers, body).await?;
            patch(resource, namespace, name, patch_type, &body).await
        }
        (Method::DELETE, Some(name)) => {
            let body = read_body(state, headers, body).await?;
            delete(resource, namespace, name, &body).await
        }
        (Method::POST, Some(_)) => verb_error("create"),
        (Method::PUT, None) => verb_error("update"),
        (Method::PATCH, None) => verb_error("patch"),
        (Method::DELETE, None) => verb_error("deletecollection"),
        (other, _) => verb_error(other.as_str()),
    }
}

/// Mirrors the decoder negotiation of `CreateResource`/`UpdateResource`: only JSON bodies are
/// understood (a missing `Content-Type` is taken as JSON). Protobuf, which client-go's typed
/// clients send (`kubectl create namespace`, `kubectl create configmap`), and YAML are 415.
fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if media.is_empty() || media.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(ApiError::unsupported_media_type(
            content_type,
            &["application/json"],
        ))
    }
}

/// Reads a request body up to the server's limit: 413 `Status` beyond it (instead of axum's plain
/// text 413), 400 if the body cannot be read.
async fn read_body(state: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    let limit = state.body_limit;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ApiError::too_large(limit));
    }
    axum::body::to_bytes(body, limit).await.map_err(|error| {
        let too_large = std::error::Error::source(&error)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if too_large {
            ApiError::too_large(limit)
        } else {
            ApiError::bad_request(format!("cannot read the request body: {error}"))
        }
    })
}

fn json_response(code: StatusCode, obj: &Object) -> Response {
    let body = serde_json::to_vec(obj).unwrap_or_default();
    let mut response = (code, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn parse_match(text: &str) -> Result<Option<ResourceVersionMatch>, ApiError> {
    match text {
        "" => Ok(None),
        "NotOlderThan" => Ok(Some(ResourceVersionMatch::NotOlderThan)),
        "Exact" => Ok(Some(ResourceVersionMatch::Exact)),
        other => Err(ApiError::invalid(
            "ListOptions.meta.k8s.io",
            "",
            "resourceVersionMatch",
            &format!(
                "Unsupported value: {other:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
            ),
        )),
    }
}

fn invalid_options(field: &str, message: &str) -> ApiError {
    ApiError::invalid("ListOptions.meta.k8s.io", "", field, message)
}

fn predicate(
    info: &ResourceInfo,
    labels: &str,
    fields: &str,
) -> Result<SelectionPredicate, ApiError> {
    SelectionPredicate::parse(info, labels, fields)
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

// ANCHOR: list_options
/// Mirrors `ListResource` up to the storage call: reads `metav1.ListOptions` from the query and
/// validates them like `ValidateListOptions`. A non-numeric resourceVersion is 400 (upstream:
/// 500); `resourceVersionMatch` needs a resourceVersion, and `Exact` needs one other than `0`.
/// The storage then gives each resourceVersion its meaning: `""` the newest state (from etcd, a
/// consistent read), `"0"` any state (the watch cache answers at once), `N` not older than `N`,
/// `N` with `Exact` exactly `N` (410 if compacted), and a continue token pins every page to the
/// first page's revision.
pub fn list_options(
    info: &ResourceInfo,
    query: &QueryParams,
) -> Result<(ListOptions, SelectionPredicate), ApiError> {
    let resource_version = query.str("resourceVersion").to_string();
    parse_resource_version(&resource_version)?;
    let resource_version_match = parse_match(query.str("resourceVersionMatch"))?;
    let continue_token = query.str("continue").to_string();
    let limit: i64 = query.number("limit")?.unwrap_or(0);
    if resource_version_match.is_some() {
        if resource_version.is_empty() {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !continue_token.is_empty() {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if resource_version_match == Some(ResourceVersionMatch::Exact) && resource_version == "0" {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if query.bool("sendInitialEvents")?.is_some() {
        return Err(invalid_options(
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for list",
        ));
    }
    let label_selector = query.str("labelSelector").to_string();
    let field_selector = query.str("fieldSelector").to_string();
    let predicate = predicate(info, &label_selector, &field_selector)?;
    let options = ListOptions {
        resource_version,
        resource_version_match,
        // A negative limit means no limit, as upstream ignores it.
        limit: u32::try_from(limit.max(0)).unwrap_or(u32::MAX),
        continue_token,
        label_selector,
        field_selector,
    };
    Ok((options, predicate))
}
// ANCHOR_END: list_options

/// Mirrors `ListResource`: `{kind: PodList, apiVersion, metadata: {resourceVersion, continue,
/// remainingItemCount}, items}`. A compacted resourceVersion or continue token is 410 Expired.
async fn list(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    query: &QueryParams,
) -> Result<Response, ApiError> {
    let (options, predicate) = list_options(&resource.info, query)?;
    let prefix = list_prefix(&resource.info, namespace);
    let result = resource
        .dyn_storage
        .get_list(prefix, options, predicate)
        .await?;
    Ok(list_response(&resource.info, &result))
}

/// Encodes a list, items written straight from the shared objects.
pub fn list_response(info: &ResourceInfo, result: &ListResult) -> Response {
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "resourceVersion".into(),
        Value::String(result.resource_version.to_string()),
    );
    if !result.continue_token.is_empty() {
        metadata.insert(
            "continue".into(),
            Value::String(result.continue_token.clone()),
        );
    }
    if let Some(count) = result.remaining_item_count {
        metadata.insert("remainingItemCount".into(), Value::from(count));
    }
    let list_type = info.list_type_meta();
    let mut body = Vec::with_capacity(128 + result.items.len() * 512);
    body.extend_from_slice(b"{\"kind\":");
    push_json(&mut body, &list_type.kind);
    body.extend_from_slice(b",\"apiVersion\":");
    push_json(&mut body, &list_type.api_version);
    body.extend_from_slice(b",\"metadata\":");
    push_json(&mut body, &metadata);
    body.extend_from_slice(b",\"items\":[");
    for (i, item) in result.items.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        push_json(&mut body, item.as_ref());
    }
    body.extend_from_slice(b"]}");
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn push_json<T: serde::Serialize + ?Sized>(buffer: &mut Vec<u8>, value: &T) {
    if serde_json::to_writer(&mut *buffer, value).is_err() {
        buffer.extend_from_slice(b"null");
    }
}

/// Reads the watch options (`ListOptions` with `watch=true`) and validates them like
/// `ValidateListOptions`: `sendInitialEvents` needs `allowWatchBookmarks` and
/// `resourceVersionMatch=NotOlderThan`; `resourceVersionMatch` needs `sendInitialEvents`. A watch
/// of one object (`/pods/web-0?watch=1`) is a watch with `metadata.name=web-0` added to the field
/// selector, as upstream does.
pub fn watch_options(
    info: &ResourceInfo,
    query: &QueryParams,
    name: Option<&str>,
) -> Result<(WatchOptions, SelectionPredicate), ApiError> {
    let resource_version = query.str("resourceVersion").to_string();
    parse_resource_version(&resource_version)?;
    let resource_version_match = parse_match(query.str("resourceVersionMatch"))?;
    let allow_watch_bookmarks = query.bool("allowWatchBookmarks")?.unwrap_or(false);
    let send_initial_events = query.bool("sendInitialEvents")?;
    let timeout_seconds: Option<u32> = query.number("timeoutSeconds")?;
    match send_initial_events {
        Some(_) => {
            if resource_version_match != Some(ResourceVersionMatch::NotOlderThan) {
                return Err(invalid_options(
                    "sendInitialEvents",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if !allow_watch_bookmarks {
                return Err(invalid_options(
                    "sendInitialEvents",
                    "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
                ));
            }
        }
        None if resource_version_match.is_some() => {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        None => {}
    }
    let label_selector = query.str("labelSelector").to_string();
    let mut field_selector = query.str("fieldSelector").to_string();
    if let Some(name) = name {
        let by_name = format!("metadata.name={name}");
        field_selector = if field_selector.is_empty() {
            by_name
        } else {
            format!("{field_selector},{by_name}")
        };
    }
    let predicate = predicate(info, &label_selector, &field_selector)?;
    Ok((
        WatchOptions {
            resource_version,
            resource_version_match,
            timeout_seconds,
            allow_watch_bookmarks,
            send_initial_events: send_initial_events.unwrap_or(false),
            label_selector,
            field_selector,
        },
        predicate,
    ))
}

/// Mirrors `GetResource`.
async fn get(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
) -> Result<Response, ApiError> {
    let key = object_key(&resource.info, namespace, name);
    let obj = resource.dyn_storage.get(key).await?;
    Ok(json_response(StatusCode::OK, &obj))
}

/// Decodes a body as an object of `info`'s kind: 400 for bad JSON or another kind.
fn decode_body(info: &ResourceInfo, body: &[u8]) -> Result<Object, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!("the body of the request could not be decoded: {e}"))
    })?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    let mut obj: Object = serde_json::from_value(value).map_err(|e| {
        ApiError::bad_request(format!("the body of the request could not be decoded: {e}"))
    })?;
    check_type(info, &obj)?;
    obj.types = Some(info.type_meta());
    Ok(obj)
}

fn check_type(info: &ResourceInfo, obj: &Object) -> Result<(), ApiError> {
    if let Some(types) = &obj.types {
        if !types.kind.is_empty() && types.kind != info.kind {
            return Err(ApiError::bad_request(format!(
                "the kind of the object ({}) does not match the expected kind ({})",
                types.kind, info.kind
            )));
        }
        if !types.api_version.is_empty() && types.api_version != info.api_version() {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({}) does not match the expected API version ({})",
                types.api_version,
                info.api_version()
            )));
        }
    }
    Ok(())
}

/// Mirrors the namespace check of `CreateResource`/`UpdateResource` (`EnsureObjectNamespaceMatchesRequestNamespace`):
/// the body's namespace, if set, must be the URL's; the object gets the URL's namespace
/// (cluster-scoped objects none).
fn ensure_namespace(
    info: &ResourceInfo,
    obj: &mut Object,
    url_ns: Option<&str>,
) -> Result<(), ApiError> {
    if !info.namespaced {
        obj.metadata.namespace = None;
        return Ok(());
    }
    let url_ns = url_ns.unwrap_or("");
    match obj.metadata.namespace.as_deref() {
        Some(ns) if !ns.is_empty() && ns != url_ns => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => {
            obj.metadata.namespace = Some(url_ns.to_string());
            Ok(())
        }
    }
}

/// Mirrors `CreateResource` → `Store.Create`: `BeforeCreate` (namespace, generateName, name
/// validation, `FillObjectMetaSystemFields`), then the storage's create. Answers 201 with the
/// stored object.
async fn create(
    resource: &RegisteredResource,
    request: &ResourceRequest,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = &resource.info;
    let namespace = request.namespace.as_deref();
    if info.namespaced && namespace.is_none() {
        return Err(ApiError::method_not_supported(info.plural, "create"));
    }
    let mut obj = decode_body(info, body)?;
    ensure_namespace(info, &mut obj, namespace)?;
    let generate = obj
        .metadata
        .generate_name
        .clone()
        .filter(|g| !g.is_empty() && obj.name().is_empty());
    if obj.name().is_empty() && generate.is_none() {
        return Err(ApiError::invalid(
            info.kind,
            "",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    obj.metadata.uid = Some(validation::new_uid());
    obj.metadata.creation_timestamp = Some(validation::now());
    obj.metadata.deletion_timestamp = None;
    obj.metadata.generation = Some(1);
    let attempts = if generate.is_some() {
        GENERATE_NAME_ATTEMPTS
    } else {
        1
    };
    let mut last_error = None;
    for _ in 0..attempts {
        if let Some(base) = &generate {
            obj.metadata.name = Some(validation::generate_name(base));
        }
        let name = obj.name().to_string();
        if let Some(message) = validation::dns1123_subdomain_error(&name) {
            return Err(ApiError::invalid(
                info.kind,
                &name,
                "metadata.name",
                &format!("Invalid value: {name:?}: {message}"),
            ));
        }
        let key = object_key(info, namespace, &name);
        match resource.dyn_storage.create(key, obj.clone()).await {
            Ok(created) => return Ok(json_response(StatusCode::CREATED, &created)),
            Err(error @ StorageError::AlreadyExists { .. }) if generate.is_some() => {
                last_error = Some(error);
            }
            Err(error) => return Err(error.into()),
        }
    }
    Err(last_error
        .map(ApiError::from)
        .unwrap_or_else(|| ApiError::bad_request("create failed")))
}

fn conflict(info: &ResourceInfo, name: &str) -> StorageError {
    StorageError::Conflict {
        plural: info.plural.to_string(),
        name: name.to_string(),
        message: "the object has been modified; please apply your changes to the latest version and try again".into(),
    }
}

/// Mirrors `UpdateResource` → `Store.Update` → `GuaranteedUpdate`: the body replaces the object.
/// A resourceVersion in the body is a precondition (stale → 409 Conflict); without one the
/// update is unconditional (`AllowUnconditionalUpdate`). uid and creationTimestamp are kept.
/// Updating a missing object is 404 (no create-on-update).
async fn update(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = resource.info.clone();
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
    let key = object_key(&info, namespace, name);
    let updated = resource
        .dyn_storage
        .guaranteed_update(
            key,
            Preconditions::default(),
            Box::new(move |current: &Object| {
                if !wanted_rv.is_empty() && wanted_rv != current.resource_version() {
                    return Err(conflict(&info, current.name()));
                }
                if let Some(uid) = obj.metadata.uid.as_deref()
                    && !uid.is_empty()
                    && Some(uid) != current.metadata.uid.as_deref()
                {
                    return Err(StorageError::Conflict {
                        plural: info.plural.to_string(),
                        name: current.name().to_string(),
                        message: format!(
                            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                            current.metadata.uid.as_deref().unwrap_or("")
                        ),
                    });
                }
                let mut next = obj.clone();
                next.metadata.uid = current.metadata.uid.clone();
                next.metadata.creation_timestamp = current.metadata.creation_timestamp.clone();
                next.metadata.resource_version = None;
                Ok(next)
            }),
        )
        .await?;
    Ok(json_response(StatusCode::OK, &updated))
}

/// Mirrors `PatchResource` for merge patches: inside `GuaranteedUpdate`, the current object is
/// encoded, patched (RFC 7386) and decoded again. A resourceVersion in the patch is a
/// precondition; name and namespace cannot change (422), nor can uid (409).
async fn patch(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    _patch_type: PatchType,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = resource.info.clone();
    let patch: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!("the body of the request could not be decoded: {e}"))
    })?;
    if !patch.is_object() {
        return Err(ApiError::bad_request("a merge patch must be a JSON object"));
    }
    let key = object_key(&info, namespace, name);
    let patched = resource
        .dyn_storage
        .guaranteed_update(
            key,
            Preconditions::default(),
            Box::new(move |current: &Object| {
                let mut value = serde_json::to_value(current)
                    .map_err(|e| StorageError::Internal(e.to_string()))?;
                merge_patch(&mut value, &patch);
                let mut next: Object = serde_json::from_value(value).map_err(|e| {
                    StorageError::BadRequest(format!("the patched object is not valid: {e}"))
                })?;
                check_type(&info, &next)
                    .map_err(|e| StorageError::BadRequest(e.status.message.unwrap_or_default()))?;
                next.types = Some(info.type_meta());
                let immutable = |field: &str| StorageError::Invalid {
                    plural: info.plural.to_string(),
                    name: current.name().to_string(),
                    message: format!("{field}: Invalid value: field is immutable"),
                };
                if next.name() != current.name() {
                    return Err(immutable("metadata.name"));
                }
                if next.metadata.namespace != current.metadata.namespace {
                    return Err(immutable("metadata.namespace"));
                }
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
                next.metadata.resource_version = None;
                Ok(next)
            }),
        )
        .await?;
    Ok(json_response(StatusCode::OK, &patched))
}

/// Mirrors `DeleteResource` → `Store.Delete`: optional `DeleteOptions` in the body with
/// `preconditions` (uid, resourceVersion; a mismatch is 409). Deletion is immediate (no grace
/// period, no finalizers), and the answer is the object's last state with 200, like
/// `ReturnDeletedObject` stores; kubectl and kube-client accept it as they accept a `Status`.
async fn delete(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let mut preconditions = Preconditions::default();
    if !body.iter().all(u8::is_ascii_whitespace) {
        let options: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("the DeleteOptions could not be decoded: {e}"))
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
    let key = object_key(&resource.info, namespace, name);
    let deleted = resource.dyn_storage.delete(key, preconditions).await?;
    Ok(json_response(StatusCode::OK, &deleted))
}
