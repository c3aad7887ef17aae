//! The controllers against a real API server: stage 5's, in this process, on
//! the embedded store, reached through kube-client as any controller reaches
//! kube-apiserver. One test binary for every cluster test (each binary links
//! the whole server).

mod garbage_collector;
mod replica_set;
mod support;
