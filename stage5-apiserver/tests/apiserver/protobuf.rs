//! Answers in protobuf (`application/vnd.kubernetes.protobuf`), read with
//! k8s-pb as a client-go program with `ContentType` and `AcceptContentTypes`
//! set to protobuf reads them: lists, gets, metadata lists, watches and
//! errors, each equal to the JSON answer for the same request, from the watch
//! cache, from storage without it, and on real etcd.

use std::time::Duration;

use apimachinery::runtime::serializer::protobuf::{self, CONTENT_TYPE, PREFIX};
use http_body_util::BodyExt;
use hyper::Method;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message as _;
use serde_json::{Value, json};
use stage5_apiserver::{RunningServer, Server, ServerConfig};
use tokio::time::timeout;

use super::server_http::{Http, Lines};

const WAIT: Duration = Duration::from_secs(10);
const PODS: &str = "/api/v1/namespaces/default/pods";
/// What client-go sends when a program asks for protobuf only.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A protobuf body's envelope: its kind and message bytes.
fn unwrap(body: &[u8]) -> (String, Vec<u8>) {
    assert_eq!(&body[..4], &PREFIX, "a protobuf body starts with k8s\\0");
    let unknown = Unknown::decode(&body[4..]).expect("an Unknown envelope");
    let kind = unknown.type_meta.and_then(|t| t.kind).unwrap_or_default();
    (kind, unknown.raw.unwrap_or_default())
}

/// The JSON a protobuf object decodes to, without `apiVersion` and `kind`.
fn decoded(body: &[u8]) -> Value {
    let mut value = protobuf::decode(body, "", "").expect("a protobuf object");
    untyped(&mut value);
    value
}

fn untyped(value: &mut Value) {
    if let Some(map) = value.as_object_mut() {
        map.remove("apiVersion");
        map.remove("kind");
    }
}

async fn get_bytes(http: &Http, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    let response = http
        .send_with(Method::GET, path, &[("accept", accept)], Vec::new())
        .await;
    let (status, headers, bytes) = Http::raw(response).await;
    let content_type = headers
        .get("content-type")
        .map(|v| v.to_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    (status.as_u16(), content_type, bytes.to_vec())
}

/// Reads length-prefixed frames from a protobuf watch.
struct Frames {
    lines: Lines,
}

impl Frames {
    async fn next(&mut self) -> (String, Value) {
        loop {
            if let Some(frame) =
                protobuf::read_watch_frame(&self.lines.buffer).expect("a frame")
            {
                let used = self.lines.buffer.len() - frame.rest.len();
                let (event_type, object) =
                    (frame.event_type, decoded(&frame.object));
                self.lines.buffer.drain(..used);
                return (event_type, object);
            }
            let frame = timeout(WAIT, self.lines.body.frame()).await;
            let frame = match frame {
                Ok(Some(Ok(frame))) => frame,
                other => panic!("another frame in time: {other:?}"),
            };
            if let Ok(data) = frame.into_data() {
                self.lines.buffer.extend_from_slice(&data);
            }
        }
    }
}

async fn watch(http: &Http, path: &str, accept: &str) -> Lines {
    let response = http
        .send_with(Method::GET, path, &[("accept", accept)], Vec::new())
        .await;
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    let expected = if accept == PROTOBUF {
        "application/vnd.kubernetes.protobuf;stream=watch"
    } else {
        "application/json"
    };
    assert_eq!(content_type, expected);
    Lines {
        body: response.into_body(),
        buffer: Vec::new(),
    }
}

fn pod(name: &str) -> Value {
    json!({"apiVersion":"v1","kind":"Pod",
        "metadata":{"name":name,"labels":{"app":"web"},"annotations":{"note":"ünïcode"}},
        "spec":{"containers":[{"name":"c","image":"nginx",
            "ports":[{"containerPort":80}],
            "resources":{"limits":{"cpu":"500m","memory":"64Mi"}}}],
            "terminationGracePeriodSeconds":0}})
}

/// Starts a server with `config` and checks every answer, within a bound.
async fn check_every_answer(config: ServerConfig) {
    let server = Server::start(config).await.expect("server starts");
    timeout(
        6 * WAIT,
        every_answer_in_protobuf_equals_the_json_one(server),
    )
    .await
    .expect("the requests finish in time");
}

async fn every_answer_in_protobuf_equals_the_json_one(server: RunningServer) {
    let http = Http::new(&server);
    for name in ["a", "b", "c"] {
        let created = http.post(PODS, pod(name)).await;
        assert_eq!(created.status, 201, "{}", created.body);
    }

    // Lists, from the watch cache and from storage. The cache may answer
    // `resourceVersion=0` from before the creates (any version will do), so
    // it is asked for one at least as new as the last create.
    let created_rv = http.get(PODS).await.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let from_cache =
        format!("?resourceVersion={created_rv}&resourceVersionMatch=NotOlderThan");
    for query in [from_cache.as_str(), ""] {
        let path = format!("{PODS}{query}");
        let json = http.get(&path).await;
        let (status, content_type, body) = get_bytes(&http, &path, PROTOBUF).await;
        assert_eq!((status, content_type.as_str()), (200, CONTENT_TYPE));
        let (kind, raw) = unwrap(&body);
        assert_eq!(kind, "PodList");
        let list = core::PodList::decode(raw.as_slice()).expect("a PodList");
        let list_meta = list.metadata.clone().unwrap_or_default();
        assert_eq!(
            list_meta.resource_version.unwrap_or_default(),
            json.body["metadata"]["resourceVersion"].as_str().unwrap()
        );
        let items: Vec<Value> = list
            .items
            .iter()
            .map(|item| {
                decoded(&protobuf::envelope("v1", "Pod", &item.encode_to_vec()))
            })
            .collect();
        let mut expected = json.body["items"].as_array().unwrap().clone();
        expected.iter_mut().for_each(untyped);
        assert_eq!(items, expected, "the list {path}");
        // The first list from the cache encodes; the second shares the bytes.
        let (_, _, again) = get_bytes(&http, &path, PROTOBUF).await;
        assert_eq!(again, body);
    }

    // One object, and an error as a protobuf Status.
    let json = http.get(&format!("{PODS}/a")).await;
    let (status, content_type, body) =
        get_bytes(&http, &format!("{PODS}/a"), PROTOBUF).await;
    assert_eq!((status, content_type.as_str()), (200, CONTENT_TYPE));
    let mut expected = json.body.clone();
    untyped(&mut expected);
    assert_eq!(decoded(&body), expected);
    let (status, content_type, body) =
        get_bytes(&http, &format!("{PODS}/missing"), PROTOBUF).await;
    assert_eq!((status, content_type.as_str()), (404, CONTENT_TYPE));
    let (kind, raw) = unwrap(&body);
    assert_eq!(kind, "Status");
    let missing = meta::Status::decode(raw.as_slice()).unwrap();
    assert_eq!(missing.reason.as_deref(), Some("NotFound"));
    assert_eq!(missing.code, Some(404));
    assert_eq!(
        missing.message.as_deref(),
        Some("pods \"missing\" not found")
    );

    // Metadata alone, as the garbage collector's metadata informers ask.
    let accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let (status, _, body) =
        get_bytes(&http, &format!("{PODS}{from_cache}"), accept).await;
    assert_eq!(status, 200);
    let (kind, raw) = unwrap(&body);
    assert_eq!(kind, "PartialObjectMetadataList");
    let metadata = meta::PartialObjectMetadataList::decode(raw.as_slice()).unwrap();
    let names: Vec<_> = metadata
        .items
        .iter()
        .map(|item| {
            item.metadata
                .clone()
                .unwrap_or_default()
                .name
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    let json_metadata = http
        .get_accept(
            &format!("{PODS}{from_cache}"),
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )
        .await;
    assert_eq!(json_metadata.body["items"][2]["metadata"]["name"], "c");
    assert_eq!(
        json_metadata.body["items"][0]["metadata"]["annotations"]["note"],
        "ünïcode"
    );

    // A watch: the same events in both encodings, three watchers each.
    let rv = http.get(PODS).await.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("{PODS}?watch=1&resourceVersion={rv}");
    let mut frames = Vec::new();
    let mut lines = Vec::new();
    for _ in 0..3 {
        frames.push(Frames {
            lines: watch(&http, &path, PROTOBUF).await,
        });
        lines.push(watch(&http, &path, "application/json").await);
    }
    assert_eq!(http.post(PODS, pod("d")).await.status, 201);
    let mut changed = http.get(&format!("{PODS}/d")).await.body;
    changed["metadata"]["labels"]["app"] = json!("db");
    let updated = http
        .send_with(
            Method::PUT,
            &format!("{PODS}/d"),
            &[("content-type", "application/json")],
            changed.to_string().into_bytes(),
        )
        .await;
    assert_eq!(updated.status(), 200);
    assert_eq!(http.delete_path(&format!("{PODS}/d")).await, 200);
    for (frames, lines) in frames.iter_mut().zip(&mut lines) {
        for expected_type in ["ADDED", "MODIFIED", "DELETED"] {
            let (event_type, object) = frames.next().await;
            let line = lines.next().await.expect("a JSON event");
            assert_eq!(event_type, expected_type);
            assert_eq!(line["type"], expected_type);
            let mut expected = line["object"].clone();
            untyped(&mut expected);
            assert_eq!(object, expected, "{event_type}");
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn every_answer_in_protobuf_equals_the_json_one_with_and_without_the_cache() {
    for watch_cache in [true, false] {
        check_every_answer(ServerConfig::for_tests().watch_cache(watch_cache)).await;
    }
}

#[cfg(feature = "etcd")]
#[tokio::test]
async fn every_answer_in_protobuf_equals_the_json_one_on_real_etcd() {
    use stage5_storage::testing::EtcdServer;
    let Some(etcd) = EtcdServer::start_or_skip_async(
        "every_answer_in_protobuf_equals_the_json_one_on_real_etcd",
    )
    .await
    else {
        return;
    };
    check_every_answer(
        ServerConfig::for_tests()
            .backend(stage5_apiserver::Backend::Etcd(vec![etcd.client_url()])),
    )
    .await;
    drop(etcd);
}
