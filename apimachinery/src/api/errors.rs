//! Questions asked of a Kubernetes `Status`: mirrors apimachinery's
//! [`pkg/api/errors/errors.go`] (`IsResourceExpired`, `IsGone`,
//! `IsTooManyRequests`, `IsInternalError`, `HasStatusCause`, the `APIStatus`
//! interface, and `reasonAndCodeForError`, which judges a status whose reason it
//! does not know by its HTTP code alone) and the `StatusReason` values of
//! `metav1` ([`pkg/apis/meta/v1/types.go`]).
//!
//! Both sides ask them: the client's Reflector (stage 3) decides from a `Status`
//! whether to relist, and the server's tests check that what it sends is read
//! the way client-go reads it.
//!
//! [`pkg/api/errors/errors.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/api/errors/errors.go
//! [`pkg/apis/meta/v1/types.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/apis/meta/v1/types.go

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;

/// The `StatusReason` values of apimachinery's `metav1`, as far as the workspace
/// asks about them.
pub mod reason {
    /// `StatusReasonExpired`: the requested resource version is older than the
    /// server keeps.
    pub const EXPIRED: &str = "Expired";
    /// `StatusReasonGone`: what servers before 1.18 sent for an expired resource
    /// version.
    pub const GONE: &str = "Gone";
    /// `StatusReasonTooManyRequests` (429).
    pub const TOO_MANY_REQUESTS: &str = "TooManyRequests";
    /// `StatusReasonInternalError` (500).
    pub const INTERNAL_ERROR: &str = "InternalError";
    /// `StatusReasonTimeout` (504): also how servers report a too large resource
    /// version.
    pub const TIMEOUT: &str = "Timeout";
    /// `CauseTypeResourceVersionTooLarge`: a `StatusCause` reason naming a too large
    /// version.
    pub const CAUSE_RESOURCE_VERSION_TOO_LARGE: &str = "ResourceVersionTooLarge";

    /// Every reason apimachinery knows (`knownReasons`). A status whose reason is
    /// not one of these is judged by its HTTP code alone, as in apimachinery's
    /// `reasonAndCodeForError`.
    pub const KNOWN: &[&str] = &[
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        GONE,
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        TIMEOUT,
        TOO_MANY_REQUESTS,
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        INTERNAL_ERROR,
        EXPIRED,
        "ServiceUnavailable",
    ];

    /// Whether `reason` is one apimachinery defines.
    pub fn is_known(reason: &str) -> bool {
        KNOWN.contains(&reason)
    }
}

/// Mirrors apimachinery's `APIStatus` interface: an error that can be sent as a
/// Kubernetes `Status`.
pub trait ApiStatus {
    /// The status to send for this error.
    fn status(&self) -> Status;
}

/// The old message of a 410 for an expired watch.
const TOO_OLD_RESOURCE_VERSION: &str = "too old resource version";

/// Mirrors `reasonAndCodeForError`'s test: the reason matches, or the reason is
/// unknown and the code matches.
pub fn reason_or_code(
    status: &Status,
    wanted_reason: &str,
    wanted_code: i32,
) -> bool {
    let reason = status.reason.as_deref().unwrap_or("");
    reason == wanted_reason
        || (!reason::is_known(reason) && status.code == Some(wanted_code))
}

/// Mirrors `IsResourceExpired || IsGone`, which client-go's `isExpiredError` asks:
/// reason `Expired`, reason `Gone` (or an unknown reason with code 410), or the old
/// "too old resource version" message.
pub fn is_expired(status: &Status) -> bool {
    let reason = status.reason.as_deref().unwrap_or("");
    reason == reason::EXPIRED
        || reason_or_code(status, reason::GONE, 410)
        || status
            .message
            .as_deref()
            .is_some_and(|message| message.contains(TOO_OLD_RESOURCE_VERSION))
}

/// Mirrors `IsTooManyRequests`: reason `TooManyRequests` or code 429.
pub fn is_too_many_requests(status: &Status) -> bool {
    status.reason.as_deref() == Some(reason::TOO_MANY_REQUESTS)
        || status.code == Some(429)
}

/// Mirrors `IsInternalError`: reason `InternalError`, or code 500 with a reason
/// apimachinery does not know.
pub fn is_internal_error(status: &Status) -> bool {
    reason_or_code(status, reason::INTERNAL_ERROR, 500)
}

/// Mirrors `HasStatusCause`: whether a cause of the status has this reason.
pub fn has_status_cause(status: &Status, cause_reason: &str) -> bool {
    status
        .details
        .as_ref()
        .and_then(|details| details.causes.as_deref())
        .unwrap_or_default()
        .iter()
        .any(|cause| cause.reason.as_deref() == Some(cause_reason))
}

/// `410 Expired: too old resource version: 5 (10)`, for error messages.
pub fn describe(status: &Status) -> String {
    let code = status
        .code
        .map_or_else(|| "status".to_string(), |c| c.to_string());
    let reason = status.reason.as_deref().unwrap_or("");
    let message = status.message.as_deref().unwrap_or("");
    match (reason.is_empty(), message.is_empty()) {
        (true, true) => code,
        (false, true) => format!("{code} {reason}"),
        (true, false) => format!("{code}: {message}"),
        (false, false) => format!("{code} {reason}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: i32, reason: &str, message: &str) -> Status {
        Status {
            code: Some(code),
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            message: (!message.is_empty()).then(|| message.to_string()),
            ..Status::default()
        }
    }

    #[test]
    fn an_unknown_reason_is_judged_by_its_code() {
        assert!(is_expired(&status(410, "SomethingNew", "")));
        assert!(!is_expired(&status(410, "Conflict", "")));
        assert!(is_internal_error(&status(500, "", "")));
        assert!(!is_internal_error(&status(500, "Conflict", "")));
        assert!(is_too_many_requests(&status(429, "Conflict", "")));
    }

    #[test]
    fn descriptions_leave_out_what_is_missing() {
        assert_eq!(
            describe(&status(410, "Expired", "too old")),
            "410 Expired: too old"
        );
        assert_eq!(describe(&status(500, "", "boom")), "500: boom");
        assert_eq!(describe(&status(403, "Forbidden", "")), "403 Forbidden");
        assert_eq!(describe(&Status::default()), "status");
    }
}
