//! Measures what compaction gives back (issue #15): the RSS of this process, a
//! mini-apiserver on the embedded store with the watch cache on, after a burst of
//! 50,000 pods of about 1 KB (each created, then updated once), before and after
//! a compaction. Not part of CI; run by hand (Linux, reads `/proc/self/status`):
//!
//! ```text
//! cargo run --release -p stage5-apiserver --example compaction_rss -- [PODS] [--no-watch-cache]
//! ```
//!
//! The server starts with compaction off (`--etcd-compaction-interval=0`, so the
//! burst is measured as it was before the compactor existed); then the same
//! [`Compactor`] the server runs is started on its store with a 200 ms interval,
//! and its second round compacts. The writes go through the server's storages (the
//! etcd3 store under the Cacher), as the HTTP handlers call them.
//!
//! The last figure calls glibc's `malloc_trim(0)`, which the server never does: it
//! shows how much of what compaction freed the allocator keeps for reuse.

#![allow(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use stage5_apiserver::{Server, ServerConfig};
use stage5_storage::etcd3::Compactor;
use stage5_storage::{Object, Preconditions, ResourceInfo, Storage, object_key};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix("VmRSS:").and_then(|rest| {
                    rest.trim().trim_end_matches("kB").trim().parse().ok()
                })
            })
        })
        .unwrap_or(0)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// A pod of about 1 KB of JSON once stored.
fn pod(i: usize) -> Object {
    Object::new(&ResourceInfo::PODS, Some("default"), &format!("pod-{i:06}"))
        .with_labels([("app", "burst")])
        .with_data(json!({
            "spec": {
                "nodeName": format!("node-{:04}", i % 1000),
                "containers": [{
                    "name": "app",
                    "image": "registry.example/app:1.0",
                    "args": ["--filler", "x".repeat(640)],
                }],
            },
        }))
}

/// The key of the `i`th pod.
fn pod_key(i: usize) -> String {
    object_key(&ResourceInfo::PODS, Some("default"), &format!("pod-{i:06}"))
}

/// Updates the `i`th pod's `status.phase`: one more version of it.
async fn set_phase(storage: &dyn Storage, i: usize, phase: &'static str) {
    let update: stage5_storage::UpdateFn = Box::new(move |current: &Object| {
        let mut updated = current.clone();
        updated.data["status"] = json!({ "phase": phase });
        Ok(updated)
    });
    storage
        .guaranteed_update(pod_key(i), Preconditions::default(), update)
        .await
        .expect("update");
}

#[cfg(target_env = "gnu")]
fn malloc_trim() -> bool {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: glibc's malloc_trim takes no pointers and is thread-safe.
    unsafe { malloc_trim(0) != 0 }
}

#[cfg(not(target_env = "gnu"))]
fn malloc_trim() -> bool {
    false
}

#[tokio::main]
async fn main() {
    let pods: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000);
    let watch_cache = !std::env::args().any(|arg| arg == "--no-watch-cache");
    println!("watch cache: {}", if watch_cache { "on" } else { "off" });
    let config = ServerConfig::for_tests()
        .watch_cache(watch_cache)
        .etcd_compaction_interval(Duration::ZERO);
    let server = Server::start(config).await.expect("server starts");
    let registry = &server.state().registry;
    let storage: Arc<dyn Storage> = registry
        .find("", "v1", "pods")
        .expect("pods are served")
        .dyn_storage
        .clone();
    println!("RSS empty:                     {}", mib(rss_kib()));

    let started = Instant::now();
    futures::stream::iter(0..pods)
        .map(|i| {
            let storage = Arc::clone(&storage);
            async move {
                storage.create(pod_key(i), pod(i)).await.expect("create");
                set_phase(storage.as_ref(), i, "Running").await;
            }
        })
        .buffer_unordered(64)
        .collect::<()>()
        .await;
    let kv = registry.kv();
    let size = kv
        .range(stage5_storage::kv::RangeRequest::key(object_key(
            &ResourceInfo::PODS,
            Some("default"),
            "pod-000000",
        )))
        .await
        .ok()
        .and_then(|read| read.kvs.first().map(|kv| kv.value.len()))
        .unwrap_or(0);
    println!(
        "{pods} pods created and updated in {:.1} s ({size} bytes of JSON each)",
        started.elapsed().as_secs_f64()
    );
    let before = rss_kib();
    println!("RSS after the burst:           {}", mib(before));

    let shutdown = server.shutdown_token();
    let compactor =
        Compactor::start(Arc::clone(&kv), Duration::from_millis(200), &shutdown);
    let mut compacted = compactor.subscribe();
    tokio::time::timeout(
        Duration::from_secs(30),
        compacted.wait_for(|rev| *rev > 0),
    )
    .await
    .expect("compacted in time")
    .expect("the compactor runs");
    compactor.stop().await;
    let after = rss_kib();
    println!(
        "RSS after compaction (rev {}): {} ({} freed to the OS)",
        compacted.borrow().to_owned(),
        mib(after),
        mib(before.saturating_sub(after))
    );
    // A second burst of updates: the allocator reuses what compaction freed.
    let second = Instant::now();
    futures::stream::iter(0..pods)
        .map(|i| {
            let storage = Arc::clone(&storage);
            async move {
                set_phase(storage.as_ref(), i, "Succeeded").await;
            }
        })
        .buffer_unordered(64)
        .collect::<()>()
        .await;
    let reburst = rss_kib();
    println!(
        "RSS after {pods} more updates: {} (+{} in {:.1} s)",
        mib(reburst),
        mib(reburst.saturating_sub(after)),
        second.elapsed().as_secs_f64(),
    );
    if malloc_trim() {
        let trimmed = rss_kib();
        println!(
            "RSS after malloc_trim(0):      {} ({} more)",
            mib(trimmed),
            mib(reburst.saturating_sub(trimmed))
        );
    }
    server.shutdown().await;
}
