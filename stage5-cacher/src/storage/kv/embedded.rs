//! EmbeddedKv: an in-process MVCC store with etcd's observable semantics.
use super::*;

/// Options of an [`EmbeddedKv`].
#[derive(Clone, Debug, Default)]
pub struct EmbeddedKvOptions {}

/// An in-process MVCC store (being built).
#[derive(Debug, Default)]
pub struct EmbeddedKv {}
