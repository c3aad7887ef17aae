//! The core of `examples/end-to-end.rs`, as a test: the server on a free loopback
//! port (embedded store, watch cache on), a stage 4 informer with two handlers
//! through kube-client, a few creates, patches and a delete, and at the end the
//! informer's cache equals the server's list and both handlers saw every event.
//! Every wait is bounded.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use stage3_reflector::KubeListerWatcher;
use stage4_shared_informer::{
    DeletedObject, KubeSource, ResourceEventHandler, SharedInformerFactory,
    parse_label_selector,
};
use stage5_apiserver::{Server, ServerConfig};
use tokio::sync::mpsc;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

fn pod(name: &str, app: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
    }))
    .expect("a valid pod")
}

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

/// Records `(handler, verb, key)` for every notification.
struct Recorder {
    name: &'static str,
    seen: mpsc::UnboundedSender<(&'static str, &'static str, String)>,
}

impl ResourceEventHandler<Pod> for Recorder {
    fn on_add(&self, obj: &Arc<Pod>, _is_in_initial_list: bool) {
        let _ = self.seen.send((self.name, "ADD", key(obj)));
    }
    fn on_update(&self, _old: &Arc<Pod>, new: &Arc<Pod>) {
        let _ = self.seen.send((self.name, "UPDATE", key(new)));
    }
    fn on_delete(&self, obj: &DeletedObject<Pod>) {
        let key = match obj {
            DeletedObject::Object(pod) => key(pod),
            DeletedObject::Tombstone(t) => t.key.to_string(),
        };
        let _ = self.seen.send((self.name, "DELETE", key));
    }
}

async fn next_n(
    seen: &mut mpsc::UnboundedReceiver<(&'static str, &'static str, String)>,
    n: usize,
) -> Vec<(&'static str, &'static str, String)> {
    let mut out = Vec::new();
    for _ in 0..n {
        let item = timeout(WAIT, seen.recv())
            .await
            .expect("a notification in time")
            .expect("the handlers are alive");
        out.push(item);
    }
    out.sort();
    out
}

fn both(verb: &'static str, key: &str) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("auditor", verb, key.to_string()),
        ("printer", verb, key.to_string()),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_to_end_informer_cache_matches_the_server() {
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("server starts");
    let url: axum::http::Uri = server.url().parse().expect("url");
    let pods: Api<Pod> = Api::namespaced(
        Client::try_from(kube::Config::new(url.clone())).expect("client"),
        "default",
    );
    let client =
        KubeListerWatcher::<Pod>::client(kube::Config::new(url)).expect("client");
    let factory =
        SharedInformerFactory::builder(KubeSource::new(client), Duration::ZERO)
            .namespace("default")
            .build();
    let (tx, mut seen) = mpsc::unbounded_channel();
    let informer = factory.pods().informer();
    informer
        .add_event_handler(Recorder {
            name: "printer",
            seen: tx.clone(),
        })
        .expect("handler");
    informer
        .add_event_handler(Recorder {
            name: "auditor",
            seen: tx,
        })
        .expect("handler");

    let post = PostParams::default();
    pods.create(&post, &pod("web-0", "web"))
        .await
        .expect("create");
    factory.start();
    let synced =
        timeout(WAIT, factory.wait_for_cache_sync(&CancellationToken::new()))
            .await
            .expect("sync in time");
    assert!(synced.values().all(|s| *s), "{synced:?}");
    assert_eq!(next_n(&mut seen, 2).await, both("ADD", "default/web-0"));

    pods.create(&post, &pod("web-1", "web"))
        .await
        .expect("create");
    assert_eq!(next_n(&mut seen, 2).await, both("ADD", "default/web-1"));
    pods.patch(
        "web-0",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "canary"}}})),
    )
    .await
    .expect("patch");
    assert_eq!(next_n(&mut seen, 2).await, both("UPDATE", "default/web-0"));
    pods.delete("web-1", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(next_n(&mut seen, 2).await, both("DELETE", "default/web-1"));

    let server_state: BTreeMap<String, Option<String>> = pods
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|p| (key(p), p.metadata.resource_version.clone()))
        .collect();
    let cached: BTreeMap<String, Option<String>> = factory
        .pods()
        .lister()
        .list(&parse_label_selector("").expect("selector"))
        .iter()
        .map(|p| (key(p), p.metadata.resource_version.clone()))
        .collect();
    assert_eq!(cached, server_state);
    assert_eq!(cached.len(), 1);

    timeout(WAIT, factory.shutdown())
        .await
        .expect("the informer stops");
    timeout(WAIT, server.shutdown())
        .await
        .expect("the server stops");
}
