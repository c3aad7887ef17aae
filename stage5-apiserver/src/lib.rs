//! # Stage 5c: the HTTP face of the watch
//!
//! A Kubernetes-compatible API server (`mini-apiserver`) over the etcd3 storage
//! (`stage5-storage`) and the watch cache (`stage5-cacher`).
//!
//! It mirrors the parts of `k8s.io/apiserver` that a client of the watch touches:
//!
//! | Go (k8s.io/apiserver, unless named)                             | Rust                                    |
//! |-----------------------------------------------------------------|-----------------------------------------|
//! | `pkg/server/config.go` (`Config`), kube-apiserver's options      | [`ServerConfig`], [`Backend`] ([`config`]) |
//! | `pkg/server/options/serving.go`, `secure_serving.go`, client-go's `util/cert` | [`secure_serving`] (HTTPS, self-signed certificates) |
//! | kubeadm's `util/kubeconfig` (`CreateBasic`)                      | [`kubeconfig`] (`--secure`'s kubeconfig) |
//! | `pkg/server/genericapiserver.go` (`PrepareRun`, `Run`), `handler.go` | [`Server`], [`RunningServer`], [`router`] ([`server`]) |
//! | `GenericAPIServer`'s fields, a handler's `RequestScope`          | [`AppState`] ([`app_state`])            |
//! | `pkg/endpoints/request/requestinfo.go` (`RequestInfoFactory`)    | [`request_info`]                        |
//! | `pkg/endpoints/handlers/rest.go` (shared by the verbs)           | `handlers/rest.rs`                      |
//! | `pkg/endpoints/handlers/get.go` (`GetResource`, `ListResource`)  | `handlers/get.rs`                       |
//! | `pkg/endpoints/handlers/create.go` (`CreateResource`)            | `handlers/create.rs`                    |
//! | `pkg/endpoints/handlers/update.go` (`UpdateResource`)            | `handlers/update.rs`                    |
//! | `pkg/endpoints/handlers/patch.go` (`PatchResource`)              | [`handlers::patch`]                     |
//! | apimachinery's `pkg/util/strategicpatch` (`StrategicMergeMapPatch`) | `handlers/strategic_merge.rs`        |
//! | `k8s.io/api`'s `patchStrategy`/`patchMergeKey` struct tags        | `handlers/patch_meta.rs`                |
//! | `pkg/endpoints/handlers/delete.go` (`DeleteResource`)            | `handlers/delete.rs`                    |
//! | `patch.go`'s `applyPatcher` (server-side apply)                  | `handlers/apply.rs`                     |
//! | `pkg/endpoints/handlers/fieldmanager`, structured-merge-diff     | [`fieldmanager`]                        |
//! | `pkg/endpoints/handlers/watch.go` (`serveWatch`, `WatchServer`)  | [`watch`]                               |
//! | `pkg/endpoints/handlers/negotiation` (`NegotiateOutputMediaType`) | [`handlers::negotiation`]             |
//! | `pkg/endpoints/handlers/response.go` (`asTable`, `watchEmbeddedEncoder`) | [`handlers::response`]         |
//! | kubernetes' `pkg/printers` (`GenerateTable`, `internalversion`) | [`printers`] |
//! | `pkg/endpoints/handlers/responsewriters/status.go`, `apierrors`  | [`status`]                              |
//! | `pkg/endpoints/discovery`, `/version`, `/openapi`                | [`discovery`]                           |
//! | `pkg/authentication/request/bearertoken`, the token file         | [`auth`]                                |
//! | `pkg/server/healthz`                                             | `/healthz`, `/readyz`, `/livez`         |
//! | `pkg/endpoints/metrics`, the cacher's metrics                    | [`metrics`]                             |
//! | (none: a teaching page over the Cacher's watchers)                | [`debug`] (`/debug/watchers`)           |
//! | `registry/generic/registry` (`StorageWithCacher`, `Store`)       | [`registry`]                            |
//! | `apimachinery/pkg/api/validation` (`ValidateObjectMeta`)         | [`validation`]                          |
//! | `cmd/kube-apiserver`                                             | the `mini-apiserver` binary             |
//!
//! The path of one event from the KV to this crate's HTTP stream, file by file, is
//! drawn in `stage5_storage`'s crate documentation.
//!
//! ```text
//!  HTTP ──► auth ──► metrics ──► request_info ──► handlers ──► registry ──► Storage
//!                                                   │                   (Cacher or Etcd3Store)
//!                                                   └── watch ──► watch_encoded lines, chunked
//! ```
//!
//! One generic route family serves every registered type: `/api/v1/...` for the core
//! group and `/apis/{group}/{version}/...` for the others, namespaced and
//! cluster-scoped alike.
//!
//! # Shutdown
//! [`RunningServer::shutdown`] cancels one token: the listener stops accepting,
//! every watch stream ends (its body sees the token), in-flight requests finish, the
//! storages stop, and the serving task is awaited. Nothing it spawned outlives it.

pub mod access_review;
pub mod app_state;
pub mod auth;
pub mod config;
pub mod debug;
pub mod defaults;
pub mod discovery;
pub mod dry_run;
pub mod events_v1;
pub mod fieldmanager;
pub mod handlers;
pub mod kubeconfig;
pub mod live_watches;
pub mod metrics;
pub mod namespace_deletion;
pub mod namespace_lifecycle;
pub mod printers;
pub mod registry;
pub mod request_info;
pub mod secure_serving;
pub mod server;
pub mod status;
pub mod system_namespaces;

pub use app_state::AppState;
pub use config::{
    Backend, DEFAULT_BIND, DEFAULT_BODY_LIMIT, DEFAULT_MIN_REQUEST_TIMEOUT,
    DEFAULT_WATCH_CACHE_CAPACITY, ServerConfig, ServerError,
};
pub use registry::{Registry, ResourceStorage, new_storage};
pub use server::{RunningServer, Server, router};
