//! This workspace's stage 4 informer, through stage 3's kube ListerWatcher, against
//! the mini-apiserver: its cache equals the server's state after a burst of 1,000
//! creates, updates and deletes, and still does after the server restarts over an
//! etcd that was written to and compacted meanwhile, so that the reflector's
//! re-watch from its old resourceVersion gets 410 and it relists. Run with and
//! without the watch cache. Every wait is bounded.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use stage3_reflector::KubeListerWatcher;
use stage4_shared_informer::{
    KubeSource, SharedInformerFactory, parse_label_selector,
};
use stage5_apiserver::{Backend, RunningServer, Server, ServerConfig};
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EmbeddedKv, Kv};
use stage5_storage::{Object, ResourceInfo};
use stage5_storage::{Preconditions, Storage, object_key};
use tokio::time::{Instant, timeout};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(60);
const NAMESPACE: &str = "default";

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "burst"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }))
    .expect("pod")
}

pub(super) fn state_of<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
) -> BTreeMap<String, String> {
    pods.into_iter()
        .map(|p| {
            (
                format!(
                    "{}/{}",
                    p.metadata.namespace.as_deref().unwrap_or(""),
                    p.metadata.name.as_deref().unwrap_or("")
                ),
                p.metadata.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

async fn server_state(api: &Api<Pod>) -> BTreeMap<String, String> {
    state_of(&api.list(&ListParams::default()).await.expect("list").items)
}

async fn start(
    kv: &Arc<dyn Kv>,
    bind: SocketAddr,
    watch_cache: bool,
) -> RunningServer {
    let config = ServerConfig::for_tests()
        .bind(bind)
        .backend(Backend::Kv(Arc::clone(kv)))
        .watch_cache(watch_cache);
    start_retrying(config).await
}

/// Starts a server on a port the previous server just released: binding may need
/// a moment (bounded: 10 s).
pub(super) async fn start_retrying(config: ServerConfig) -> RunningServer {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Server::start(config.clone()).await {
            Ok(server) => return server,
            Err(error) if Instant::now() < deadline => {
                eprintln!("retrying start: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(error) => panic!("server start: {error}"),
        }
    }
}

/// Waits (bounded) until the informer's lister holds exactly the server's pods.
async fn converges(
    what: &str,
    informer_state: impl Fn() -> BTreeMap<String, String>,
    api: &Api<Pod>,
) {
    let deadline = Instant::now() + WAIT;
    let expected = server_state(api).await;
    loop {
        let actual = informer_state();
        if actual == expected {
            return;
        }
        if Instant::now() > deadline {
            let missing: Vec<_> = expected
                .iter()
                .filter(|(k, v)| actual.get(*k) != Some(*v))
                .take(5)
                .collect();
            let extra: Vec<_> = actual
                .iter()
                .filter(|(k, v)| expected.get(*k) != Some(*v))
                .take(5)
                .collect();
            panic!(
                "{what}: informer has {} pods, server {}; differing on server {missing:?}, in informer {extra:?}",
                actual.len(),
                expected.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn informer_follows_the_server(watch_cache: bool) {
    // `RUST_LOG=stage3_reflector=info` shows the 410 and the relist.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    let server = start(&kv, "127.0.0.1:0".parse().expect("addr"), watch_cache).await;
    let addr = server.local_addr();
    let config = kube::Config::new(server.url().parse().expect("url"));
    let client = KubeListerWatcher::<Pod>::client(config).expect("client");
    let api: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);

    let factory =
        SharedInformerFactory::new(KubeSource::new(client), Duration::ZERO);
    let pods = factory.pods();
    let _ = pods.informer();
    factory.start();
    let stop = CancellationToken::new();
    let synced = timeout(WAIT, factory.wait_for_cache_sync(&stop))
        .await
        .expect("sync in time");
    assert!(synced.values().all(|s| *s), "{synced:?}");
    let lister = pods.lister();
    let everything = parse_label_selector("").expect("selector");
    let informer_state = || {
        let items = lister.list(&everything);
        state_of(items.iter().map(|p| p.as_ref()))
    };

    // The burst: 500 creates, 300 updates, 200 deletes, 16 at a time.
    let pp = PostParams::default();
    futures::stream::iter(0..500)
        .map(|i| {
            let api = api.clone();
            let pp = pp.clone();
            async move {
                api.create(&pp, &pod(&format!("p-{i:03}")))
                    .await
                    .expect("create")
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    futures::stream::iter(0..300)
        .map(|i| {
            let api = api.clone();
            async move {
                let patch = Patch::Merge(
                    json!({"metadata": {"annotations": {"round": "1"}}}),
                );
                api.patch(&format!("p-{i:03}"), &PatchParams::default(), &patch)
                    .await
                    .expect("update")
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    futures::stream::iter(300..500)
        .map(|i| {
            let api = api.clone();
            async move {
                api.delete(&format!("p-{i:03}"), &DeleteParams::default())
                    .await
                    .expect("delete")
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    converges("after the burst", informer_state, &api).await;
    assert_eq!(informer_state().len(), 300);

    // The server goes away; etcd moves on without it and is compacted; a new server
    // starts on the same address. The reflector's re-watch from its old
    // resourceVersion gets 410 and it relists.
    timeout(WAIT, server.shutdown())
        .await
        .expect("shutdown in time");
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    for i in 0..50 {
        let name = format!("p-{i:03}");
        store
            .delete(
                object_key(&ResourceInfo::PODS, Some(NAMESPACE), &name),
                Preconditions::default(),
            )
            .await
            .expect("delete behind the informer's back");
    }
    for i in 0..20 {
        let obj =
            Object::new(&ResourceInfo::PODS, Some(NAMESPACE), &format!("late-{i}"));
        store
            .create(
                object_key(&ResourceInfo::PODS, Some(NAMESPACE), obj.name()),
                obj,
            )
            .await
            .expect("create behind the informer's back");
    }
    let revision = store.current_resource_version().await.expect("revision");
    kv.compact(i64::try_from(revision).expect("revision fits"))
        .await
        .expect("compact");
    let server = start(&kv, addr, watch_cache).await;
    converges("after compaction forced a relist", informer_state, &api).await;
    // The informer relisted from the new server: either its re-watch from the
    // compacted resourceVersion got a 410 ERROR event, or (when the re-watch
    // came while no server was listening) the reflector gave up on the old
    // version and listed afresh.
    let metrics = &server.state().metrics;
    assert!(
        metrics.watch_errors() >= 1 || metrics.requests("LIST", "pods", 200) >= 1,
        "the informer relisted after the compaction"
    );
    assert_eq!(informer_state().len(), 270);

    timeout(WAIT, factory.shutdown())
        .await
        .expect("informers stop in time");
    timeout(WAIT, server.shutdown())
        .await
        .expect("shutdown in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_cache_equals_the_server_with_the_watch_cache() {
    informer_follows_the_server(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_cache_equals_the_server_without_the_watch_cache() {
    informer_follows_the_server(false).await;
}
