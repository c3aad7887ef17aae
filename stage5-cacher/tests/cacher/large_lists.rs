//! Issue #15: lists larger than the gRPC receive limit, over a real etcd (feature
//! `etcd`). 8,000 pods of about 1.5 KB (12 MB) are more than one etcd answer
//! may carry under tonic's default 4 MiB limit, the limit the etcd client kept
//! before. The etcd3 store lists them in ranges of at most
//! `DEFAULT_RANGE_PAGE_SIZE` keys, so even a client held to 4 MiB lists them
//! all; and a fresh Cacher (an apiserver restart) over the same etcd lists them
//! (pages of 10,000, upstream's `storageWatchListPageSize`), becomes ready,
//! serves them and watches on from the list's version.

#![cfg(feature = "etcd")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use apimachinery::watch::WatchEvent;
use futures::StreamExt;
use serde_json::json;
use stage5_cacher::{Cacher, CacherConfig};
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EtcdKv, Kv, KvError, RangeRequest};
use stage5_storage::testing::EtcdServer;
use stage5_storage::{
    Object, ResourceInfo, SelectionPredicate, Storage, list_prefix, object_key,
};

/// How many pods, and how many bytes of padding each carries.
const PODS: usize = 8_000;
const PADDING: usize = 1_400;
/// The receive limit etcd-client (tonic) has by default, which the client kept
/// before issue #15.
const TONIC_DEFAULT_RECV: usize = 4 * 1024 * 1024;
/// How many creates run at once.
const CONCURRENT_WRITES: usize = 128;
const WAIT: Duration = Duration::from_secs(20);

fn pod(n: usize) -> (String, Object) {
    let name = format!("pod-{n:05}");
    let obj = Object::new(&ResourceInfo::PODS, Some("big"), &name).with_data(
        json!({"spec": {"nodeName": "node-1", "padding": "x".repeat(PADDING)}}),
    );
    (object_key(&ResourceInfo::PODS, Some("big"), &name), obj)
}

async fn connect(server: &EtcdServer, recv_limit: Option<usize>) -> Arc<dyn Kv> {
    let kv = EtcdKv::connect([server.client_url()])
        .await
        .expect("connect to the test etcd");
    match recv_limit {
        Some(limit) => Arc::new(kv.with_max_call_recv_msg_size(limit)),
        None => Arc::new(kv),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_over_4_mib_pages_and_a_restarted_cacher_lists_and_watches_it() {
    let test = "large_lists::a_list_over_4_mib_pages_and_a_restarted_cacher_lists_and_watches_it";
    let Some(server) = EtcdServer::start_or_skip(test) else {
        return;
    };
    let start = Instant::now();
    let kv = connect(&server, None).await;
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let prefix = list_prefix(&ResourceInfo::PODS, None);

    // Write 8,000 pods through the storage API, 128 at a time.
    let one_pod_bytes = serde_json::to_vec(&pod(0).1).expect("encode").len();
    let writes = futures::stream::iter(0..PODS)
        .map(|n| {
            let store = store.clone();
            async move {
                let (key, obj) = pod(n);
                store.create_object(key, obj).await
            }
        })
        .buffer_unordered(CONCURRENT_WRITES);
    let written = tokio::time::timeout(WAIT, writes.collect::<Vec<_>>())
        .await
        .expect("the writes finish in time");
    assert!(written.iter().all(Result::is_ok), "every create succeeds");
    let total_bytes = one_pod_bytes * PODS;
    assert!(total_bytes > 10 * 1024 * 1024, "{total_bytes} bytes");
    let wrote_in = start.elapsed();

    // One range of everything is more than the old 4 MiB limit allows...
    let limited = connect(&server, Some(TONIC_DEFAULT_RECV)).await;
    match limited.range(RangeRequest::prefix(prefix.clone())).await {
        Err(KvError::Request(message)) => assert!(
            message.contains("decoded message length too large"),
            "{message}"
        ),
        other => panic!("expected the receive limit to refuse it, got {other:?}"),
    }
    // ... which the default limit (clientv3's `math.MaxInt32`) lets through...
    let everything = kv
        .range(RangeRequest::prefix(prefix.clone()))
        .await
        .expect("one range of everything under the default limit");
    assert_eq!(everything.kvs.len(), PODS);
    // ... and the etcd3 store lists them all, over either client.
    for kv in [Arc::clone(&limited), Arc::clone(&kv)] {
        let listing = Etcd3Store::new(kv, ResourceInfo::PODS);
        let list = tokio::time::timeout(
            WAIT,
            listing.list_objects(
                prefix.clone(),
                ListOptions::default(),
                SelectionPredicate::default(),
            ),
        )
        .await
        .expect("the list finishes in time")
        .expect("the list succeeds");
        assert_eq!(list.items.len(), PODS);
        assert_eq!(list.continue_token, "");
    }
    let listed_in = start.elapsed() - wrote_in;

    // A restart: a fresh Cacher, over the 4 MiB client, lists the lot.
    let restarted = Etcd3Store::new(Arc::clone(&limited), ResourceInfo::PODS);
    let cacher = Cacher::new(restarted, CacherConfig::default());
    assert!(
        cacher.wait_ready(WAIT).await,
        "the watch cache lists 8,000 pods and becomes ready"
    );
    let ready_in = start.elapsed() - wrote_in - listed_in;
    let cached = cacher
        .get_list(
            prefix.clone(),
            ListOptions {
                resource_version: "0".into(),
                ..ListOptions::default()
            },
            SelectionPredicate::default(),
        )
        .await
        .expect("a list from the cache");
    assert_eq!(cached.items.len(), PODS);
    // A watch from the list's version sees the next write, and only it.
    let mut watch = cacher
        .watch(
            prefix,
            WatchOptions {
                resource_version: cached.resource_version.to_string(),
                ..WatchOptions::default()
            },
            SelectionPredicate::default(),
        )
        .await
        .expect("a watch from the list's version");
    let (key, obj) = pod(PODS);
    let created = store.create_object(key, obj).await.expect("one more pod");
    match tokio::time::timeout(WAIT, watch.next()).await {
        Ok(Some(Ok(WatchEvent::Added(obj)))) => {
            assert_eq!(obj.name(), created.name());
            assert_eq!(obj.resource_version(), created.resource_version());
        }
        other => panic!("expected the new pod's ADDED, got {other:?}"),
    }
    eprintln!(
        "{PODS} pods of {one_pod_bytes} B ({total_bytes} B): written in {wrote_in:?}, \
         listed twice in {listed_in:?}, cacher ready in {ready_in:?}, total {:?}",
        start.elapsed()
    );
    cacher.stop().await;
}
