//! EtcdKv: real etcd through the `etcd-client` crate (being built).

/// The [`Kv`](super::Kv) over real etcd (being built).
#[derive(Debug)]
pub struct EtcdKv {}
