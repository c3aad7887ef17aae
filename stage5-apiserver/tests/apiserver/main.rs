//! Stage 5c's integration tests, one test binary (one link) for the whole crate.
//!
//! - [`server_http`]: every verb, Status errors and watch streams over raw HTTP;
//! - [`server_connections`]: idle and read header timeouts, the connection cap,
//!   and `Status` answers for requests rejected before routing, over raw TCP;
//! - [`server_kube_client`]: kube-client and kube-runtime's watcher, unchanged;
//! - [`server_kubectl`]: the real kubectl;
//! - [`kubectl_workshop`]: a whole Kubernetes-basics session with kubectl, every
//!   answer checked, on the embedded store and real etcd;
//! - [`server_tls`]: HTTPS with a `--secure`-style certificate: kube-client and
//!   kubectl through the written kubeconfig, plain HTTP on the TLS port, and the
//!   read header timeout on a TLS handshake that never starts;
//! - [`server_informer`]: stage 4's shared informer against the server, through
//!   relists;
//! - [`server_informer_watch_reset`]: the informer through a proxy that resets its
//!   watch connection: it re-watches from its last version, without a list;
//! - [`compaction`]: `--etcd-compaction-interval`: the server's compactor, and the
//!   410 of an etcd watch from before the compacted revision;
//! - [`end_to_end_example`]: the README's main job, as a test;
//! - [`fault_convergence`]: the informer through a compaction, cut and frozen
//!   connections (a real 410) and a server restart, under 1,200 seeded random
//!   writes, on the embedded store and real etcd: its cache equals the server's;
//! - [`ha_haproxy`]: three mini-apiservers on a three-member etcd behind HAProxy:
//!   an API server and an etcd member killed mid-run, nothing lost, no relist;
//! - [`resource_version_limits`]: resource versions at the integer limits
//!   (504, 400, open watches) with and without the watch cache, and
//!   `timeoutSeconds=0`;
//! - [`protobuf`]: lists, gets, metadata lists, watches and errors in
//!   protobuf, read with k8s-pb, equal to the JSON answers;
//! - [`debug_ui`]: the live page `/debug/ui` in headless Chromium: events,
//!   watchers, a watcher closed as too slow and a relist after a 410;
//! - [`kinds`]: the 21 kinds the real control plane needs, through
//!   kube-client and kubectl on both backends: every verb, the status and
//!   scale subresources, eviction against a disruption budget, a namespace's
//!   finalize, a CSR's approval, a service's addresses;
//! - [`validation`]: object metadata validation, answered 422 `Invalid` as
//!   kube-apiserver answers it, on create, update and patch.

mod compaction;
mod debug_ui;
mod end_to_end_example;
mod fault_convergence;
#[cfg(feature = "etcd")]
mod ha_haproxy;
mod kinds;
mod kubectl_workshop;
mod protobuf;
mod resource_version_limits;
mod server_connections;
mod server_http;
mod server_informer;
mod server_informer_watch_reset;
mod server_kube_client;
mod server_kubectl;
mod server_tls;
mod validation;
