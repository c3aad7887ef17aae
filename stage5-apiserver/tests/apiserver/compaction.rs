//! `--etcd-compaction-interval` over HTTP: the server's compactor compacts the
//! store, and a watch from a revision it compacted away (watch cache off, so the
//! watch is an etcd watch) is one ERROR event, 410 `Expired`, as kube-apiserver
//! sends it. Every wait is bounded; the compaction is awaited, not slept for.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use stage5_apiserver::{Server, ServerConfig};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(10);
const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test]
async fn compaction_ends_an_etcd_watch_from_before_it_with_410() {
    let config = ServerConfig::for_tests()
        .watch_cache(false)
        .etcd_compaction_interval(Duration::from_millis(50));
    let server = Server::start(config).await.expect("server starts");
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let create = |name: &str| {
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}
        });
        let request = Request::post(format!("{}{PODS}", server.url()))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(pod.to_string())))
            .unwrap();
        let client = client.clone();
        async move {
            let created = timeout(WAIT, client.request(request))
                .await
                .expect("answered in time")
                .expect("create");
            let body = created.into_body().collect().await.unwrap().to_bytes();
            let created: Value = serde_json::from_slice(&body).unwrap();
            created["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let rv = create("a").await;
    create("b").await;

    // Round one records a revision after both creates; round two compacts to it.
    // A watch from `a`'s version starts at the revision of `b`, now compacted
    // (a watch from exactly the compacted revision would still work, as in etcd).
    let compactor = server.compactor().expect("a compactor");
    let mut compacted = compactor.subscribe();
    let created_at: i64 = rv.parse().unwrap();
    timeout(WAIT, compacted.wait_for(|revision| *revision > created_at))
        .await
        .expect("compacted in time")
        .expect("the compactor runs");

    let watch = Request::get(format!(
        "{}{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=5",
        server.url()
    ))
    .body(Full::new(Bytes::new()))
    .unwrap();
    let response = timeout(WAIT, client.request(watch))
        .await
        .expect("answered in time")
        .expect("watch");
    assert_eq!(response.status(), 200, "a watch error is an event");
    let body = timeout(WAIT, response.into_body().collect())
        .await
        .expect("the watch ends after its error")
        .unwrap()
        .to_bytes();
    let lines: Vec<Value> = body
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["type"], "ERROR");
    let status = &lines[0]["object"];
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 410);
    assert_eq!(status["reason"], "Expired");
    assert_eq!(
        status["message"],
        "The resourceVersion for the provided watch is too old."
    );
    server.shutdown().await;
}
