//! Stage 6's scheduler and hollow kubelets against an in-process
//! `mini-apiserver` on the embedded store, one test binary (one link of the
//! server) for both:
//!
//! - [`hollow_kubelet`]: nodes register, renew their Leases, stay Ready, run
//!   the pods bound to them (those bound before they started too) and remove
//!   them after a graceful delete;
//! - [`scheduler`]: pods without a node are bound to a Ready node with room
//!   and run; a pod that fits nowhere gets `FailedScheduling` and
//!   `PodScheduled=False`, and runs once a bigger node joins; cordoned and
//!   NotReady nodes get no pods; least allocated spreads pods.
//!
//! Every wait is bounded ([`common::WAIT`]); every task a test starts is
//! stopped and awaited before it ends.

mod common;
mod hollow_kubelet;
mod scheduler;
