//! apiserver's `pkg/storage/etcd3`: storage of one resource type over a [`Kv`](super::kv::Kv).
