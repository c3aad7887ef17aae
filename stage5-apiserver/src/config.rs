//! The server's options: mirrors the parts of apiserver's `pkg/server/config.go`
//! (`Config`) and kube-apiserver's `options.ServerRunOptions` and etcd options that
//! this server has.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use stage5_storage::ResourceInfo;
use stage5_storage::kv::Kv;

use crate::secure_serving::CertKey;

/// The default address: loopback only, the insecure port kube-apiserver used to
/// have.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// The default address when serving HTTPS: loopback, kube-apiserver's
/// `--secure-port` default (6443).
pub const DEFAULT_SECURE_BIND: &str = "127.0.0.1:6443";
/// The default largest request body (kube-apiserver's `MaxRequestBodyBytes` is 3
/// MiB).
pub const DEFAULT_BODY_LIMIT: usize = 3 * 1024 * 1024;
/// The default watch cache capacity (apiserver's default `watchCacheSize` of 100
/// grows up to this many events).
pub const DEFAULT_WATCH_CACHE_CAPACITY: usize = 1024;
/// Mirrors `--min-request-timeout` (1800 s): a watch without `timeoutSeconds` ends
/// after a random time between this and twice this.
pub const DEFAULT_MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);
/// Mirrors apiserver's `pkg/server/secure_serving.go` (`ReadHeaderTimeout: 32 *
/// time.Second`, "just shy of requestTimeoutUpperBound"): from a request's first
/// byte, its line and headers must arrive within this.
pub const DEFAULT_READ_HEADER_TIMEOUT: Duration = Duration::from_secs(32);
/// Mirrors apiserver's `pkg/server/secure_serving.go` (`IdleTimeout: 90 *
/// time.Second`, "matches http.DefaultTransport keep-alive timeout"): a connection
/// with no request in flight is closed after this without a request's first byte.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// Mirrors apiserver's `pkg/server/secure_serving.go` (`MaxHeaderBytes: 1 << 20`):
/// the largest request line plus headers.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 1 << 20;

/// Mirrors kube-apiserver's default `--etcd-compaction-interval` (5 minutes;
/// `pkg/storage/etcd3/compact.go` compacts each interval).
pub const DEFAULT_ETCD_COMPACTION_INTERVAL: Duration =
    stage5_storage::etcd3::DEFAULT_COMPACTION_INTERVAL;

/// Where the objects live.
#[derive(Clone, Default)]
pub enum Backend {
    /// A fresh in-process MVCC store.
    #[default]
    Embedded,
    /// Real etcd at these client URLs (cargo feature `etcd`): every member of the
    /// cluster, as kube-apiserver's `--etcd-servers` (`storagebackend.TransportConfig.
    /// ServerList`); the client balances over them and fails over when one dies.
    Etcd(Vec<String>),
    /// A [`Kv`] the caller built (tests share one to compact it, for example).
    Kv(Arc<dyn Kv>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Embedded => f.write_str("Embedded"),
            Backend::Etcd(urls) => f.debug_tuple("Etcd").field(urls).finish(),
            Backend::Kv(_) => f.write_str("Kv(..)"),
        }
    }
}

/// The server's options: the flags of kube-apiserver that matter here. Mirrors the
/// parts of apiserver's `server.Config` and `options.ServerRunOptions` this server
/// has.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The address to listen on; port 0 picks a free one. Default `127.0.0.1:8080`.
    pub bind: SocketAddr,
    /// Where the objects live. Default: an embedded store.
    pub backend: Backend,
    /// `--token-file`: `token,user` lines; `None` turns authentication off.
    pub token_file: Option<PathBuf>,
    /// `--watch-cache`: serve reads and watches from the Cacher (default) or from
    /// etcd directly.
    pub watch_cache: bool,
    /// Events each resource's watch cache keeps.
    pub watch_cache_capacity: usize,
    /// The largest request body; larger ones are 413.
    pub body_limit: usize,
    /// `--min-request-timeout`: watches without `timeoutSeconds` end after between
    /// this and twice this.
    pub min_request_timeout: Duration,
    /// The resource types served.
    pub resources: Vec<ResourceInfo>,
    /// `http.Server.ReadHeaderTimeout`: from a request's first byte (for a new
    /// connection's first request, from the accept), its line and headers must
    /// arrive within this, or the connection is closed without an answer (as Go
    /// does). Default 32 s.
    pub read_header_timeout: Duration,
    /// `http.Server.IdleTimeout`: a keep-alive connection with no request in flight
    /// is closed when its next request does not start within this. A long watch is a
    /// request in flight, so it is never idle. Default 90 s.
    pub idle_timeout: Duration,
    /// `http.Server.MaxHeaderBytes`: the largest request line plus headers; more is
    /// 431 (or 414 when the request line alone does not fit), with a `Status`.
    /// Default 1 MiB.
    pub max_header_bytes: usize,
    /// The most connections served at once; the next ones wait to be accepted
    /// until one closes (Go's `netutil.LimitListener`). Default `None`: no cap,
    /// as kube-apiserver has none (its `--max-requests-inflight` does not count
    /// watches); the open-file limit is the bound, raised to its hard limit at
    /// start ([`crate::app::server::raise_open_file_limit`]).
    pub max_connections: Option<usize>,
    /// `--etcd-compaction-interval`: how often the compactor compacts the store
    /// (to the revision it saw one interval earlier), on either backend. Zero turns
    /// compaction off, as upstream. Default 5 minutes.
    pub etcd_compaction_interval: Duration,
    /// `--tls-cert-file` and `--tls-private-key-file` (or `--secure`'s generated
    /// pair): serve HTTPS with this certificate. `None` (the default): plain HTTP.
    pub tls: Option<CertKey>,
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
            read_header_timeout: DEFAULT_READ_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_connections: None,
            etcd_compaction_interval: DEFAULT_ETCD_COMPACTION_INTERVAL,
            tls: None,
        }
    }
}

impl ServerConfig {
    /// A config for tests: a free loopback port, the embedded store, everything else
    /// default.
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

    /// The same config with this header read timeout.
    #[must_use]
    pub fn read_header_timeout(mut self, timeout: Duration) -> Self {
        self.read_header_timeout = timeout;
        self
    }

    /// The same config with this idle timeout.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The same config with this limit on a request's line plus headers.
    #[must_use]
    pub fn max_header_bytes(mut self, limit: usize) -> Self {
        self.max_header_bytes = limit;
        self
    }

    /// The same config with this compaction interval (zero: no compaction).
    #[must_use]
    pub fn etcd_compaction_interval(mut self, interval: Duration) -> Self {
        self.etcd_compaction_interval = interval;
        self
    }

    /// The same config with this cap on open connections (at least 1).
    #[must_use]
    pub fn max_connections(mut self, cap: usize) -> Self {
        self.max_connections = Some(cap.max(1));
        self
    }

    /// The same config serving HTTPS with `cert`.
    #[must_use]
    pub fn tls(mut self, cert: CertKey) -> Self {
        self.tls = Some(cert);
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
    /// The backend could not be set up (e.g. etcd without the `etcd` feature, or
    /// unreachable).
    #[error("backend: {0}")]
    Backend(String),
    /// The serving certificate or key could not be read, parsed or generated.
    #[error("TLS: {0}")]
    Tls(String),
}

impl From<crate::secure_serving::TlsError> for ServerError {
    fn from(error: crate::secure_serving::TlsError) -> Self {
        ServerError::Tls(error.0)
    }
}
