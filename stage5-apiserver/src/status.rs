//! Every error as a Kubernetes `Status`: mirrors apiserver's
//! `pkg/endpoints/handlers/responsewriters/status.go` (`ErrorToAPIStatus`,
//! `WriteObjectNegotiated` of a `*metav1.Status`) and the `apierrors.New*`
//! constructors the handlers use.
//!
//! Storage errors already know their code and reason ([`StorageError::to_status`]);
//! this module adds the errors only the HTTP edge makes (405, 413, 415, 401, unknown
//! paths) and writes them with `Content-Type: application/json` and, for 429,
//! `Retry-After`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Status, StatusCause, StatusDetails,
};

use apimachinery::runtime::serializer::streaming::encode_status;
use stage5_storage::StorageError;

/// An error answer: a `Status` and the HTTP details that go with it.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// The body (boxed: a `Status` is large and errors travel in every `Result`).
    pub status: Box<Status>,
}

fn failure(
    code: u16,
    reason: &str,
    message: String,
    details: Option<StatusDetails>,
) -> ApiError {
    ApiError {
        status: Box::new(Status {
            code: Some(i32::from(code)),
            reason: Some(reason.to_string()),
            message: Some(message),
            status: Some("Failure".to_string()),
            details,
            metadata: Default::default(),
        }),
    }
}

impl ApiError {
    /// The HTTP code.
    pub fn code(&self) -> u16 {
        self.status
            .code
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(500)
    }

    /// 400 BadRequest (`apierrors.NewBadRequest`).
    pub fn bad_request(message: impl Into<String>) -> Self {
        failure(400, "BadRequest", message.into(), None)
    }

    /// 500 for an error that is not a `Status`: mirrors `ErrorToAPIStatus`'s
    /// default branch (no reason, `StatusReasonUnknown`, and the error's text),
    /// e.g. a strategic merge patch with an unknown `$patch` directive.
    pub fn unknown(message: impl Into<String>) -> Self {
        let mut error = failure(500, "", message.into(), None);
        error.status.reason = None;
        error
    }

    /// 401 Unauthorized, as the authentication filter answers (`Unauthorized`).
    pub fn unauthorized() -> Self {
        failure(401, "Unauthorized", "Unauthorized".into(), None)
    }

    /// 429 while the server shuts down (`WithRetryAfter`: "The apiserver is shutting
    /// down").
    pub fn shutting_down() -> Self {
        failure(
            429,
            "TooManyRequests",
            "The apiserver is shutting down, please try again later.".into(),
            Some(StatusDetails {
                retry_after_seconds: Some(1),
                ..StatusDetails::default()
            }),
        )
    }

    /// 404 for a path this server does not serve (`NotFoundHandler`).
    pub fn path_not_found() -> Self {
        failure(
            404,
            "NotFound",
            "the server could not find the requested resource".into(),
            Some(StatusDetails::default()),
        )
    }

    /// 405 MethodNotAllowed (`apierrors.NewMethodNotSupported`).
    pub fn method_not_supported(resource: &str, verb: &str) -> Self {
        failure(
            405,
            "MethodNotAllowed",
            format!("{verb} is not supported on resources of kind {resource:?}"),
            Some(StatusDetails {
                kind: Some(resource.to_string()),
                ..StatusDetails::default()
            }),
        )
    }

    /// 413 RequestEntityTooLarge (`apierrors.NewRequestEntityTooLargeError`).
    pub fn too_large(limit: usize) -> Self {
        Self::request_entity_too_large(format!("limit is {limit}"))
    }

    /// 413 RequestEntityTooLarge with upstream's prefix before `message`
    /// (`apierrors.NewRequestEntityTooLargeError`).
    pub fn request_entity_too_large(message: impl std::fmt::Display) -> Self {
        failure(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: {message}"),
            None,
        )
    }

    /// 403 Forbidden (`apierrors.NewForbidden`): `pods "p" is forbidden: {reason}`,
    /// the resource qualified by its group.
    pub fn forbidden(group: &str, resource: &str, name: &str, reason: &str) -> Self {
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let message = if name.is_empty() {
            format!("{qualified} is forbidden: {reason}")
        } else {
            format!("{qualified} {name:?} is forbidden: {reason}")
        };
        let some = |value: &str| (!value.is_empty()).then(|| value.to_string());
        failure(
            403,
            "Forbidden",
            message,
            Some(StatusDetails {
                name: some(name),
                group: some(group),
                kind: some(resource),
                ..StatusDetails::default()
            }),
        )
    }

    /// 429 TooManyRequests (`apierrors.NewTooManyRequests`) with the causes
    /// the eviction storage adds: try again after `retry_after` seconds.
    pub fn too_many_requests(
        message: &str,
        retry_after: i32,
        causes: Vec<StatusCause>,
    ) -> Self {
        failure(
            429,
            "TooManyRequests",
            message.to_string(),
            Some(StatusDetails {
                retry_after_seconds: Some(retry_after),
                causes: Some(causes),
                ..StatusDetails::default()
            }),
        )
    }

    /// 504 Timeout (`apierrors.NewTimeoutError`).
    pub fn timeout(message: &str, retry_after: i32) -> Self {
        failure(
            504,
            "Timeout",
            format!("Timeout: {message}"),
            Some(StatusDetails {
                retry_after_seconds: Some(retry_after),
                ..StatusDetails::default()
            }),
        )
    }

    /// A `Status` a storage returns as its answer rather than as an error:
    /// `Failure` with `code` and `message`, no reason (the eviction's "more than
    /// one PodDisruptionBudget").
    pub fn plain_failure(code: u16, message: &str) -> Self {
        let mut error = failure(code, "", message.to_string(), None);
        error.status.reason = None;
        error
    }

    /// 422 `Invalid` as `apierrors.NewGenericServerResponse(422, …)` builds it with
    /// no resource and no name: its fixed message, empty details, and the cause
    /// not passed on (upstream answers a failed JSON Patch operation so).
    pub fn unprocessable() -> Self {
        failure(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request".into(),
            Some(StatusDetails::default()),
        )
    }

    /// 414 for a request line that does not fit in `--max-header-bytes`. Go's
    /// server (and so kube-apiserver) answers 431 in plain text here; metav1 has no
    /// reason for 414, so the reason is HTTP's phrase in the style of
    /// `RequestEntityTooLarge`.
    pub fn request_uri_too_long(limit: usize) -> Self {
        failure(
            414,
            "RequestURITooLong",
            format!(
                "Request-URI too long: the request line and headers are limited to {limit} bytes"
            ),
            None,
        )
    }

    /// 431 for a request line plus headers over `--max-header-bytes` (Go's
    /// `MaxHeaderBytes`, answered there in plain text); the reason is HTTP's phrase,
    /// as for [`ApiError::request_uri_too_long`].
    pub fn request_header_fields_too_large(limit: usize) -> Self {
        failure(
            431,
            "RequestHeaderFieldsTooLarge",
            format!(
                "Request header fields too large: the request line and headers are limited to {limit} bytes"
            ),
            None,
        )
    }

    /// 405 for a method a fixed path (`/version`, `/healthz`, ...) does not serve:
    /// the `MethodNotAllowed` reason with its generic message.
    pub fn method_not_allowed() -> Self {
        failure(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".into(),
            Some(StatusDetails::default()),
        )
    }

    /// 406 NotAcceptable: negotiation's `NewNotAcceptableError` (no served media
    /// type fits the Accept header) and `response.go`'s `newNotAcceptableError`
    /// (a conversion that does not fit the answer).
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        failure(406, "NotAcceptable", message.into(), None)
    }

    /// 415 UnsupportedMediaType (`NewUnsupportedMediaTypeError`).
    pub fn unsupported_media_type(content_type: &str, supported: &[&str]) -> Self {
        failure(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                supported.join(", ")
            ),
            Some(StatusDetails {
                causes: Some(vec![StatusCause {
                    reason: Some("UnsupportedMediaType".into()),
                    message: Some(content_type.to_string()),
                    field: None,
                }]),
                ..StatusDetails::default()
            }),
        )
    }

    /// 422 Invalid for one field (`apierrors.NewInvalid`).
    pub fn invalid(kind: &str, name: &str, field: &str, message: &str) -> Self {
        failure(
            422,
            "Invalid",
            format!("{kind} {name:?} is invalid: {field}: {message}"),
            Some(StatusDetails {
                name: Some(name.to_string()),
                kind: Some(kind.to_string()),
                causes: Some(vec![StatusCause {
                    reason: Some("FieldValueInvalid".into()),
                    message: Some(message.to_string()),
                    field: Some(field.to_string()),
                }]),
                ..StatusDetails::default()
            }),
        )
    }

    /// 422 Invalid for a list of field errors: mirrors `apierrors.NewInvalid` with
    /// a `field.ErrorList`. `causes` holds one cause per error (its `message` is the
    /// error's `ErrorBody`); the message is `<Kind.group> "<name>" is invalid: `
    /// and the errors as `field: body`, aggregated as `ErrorList.ToAggregate`
    /// does: repeated entries once, several in brackets, one bare.
    pub fn invalid_causes(
        group: &str,
        kind: &str,
        name: &str,
        causes: Vec<StatusCause>,
    ) -> Self {
        let mut entries: Vec<String> = Vec::new();
        for cause in &causes {
            let entry = format!(
                "{}: {}",
                cause.field.as_deref().unwrap_or(""),
                cause.message.as_deref().unwrap_or("")
            );
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        let aggregate = match entries.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let qualified_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        failure(
            422,
            "Invalid",
            format!(
                "{qualified_kind} {} is invalid: {aggregate}",
                apimachinery::util::validation::field::go_quote(name)
            ),
            Some(StatusDetails {
                name: Some(name.to_string()),
                group: Some(group.to_string()).filter(|g| !g.is_empty()),
                kind: Some(kind.to_string()),
                causes: Some(causes),
                ..StatusDetails::default()
            }),
        )
    }
}

impl From<StorageError> for ApiError {
    fn from(error: StorageError) -> Self {
        ApiError {
            status: Box::new(error.to_status()),
        }
    }
}

// ANCHOR: error_to_status
/// A `metav1.Status` `Success` answer with `code`, as a subresource that
/// acts rather than stores answers (`BindingREST`, `EvictionREST`).
pub fn success(code: StatusCode) -> Response {
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
    });
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        status.to_string(),
    )
        .into_response()
}

impl IntoResponse for ApiError {
    /// Mirrors `responsewriters.ErrorNegotiated`: the `Status` as JSON with its
    /// code. A 429 or 504 also says when to retry (`Retry-After`), as
    /// apiserver's `tooManyRequests` filter and the `ResourceVersionTooLarge`
    /// path do through `details.retryAfterSeconds`.
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = self
            .status
            .details
            .as_ref()
            .and_then(|d| d.retry_after_seconds)
            .filter(|_| matches!(code.as_u16(), 429 | 503 | 504));
        let mut response = (code, encode_status(&self.status)).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(seconds) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
// ANCHOR_END: error_to_status

/// Mirrors apiserver's `WithPanicRecovery` filter: a handler that panics answers 500
/// `InternalError` instead of dropping the connection, and the panic is logged.
pub async fn catch_panic(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use futures::FutureExt as _;
    let uri = request.uri().clone();
    match std::panic::AssertUnwindSafe(next.run(request))
        .catch_unwind()
        .await
    {
        Ok(response) => response,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            tracing::error!(%uri, %message, "handler panicked");
            ApiError::from(StorageError::Internal(format!(
                "the server panicked: {message}"
            )))
            .into_response()
        }
    }
}

/// The fallback route: any path nothing else serves is a 404 `Status`.
pub async fn not_found_fallback() -> ApiError {
    ApiError::path_not_found()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_not_ready_cache_is_429_with_retry_after() {
        let response = ApiError::from(StorageError::TooManyRequests).into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let not_found = ApiError::path_not_found().into_response();
        assert!(not_found.headers().get(header::RETRY_AFTER).is_none());
    }
}
