//! Stage 6 against a real API server: stage 5's, in this process, on the
//! embedded store, reached through kube-client as any controller reaches
//! kube-apiserver. One test binary for every cluster test (each binary links
//! the whole server):
//!
//! - [`replica_set`] and [`garbage_collector`]: the controller manager's
//!   controllers make, adopt, release and delete pods;
//! - [`deployment`]: a Deployment gets a ReplicaSet per template, scales,
//!   rolls out within maxSurge and maxUnavailable, keeps its history, undoes;
//! - [`hollow_kubelet`]: nodes register, renew their Leases, stay Ready, run
//!   the pods bound to them (those bound before they started too) and remove
//!   them after a graceful delete;
//! - [`kubectl_session`]: a basics session with the real kubectl against the
//!   `mini-cluster` binary, on the embedded store and on real etcd;
//! - [`live_page`]: the controller manager's live page streams a view of
//!   every informer until each has synced and watches;
//! - [`scheduler`]: pods without a node are bound to a Ready node with room
//!   and run; a pod that fits nowhere gets `FailedScheduling` and
//!   `PodScheduled=False`, and runs once a bigger node joins; cordoned and
//!   NotReady nodes get no pods; least allocated spreads pods.
//!
//! Every wait is bounded; every task a test starts is stopped and awaited
//! before it ends.

mod common;
mod deployment;
mod garbage_collector;
mod hollow_kubelet;
mod kubectl_session;
mod live_page;
mod replica_set;
mod scheduler;
