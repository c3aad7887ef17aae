//! The errors of stage 3: one enum for lists, watches and the reflector loop.
//!
//! client-go passes plain `error` values around and asks questions of them with
//! `k8s.io/apimachinery/pkg/api/errors` (`IsResourceExpired`, `IsGone`,
//! `IsTooManyRequests`, `IsInternalError`, `IsTimeout`) and with the reflector's own
//! `isExpiredError`, `isTooLargeResourceVersionError` and `isWatchErrorRetriable`.
//! Here the two conditions that change what the reflector lists from are typed
//! variants, decided once when a Kubernetes `Status` arrives
//! ([`Error::from_status`]); the rest are predicates on [`Error`].
//!
//! Every variant that came from the server keeps its `Status` exactly as received.
//!
//! The questions themselves are apimachinery's ([`apimachinery::api::errors`]);
//! this enum is the Reflector's. See [`k8s.io/apimachinery/pkg/api/errors`] and
//! [`tools/cache/reflector.go`].
//!
//! [`k8s.io/apimachinery/pkg/api/errors`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/api/errors/errors.go
//! [`tools/cache/reflector.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/reflector.go

use apimachinery::api::errors::{self, reason};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use stage1_store::StoreError;

/// A boxed error from a layer below this one (an HTTP client, a decoder).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The message servers before 1.18.6 used instead of the `ResourceVersionTooLarge`
/// cause.
const TOO_LARGE_RESOURCE_VERSION: &str = "Too large resource version";

/// Everything that can go wrong while listing, watching or reflecting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The requested resource version (or continue token) is older than the server
    /// keeps: HTTP 410 with reason `Expired` or `Gone`. Mirrors client-go's
    /// `isExpiredError`.
    ///
    /// Recovery: relist. A reflector first relists from its last version, and from
    /// `""` (the newest, read from etcd) if that is expired too.
    #[error("resource version expired ({}); relist to get a current resource version", errors::describe(.status))]
    Expired {
        /// The status the server sent.
        status: Box<Status>,
    },

    /// The requested resource version is newer than the server has seen, usually an
    /// API server whose watch cache lags behind. Mirrors client-go's
    /// `isTooLargeResourceVersionError`.
    ///
    /// Recovery: relist from `""`, which the server answers with its newest version.
    #[error("too large resource version ({}); relist from \"\" to get the server's newest version", errors::describe(.status))]
    TooLargeResourceVersion {
        /// The status the server sent.
        status: Box<Status>,
    },

    /// Any other failure the server reported as a `Status` (429, 500, 403, …). Its
    /// code is kept.
    #[error("the API server answered {}", errors::describe(.status))]
    Api {
        /// The status the server sent.
        status: Box<Status>,
    },

    /// The request did not reach the server or the connection broke (connection
    /// refused, TLS, I/O). [`Error::is_connection_refused`] looks through the
    /// source chain.
    #[error(
        "could not talk to the API server: {source}; check the server address and that it is up"
    )]
    Transport {
        /// What the HTTP client reported.
        #[source]
        source: BoxError,
    },

    /// A response or watch event could not be decoded. A watch ends with this error,
    /// as client-go's stream watcher ends with "unable to decode an event from
    /// the watch stream".
    #[error("could not decode {what}: {source}")]
    Decode {
        /// What was being decoded, such as `"a list response"`.
        what: &'static str,
        /// The decoder's error.
        #[source]
        source: BoxError,
    },

    /// A watch event carried an object of another type than the reflector expects.
    /// The reflector logs it and skips the event, as client-go does for an
    /// unexpected type.
    #[error(
        "expected a {expected} but the watch event object is a {actual}; the event is skipped"
    )]
    UnexpectedType {
        /// The type the watch was opened for, such as `v1/Pod`.
        expected: String,
        /// The type the event carried, such as `v1/Service`.
        actual: String,
    },

    /// The watch closed within a second without delivering a single event. Mirrors
    /// client-go's `VeryShortWatchError`; the reflector treats it as a sign of
    /// trouble and relists.
    #[error(
        "very short watch: {name}: unexpected watch close - watch lasted less than a second and no items received"
    )]
    VeryShortWatch {
        /// The reflector's name.
        name: String,
    },

    /// The store refused the listed items (`store.replace` failed; client-go's
    /// "unable to sync list result"). The reflector backs off and relists.
    #[error("unable to sync list result into the store: {source}")]
    Sync {
        /// The store's error.
        #[source]
        source: StoreError,
    },

    /// `store.resync()` failed. Ends the current watch; the reflector relists.
    #[error("periodic resync of the store failed: {source}")]
    Resync {
        /// The store's error.
        #[source]
        source: StoreError,
    },

    /// The options cannot be sent as given (for example `resource_version_match` on
    /// a watch without `send_initial_events`, which the API server rejects).
    #[error("invalid list or watch options: {message}")]
    InvalidOptions {
        /// What is wrong with them.
        message: String,
    },
}

impl Error {
    /// Classifies a `Status` the server sent (as an HTTP error body or a watch
    /// `Error` event).
    // ANCHOR: from_status
    /// A 410 (reason `Expired` or `Gone`, or an unknown reason with code 410) or a
    /// message containing "too old resource version" becomes [`Error::Expired`].
    /// A status with the `ResourceVersionTooLarge` cause, or a timeout whose
    /// message says "Too large resource version", becomes
    /// [`Error::TooLargeResourceVersion`]. Anything else is [`Error::Api`]
    /// with its code kept.
    pub fn from_status(status: Status) -> Self {
        let status = Box::new(status);
        if errors::is_expired(&status) {
            Error::Expired { status }
        } else if status_is_too_large_resource_version(&status) {
            Error::TooLargeResourceVersion { status }
        } else {
            Error::Api { status }
        }
    }
    // ANCHOR_END: from_status

    /// The Kubernetes status this error carries, if it came from the server.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Expired { status }
            | Error::TooLargeResourceVersion { status }
            | Error::Api { status } => Some(status),
            _ => None,
        }
    }

    /// The HTTP code of the server's status, if any.
    pub fn code(&self) -> Option<i32> {
        self.status().and_then(|status| status.code)
    }

    /// Mirrors client-go's `isExpiredError` (`IsResourceExpired || IsGone`).
    pub fn is_expired(&self) -> bool {
        matches!(self, Error::Expired { .. })
    }

    /// Mirrors client-go's `isTooLargeResourceVersionError`.
    pub fn is_too_large_resource_version(&self) -> bool {
        matches!(self, Error::TooLargeResourceVersion { .. })
    }

    /// Mirrors apimachinery's `IsTooManyRequests`: reason `TooManyRequests` or code
    /// 429.
    pub fn is_too_many_requests(&self) -> bool {
        self.status().is_some_and(errors::is_too_many_requests)
    }

    /// Mirrors apimachinery's `IsInternalError`: reason `InternalError`, or code 500
    /// with a reason apimachinery does not know.
    pub fn is_internal_error(&self) -> bool {
        self.status().is_some_and(errors::is_internal_error)
    }

    /// Mirrors apimachinery's `utilnet.IsConnectionRefused`: somewhere in the source
    /// chain is an I/O error of kind `ConnectionRefused`.
    pub fn is_connection_refused(&self) -> bool {
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(error) = current {
            if let Some(io) = error.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return true;
            }
            current = error.source();
        }
        false
    }

    // ANCHOR: is_watch_error_retriable
    /// Mirrors client-go's `isWatchErrorRetriable`: connection refused or 429. The
    /// server is probably overloaded or restarting, so the reflector backs off
    /// and watches again from where it was instead of relisting everything.
    pub fn is_watch_error_retriable(&self) -> bool {
        self.is_connection_refused() || self.is_too_many_requests()
    }
    // ANCHOR_END: is_watch_error_retriable
}

/// Mirrors client-go's `isTooLargeResourceVersionError`.
fn status_is_too_large_resource_version(status: &Status) -> bool {
    if errors::has_status_cause(status, reason::CAUSE_RESOURCE_VERSION_TOO_LARGE) {
        return true;
    }
    // Servers 1.17.0–1.18.5 said so only in a cause message, older ones only in the
    // message, and always as a timeout.
    if !errors::reason_or_code(status, reason::TIMEOUT, 504) {
        return false;
    }
    let causes = status
        .details
        .as_ref()
        .and_then(|details| details.causes.as_deref())
        .unwrap_or_default();
    causes
        .iter()
        .any(|cause| cause.message.as_deref() == Some(TOO_LARGE_RESOURCE_VERSION))
        || status
            .message
            .as_deref()
            .is_some_and(|message| message.contains(TOO_LARGE_RESOURCE_VERSION))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        StatusCause, StatusDetails,
    };

    use super::*;

    fn status(code: i32, reason: &str, message: &str) -> Status {
        Status {
            code: Some(code),
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            message: (!message.is_empty()).then(|| message.to_string()),
            status: Some("Failure".to_string()),
            ..Status::default()
        }
    }

    fn with_cause(
        mut status: Status,
        reason: Option<&str>,
        message: Option<&str>,
    ) -> Status {
        status.details = Some(StatusDetails {
            causes: Some(vec![StatusCause {
                reason: reason.map(str::to_string),
                message: message.map(str::to_string),
                field: None,
            }]),
            ..StatusDetails::default()
        });
        status
    }

    #[test]
    fn gone_and_expired_statuses_are_expired_errors() {
        for status in [
            status(410, "Expired", "too old resource version: 1 (5)"),
            status(410, "Gone", ""),
            status(410, "", ""),
            status(410, "SomethingNew", ""),
            status(500, "InternalError", "too old resource version: 1 (5)"),
        ] {
            let error = Error::from_status(status.clone());
            assert!(error.is_expired(), "{status:?} -> {error}");
        }
        // A known, different reason with code 410 is not "Gone".
        assert!(!Error::from_status(status(410, "Conflict", "")).is_expired());
    }

    #[test]
    fn too_large_resource_version_in_all_three_server_dialects() {
        let by_cause = with_cause(
            status(504, "Timeout", "Timeout: too large resource version"),
            Some("ResourceVersionTooLarge"),
            None,
        );
        let by_cause_message = with_cause(
            status(504, "Timeout", "Timeout: too large resource version"),
            None,
            Some("Too large resource version"),
        );
        let by_message = status(
            504,
            "Timeout",
            "Too large resource version: 40, current: 30",
        );
        for status in [by_cause, by_cause_message, by_message] {
            let error = Error::from_status(status.clone());
            assert!(error.is_too_large_resource_version(), "{status:?}");
            assert!(!error.is_expired());
        }
        // The message alone counts only on a timeout.
        let not_timeout = status(500, "InternalError", "Too large resource version");
        assert!(!Error::from_status(not_timeout).is_too_large_resource_version());
    }

    #[test]
    fn other_statuses_keep_their_code() {
        let error = Error::from_status(status(429, "TooManyRequests", "slow down"));
        assert_eq!(error.code(), Some(429));
        assert!(error.is_too_many_requests());
        assert!(error.is_watch_error_retriable());
        let error = Error::from_status(status(
            500,
            "InternalError",
            "etcdserver: no leader",
        ));
        assert!(error.is_internal_error());
        assert!(!error.is_watch_error_retriable());
        let error = Error::from_status(status(403, "Forbidden", "nope"));
        assert_eq!(error.code(), Some(403));
        assert_eq!(
            error.to_string(),
            "the API server answered 403 Forbidden: nope"
        );
    }

    #[test]
    fn connection_refused_is_found_anywhere_in_the_source_chain() {
        #[derive(Debug, thiserror::Error)]
        #[error("connect failed")]
        struct Wrapper(#[source] std::io::Error);

        let error = Error::Transport {
            source: Box::new(Wrapper(std::io::ErrorKind::ConnectionRefused.into())),
        };
        assert!(error.is_connection_refused());
        assert!(error.is_watch_error_retriable());
        let error = Error::Transport {
            source: Box::new(std::io::Error::from(std::io::ErrorKind::TimedOut)),
        };
        assert!(!error.is_connection_refused());
    }
}
