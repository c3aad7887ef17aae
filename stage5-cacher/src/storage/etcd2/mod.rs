//! The 1.5-era etcd2 watcher (`pkg/storage/etcd/etcd_watcher.go`), over etcd's v2 HTTP API.
