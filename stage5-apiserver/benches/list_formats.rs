//! `list_formats`: one list of 5,000 pods from the watch cache
//! (`resourceVersion=0`), over HTTP from an in-process server on the embedded
//! store, in each format a client asks for:
//!
//! - `list_formats/json`: the `PodList`, the items' kept JSON copied into the body;
//! - `list_formats/table`: what `kubectl get pods` asks for, a `Table` whose rows
//!   carry each pod's `PartialObjectMetadata`;
//! - `list_formats/metadata`: a `PartialObjectMetadataList`, as a metadata
//!   informer lists;
//! - `list_formats/protobuf`: the `PodList` in protobuf, as client-go lists
//!   when it prefers protobuf (kube-controller-manager, kube-scheduler);
//! - `list_formats/protobuf_metadata`: the `PartialObjectMetadataList` in
//!   protobuf, as the garbage collector's metadata informers list.
//!
//! The first list in a format encodes each pod in it and the cache keeps the
//! encoding (upstream's `cachingObject`); the measured lists share it. Each
//! format's body size is printed once.
//!
//! Each pod is as `kubectl create` leaves it (defaults and a `managedFields`
//! entry), about 1,500 bytes of JSON. kube-apiserver v1.28.4, measured the same
//! way on one machine (TLS, a token, its own etcd), took 163 ms for the JSON
//! list and 118 ms for the Table (0.72 of the JSON list).
//!
//! Run with `cargo bench -p stage5-apiserver --bench list_formats`; `cargo test
//! --benches` runs each once, as a smoke test.

use std::time::Duration;
use workspace_allocator as _;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;
use stage5_apiserver::{RunningServer, Server, ServerConfig};

/// Pods in the list.
const PODS: usize = 5_000;

/// kubectl's `Accept` for `get`.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
/// A metadata informer's `Accept` for its list.
const METADATA: &str = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json";
/// client-go's `Accept` with protobuf preferred.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";
/// A protobuf metadata informer's `Accept`.
const PROTOBUF_METADATA: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json";

type HttpClient = Client<HttpConnector, Full<Bytes>>;

async fn send(client: &HttpClient, request: Request<Full<Bytes>>) -> Bytes {
    let response = client.request(request).await.expect("an answer");
    assert!(response.status().is_success(), "{}", response.status());
    response
        .into_body()
        .collect()
        .await
        .expect("the body")
        .to_bytes()
}

/// A server holding `PODS` pods, each created as kubectl creates one.
async fn server_with_pods(client: &HttpClient) -> RunningServer {
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("the server starts");
    for i in 0..PODS {
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-{i:05}"), "labels": {"app": "web", "tier": "front"}},
            "spec": {"nodeName": format!("node-{}", i % 50), "containers": [{
                "name": "c", "image": "nginx:1.25",
                "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}],
            }]},
        });
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!(
                "{}/api/v1/namespaces/default/pods?fieldManager=kubectl-create",
                server.url()
            ))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(pod.to_string())))
            .expect("a request");
        send(client, request).await;
    }
    server
}

fn list_formats(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
    let server = runtime.block_on(server_with_pods(&client));
    let url = format!(
        "{}/api/v1/namespaces/default/pods?resourceVersion=0",
        server.url()
    );
    let mut group = c.benchmark_group("list_formats");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    for (name, accept) in [
        ("json", "application/json"),
        ("table", TABLE),
        ("metadata", METADATA),
        ("protobuf", PROTOBUF),
        ("protobuf_metadata", PROTOBUF_METADATA),
    ] {
        let request = || {
            Request::builder()
                .uri(&url)
                .header("accept", accept)
                .body(Full::new(Bytes::new()))
                .expect("a request")
        };
        let bytes = runtime.block_on(send(&client, request())).len();
        println!("list_formats/{name}: {bytes} bytes");
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(send(&client, request())).len());
        });
    }
    group.finish();
    runtime.block_on(server.shutdown());
}

criterion_group!(benches, list_formats);
criterion_main!(benches);
