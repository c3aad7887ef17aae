//! Measures what compaction gives back (issue #15): the RSS of this process, a
//! mini-apiserver on the embedded store with the watch cache on, through a burst
//! of 50,000 pods of about 1 KB: each created, then updated once; a compaction;
//! 50,000 more updates (which reuse what the compaction freed); the pods deleted;
//! a last compaction, after which the store holds nothing but its keys' absence. Not part of CI; run by hand (Linux, reads `/proc/self/status`):
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
//! Every figure is read once the watch cache has caught up with the store (a list
//! at the store's current revision answers), so no event is still in flight.
//! Like every example, it runs on the workspace's allocator (mimalloc);
//! `--features workspace-allocator/system` measures glibc's `malloc` instead, and
//! then the last figure calls glibc's `malloc_trim(0)`, which the server never
//! does: it shows how much of what compaction freed glibc keeps for reuse.

#![allow(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};
use workspace_allocator as _;

use apimachinery::apis::meta::v1::ListOptions;
use futures::StreamExt;
use serde_json::json;
use stage5_apiserver::{Server, ServerConfig};
use stage5_storage::etcd3::Compactor;
use stage5_storage::{
    Object, Preconditions, ResourceInfo, SelectionPredicate, Storage, object_key,
};

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

/// Waits until a list at the store's current revision answers: the watch cache
/// (when on) has applied every write so far. Bounded: 60 s.
async fn settle(storage: &dyn Storage, kv: &dyn stage5_storage::kv::Kv) {
    let prefix = ResourceInfo::PODS.key_prefix();
    let revision = stage5_storage::etcd3::current_revision(kv, prefix.clone())
        .await
        .expect("the store answers");
    let options = ListOptions {
        resource_version: revision.to_string(),
        limit: 1,
        ..ListOptions::default()
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        while storage
            .get_list(
                prefix.clone(),
                options.clone(),
                SelectionPredicate::default(),
            )
            .await
            .is_err()
        {}
    })
    .await
    .expect("the watch cache catches up within a minute");
}

/// Runs the server's [`Compactor`] on `kv` with a 200 ms interval until it has
/// compacted at a revision newer than `after`; returns that revision.
async fn compact(
    kv: &Arc<dyn stage5_storage::kv::Kv>,
    shutdown: &tokio_util::sync::CancellationToken,
    after: i64,
) -> i64 {
    let compactor =
        Compactor::start(Arc::clone(kv), Duration::from_millis(200), shutdown);
    let mut compacted = compactor.subscribe();
    let revision = tokio::time::timeout(
        Duration::from_secs(30),
        compacted.wait_for(|rev| *rev > after),
    )
    .await
    .expect("compacted in time")
    .map(|rev| *rev)
    .expect("the compactor runs");
    compactor.stop().await;
    revision
}

/// Runs `write` for every pod, 64 at a time.
async fn for_every_pod<F, Fut>(pods: usize, write: F)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    futures::stream::iter(0..pods)
        .map(write)
        .buffer_unordered(64)
        .collect::<()>()
        .await;
}

fn main() {
    workspace_allocator::runtime()
        .expect("a runtime")
        .block_on(measure());
}

/// RSS once it has settled: read every 100 ms until it has not dropped for a
/// second (at most 10 s), so an idle worker's memory going back to the system
/// (`workspace_allocator::on_thread_park`, at most once a second) is counted.
async fn settled_rss() -> u64 {
    let mut lowest = rss_kib();
    let mut lowest_at = Instant::now();
    let started = Instant::now();
    while lowest_at.elapsed() < Duration::from_secs(1)
        && started.elapsed() < Duration::from_secs(10)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = rss_kib();
        if now + 256 < lowest {
            lowest = now;
            lowest_at = Instant::now();
        }
    }
    rss_kib()
}

async fn measure() {
    let pods: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000);
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let watch_cache = !std::env::args().any(|arg| arg == "--no-watch-cache");
    println!("watch cache: {}", if watch_cache { "on" } else { "off" });
    println!("allocator: {}", workspace_allocator::NAME);
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
    let kv = registry.kv();
    let shutdown = server.shutdown_token();
    let empty = rss_kib();
    println!("RSS empty:                          {}", mib(empty));

    let started = Instant::now();
    for_every_pod(pods, |i| {
        let storage = Arc::clone(&storage);
        async move {
            storage.create(pod_key(i), pod(i)).await.expect("create");
            set_phase(storage.as_ref(), i, "Running").await;
        }
    })
    .await;
    let size = kv
        .range(stage5_storage::kv::RangeRequest::key(pod_key(0)))
        .await
        .ok()
        .and_then(|read| read.kvs.first().map(|kv| kv.value.len()))
        .unwrap_or(0);
    println!(
        "{pods} pods created and updated in {:.1} s ({size} bytes of JSON each)",
        started.elapsed().as_secs_f64()
    );
    settle(storage.as_ref(), kv.as_ref()).await;
    let burst = settled_rss().await;
    println!("RSS after the burst:                {}", mib(burst));

    let revision = compact(&kv, &shutdown, 0).await;
    settle(storage.as_ref(), kv.as_ref()).await;
    let compacted = settled_rss().await;
    println!(
        "RSS after compaction at {revision}:     {} ({} given back)",
        mib(compacted),
        mib(burst.saturating_sub(compacted))
    );

    // More updates: the allocator reuses what compaction freed.
    for_every_pod(pods, |i| {
        let storage = Arc::clone(&storage);
        async move { set_phase(storage.as_ref(), i, "Succeeded").await }
    })
    .await;
    settle(storage.as_ref(), kv.as_ref()).await;
    let updated = settled_rss().await;
    println!(
        "RSS after {pods} more updates:      {} (+{})",
        mib(updated),
        mib(updated.saturating_sub(compacted)),
    );

    // The burst ends: every pod deleted, then compacted away.
    for_every_pod(pods, |i| {
        let storage = Arc::clone(&storage);
        async move {
            storage
                .delete(pod_key(i), Preconditions::default())
                .await
                .expect("delete");
        }
    })
    .await;
    settle(storage.as_ref(), kv.as_ref()).await;
    let deleted = settled_rss().await;
    println!("RSS after deleting them:            {}", mib(deleted));
    let revision = compact(&kv, &shutdown, revision).await;
    settle(storage.as_ref(), kv.as_ref()).await;
    let gone = settled_rss().await;
    println!(
        "RSS after compaction at {revision}:     {} ({} given back; {} above empty)",
        mib(gone),
        mib(deleted.saturating_sub(gone)),
        mib(gone.saturating_sub(empty))
    );
    // Only glibc keeps freed memory that `malloc_trim` gives back.
    if workspace_allocator::NAME != "mimalloc" && malloc_trim() {
        let trimmed = rss_kib();
        println!(
            "RSS after malloc_trim(0):           {} ({} more)",
            mib(trimmed),
            mib(gone.saturating_sub(trimmed))
        );
    }
    server.shutdown().await;
}
