//! The server's options: mirrors the parts of apiserver's `pkg/server/config.go`
//! (`Config`) and kube-apiserver's `options.ServerRunOptions` and etcd options that
//! this server has.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use stage5_storage::ResourceInfo;
use stage5_storage::kv::Kv;

/// The default address: loopback only, the insecure port kube-apiserver used to
/// have.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// The default largest request body (kube-apiserver's `MaxRequestBodyBytes` is 3
/// MiB).
pub const DEFAULT_BODY_LIMIT: usize = 3 * 1024 * 1024;
/// The default watch cache capacity (apiserver's default `watchCacheSize` of 100
/// grows up to this many events).
pub const DEFAULT_WATCH_CACHE_CAPACITY: usize = 1024;
/// Mirrors `--min-request-timeout` (1800 s): a watch without `timeoutSeconds` ends
/// after a random time between this and twice this.
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
}
