//! The state every handler shares: what apiserver's `GenericAPIServer` and each
//! handler's `RequestScope` carry (the storages, the authenticator, metrics, the
//! live watches).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::live_watches::WatchRegistry;
use crate::registry::Registry;
use crate::{auth, metrics};

/// The state every handler shares.
pub struct AppState {
    /// The resources and their storages.
    pub registry: Registry,
    /// Bearer tokens, when authentication is on.
    pub tokens: Option<auth::TokenAuthenticator>,
    /// Metrics.
    pub metrics: metrics::Metrics,
    /// The live HTTP watches, for metrics and the debug page.
    pub watches: WatchRegistry,
    /// Cancelled at shutdown: every watch stream ends.
    pub shutdown: CancellationToken,
    /// The largest request body.
    pub body_limit: usize,
    /// `--min-request-timeout`.
    pub min_request_timeout: Duration,
    /// Notified when a delete marks a namespace terminating: the namespace
    /// controller ([`crate::namespace_deletion::run`]) finishes it.
    pub namespace_deletions: tokio::sync::Notify,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("registry", &self.registry)
            .field("auth", &self.tokens.is_some())
            .finish_non_exhaustive()
    }
}
