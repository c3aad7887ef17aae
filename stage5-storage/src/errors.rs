//! apiserver's `pkg/storage/errors.go`: the storage layer's errors, and the
//! Kubernetes `Status` each becomes at the HTTP edge (as
//! `k8s.io/apimachinery/pkg/api/errors` builds them).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ListMeta, Status, StatusCause, StatusDetails,
};

// ANCHOR: storage_error_objects
/// Errors of the storage layer, each with the Kubernetes status the HTTP edge
/// answers with ([`StorageError::to_status`]). Mirrors apiserver's
/// `storage.StorageError` codes and the `apierrors` they become.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// No object under the key (404 NotFound).
    #[error("{plural} \"{name}\" not found")]
    NotFound {
        /// The resource, group-qualified outside the core group: `pods`,
        /// `deployments.apps` (`schema.GroupResource.String()`).
        plural: String,
        /// The object's name.
        name: String,
    },
    /// Create of a key that exists (409 AlreadyExists).
    #[error("{plural} \"{name}\" already exists")]
    AlreadyExists {
        /// The resource.
        plural: String,
        /// The object's name.
        name: String,
    },
    /// A precondition (uid or resourceVersion) failed (409 Conflict).
    #[error("Operation cannot be fulfilled on {plural} \"{name}\": {message}")]
    Conflict {
        /// The resource.
        plural: String,
        /// The object's name.
        name: String,
        /// What did not match.
        message: String,
    },
    // ANCHOR_END: storage_error_objects
    // ANCHOR: storage_error_versions
    /// The resource version (or continue token) is older than the store keeps (410
    /// Expired).
    #[error("{0}")]
    Expired(String),
    /// A continue token whose revision has been compacted (410 Expired), with a
    /// token that continues the list at the newest revision, inconsistently:
    /// upstream's `handleCompactedErrorForPaging`, which puts the token in the
    /// Status's `metadata.continue`.
    #[error("{INCONSISTENT_CONTINUE}")]
    InconsistentContinue {
        /// Continues after the same key at the newest revision (revision -1).
        continue_token: String,
    },
    /// The store did not reach the requested resource version in time (504, cause
    /// `ResourceVersionTooLarge`): `storage.NewTooLargeResourceVersionError`,
    /// whose message `apierrors.NewTimeoutError` prefixes with `Timeout: `.
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The requested version.
        requested: u64,
        /// The version the store had reached.
        current: u64,
        /// `details.retryAfterSeconds` and the `Retry-After` header; 0 (the etcd3
        /// store's `validateMinimumResourceVersion`) sends neither, the watch
        /// cache sends 1 (`resourceVersionTooHighRetrySeconds`).
        retry_after_seconds: i32,
    },
    /// The request is malformed: a bad resource version, selector or continue token
    /// (400).
    #[error("{0}")]
    BadRequest(String),
    /// The object is invalid (422 Invalid).
    #[error("{message}")]
    Invalid {
        /// The resource.
        plural: String,
        /// The object's name.
        name: String,
        /// Why.
        message: String,
    },
    /// The watch cache is not ready yet (429, retry after a second).
    #[error("storage is (re)initializing")]
    TooManyRequests,
    /// The write is larger than etcd takes in one request (500, no reason, etcd's
    /// own message), refused before it reaches either backend: see
    /// [`MAX_REQUEST_BYTES`](crate::etcd3::store::MAX_REQUEST_BYTES). Upstream's
    /// `ErrorToAPIStatus` answers etcd's `rpctypes.ErrRequestTooLarge` so, and its
    /// create, update and patch handlers first retry without `managedFields`
    /// (`isTooLargeError`).
    #[error("etcdserver: request is too large")]
    RequestTooLarge,
    /// Anything else (500): the backend failed, or stored data does not decode.
    #[error("{0}")]
    Internal(String),
}
// ANCHOR_END: storage_error_versions

/// Mirrors the etcd3 store's `inconsistentContinue` message.
pub const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

impl StorageError {
    /// The HTTP code.
    pub fn code(&self) -> u16 {
        match self {
            StorageError::NotFound { .. } => 404,
            StorageError::AlreadyExists { .. } | StorageError::Conflict { .. } => {
                409
            }
            StorageError::Expired(_) | StorageError::InconsistentContinue { .. } => {
                410
            }
            StorageError::TooLargeResourceVersion { .. } => 504,
            StorageError::BadRequest(_) => 400,
            StorageError::Invalid { .. } => 422,
            StorageError::TooManyRequests => 429,
            StorageError::RequestTooLarge | StorageError::Internal(_) => 500,
        }
    }

    /// The Kubernetes `Status` for this error, as apimachinery's `apierrors` build
    /// it.
    pub fn to_status(&self) -> Status {
        let (reason, details) = match self {
            StorageError::NotFound { plural, name } => {
                ("NotFound", Some(details(plural, name, None)))
            }
            StorageError::AlreadyExists { plural, name } => {
                ("AlreadyExists", Some(details(plural, name, None)))
            }
            StorageError::Conflict { plural, name, .. } => {
                ("Conflict", Some(details(plural, name, None)))
            }
            StorageError::Expired(_) | StorageError::InconsistentContinue { .. } => {
                ("Expired", None)
            }
            StorageError::TooLargeResourceVersion {
                retry_after_seconds,
                ..
            } => (
                "Timeout",
                Some(StatusDetails {
                    causes: Some(vec![StatusCause {
                        reason: Some("ResourceVersionTooLarge".into()),
                        message: Some("Too large resource version".into()),
                        field: None,
                    }]),
                    // Go's `omitempty`: 0 is not sent.
                    retry_after_seconds: (*retry_after_seconds > 0)
                        .then_some(*retry_after_seconds),
                    ..StatusDetails::default()
                }),
            ),
            StorageError::BadRequest(_) => ("BadRequest", None),
            StorageError::Invalid {
                plural,
                name,
                message,
            } => (
                "Invalid",
                Some(details(plural, name, Some(message.clone()))),
            ),
            StorageError::TooManyRequests => (
                "TooManyRequests",
                Some(StatusDetails {
                    retry_after_seconds: Some(1),
                    ..StatusDetails::default()
                }),
            ),
            StorageError::Internal(_) => ("InternalError", None),
            // `StatusReasonUnknown`, the empty reason, and no details.
            StorageError::RequestTooLarge => ("", None),
        };
        let message = match self {
            StorageError::Internal(m) => format!("Internal error occurred: {m}"),
            StorageError::Invalid {
                plural,
                name,
                message,
            } => format!("{plural} \"{name}\" is invalid: {message}"),
            StorageError::TooLargeResourceVersion { .. } => {
                format!("Timeout: {self}")
            }
            other => other.to_string(),
        };
        let mut metadata = ListMeta::default();
        if let StorageError::InconsistentContinue { continue_token } = self {
            metadata.continue_ = Some(continue_token.clone());
        }
        Status {
            code: Some(i32::from(self.code())),
            // Go's `omitempty`: `StatusReasonUnknown` is not sent.
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            message: Some(message),
            status: Some("Failure".to_string()),
            details,
            metadata,
        }
    }
}

impl apimachinery::api::errors::ApiStatus for StorageError {
    fn status(&self) -> Status {
        self.to_status()
    }
}

/// `plural` may be group-qualified (`deployments.apps`): the details carry the
/// resource as `kind` and the group apart, as `apierrors.NewNotFound` puts them.
fn details(plural: &str, name: &str, message: Option<String>) -> StatusDetails {
    let (resource, group) = match plural.split_once('.') {
        Some((resource, group)) => (resource, Some(group.to_string())),
        None => (plural, None),
    };
    StatusDetails {
        name: Some(name.to_string()),
        group,
        kind: Some(resource.to_string()),
        causes: message.map(|message| {
            vec![StatusCause {
                reason: Some("FieldValueInvalid".into()),
                message: Some(message),
                field: Some("metadata.name".into()),
            }]
        }),
        ..StatusDetails::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::api::errors;

    #[test]
    fn statuses_carry_code_reason_and_cause() {
        let s = StorageError::TooLargeResourceVersion {
            requested: 20,
            current: 10,
            retry_after_seconds: 1,
        }
        .to_status();
        assert_eq!(s.code, Some(504));
        assert_eq!(
            s.message.as_deref(),
            Some("Timeout: Too large resource version: 20, current: 10")
        );
        assert_eq!(s.details.as_ref().unwrap().retry_after_seconds, Some(1));
        let from_etcd = StorageError::TooLargeResourceVersion {
            requested: u64::MAX,
            current: 10,
            retry_after_seconds: 0,
        }
        .to_status();
        assert_eq!(
            from_etcd.message.as_deref(),
            Some(
                "Timeout: Too large resource version: 18446744073709551615, current: 10"
            )
        );
        assert_eq!(from_etcd.details.unwrap().retry_after_seconds, None);
        // What client-go's `isTooLargeResourceVersionError` and `isExpiredError`
        // look for.
        assert!(errors::has_status_cause(
            &s,
            errors::reason::CAUSE_RESOURCE_VERSION_TOO_LARGE
        ));
        let s = StorageError::Expired("too old resource version: 1 (5)".into())
            .to_status();
        assert!(errors::is_expired(&s));
        assert_eq!(StorageError::TooManyRequests.to_status().code, Some(429));
    }
}
