//! apiserver's `pkg/storage/cacher`: the watch cache (stage 5b).
