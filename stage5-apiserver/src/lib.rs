//! # Stage 5c: the HTTP face of the watch
//!
//! A Kubernetes-compatible API server (`mini-apiserver`) over the etcd3 storage
//! (`stage5-storage`) and the watch cache (`stage5-cacher`).
//!
//! It mirrors the parts of `k8s.io/apiserver` (and of kube-apiserver's own
//! `kubernetes/pkg`) that a client of the watch touches. The general Kubernetes
//! libraries it uses are where upstream keeps them: apimachinery's (labels,
//! validation, strategic merge patch, managed fields, the protobuf and watch
//! serializers) in the workspace's `apimachinery` crate, and
//! `sigs.k8s.io/structured-merge-diff` in its own crate.
//!
//! | Go (k8s.io/apiserver, unless named)                             | Rust                                    |
//! |-----------------------------------------------------------------|-----------------------------------------|
//! | `pkg/server/config.go` (`Config`), kube-apiserver's options      | [`ServerConfig`], [`Backend`] ([`config`]) |
//! | `pkg/server/options/serving.go`, `secure_serving.go`, client-go's `util/cert` | [`secure_serving`] (HTTPS, self-signed certificates) |
//! | kubeadm's `util/kubeconfig` (`CreateBasic`)                      | [`kubeconfig`] (`--secure`'s kubeconfig) |
//! | `pkg/server/genericapiserver.go` (`PrepareRun`, `Run`), `handler.go`, `routes/metrics.go` | [`Server`], [`RunningServer`], [`router`] ([`server`]) |
//! | `pkg/server/filters` (`WithTimeoutForNonLongRunningRequests`, the connection limits) | `server/conn.rs`, `server/tls.rs` |
//! | `GenericAPIServer`'s fields, a handler's `RequestScope`          | [`AppState`] ([`app_state`])            |
//! | `pkg/endpoints/request/requestinfo.go` (`RequestInfoFactory`)    | [`request_info`]                        |
//! | `pkg/endpoints/installer.go` (`registerResourceHandlers`)        | `handlers/installer.rs` (the [`handlers`] router) |
//! | `pkg/endpoints/handlers/rest.go` (shared by the verbs)           | `handlers/rest.rs`                      |
//! | `pkg/endpoints/handlers/get.go` (`GetResource`, `ListResource`)  | `handlers/get.rs`                       |
//! | `pkg/endpoints/handlers/create.go` (`CreateResource`)            | `handlers/create.rs`                    |
//! | `pkg/endpoints/handlers/update.go` (`UpdateResource`)            | `handlers/update.rs`                    |
//! | `pkg/endpoints/handlers/patch.go` (`PatchResource`, `interpretStrategicMergePatchError`) | [`handlers::patch`] |
//! | `pkg/endpoints/handlers/delete.go` (`DeleteResource`)            | `handlers/delete.rs`                    |
//! | `patch.go`'s `applyPatcher` (server-side apply)                  | `handlers/apply.rs`                     |
//! | the registries' `StatusREST`, `ScaleREST`                        | [`handlers::subresource`]               |
//! | `pkg/endpoints/handlers/watch.go` (`serveWatch`, `WatchServer`)  | [`handlers::watch`]                     |
//! | `pkg/endpoints/handlers/negotiation` (`NegotiateOutputMediaType`) | [`handlers::negotiation`]             |
//! | `pkg/endpoints/handlers/response.go` (`asTable`, `watchEmbeddedEncoder`), the list writer | [`handlers::response`] |
//! | `pkg/endpoints/handlers/fieldmanager` (the glue over apimachinery's `managedfields`) | [`fieldmanager`] |
//! | kubernetes' `pkg/printers` (`GenerateTable`, `internalversion`) | [`printers`]                            |
//! | `pkg/endpoints/handlers/responsewriters/status.go`, `apierrors`  | [`status`]                              |
//! | `pkg/endpoints/discovery`, `/version`, `/openapi`                | [`discovery`]                           |
//! | `pkg/authentication/request/bearertoken`, the token file         | [`auth`]                                |
//! | `pkg/registry/authorization/selfsubjectaccessreview`, `selfsubjectrulesreview` | [`access_review`]          |
//! | `pkg/server/healthz`                                             | `/healthz`, `/readyz`, `/livez`         |
//! | `pkg/endpoints/metrics`, the cacher's metrics                    | [`metrics`]                             |
//! | `pkg/endpoints/metrics`' `RegisteredWatchers`, per watch          | [`live_watches`]                        |
//! | (none: a teaching page over the Cacher's watchers)                | [`debug`] (`/debug/watchers`)           |
//! | (none: the live page of the machinery for a workshop's projector) | [`debug_ui`] (`/debug/ui`)              |
//! | `APIGroupInfo`, `pkg/registry/rest`, `pkg/registry/generic/registry`, each kind's `strategy.go` | [`registry`] |
//! | kubernetes' `pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go` | [`defaults`]             |
//! | the registry `Store`'s and etcd3 store's `dryRun`                | [`dry_run`]                             |
//! | kube-apiserver's `events.k8s.io` storage, `pkg/apis/events/v1/conversion.go` | [`events_v1`]             |
//! | the namespace registry's `Delete` and the namespace controller (`pkg/controller/namespace/deletion`) | [`namespace_deletion`] |
//! | `plugin/pkg/admission/namespace/lifecycle`                       | [`namespace_lifecycle`]                 |
//! | `pkg/controlplane/controller/systemnamespaces`                   | [`system_namespaces`]                   |
//! | `cmd/kube-apiserver`                                             | the `mini-apiserver` binary             |
//!
//! The path of one event from the KV to this crate's HTTP stream, file by file, is
//! drawn in `stage5_storage`'s crate documentation.
//!
//! ```text
//!  HTTP ──► auth ──► metrics ──► handlers/installer ──► handlers ──► registry ──► Storage
//!                                 (request_info, the route) │     (strategy)  (Cacher or
//!                                                           │                 Etcd3Store)
//!                                                           └── handlers/watch ──► encoded
//!                                                               lines, chunked
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
/// `cmd/kube-apiserver/app`: the command line and its start.
pub mod app {
    pub mod options;
    pub mod server;
}
pub mod apis;
pub mod app_state;
pub mod auth;
pub mod config;
pub mod debug;
pub mod debug_ui;
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
#[cfg(feature = "testing")]
pub mod testing;

pub use app_state::AppState;
pub use config::{
    Backend, DEFAULT_BIND, DEFAULT_BODY_LIMIT, DEFAULT_MIN_REQUEST_TIMEOUT,
    DEFAULT_WATCH_CACHE_CAPACITY, ServerConfig, ServerError,
};
pub use registry::{Registry, ResourceStorage, new_storage};
pub use server::{RunningServer, Server, router};
