//! The HTTP face of stage 5: a Kubernetes-compatible API server (`mini-apiserver`) over the
//! etcd3 storage and the watch cache.
//!
//! It mirrors the parts of `k8s.io/apiserver` that a client of the watch touches:
//!
//! | Go (k8s.io/apiserver)                                   | Rust                          |
//! |---------------------------------------------------------|-------------------------------|
//! | `pkg/server/config.go` (`Config`, `PrepareRun`, `Run`)  | [`ServerConfig`], [`Server`]  |
//! | `pkg/endpoints/request/requestinfo.go`                  | [`request_info`]              |
//! | `pkg/endpoints/handlers/{get,create,update,patch,delete}.go` | [`handlers`]             |
//! | `pkg/endpoints/handlers/watch.go` (`serveWatch`)        | [`watch`]                     |
//! | `pkg/endpoints/handlers/responsewriters/status.go`      | [`status`]                    |
//! | `pkg/endpoints/discovery`, `/version`, `/openapi`       | [`discovery`]                 |
//! | `pkg/authentication/request/bearertoken` + token file   | [`auth`]                      |
//! | `pkg/server/healthz`                                    | `/healthz`, `/readyz`, `/livez` |
//! | `pkg/endpoints/metrics`, the cacher's metrics           | [`metrics`]                   |
//! | `registry/generic/registry` (`StorageWithCacher`)       | [`registry`]                  |
//!
//! ```text
//!  HTTP ──► auth ──► metrics ──► request_info ──► handlers ──► registry ──► Storage
//!                                                   │                   (Cacher or Etcd3Store)
//!                                                   └── watch ──► watch_encoded lines, chunked
//! ```
//!
//! One generic route family serves every registered type: `/api/v1/...` for the core group and
//! `/apis/{group}/{version}/...` for the others, namespaced and cluster-scoped alike.
//!
//! # Shutdown
//! [`RunningServer::shutdown`] cancels one token: the listener stops accepting, every watch
//! stream ends (its body sees the token), in-flight requests finish, the storages stop, and
//! the serving task is awaited. Nothing it spawned outlives it.

pub mod auth;
pub mod debug;
pub mod discovery;
pub mod handlers;
pub mod metrics;
pub mod patch;
pub mod registry;
pub mod request_info;
pub mod status;
pub mod validation;
pub mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{any, get};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::object::ResourceInfo;
use crate::storage::kv::Kv;

pub use registry::{Registry, ResourceStorage, new_storage};

/// The default address: loopback only, the insecure port kube-apiserver used to have.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// The default largest request body (kube-apiserver's `MaxRequestBodyBytes` is 3 MiB).
pub const DEFAULT_BODY_LIMIT: usize = 3 * 1024 * 1024;
/// The default watch cache capacity (apiserver's default `watchCacheSize` of 100 grows up to
/// this many events).
pub const DEFAULT_WATCH_CACHE_CAPACITY: usize = 1024;
/// Mirrors `--min-request-timeout` (1800 s): a watch without `timeoutSeconds` ends after a random
/// time between this and twice this.
pub const DEFAULT_MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

/// Where the objects live.
#[derive(Clone, Default)]
pub enum Backend {
    /// A fresh in-process MVCC store.
    #[default]
    Embedded,
    /// Real etcd at this URL (cargo feature `etcd`).
    Etcd(String),
    /// A [`Kv`] the caller built (tests share one to compact it, for example).
    Kv(Arc<dyn Kv>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Embedded => f.write_str("Embedded"),
            Backend::Etcd(url) => f.debug_tuple("Etcd").field(url).finish(),
            Backend::Kv(_) => f.write_str("Kv(..)"),
        }
    }
}

/// The server's options: the flags of kube-apiserver that matter here. Mirrors the parts of
/// apiserver's `server.Config` and `options.ServerRunOptions` this server has.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The address to listen on; port 0 picks a free one. Default `127.0.0.1:8080`.
    pub bind: SocketAddr,
    /// Where the objects live. Default: an embedded store.
    pub backend: Backend,
    /// `--token-file`: `token,user` lines; `None` turns authentication off.
    pub token_file: Option<PathBuf>,
    /// `--watch-cache`: serve reads and watches from the Cacher (default) or from etcd directly.
    pub watch_cache: bool,
    /// Events each resource's watch cache keeps.
    pub watch_cache_capacity: usize,
    /// The largest request body; larger ones are 413.
    pub body_limit: usize,
    /// `--min-request-timeout`: watches without `timeoutSeconds` end after between this and
    /// twice this.
    pub min_request_timeout: Duration,
    /// The resource types served.
    pub resources: Vec<ResourceInfo>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            backend: Backend::Embedded,
            token_file: None,
            watch_cache: true,
            watch_cache_capacity: DEFAULT_WATCH_CACHE_CAPACITY,
            body_limit: DEFAULT_BODY_LIMIT,
            min_request_timeout: DEFAULT_MIN_REQUEST_TIMEOUT,
            resources: ResourceInfo::BUILTIN.to_vec(),
        }
    }
}

impl ServerConfig {
    /// A config for tests: a free loopback port, the embedded store, everything else default.
    pub fn for_tests() -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..ServerConfig::default()
        }
    }

    /// The same config listening on `bind`.
    #[must_use]
    pub fn bind(mut self, bind: SocketAddr) -> Self {
        self.bind = bind;
        self
    }

    /// The same config over `backend`.
    #[must_use]
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// The same config with bearer tokens from `path`.
    #[must_use]
    pub fn token_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.token_file = Some(path.into());
        self
    }

    /// The same config with the watch cache on or off.
    #[must_use]
    pub fn watch_cache(mut self, on: bool) -> Self {
        self.watch_cache = on;
        self
    }

    /// The same config with this watch cache capacity.
    #[must_use]
    pub fn watch_cache_capacity(mut self, capacity: usize) -> Self {
        self.watch_cache_capacity = capacity;
        self
    }

    /// The same config with this body limit.
    #[must_use]
    pub fn body_limit(mut self, limit: usize) -> Self {
        self.body_limit = limit;
        self
    }
}

/// Why the server did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The token file could not be read or has a bad line.
    #[error("token file: {0}")]
    TokenFile(String),
    /// The backend could not be set up (e.g. etcd without the `etcd` feature, or unreachable).
    #[error("backend: {0}")]
    Backend(String),
}

/// The state every handler shares.
pub struct AppState {
    /// The resources and their storages.
    pub registry: Registry,
    /// Bearer tokens, when authentication is on.
    pub tokens: Option<auth::TokenAuthenticator>,
    /// Metrics.
    pub metrics: metrics::Metrics,
    /// The live HTTP watches, for metrics and the debug page.
    pub watches: watch::WatchRegistry,
    /// Cancelled at shutdown: every watch stream ends.
    pub shutdown: CancellationToken,
    /// The largest request body.
    pub body_limit: usize,
    /// `--min-request-timeout`.
    pub min_request_timeout: Duration,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("registry", &self.registry)
            .field("auth", &self.tokens.is_some())
            .finish_non_exhaustive()
    }
}

/// Mirrors kube-apiserver's `CreateServerChain` + `PrepareRun().Run()`: builds the storages and
/// the HTTP handler, and serves.
#[derive(Debug)]
pub struct Server;

/// A started server; stop it with [`RunningServer::shutdown`]. Dropping it also cancels it,
/// without waiting.
pub struct RunningServer {
    local_addr: SocketAddr,
    state: Arc<AppState>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Builds the storages for `config.backend`, binds `config.bind`, and serves on the current
    /// tokio runtime until [`RunningServer::shutdown`].
    pub async fn start(config: ServerConfig) -> Result<RunningServer, ServerError> {
        let kv = registry::connect_backend(&config.backend).await?;
        let tokens = match &config.token_file {
            Some(path) => Some(auth::TokenAuthenticator::from_file(path)?),
            None => None,
        };
        let registry = Registry::new(
            kv,
            &config.resources,
            config.watch_cache,
            config.watch_cache_capacity,
        );
        let listener =
            TcpListener::bind(config.bind)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: config.bind,
                    source,
                })?;
        let local_addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: config.bind,
            source,
        })?;
        let shutdown = CancellationToken::new();
        let state = Arc::new(AppState {
            registry,
            tokens,
            metrics: metrics::Metrics::new(),
            watches: watch::WatchRegistry::default(),
            shutdown: shutdown.clone(),
            body_limit: config.body_limit,
            min_request_timeout: config.min_request_timeout,
        });
        let app = router(Arc::clone(&state));
        let token = shutdown.clone();
        let task = tokio::spawn(async move {
            // TCP_NODELAY on every connection, as Go's net package sets by default: a watch
            // writes one small chunk per event, and Nagle's algorithm would hold each behind the
            // client's delayed ACK (up to 40 ms on Linux).
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                if let Err(error) = tcp.set_nodelay(true) {
                    tracing::debug!(%error, "cannot set TCP_NODELAY");
                }
            });
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move { token.cancelled().await })
                .await;
            if let Err(error) = served {
                tracing::error!(%error, "server failed");
            }
        });
        tracing::info!(%local_addr, watch_cache = config.watch_cache, "mini-apiserver listening");
        Ok(RunningServer {
            local_addr,
            state,
            task: Some(task),
        })
    }
}

/// The whole HTTP handler: fixed paths first, then the generic API routes.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/version", get(discovery::version))
        .route("/healthz", get(discovery::ok))
        .route("/readyz", get(discovery::ok))
        .route("/livez", get(discovery::ok))
        .route("/openapi/v2", get(discovery::openapi_v2))
        .route("/openapi/v3", get(discovery::openapi_v3_root))
        .route(
            "/openapi/v3/{*path}",
            get(discovery::openapi_v3_group_version),
        )
        .route("/metrics", get(metrics::serve_metrics))
        .route("/debug/watchers", get(debug::serve_watchers))
        .route("/api", any(handlers::serve_api))
        .route("/api/{*rest}", any(handlers::serve_api))
        .route("/apis", any(handlers::serve_api))
        .route("/apis/{*rest}", any(handlers::serve_api))
        .fallback(status::not_found_fallback)
        .layer(axum::middleware::from_fn(status::catch_panic))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            metrics::count_requests,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::authenticate,
        ))
        .with_state(state)
}

impl RunningServer {
    /// The address it listens on (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.local_addr)
    }

    /// The shared state (storages, metrics, live watches), for tests and examples.
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// A token cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.state.shutdown.clone()
    }

    /// Graceful shutdown: stop accepting, end every watch stream, let in-flight requests finish,
    /// stop the storages, and wait for the serving task.
    pub async fn shutdown(mut self) {
        self.state.shutdown.cancel();
        if let Some(task) = self.task.take()
            && let Err(error) = task.await
        {
            tracing::error!(%error, "server task failed");
        }
        self.state.registry.stop().await;
        tracing::info!("mini-apiserver stopped");
    }
}

impl Drop for RunningServer {
    /// Without [`RunningServer::shutdown`]: cancel everything and let a task stop the watch
    /// caches (when a runtime is still there to run it).
    fn drop(&mut self) {
        self.state.shutdown.cancel();
        if self.task.is_some()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let state = Arc::clone(&self.state);
            runtime.spawn(async move { state.registry.stop().await });
        }
    }
}
