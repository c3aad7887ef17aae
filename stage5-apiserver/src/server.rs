//! Serving: mirrors apiserver's `pkg/server/genericapiserver.go` (`PrepareRun`,
//! `Run`, the graceful shutdown) and `pkg/server/handler.go` (the handler chain: the
//! fixed paths, then the API routes, inside authentication and metrics filters).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::{any, get};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::app_state::AppState;
use crate::config::{ServerConfig, ServerError};
use crate::registry::Registry;
use crate::{auth, debug, discovery, handlers, metrics, registry, status, watch};

/// Mirrors kube-apiserver's `CreateServerChain` + `PrepareRun().Run()`: builds the
/// storages and the HTTP handler, and serves.
#[derive(Debug)]
pub struct Server;

/// A started server; stop it with [`RunningServer::shutdown`]. Dropping it also
/// cancels it, without waiting.
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
    /// Builds the storages for `config.backend`, binds `config.bind`, and serves on
    /// the current tokio runtime until [`RunningServer::shutdown`].
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
        let listener = TcpListener::bind(config.bind).await.map_err(|source| {
            ServerError::Bind {
                addr: config.bind,
                source,
            }
        })?;
        let local_addr =
            listener.local_addr().map_err(|source| ServerError::Bind {
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
            // TCP_NODELAY on every connection, as Go's net package sets by default:
            // a watch writes one small chunk per event, and Nagle's
            // algorithm would hold each behind the client's delayed ACK
            // (up to 40 ms on Linux).
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

    /// Graceful shutdown: stop accepting, end every watch stream, let in-flight
    /// requests finish, stop the storages, and wait for the serving task.
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
    /// Without [`RunningServer::shutdown`]: cancel everything and let a task stop
    /// the watch caches (when a runtime is still there to run it).
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
