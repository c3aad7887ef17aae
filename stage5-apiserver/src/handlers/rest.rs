//! What the verbs share: mirrors apiserver's `pkg/endpoints/handlers/rest.go` (the
//! request scope's decoding and content negotiation, query parameters, the JSON
//! answer).

use apimachinery::apis::meta::v1::ResourceVersionMatch;
use axum::body::Body;
use axum::extract::Query;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use crate::app_state::AppState;
use crate::registry::RegisteredResource;
use crate::status::ApiError;
use stage5_storage::StorageError;
use stage5_storage::{
    Object, ResourceInfo, SelectionPredicate, parse_resource_version,
};

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

    /// A boolean parameter (`true`/`1`/`false`/`0`; absent or empty is `None`), or
    /// 400.
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

    pub(crate) fn number<T: std::str::FromStr>(
        &self,
        name: &str,
    ) -> Result<Option<T>, ApiError> {
        match self.get(name) {
            None | Some("") => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid value {text:?} for query parameter {name:?}: must be a non-negative integer"
                ))
            }),
        }
    }

    /// Every value of a parameter that may repeat (`dryRun=All&dryRun=All`).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Whether the request asks for a watch (`watch=true` or `watch=1`).
    pub fn is_watch(&self) -> Result<bool, ApiError> {
        Ok(self.bool("watch")?.unwrap_or(false))
    }
}

/// The media types a create, update or delete body may have.
pub(crate) const BODY_MEDIA_TYPES: &[&str] = &[
    "application/json",
    apimachinery::runtime::serializer::protobuf::CONTENT_TYPE,
];

/// Mirrors the decoder negotiation of `CreateResource`/`UpdateResource`
/// (`negotiation.NegotiateInputSerializer`) and the decode after it: a JSON body
/// (or one without a `Content-Type`) is returned as it is; a protobuf body, which
/// client-go's typed clients send (`kubectl create namespace`, `kubectl create
/// deployment`), is decoded into the same JSON ([`crate::protobuf`]), so the rest
/// of the request cannot tell the two apart. Other media types (YAML) are 415; a
/// protobuf body that does not decode is 400, worded as `transformDecodeError`
/// words it. `api_version` and `kind` are the endpoint's, for an envelope that
/// names neither.
pub(crate) async fn read_object_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
    api_version: &str,
    kind: &str,
) -> Result<Bytes, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    let protobuf = media.eq_ignore_ascii_case(
        apimachinery::runtime::serializer::protobuf::CONTENT_TYPE,
    );
    if !(media.is_empty()
        || media.eq_ignore_ascii_case("application/json")
        || protobuf)
    {
        return Err(ApiError::unsupported_media_type(
            content_type,
            BODY_MEDIA_TYPES,
        ));
    }
    let body = read_body(state, headers, body).await?;
    if !protobuf {
        return Ok(body);
    }
    let object = apimachinery::runtime::serializer::protobuf::decode(
        &body,
        api_version,
        kind,
    )
    .map_err(|error| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {error}"
        ))
    })?;
    Ok(Bytes::from(serde_json::to_vec(&object).unwrap_or_default()))
}

/// Reads a request body up to the server's limit: 413 `Status` beyond it (instead of
/// axum's plain text 413), 400 if the body cannot be read.
pub(crate) async fn read_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
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

pub(crate) fn json_response(code: StatusCode, obj: &Object) -> Response {
    let body = serde_json::to_vec(obj).unwrap_or_default();
    let mut response = (code, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(crate) fn parse_match(
    text: &str,
) -> Result<Option<ResourceVersionMatch>, ApiError> {
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

pub(crate) fn invalid_options(field: &str, message: &str) -> ApiError {
    ApiError::invalid("ListOptions.meta.k8s.io", "", field, message)
}

pub(crate) fn predicate(
    info: &ResourceInfo,
    labels: &str,
    fields: &str,
) -> Result<SelectionPredicate, ApiError> {
    SelectionPredicate::parse(info, labels, fields)
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

/// Decodes a body as an object of `info`'s kind: 400 for bad JSON or another kind.
pub(crate) fn decode_body(
    info: &ResourceInfo,
    body: &[u8],
) -> Result<Object, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request could not be decoded: {e}"
        ))
    })?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    let mut obj: Object = serde_json::from_value(value).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request could not be decoded: {e}"
        ))
    })?;
    check_type(info, &obj)?;
    obj.types = Some(info.type_meta());
    // Upstream's decoder defaults what it decodes.
    crate::registry::strategy_for(info).set_defaults(&mut obj);
    Ok(obj)
}

pub(crate) fn check_type(info: &ResourceInfo, obj: &Object) -> Result<(), ApiError> {
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

pub(crate) fn conflict(info: &ResourceInfo, name: &str) -> StorageError {
    StorageError::Conflict {
        plural: info.qualified_resource(),
        name: name.to_string(),
        message: "the object has been modified; please apply your changes to the latest version and try again".into(),
    }
}

/// A 422 decided inside a guaranteed update, where only a `StorageError` can leave
/// the update function and that error cannot carry several causes. The function
/// keeps the real answer here and aborts with a stand-in; the handler answers with
/// the kept one ([`Rejection::or`]). Each attempt of the function starts clean.
#[derive(Clone, Default)]
pub(crate) struct Rejection(std::sync::Arc<parking_lot::Mutex<Option<ApiError>>>);

impl Rejection {
    /// Keeps `error` (replacing any earlier attempt's) and returns the stand-in
    /// that aborts the update.
    pub(crate) fn reject(&self, error: ApiError) -> StorageError {
        let stand_in = StorageError::Invalid {
            plural: String::new(),
            name: String::new(),
            message: error.status.message.clone().unwrap_or_default(),
        };
        *self.0.lock() = Some(error);
        stand_in
    }

    /// Forgets an earlier attempt's rejection (the update function runs again
    /// after a conflict).
    pub(crate) fn clear(&self) {
        *self.0.lock() = None;
    }

    /// The kept rejection if the update was aborted by one, else `error`.
    pub(crate) fn or(&self, error: StorageError) -> ApiError {
        match self.0.lock().take() {
            Some(rejected) if matches!(error, StorageError::Invalid { .. }) => {
                rejected
            }
            _ => ApiError::from(error),
        }
    }
}

/// A guaranteed update whose update function may reject with an [`ApiError`]
/// (a 422 from validation, a failed patch): the function gets the current object
/// and the [`Rejection`] to reject through, each attempt starting clean; the
/// answer is the stored object, or the rejection, or the storage's error.
pub(crate) async fn update_or_reject<F>(
    resource: &RegisteredResource,
    key: String,
    update: F,
) -> Result<std::sync::Arc<Object>, ApiError>
where
    F: FnMut(&Object, &Rejection) -> Result<Object, StorageError> + Send + 'static,
{
    update_or_create_or_reject(resource, key, false, update).await
}

/// Mirrors the retry of `UpdateResource` and `PatchResource` on
/// `isTooLargeError`: an update too large for etcd
/// ([`StorageError::RequestTooLarge`]) is tried once more without
/// `managedFields`, which can be large and are safe to drop; the second
/// refusal is the answer.
pub(crate) async fn update_or_reject_dropping_managed_fields<F>(
    resource: &RegisteredResource,
    key: String,
    update: F,
) -> Result<std::sync::Arc<Object>, ApiError>
where
    F: FnMut(&Object, &Rejection) -> Result<Object, StorageError>
        + Clone
        + Send
        + 'static,
{
    match update_or_reject(resource, key.clone(), update.clone()).await {
        Err(error) if is_too_large_error(&error) => {
            let mut update = update;
            update_or_reject(resource, key, move |current, rejected| {
                let mut next = update(current, rejected)?;
                next.metadata.managed_fields = None;
                Ok(next)
            })
            .await
        }
        other => other,
    }
}

/// Mirrors `isTooLargeError`: the answer is etcd's refusal of a write too large.
pub(crate) fn is_too_large_error(error: &ApiError) -> bool {
    let too_large = StorageError::RequestTooLarge.to_status();
    error.status.code == too_large.code && error.status.message == too_large.message
}

/// [`update_or_reject`] with preconditions on the stored object (a uid, a
/// resourceVersion): 409 when they do not hold.
pub(crate) async fn update_or_reject_with<F>(
    resource: &RegisteredResource,
    key: String,
    preconditions: stage5_storage::Preconditions,
    update: F,
) -> Result<std::sync::Arc<Object>, ApiError>
where
    F: FnMut(&Object, &Rejection) -> Result<Object, StorageError> + Send + 'static,
{
    guaranteed_update(resource, key, false, preconditions, update).await
}

/// [`update_or_reject`], and with `ignore_not_found` a missing object is
/// created: `update` gets an empty object of the type (no uid), as
/// `GuaranteedUpdate` gives a patch that may create (server-side apply).
pub(crate) async fn update_or_create_or_reject<F>(
    resource: &RegisteredResource,
    key: String,
    ignore_not_found: bool,
    update: F,
) -> Result<std::sync::Arc<Object>, ApiError>
where
    F: FnMut(&Object, &Rejection) -> Result<Object, StorageError> + Send + 'static,
{
    guaranteed_update(
        resource,
        key,
        ignore_not_found,
        stage5_storage::Preconditions::default(),
        update,
    )
    .await
}

async fn guaranteed_update<F>(
    resource: &RegisteredResource,
    key: String,
    ignore_not_found: bool,
    preconditions: stage5_storage::Preconditions,
    mut update: F,
) -> Result<std::sync::Arc<Object>, ApiError>
where
    F: FnMut(&Object, &Rejection) -> Result<Object, StorageError> + Send + 'static,
{
    let rejection = Rejection::default();
    let rejected = rejection.clone();
    let stored = resource
        .dyn_storage
        .guaranteed_update_with(
            key.clone(),
            ignore_not_found,
            preconditions,
            Box::new(move |current: &Object| {
                rejected.clear();
                update(current, &rejected)
            }),
        )
        .await
        .map_err(|error| rejection.or(error))?;
    crate::registry::generic::registry::delete_if_finalized(resource, key, stored)
        .await
        .map_err(ApiError::from)
}

/// The end of an update function (`BeforeUpdate`): `next` keeps `current`'s
/// creation time, is validated as an update of it (a rejection is its 422), and
/// goes to storage without a resourceVersion.
pub(crate) fn finish_update(
    info: &ResourceInfo,
    mut next: Object,
    current: &Object,
    rejected: &Rejection,
) -> Result<Object, StorageError> {
    // `BeforeUpdate`: what the server set stays, whatever the client sent.
    next.metadata.creation_timestamp = current.metadata.creation_timestamp.clone();
    next.metadata.deletion_timestamp = current.metadata.deletion_timestamp.clone();
    next.metadata.deletion_grace_period_seconds =
        current.metadata.deletion_grace_period_seconds;
    crate::registry::strategy_for(info).prepare_for_update(&mut next, current);
    crate::registry::rest::omit_empty_metadata(&mut next.metadata);
    crate::registry::rest::validate_update(info, &next, current)
        .map_err(|error| rejected.reject(error))?;
    next.metadata.resource_version = None;
    Ok(next)
}

/// The checks of a patched or applied object against the live one, as
/// upstream's store and `rest.BeforeUpdate` make them after `applyPatch`:
/// - a resourceVersion it carries is a precondition (400 if it does not parse,
///   409 if it is not the live one's); none is an unconditional update
///   (`AllowUnconditionalUpdate`), so it gets the live one's;
/// - a missing uid is the live one's (`BeforeUpdate`'s "use the existing UID if
///   none is provided"); a different one is left for
///   [`validate_update`](crate::registry::rest::validate_update) to answer 422,
///   `field is immutable`.
pub(crate) fn check_version_and_fill_uid(
    info: &ResourceInfo,
    next: &mut Object,
    current: &Object,
) -> Result<(), StorageError> {
    if next.resource_version().is_empty() {
        next.metadata.resource_version = current.metadata.resource_version.clone();
    } else if next.resource_version() != current.resource_version() {
        parse_resource_version(next.resource_version())?;
        return Err(conflict(info, current.name()));
    }
    if next.metadata.uid.as_deref().unwrap_or("").is_empty() {
        next.metadata.uid = current.metadata.uid.clone();
    }
    Ok(())
}

/// Mirrors `checkName` (`handlers/rest.go`), which `applyPatch` runs on a
/// patched or applied object: its name must be the URL's, and a namespace it
/// names must be the URL's, both 400. An object without a namespace gets the
/// URL's, as `rest.BeforeUpdate`'s `ValidNamespace` gives it.
pub(crate) fn check_name(
    info: &ResourceInfo,
    obj: &mut Object,
    namespace: Option<&str>,
    name: &str,
) -> Result<(), ApiError> {
    if obj.name().is_empty() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name} based on URL) was undeterminable: name must be provided"
        )));
    }
    if obj.name() != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({name})",
            obj.name()
        )));
    }
    if !info.namespaced {
        obj.metadata.namespace = None;
        return Ok(());
    }
    let url_ns = namespace.unwrap_or("");
    match obj.metadata.namespace.as_deref() {
        Some(ns) if !ns.is_empty() && ns != url_ns => {
            Err(ApiError::bad_request(format!(
                "the namespace of the object ({ns}) does not match the namespace on the URL ({url_ns})"
            )))
        }
        _ => {
            obj.metadata.namespace = Some(url_ns.to_string());
            Ok(())
        }
    }
}

/// The end of an update or a patch: the manager's changed fields recorded as an
/// `Update` entry (`FieldManager.UpdateNoErrors`), then [`finish_update`].
pub(crate) fn record_and_finish(
    info: &ResourceInfo,
    mut next: Object,
    current: &Object,
    manager: &str,
    rejected: &Rejection,
) -> Result<Object, StorageError> {
    crate::fieldmanager::update_no_errors(
        info,
        Some(current),
        &mut next,
        manager,
        None,
    );
    finish_update(info, next, current, rejected)
}

/// How often a create with `generateName` retries a name that already exists
/// (upstream retries since 1.30).
pub(crate) const GENERATE_NAME_ATTEMPTS: usize = 8;

/// Mirrors the namespace check of `CreateResource`/`UpdateResource`
/// (`EnsureObjectNamespaceMatchesRequestNamespace`): the body's namespace, if set,
/// must be the URL's; the object gets the URL's namespace (cluster-scoped objects
/// none).
pub(crate) fn ensure_namespace(
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
