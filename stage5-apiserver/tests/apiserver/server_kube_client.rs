//! kube-client against the mini-apiserver with k8s-openapi's typed `Pod` and
//! `ConfigMap`: list, watch, create, update (and its 409), delete, merge and
//! strategic patches; and kube-runtime's `watcher` running into an expired
//! resourceVersion (410), relisting, and ending at the server's state. Every wait is
//! bounded.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Client;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube_runtime::WatchStreamExt;
use kube_runtime::watcher::{self, Event};
use parking_lot::Mutex;
use serde_json::json;
use stage5_apiserver::{Backend, RunningServer, Server, ServerConfig};
use stage5_storage::kv::{EmbeddedKv, Kv};
use tokio::time::{Instant, timeout};

const WAIT: Duration = Duration::from_secs(20);

fn client(server: &RunningServer) -> Client {
    let url = server.url().parse().expect("url");
    Client::try_from(kube::Config::new(url)).expect("client")
}

fn pod(name: &str, app: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }))
    .expect("pod")
}

fn api_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

#[tokio::test]
async fn create_get_list_update_patch_delete() {
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let pods: Api<Pod> = Api::namespaced(client(&server), "default");
    let pp = PostParams::default();

    let created = pods
        .create(&pp, &pod("web-0", "web"))
        .await
        .expect("create");
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    assert!(created.metadata.uid.is_some());
    let err = pods
        .create(&pp, &pod("web-0", "web"))
        .await
        .expect_err("exists");
    assert_eq!(api_code(&err), Some(409));
    pods.create(&pp, &pod("db-0", "db")).await.expect("create");

    let got = pods.get("web-0").await.expect("get");
    assert_eq!(
        got.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(
        api_code(&pods.get("nope").await.expect_err("missing")),
        Some(404)
    );
    assert_eq!(pods.get_opt("nope").await.expect("get_opt"), None);

    let all = pods.list(&ListParams::default()).await.expect("list");
    assert_eq!(all.items.len(), 2);
    assert!(all.metadata.resource_version.is_some());
    let web = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("list");
    assert_eq!(web.items.len(), 1);
    let paged = pods
        .list(&ListParams::default().limit(1))
        .await
        .expect("page");
    assert_eq!(paged.items.len(), 1);
    assert!(paged.metadata.continue_.is_some());

    let mut changed = got.clone();
    changed
        .metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert("tier".into(), "front".into());
    let replaced = pods.replace("web-0", &pp, &changed).await.expect("replace");
    assert_eq!(
        replaced
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("tier"))
            .map(String::as_str),
        Some("front")
    );
    let stale = pods
        .replace("web-0", &pp, &changed)
        .await
        .expect_err("stale");
    assert_eq!(api_code(&stale), Some(409));

    let merged = pods
        .patch(
            "web-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"a": "1"}}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(
        merged
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("a"))
            .map(String::as_str),
        Some("1")
    );
    let json_patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/annotations/a", "value": "1"},
        {"op": "add", "path": "/metadata/annotations/b", "value": "2"},
    ]))
    .expect("a JSON patch");
    let json_patched = pods
        .patch(
            "web-0",
            &PatchParams::default(),
            &Patch::Json::<()>(json_patch),
        )
        .await
        .expect("JSON patch");
    assert_eq!(
        json_patched
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("b"))
            .map(String::as_str),
        Some("2")
    );
    let failing: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/annotations/a", "value": "other"},
    ]))
    .expect("a JSON patch");
    let failed = pods
        .patch(
            "web-0",
            &PatchParams::default(),
            &Patch::Json::<()>(failing),
        )
        .await
        .expect_err("the test operation fails");
    assert_eq!(api_code(&failed), Some(422));
    let strategic = pods
        .patch(
            "web-0",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"labels": {"tier": null}}})),
        )
        .await
        .expect("strategic patch");
    assert!(
        strategic
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| !l.contains_key("tier"))
    );

    pods.delete("web-0", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        api_code(&pods.get("web-0").await.expect_err("gone")),
        Some(404)
    );
    assert_eq!(
        api_code(
            &pods
                .delete("web-0", &DeleteParams::default())
                .await
                .expect_err("gone")
        ),
        Some(404)
    );

    // Cluster-wide list.
    let everywhere: Api<Pod> = Api::all(client(&server));
    assert_eq!(
        everywhere
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len(),
        1
    );
    server.shutdown().await;
}

#[tokio::test]
async fn watch_sees_added_modified_deleted() {
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let cms: Api<ConfigMap> = Api::namespaced(client(&server), "default");
    let rv = cms
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let mut stream = cms
        .watch(&WatchParams::default().timeout(10), &rv)
        .await
        .expect("watch")
        .boxed();
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "c1"}, "data": {"k": "v1"}}),
    )
    .expect("cm");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    cms.patch(
        "c1",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v2"}})),
    )
    .await
    .expect("patch");
    cms.delete("c1", &DeleteParams::default())
        .await
        .expect("delete");
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = timeout(WAIT, stream.try_next())
            .await
            .expect("event in time")
            .expect("event")
            .expect("open");
        match event {
            WatchEvent::Added(cm) => {
                seen.push(("ADDED", cm.data.and_then(|d| d.get("k").cloned())))
            }
            WatchEvent::Modified(cm) => {
                seen.push(("MODIFIED", cm.data.and_then(|d| d.get("k").cloned())))
            }
            WatchEvent::Deleted(_) => seen.push(("DELETED", None)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("ADDED", Some("v1".to_string())),
            ("MODIFIED", Some("v2".to_string())),
            ("DELETED", None)
        ]
    );
    server.shutdown().await;
}

/// What the watcher's consumer believes: name → resourceVersion, and how many
/// (re)lists it ran.
#[derive(Default)]
struct Seen {
    state: BTreeMap<String, String>,
    buffer: BTreeMap<String, String>,
    inits: usize,
    errors: Vec<String>,
}

fn key(pod: &Pod) -> (String, String) {
    (
        pod.metadata.name.clone().unwrap_or_default(),
        pod.metadata.resource_version.clone().unwrap_or_default(),
    )
}

async fn server_state(pods: &Api<Pod>, labels: &str) -> BTreeMap<String, String> {
    pods.list(&ListParams::default().labels(labels))
        .await
        .expect("list")
        .items
        .iter()
        .map(key)
        .collect()
}

/// Polls (bounded) until `check` holds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn watcher_relists_after_expiry(watch_cache: bool, streaming: bool) {
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    let config = ServerConfig::for_tests()
        .backend(Backend::Kv(Arc::clone(&kv)))
        .watch_cache(watch_cache)
        .watch_cache_capacity(16);
    let server = Server::start(config).await.expect("start");
    let pods: Api<Pod> = Api::namespaced(client(&server), "default");
    let pp = PostParams::default();
    for i in 0..3 {
        pods.create(&pp, &pod(&format!("w{i}"), "watched"))
            .await
            .expect("create");
    }

    // Short server-side timeouts make the watcher re-watch from its last
    // resourceVersion; without bookmarks that version stays where the last
    // watched event left it. (A streaming list needs bookmarks for its end
    // marker; without the watch cache the only other bookmarks come from
    // etcd's progress notifications, every 10 minutes.)
    let config = watcher::Config::default().labels("app=watched").timeout(1);
    let config = if streaming {
        config.streaming_lists()
    } else {
        config.disable_bookmarks()
    };
    let seen = Arc::new(Mutex::new(Seen::default()));
    let consumer = {
        let seen = Arc::clone(&seen);
        let stream = watcher::watcher(pods.clone(), config).default_backoff();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(item) = stream.next().await {
                let mut seen = seen.lock();
                match item {
                    Ok(Event::Init) => {
                        seen.inits += 1;
                        seen.buffer.clear();
                    }
                    Ok(Event::InitApply(p)) => {
                        let (k, v) = key(&p);
                        seen.buffer.insert(k, v);
                    }
                    Ok(Event::InitDone) => {
                        seen.state = std::mem::take(&mut seen.buffer)
                    }
                    Ok(Event::Apply(p)) => {
                        let (k, v) = key(&p);
                        seen.state.insert(k, v);
                    }
                    Ok(Event::Delete(p)) => {
                        seen.state.remove(&key(&p).0);
                    }
                    Err(error) => seen.errors.push(error.to_string()),
                }
            }
        })
    };
    let expected = server_state(&pods, "app=watched").await;
    eventually("the initial list", || seen.lock().state == expected).await;

    // Writes the watcher does not select move etcd (and the watch cache's window)
    // far past the watcher's resourceVersion; then compaction forgets it.
    for i in 0..40 {
        pods.create(&pp, &pod(&format!("other-{i}"), "other"))
            .await
            .expect("create");
    }
    let list_rv: i64 = pods
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .and_then(|rv| rv.parse().ok())
        .expect("rv");
    kv.compact(list_rv).await.expect("compact");

    // The next re-watch (within a second) gets 410 Expired and the watcher relists.
    eventually("a relist after 410", || seen.lock().inits >= 2).await;
    pods.create(&pp, &pod("w-new", "watched"))
        .await
        .expect("create");
    pods.delete("w0", &DeleteParams::default())
        .await
        .expect("delete");
    pods.patch(
        "w1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"x": "y"}}})),
    )
    .await
    .expect("patch");
    let expected = server_state(&pods, "app=watched").await;
    eventually("the watcher's state to equal the server's", || {
        seen.lock().state == expected
    })
    .await;
    {
        let seen = seen.lock();
        assert!(
            seen.errors
                .iter()
                .any(|e| e.contains("410") || e.to_lowercase().contains("expired")),
            "the watcher saw the expiry: {:?}",
            seen.errors
        );
    }
    consumer.abort();
    let _ = consumer.await;
    server.shutdown().await;
}

#[tokio::test]
async fn kube_runtime_watcher_relists_after_410_with_the_watch_cache() {
    watcher_relists_after_expiry(true, false).await;
}

#[tokio::test]
async fn kube_runtime_watcher_relists_after_410_without_the_watch_cache() {
    watcher_relists_after_expiry(false, false).await;
}

#[tokio::test]
async fn kube_runtime_streaming_list_watcher_relists_after_410() {
    watcher_relists_after_expiry(false, true).await;
}

#[tokio::test]
async fn scale_and_status_subresources_through_kube_client() {
    use k8s_openapi::api::apps::v1::Deployment;
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let deployments: Api<Deployment> = Api::namespaced(client(&server), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }))
    .expect("a deployment");
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .expect("create");

    let scale = deployments.get_scale("web").await.expect("get scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(1));
    assert_eq!(
        scale.status.map(|s| s.selector),
        Some(Some("app=web".to_string()))
    );
    let scaled = deployments
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("patch scale");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(4));
    let stored = deployments.get("web").await.expect("get");
    assert_eq!(stored.spec.replicas, Some(4));

    // Status: the spec and (for a Deployment, `deploymentStatusStrategy`) the
    // labels stay whatever the patch says; the status and the annotations
    // change, as the Deployment controller writes its revision annotation.
    let patched = deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {
                    "labels": {"tier": "front"},
                    "annotations": {"deployment.kubernetes.io/revision": "1"},
                },
                "spec": {"replicas": 9},
                "status": {"replicas": 4, "readyReplicas": 3},
            })),
        )
        .await
        .expect("patch status");
    assert_eq!(
        patched.status.as_ref().and_then(|s| s.ready_replicas),
        Some(3)
    );
    assert_eq!(patched.spec.replicas, Some(4));
    assert_eq!(patched.metadata.labels, None);
    assert_eq!(
        patched.metadata.annotations,
        Some(
            [(
                "deployment.kubernetes.io/revision".to_string(),
                "1".to_string()
            )]
            .into()
        )
    );
    assert_eq!(patched.metadata.generation, stored.metadata.generation);
    let negative = deployments
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": -1}})),
        )
        .await
        .expect_err("negative replicas");
    assert_eq!(api_code(&negative), Some(422));
    server.shutdown().await;
}

/// A client configured for protobuf bodies (client-go's typed clients default to
/// `application/vnd.kubernetes.protobuf`): kube-client's `Client::request` with a
/// body `k8s-pb` encodes, in the `k8s\0` + `runtime.Unknown` envelope. The object
/// it creates is the one a JSON create of the same ConfigMap makes; a protobuf
/// `DeleteOptions` deletes it; bytes that are not protobuf are a 400 Status.
#[tokio::test]
async fn a_protobuf_bodied_create_stores_what_a_json_create_stores() {
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb_meta;
    use k8s_pb::apimachinery::pkg::runtime as pb_runtime;
    use prost::Message as _;

    fn envelope(kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let unknown = pb_runtime::Unknown {
            type_meta: Some(pb_runtime::TypeMeta {
                api_version: Some("v1".into()),
                kind: Some(kind.into()),
            }),
            raw: Some(raw),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut body = b"k8s\0".to_vec();
        body.extend(unknown.encode_to_vec());
        body
    }
    fn protobuf_request(
        method: &str,
        uri: &str,
        body: Vec<u8>,
    ) -> axum::http::Request<Vec<u8>> {
        axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/vnd.kubernetes.protobuf")
            // kube-client reads JSON answers; protobuf answers are
            // `protobuf.rs`'s.
            .header("accept", "application/json")
            .body(body)
            .expect("request")
    }

    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let client = client(&server);
    let configmap = k8s_pb::api::core::v1::ConfigMap {
        metadata: Some(pb_meta::ObjectMeta {
            name: Some("from-protobuf".into()),
            generate_name: Some(String::new()),
            labels: [("app".to_string(), "web".to_string())].into(),
            ..Default::default()
        }),
        data: [("color".to_string(), "blue".to_string())].into(),
        binary_data: [("raw".to_string(), vec![0, 1, 2, 255])].into(),
        immutable: None,
    };
    let request = protobuf_request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        envelope("ConfigMap", configmap.encode_to_vec()),
    );
    let created: ConfigMap = timeout(WAIT, client.request(request))
        .await
        .expect("in time")
        .expect("protobuf create");
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut same = serde_json::from_value::<ConfigMap>(json!({
        "metadata": {"name": "from-json", "labels": {"app": "web"}},
        "data": {"color": "blue"},
        "binaryData": {"raw": "AAEC/w=="},
    }))
    .expect("configmap");
    same = timeout(WAIT, configmaps.create(&PostParams::default(), &same))
        .await
        .expect("in time")
        .expect("json create");
    let stored = timeout(WAIT, configmaps.get("from-protobuf"))
        .await
        .expect("in time")
        .expect("get");
    assert_eq!(stored, created);
    // Everything but the server's own fields is equal.
    let strip = |mut value: serde_json::Value| {
        for field in ["name", "uid", "resourceVersion", "creationTimestamp"] {
            value["metadata"]
                .as_object_mut()
                .expect("metadata")
                .remove(field);
        }
        value
    };
    assert_eq!(
        strip(serde_json::to_value(&stored).expect("json")),
        strip(serde_json::to_value(&same).expect("json"))
    );

    let options = pb_meta::DeleteOptions {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    let request = protobuf_request(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/from-protobuf",
        envelope("DeleteOptions", options.encode_to_vec()),
    );
    let _: serde_json::Value = timeout(WAIT, client.request(request))
        .await
        .expect("in time")
        .expect("protobuf delete");
    let gone = timeout(WAIT, configmaps.get_opt("from-protobuf"))
        .await
        .expect("in time")
        .expect("get");
    assert!(gone.is_none());

    let request = protobuf_request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        b"{\"kind\":\"ConfigMap\"}".to_vec(),
    );
    let error = timeout(WAIT, client.request::<ConfigMap>(request))
        .await
        .expect("in time")
        .expect_err("not protobuf");
    let kube::Error::Api(status) = &error else {
        panic!("{error:?}");
    };
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert!(
        status.message.contains(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        ),
        "{}",
        status.message
    );
    server.shutdown().await;
}

/// Go's `omitempty`: a strategic merge patch that deletes the last owner
/// reference (as the garbage collector orphans a dependent) leaves no
/// `ownerReferences` at all, and a merge patch that removes the last label
/// leaves no `labels`, as kube-apiserver's encoding leaves them out.
#[tokio::test]
async fn emptied_metadata_lists_and_maps_are_left_out() {
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let maps: Api<ConfigMap> = Api::namespaced(client(&server), "default");
    let map: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "name": "dependent",
            "labels": {"app": "web"},
            "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                "uid": "6f1a1b0e-0000-4000-8000-000000000001",
            }],
        },
    }))
    .expect("a config map");
    maps.create(&PostParams::default(), &map)
        .await
        .expect("create");
    let orphaned = maps
        .patch(
            "dependent",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"ownerReferences": [
                {"$patch": "delete", "uid": "6f1a1b0e-0000-4000-8000-000000000001"},
            ]}})),
        )
        .await
        .expect("strategic patch");
    assert_eq!(orphaned.metadata.owner_references, None);
    let unlabelled = maps
        .patch(
            "dependent",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": null}}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(unlabelled.metadata.labels, None);
    let raw: serde_json::Value =
        serde_json::to_value(maps.get("dependent").await.expect("get"))
            .expect("json");
    assert!(raw["metadata"].get("ownerReferences").is_none(), "{raw}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_strategic_patch_adds_a_container_to_a_deployment_template_and_keeps_the_first()
 {
    use k8s_openapi::api::apps::v1::Deployment;
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let deployments: Api<Deployment> = Api::namespaced(client(&server), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "web", "image": "nginx",
                    "env": [{"name": "A", "value": "1"}],
                }]},
            },
        },
    }))
    .expect("a deployment");
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .expect("create");
    let patched = timeout(
        WAIT,
        deployments.patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "sidecar", "image": "busybox"},
                {"name": "web", "env": [{"name": "B", "value": "2"}]},
            ]}}}})),
        ),
    )
    .await
    .expect("in time")
    .expect("strategic patch");
    let containers = patched
        .spec
        .template
        .spec
        .map(|s| s.containers)
        .unwrap_or_default();
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["sidecar", "web"]);
    assert_eq!(containers[1].image.as_deref(), Some("nginx"));
    let env: Vec<&str> = containers[1]
        .env
        .iter()
        .flatten()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(env, ["B", "A"], "env merges by name");

    // The status subresource merges conditions by type.
    for condition in ["Available", "Progressing"] {
        timeout(
            WAIT,
            deployments.patch_status(
                "web",
                &PatchParams::default(),
                &Patch::Strategic(json!({"status": {"conditions": [
                    {"type": condition, "status": "True"},
                ]}})),
            ),
        )
        .await
        .expect("in time")
        .expect("patch status");
    }
    let stored = deployments.get("web").await.expect("get");
    let mut conditions: Vec<String> = stored
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|c| c.type_)
        .collect();
    conditions.sort();
    assert_eq!(conditions, ["Available", "Progressing"]);
    let kept = stored.spec.template.spec.map(|s| s.containers.len());
    assert_eq!(kept, Some(2));
    server.shutdown().await;
}

/// kube's metadata-only calls and kube-runtime's `watcher` over `Api<PartialObjectMeta<Pod>>` send
/// `as=PartialObjectMetadataList` / `as=PartialObjectMetadata` Accept headers; the
/// server answers them as kube-apiserver does.
#[tokio::test]
async fn metadata_only_list_get_and_watcher() {
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let pods: Api<Pod> = Api::namespaced(client(&server), "default");
    let pp = PostParams::default();
    pods.create(&pp, &pod("web-0", "web"))
        .await
        .expect("create");

    let list = pods
        .list_metadata(&ListParams::default())
        .await
        .expect("list_metadata");
    let names: Vec<_> = list
        .items
        .iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["web-0"]);
    assert!(list.metadata.resource_version.is_some());
    let one = pods.get_metadata("web-0").await.expect("get_metadata");
    assert_eq!(
        one.metadata
            .labels
            .unwrap_or_default()
            .get("app")
            .map(String::as_str),
        Some("web")
    );

    let metadata: Api<kube::core::PartialObjectMeta<Pod>> =
        Api::namespaced(client(&server), "default");
    let mut seen = watcher::watcher(metadata, watcher::Config::default())
        .applied_objects()
        .boxed();
    pods.create(&pp, &pod("web-1", "web"))
        .await
        .expect("create");
    timeout(WAIT, async {
        while let Some(meta) = seen.try_next().await.expect("watch") {
            if meta.metadata.name.as_deref() == Some("web-1") {
                return;
            }
        }
        panic!("the metadata watcher ended");
    })
    .await
    .expect("the metadata watcher sees web-1 in time");
    server.shutdown().await;
}

/// kube-runtime's event `Recorder` writes `events.k8s.io/v1` Events (a create,
/// then a merge patch with the series for a repeat); the same Event reads back
/// through core `v1` (`kubectl get events`) with its fields converted, and both
/// groups select it by their own field labels.
#[tokio::test]
async fn a_recorder_publishes_events_k8s_io_v1_that_core_v1_reads() {
    use k8s_openapi::api::core::v1::{Event as CoreEvent, ObjectReference};
    use k8s_openapi::api::events::v1::Event as EventV1;
    use kube_runtime::events::{Event, EventType, Recorder};

    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let client = client(&server);
    let recorder = Recorder::new(client.clone(), "web-controller".into());
    let regarding = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: Some("web-0".into()),
        namespace: Some("default".into()),
        ..ObjectReference::default()
    };
    let event = Event {
        type_: EventType::Normal,
        reason: "Scaled".into(),
        note: Some("scaled to 3".into()),
        action: "Scale".into(),
        secondary: None,
    };
    for _ in 0..2 {
        timeout(WAIT, recorder.publish(&event, &regarding))
            .await
            .expect("in time")
            .expect("published");
    }
    let v1: Api<EventV1> = Api::namespaced(client.clone(), "default");
    let by_regarding = timeout(
        WAIT,
        v1.list(
            &ListParams::default()
                .fields("regarding.name=web-0,reportingController=web-controller"),
        ),
    )
    .await
    .expect("in time")
    .expect("list");
    assert_eq!(by_regarding.items.len(), 1);
    let written = &by_regarding.items[0];
    assert_eq!(written.note.as_deref(), Some("scaled to 3"));
    assert_eq!(written.series.as_ref().map(|s| s.count), Some(2));

    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let by_involved = timeout(
        WAIT,
        core.list(
            &ListParams::default().fields("involvedObject.name=web-0,reason=Scaled"),
        ),
    )
    .await
    .expect("in time")
    .expect("list");
    assert_eq!(by_involved.items.len(), 1);
    let read = &by_involved.items[0];
    assert_eq!(read.metadata.name, written.metadata.name);
    assert_eq!(read.message.as_deref(), Some("scaled to 3"));
    assert_eq!(read.reporting_component.as_deref(), Some("web-controller"));
    assert_eq!(read.involved_object.name.as_deref(), Some("web-0"));
    assert_eq!(read.action.as_deref(), Some("Scale"));
    server.shutdown().await;
}

#[tokio::test]
async fn server_side_apply_through_kube_client() {
    use k8s_openapi::api::apps::v1::Deployment;
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let deployments: Api<Deployment> = Api::namespaced(client(&server), "default");
    let config = |replicas: i32, image: &str| {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": image}]},
                },
            },
        })
    };
    // Twice by the same manager: created, then unchanged.
    let first = timeout(
        WAIT,
        deployments.patch(
            "web",
            &PatchParams::apply("deployer"),
            &Patch::Apply(config(2, "nginx:1")),
        ),
    )
    .await
    .expect("in time")
    .expect("created by apply");
    assert_eq!(first.spec.replicas, Some(2));
    let second = deployments
        .patch(
            "web",
            &PatchParams::apply("deployer"),
            &Patch::Apply(config(2, "nginx:1")),
        )
        .await
        .expect("applied again");
    assert_eq!(
        second.metadata.resource_version,
        first.metadata.resource_version
    );
    let entries = second
        .metadata
        .managed_fields
        .clone()
        .expect("managedFields");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].manager.as_deref(), Some("deployer"));
    assert_eq!(entries[0].operation.as_deref(), Some("Apply"));
    assert_eq!(entries[0].api_version.as_deref(), Some("apps/v1"));
    let fields = &entries[0].fields_v1.as_ref().expect("fieldsV1").0;
    assert_eq!(fields["f:spec"]["f:replicas"], json!({}));
    assert_eq!(
        fields["f:spec"]["f:selector"],
        json!({}),
        "a label selector is atomic"
    );
    assert_eq!(
        fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"nginx\"}"],
        json!({".": {}, "f:image": {}, "f:name": {}})
    );

    // Another manager changing replicas: a 409 kube::Error::Api.
    let scaler = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 5}});
    let error = deployments
        .patch(
            "web",
            &PatchParams::apply("scaler"),
            &Patch::Apply(scaler.clone()),
        )
        .await
        .expect_err("a conflict");
    assert_eq!(api_code(&error), Some(409), "{error:?}");
    let kube::Error::Api(status) = &error else {
        panic!("an API error: {error:?}");
    };
    assert_eq!(status.reason, "Conflict");
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"deployer\": .spec.replicas"
    );
    // Forced, the scaler owns replicas.
    let forced = deployments
        .patch(
            "web",
            &PatchParams::apply("scaler").force(),
            &Patch::Apply(scaler),
        )
        .await
        .expect("forced");
    assert_eq!(forced.spec.replicas, Some(5));
    let managers: Vec<(String, String)> = forced
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        managers,
        [
            ("deployer".to_string(), "Apply".to_string()),
            ("scaler".to_string(), "Apply".to_string())
        ]
    );
    // The deployer applies a new image without replicas: the scaler's 5 stays.
    let mut next = config(5, "nginx:2");
    next["spec"]
        .as_object_mut()
        .expect("spec")
        .remove("replicas");
    let rolled = deployments
        .patch("web", &PatchParams::apply("deployer"), &Patch::Apply(next))
        .await
        .expect("applied");
    let spec = rolled.spec;
    assert_eq!(spec.replicas, Some(5));
    let containers = spec.template.spec.expect("pod spec").containers;
    assert_eq!(containers.len(), 1);
    assert_eq!(containers[0].image.as_deref(), Some("nginx:2"));
    server.shutdown().await;
}
