//! Serving: mirrors apiserver's `pkg/server/genericapiserver.go` (`PrepareRun`,
//! `Run`, the graceful shutdown) and `pkg/server/handler.go` (the handler chain: the
//! fixed paths, then the API routes, inside authentication and metrics filters).
//!
//! Connections are served as Go's `http.Server` in apiserver's
//! `pkg/server/secure_serving.go` serves them: HTTP/1.1 with a read header timeout,
//! an idle timeout and a header size limit ([`conn`]), plus a cap on open
//! connections that Go leaves to `netutil.LimitListener`.
//!
//! With a serving certificate ([`ServerConfig::tls`]) every connection is HTTPS:
//! the TLS handshake (`server/tls.rs`) runs first, under the read header timeout,
//! and the same HTTP/1.1 serving runs over the decrypted stream.
//!
//! # Memory usage
//! At most `max_connections` connections, each with a read buffer of at most
//! `max_header_bytes` (at least 8 KiB) while it reads a request's headers.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::serve::Listener as _;
use hyper_util::rt::TokioIo;
use stage5_storage::etcd3::Compactor;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::app_state::AppState;
use crate::config::{ServerConfig, ServerError};
use crate::registry::Registry;
use crate::status::ApiError;
use crate::{auth, debug, debug_ui, discovery, handlers, metrics, registry, status};

mod conn;
mod tls;

/// Mirrors kube-apiserver's `CreateServerChain` + `PrepareRun().Run()`: builds the
/// storages and the HTTP handler, and serves.
#[derive(Debug)]
pub struct Server;

/// A started server; stop it with [`RunningServer::shutdown`]. Dropping it also
/// cancels it, without waiting.
pub struct RunningServer {
    local_addr: SocketAddr,
    /// `https` with a serving certificate, else `http`.
    scheme: &'static str,
    state: Arc<AppState>,
    task: Option<JoinHandle<()>>,
    /// Compacts the store every `etcd_compaction_interval`; its loop ends with the
    /// shutdown token.
    compactor: Option<Compactor>,
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
        let acceptor = match &config.tls {
            Some(cert) => Some(crate::secure_serving::tls_acceptor(cert)?),
            None => None,
        };
        let registry = Registry::new(
            Arc::clone(&kv),
            &config.resources,
            config.watch_cache,
            config.watch_cache_capacity,
        );
        let listener = listen(config.bind).map_err(|source| ServerError::Bind {
            addr: config.bind,
            source,
        })?;
        let local_addr =
            listener.local_addr().map_err(|source| ServerError::Bind {
                addr: config.bind,
                source,
            })?;
        let shutdown = CancellationToken::new();
        // Mirrors `storagebackend/factory`'s `StartCompactorPerEndpoint`: one
        // compactor per server, stopped with it.
        let compactor =
            Compactor::start(kv, config.etcd_compaction_interval, &shutdown);
        let state = Arc::new(AppState {
            registry,
            tokens,
            metrics: metrics::Metrics::new(),
            watches: crate::live_watches::WatchRegistry::default(),
            shutdown: shutdown.clone(),
            body_limit: config.body_limit,
            min_request_timeout: config.min_request_timeout,
            namespace_deletions: tokio::sync::Notify::new(),
        });
        // The system namespaces controller: `default`, `kube-system`,
        // `kube-public` and `kube-node-lease` exist before the first request.
        if let Err(error) = crate::system_namespaces::ensure(&state.registry).await {
            tracing::warn!(%error, "the system namespaces are not all there yet");
        }
        tokio::spawn(crate::system_namespaces::run(
            Arc::clone(&state),
            shutdown.clone(),
        ));
        // The namespace controller: finishes the deletion of terminating
        // namespaces (their content, then the namespace).
        tokio::spawn(crate::namespace_deletion::run(
            Arc::clone(&state),
            shutdown.clone(),
        ));
        let app = router(Arc::clone(&state));
        let limits = conn::Limits {
            read_header_timeout: config.read_header_timeout,
            idle_timeout: config.idle_timeout,
            max_header_bytes: config.max_header_bytes,
        };
        let max_connections = config.max_connections.map(|cap| cap.max(1));
        let scheme = if acceptor.is_some() { "https" } else { "http" };
        let task = tokio::spawn(serve(
            listener,
            app,
            limits,
            acceptor,
            max_connections,
            shutdown.clone(),
        ));
        tracing::info!(%local_addr, scheme, watch_cache = config.watch_cache, "mini-apiserver listening");
        Ok(RunningServer {
            local_addr,
            scheme,
            state,
            task: Some(task),
            compactor: Some(compactor),
        })
    }
}

/// A listening socket on `addr` as Go's `net.Listen("tcp", ...)` makes it:
/// `SO_REUSEADDR`, and the kernel's largest accept queue (`somaxconn`, Go's
/// `maxListenerBacklog` in `net/sock_linux.go`), so a burst of connections waits
/// to be accepted instead of being refused.
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(max_listener_backlog())
}

/// Mirrors Go's `maxListenerBacklog`: `/proc/sys/net/core/somaxconn`, at most
/// 65,535 (the kernel keeps the backlog in 16 bits before 4.1); 4,096 (Linux's
/// default since 5.4) where the file cannot be read.
fn max_listener_backlog() -> u32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
        .map_or(4096, |n| n.min(u32::from(u16::MAX)))
}

/// The accept loop: mirrors `http.Server.Serve`, behind a
/// `netutil.LimitListener(max_connections)` when there is a cap. With a cap, a
/// connection is accepted only with a free slot, so the next ones wait in the
/// kernel's accept queue (taking no file descriptor here) until one closes:
/// waiting, not closing the newest, because a client that waits sees latency
/// while one that is closed sees an error it may not retry. Without one (the
/// default, as kube-apiserver), the open-file limit is the bound: at `EMFILE`
/// the listener pauses and tries again.
///
/// With `acceptor`, each connection's TLS handshake runs in its own task (as Go
/// runs it in `conn.serve`), so a slow one never holds up the accept loop.
///
/// At shutdown it stops accepting, asks every connection to finish its request
/// and close (hyper's graceful shutdown; watches end on the same token), and
/// waits for them all.
async fn serve(
    listener: TcpListener,
    app: Router,
    limits: conn::Limits,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    max_connections: Option<usize>,
    shutdown: CancellationToken,
) {
    // TCP_NODELAY on every connection, as Go's net package sets by default:
    // a watch writes one small chunk per event, and Nagle's
    // algorithm would hold each behind the client's delayed ACK
    // (up to 40 ms on Linux). (axum's listener also retries failed accepts,
    // such as EMFILE, after a pause.)
    let mut listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
    });
    let slots = max_connections.map(|cap| Arc::new(Semaphore::new(cap)));
    let connections = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = async {
                // The semaphore is never closed, so this always gets a slot.
                let slot = match &slots {
                    Some(slots) => Arc::clone(slots).acquire_owned().await.ok(),
                    None => None,
                };
                (slot, listener.accept().await)
            } => accepted,
        };
        let (slot, (tcp, remote)) = accepted;
        tracing::trace!(?remote, "connection accepted");
        connections.spawn(serve_connection(
            tcp,
            app.clone(),
            limits,
            acceptor.clone(),
            shutdown.clone(),
            slot,
        ));
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// One connection, until it closes or the server shuts down; `slot` is its place
/// under `max_connections` when there is a cap, freed on return (a TLS handshake
/// holds one too).
async fn serve_connection<T>(
    tcp: T,
    app: Router,
    limits: conn::Limits,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    shutdown: CancellationToken,
    slot: Option<tokio::sync::OwnedSemaphorePermit>,
) where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    match acceptor {
        None => serve_http(tcp, app, limits, &shutdown).await,
        Some(acceptor) => {
            let timeout = limits.read_header_timeout;
            if let Some(tls) =
                tls::handshake(tcp, &acceptor, timeout, &shutdown).await
            {
                serve_http(tls, app, limits, &shutdown).await;
            }
        }
    }
    drop(slot);
}

/// HTTP/1.1 over one connection's (plain or decrypted) stream.
async fn serve_http<T>(
    io: T,
    app: Router,
    limits: conn::Limits,
    shutdown: &CancellationToken,
) where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let exchanges = Arc::new(conn::Exchanges::default());
    let io = conn::TimedIo::new(io, limits, Arc::clone(&exchanges));
    let service = conn::ConnService::new(app, exchanges);
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        // Go's MaxHeaderBytes: the request line plus headers.
        .max_header_size(limits.max_header_bytes)
        .max_buf_size(limits.max_header_bytes.max(8192))
        // The deadlines are `TimedIo`'s (see `conn`).
        .header_read_timeout(None);
    let mut connection = http1.serve_connection(TokioIo::new(io), service);
    let served = tokio::select! {
        served = &mut connection => served,
        () = shutdown.cancelled() => {
            std::pin::Pin::new(&mut connection).graceful_shutdown();
            (&mut connection).await
        }
    };
    if let Err(error) = served {
        tracing::debug!(%error, "connection ended");
    }
    connection
        .into_parts()
        .io
        .into_inner()
        .linger_if_rejected()
        .await;
}

/// The middleware that counts every request by verb, resource and code.
pub async fn count_requests(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let (verb, resource) =
        metrics::verb_and_resource(request.method(), request.uri());
    let noted = debug_ui::RequestNote::of(&state, &request, &resource);
    let response = next.run(request).await;
    let code = response.status().as_u16();
    state.metrics.count_request(&verb, &resource, code);
    if let Some(noted) = noted {
        noted.send(&state, &verb, code);
    }
    response
}

/// `GET /metrics`.
pub async fn serve_metrics(State(state): State<Arc<AppState>>) -> Response {
    let mut response =
        metrics::render(&state.metrics, &state.registry, &state.watches)
            .into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        ),
    );
    response
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
        .route("/metrics", get(serve_metrics))
        .route("/debug/watchers", get(debug::serve_watchers))
        .route("/debug/ui", get(debug_ui::serve_page))
        .route("/debug/ui/events", get(debug_ui::serve_events))
        .route("/api", any(handlers::serve_api))
        .route("/api/{*rest}", any(handlers::serve_api))
        .route("/apis", any(handlers::serve_api))
        .route("/apis/{*rest}", any(handlers::serve_api))
        .fallback(status::not_found_fallback)
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .layer(axum::middleware::from_fn(status::catch_panic))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            count_requests,
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

    /// `http://127.0.0.1:PORT`, or `https://…` with a serving certificate.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.local_addr)
    }

    /// The shared state (storages, metrics, live watches), for tests and examples.
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// A token cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.state.shutdown.clone()
    }

    /// The compactor (`--etcd-compaction-interval`), for tests and examples.
    pub fn compactor(&self) -> Option<&Compactor> {
        self.compactor.as_ref()
    }

    /// Graceful shutdown: stop accepting, end every watch stream, let in-flight
    /// requests finish, stop the compactor and the storages, and wait for the
    /// serving task.
    pub async fn shutdown(mut self) {
        self.state.shutdown.cancel();
        if let Some(compactor) = self.compactor.take() {
            compactor.stop().await;
        }
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
