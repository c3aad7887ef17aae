//! Object metadata validation over HTTP: bad namespaces, names, label keys and
//! values, and oversized annotations are refused with kube-apiserver's 422
//! `Invalid` Status (message, `details` and one cause per error) on create, update
//! and merge patch, and nothing is stored; valid objects still create.
//!
//! Each test starts its own server on `127.0.0.1:0` over the embedded store. Every
//! wait is bounded.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use stage5_apiserver::{RunningServer, Server, ServerConfig};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(10);
const PODS: &str = "/api/v1/namespaces/default/pods";

const LABEL_REGEX: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const DNS_LABEL_REGEX: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";

/// `name part …` for the label key `a b`, as `IsQualifiedName` words it.
fn bad_key_detail() -> String {
    format!(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{LABEL_REGEX}')"
    )
}

async fn start() -> RunningServer {
    Server::start(ServerConfig::for_tests())
        .await
        .expect("server starts")
}

/// Sends one request and returns the code and the JSON body.
async fn call(
    server: &RunningServer,
    method: Method,
    path: &str,
    content_type: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let client = Client::builder(TokioExecutor::new()).build_http();
    let mut request = Request::builder()
        .method(method)
        .uri(format!("{}{path}", server.url()));
    if !content_type.is_empty() {
        request = request.header("content-type", content_type);
    }
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let request = request
        .body(Full::new(Bytes::from(bytes)))
        .expect("request");
    let response = timeout(WAIT, client.request(request))
        .await
        .expect("response in time")
        .expect("response");
    let status = response.status();
    let bytes = timeout(WAIT, response.into_body().collect())
        .await
        .expect("body in time")
        .expect("body")
        .to_bytes();
    (status, serde_json::from_slice(&bytes).expect("a JSON body"))
}

async fn post(
    server: &RunningServer,
    path: &str,
    body: Value,
) -> (StatusCode, Value) {
    call(server, Method::POST, path, "application/json", Some(body)).await
}

fn pod(name: &str, labels: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    })
}

/// Checks a 422 `Invalid` Status: the message, `details` (name, group, kind) and
/// the causes as `(reason, message, field)`.
fn assert_invalid(
    answer: &(StatusCode, Value),
    message: &str,
    name: &str,
    group: Option<&str>,
    kind: &str,
    causes: &[(&str, &str, &str)],
) {
    let (status, body) = answer;
    assert_eq!(status.as_u16(), 422, "{body}");
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["status"], "Failure");
    assert_eq!(body["code"], 422);
    assert_eq!(body["reason"], "Invalid");
    assert_eq!(body["message"], message);
    let details = &body["details"];
    assert_eq!(details["name"], name);
    assert_eq!(details["group"].as_str(), group, "{details}");
    assert_eq!(details["kind"], kind);
    let got: Vec<(String, String, String)> = details["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            let text = |key: &str| c[key].as_str().unwrap_or("").to_string();
            (text("reason"), text("message"), text("field"))
        })
        .collect();
    let want: Vec<(String, String, String)> = causes
        .iter()
        .map(|(r, m, f)| (r.to_string(), m.to_string(), f.to_string()))
        .collect();
    assert_eq!(got, want);
}

async fn assert_not_stored(server: &RunningServer, path: &str) {
    let (status, body) = call(server, Method::GET, path, "", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test]
async fn a_pod_in_namespace_bad_ns_is_invalid() {
    let server = start().await;
    let answer = post(
        &server,
        "/api/v1/namespaces/BAD_NS/pods",
        pod("p", json!({"app": "web"})),
    )
    .await;
    let detail = format!(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{DNS_LABEL_REGEX}')"
    );
    let body = format!("Invalid value: \"BAD_NS\": {detail}");
    assert_invalid(
        &answer,
        &format!("Pod \"p\" is invalid: metadata.namespace: {body}"),
        "p",
        None,
        "Pod",
        &[("FieldValueInvalid", &body, "metadata.namespace")],
    );
    assert_not_stored(&server, "/api/v1/namespaces/BAD_NS/pods/p").await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_namespace_named_with_300_characters_is_invalid() {
    let server = start().await;
    let name = "n".repeat(300);
    let answer = post(
        &server,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )
    .await;
    let body =
        format!("Invalid value: \"{name}\": must be no more than 63 characters");
    assert_invalid(
        &answer,
        &format!("Namespace \"{name}\" is invalid: metadata.name: {body}"),
        &name,
        None,
        "Namespace",
        &[("FieldValueInvalid", &body, "metadata.name")],
    );
    assert_not_stored(&server, &format!("/api/v1/namespaces/{name}")).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_label_key_with_a_space_is_invalid() {
    let server = start().await;
    let answer = post(&server, PODS, pod("p", json!({"a b": "x"}))).await;
    let body = format!("Invalid value: \"a b\": {}", bad_key_detail());
    assert_invalid(
        &answer,
        &format!("Pod \"p\" is invalid: metadata.labels: {body}"),
        "p",
        None,
        "Pod",
        &[("FieldValueInvalid", &body, "metadata.labels")],
    );
    assert_not_stored(&server, &format!("{PODS}/p")).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_300_character_label_value_is_invalid() {
    let server = start().await;
    let value = "v".repeat(300);
    let answer = post(&server, PODS, pod("p", json!({"app": value}))).await;
    let body = format!("Invalid value: \"{value}\": must be no more than 63 bytes");
    assert_invalid(
        &answer,
        &format!("Pod \"p\" is invalid: metadata.labels: {body}"),
        "p",
        None,
        "Pod",
        &[("FieldValueInvalid", &body, "metadata.labels")],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn annotations_over_256_kib_are_too_long() {
    let server = start().await;
    let mut over = pod("p", json!({}));
    // 1 + 262144 bytes: one past `TotalAnnotationSizeLimitB`.
    over["metadata"]["annotations"] = json!({"k": "v".repeat(256 * 1024)});
    let answer = post(&server, PODS, over).await;
    let body = "Too long: may not be more than 262144 bytes";
    assert_invalid(
        &answer,
        &format!("Pod \"p\" is invalid: metadata.annotations: {body}"),
        "p",
        None,
        "Pod",
        &[("FieldValueTooLong", body, "metadata.annotations")],
    );
    assert_not_stored(&server, &format!("{PODS}/p")).await;
    server.shutdown().await;
}

#[tokio::test]
async fn several_errors_are_bracketed_and_a_group_is_named() {
    let server = start().await;
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"a b": "x", "ok": "-bad-"}},
        "spec": {},
    });
    let answer = post(
        &server,
        "/apis/apps/v1/namespaces/default/deployments",
        deployment,
    )
    .await;
    let key = format!("Invalid value: \"a b\": {}", bad_key_detail());
    let value = "Invalid value: \"-bad-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    assert_invalid(
        &answer,
        &format!(
            "Deployment.apps \"d\" is invalid: [metadata.labels: {key}, metadata.labels: {value}]"
        ),
        "d",
        Some("apps"),
        "Deployment",
        &[
            ("FieldValueInvalid", &key, "metadata.labels"),
            ("FieldValueInvalid", value, "metadata.labels"),
        ],
    );
    server.shutdown().await;
}

/// An update that introduces a bad label: kube-apiserver reports it once per
/// ObjectMeta validation that runs on a Pod update (the common fields, their
/// update rules, `ValidatePodUpdate`'s update and create rules), and its message
/// lists it once. The stored pod keeps its labels.
#[tokio::test]
async fn an_update_or_a_merge_patch_that_adds_a_bad_label_is_invalid() {
    let server = start().await;
    let (status, created) =
        post(&server, PODS, pod("p", json!({"app": "web"}))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let body = format!("Invalid value: \"a b\": {}", bad_key_detail());
    let message = format!("Pod \"p\" is invalid: metadata.labels: {body}");
    let cause = ("FieldValueInvalid", body.as_str(), "metadata.labels");

    let mut updated = created.clone();
    updated["metadata"]["labels"] = json!({"app": "web", "a b": "x"});
    let answer = call(
        &server,
        Method::PUT,
        &format!("{PODS}/p"),
        "application/json",
        Some(updated),
    )
    .await;
    assert_invalid(&answer, &message, "p", None, "Pod", &[cause; 4]);

    let answer = call(
        &server,
        Method::PATCH,
        &format!("{PODS}/p"),
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"a b": "x"}}})),
    )
    .await;
    assert_invalid(&answer, &message, "p", None, "Pod", &[cause; 4]);

    let (status, stored) =
        call(&server, Method::GET, &format!("{PODS}/p"), "", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(stored["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(
        stored["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    server.shutdown().await;
}

/// Valid objects at every limit still create: a 63-byte label value, a prefixed
/// key with a 63-byte name part, an empty value, annotation keys in any case, and
/// annotations of exactly 256 KiB.
#[tokio::test]
async fn valid_objects_at_the_limits_still_create() {
    let server = start().await;
    let key = format!("example.com/{}", "k".repeat(63));
    let mut labels = json!({"app": "v".repeat(63), "e": ""});
    labels[key.as_str()] = json!("");
    let mut at_limits = pod("p", labels);
    // "Upper.Example.com/Key" (21 bytes) + value: 262144 bytes in all.
    at_limits["metadata"]["annotations"] =
        json!({"Upper.Example.com/Key": "a".repeat(256 * 1024 - 21)});
    let (status, body) = post(&server, PODS, at_limits).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = post(
        &server,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "n".repeat(63)}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = call(
        &server,
        Method::PATCH,
        &format!("{PODS}/p"),
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"tier": "frontend"}}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    server.shutdown().await;
}

/// A merge patch on a pod's name and uid, answered as upstream's
/// `patcher.applyPatch` (`checkName`) and `rest.BeforeUpdate` answer it: a patch
/// that removes the metadata or renames the pod is 400; one that removes the uid
/// keeps the stored uid (200); one that changes it is 422, `field is immutable`,
/// once per update validation that checks it; one that removes the
/// resourceVersion is an unconditional update. Only the two 200s change the pod.
#[tokio::test]
async fn a_patch_keeps_the_name_and_the_uid_of_the_stored_pod() {
    let server = start().await;
    let (status, created) =
        post(&server, PODS, pod("p", json!({"app": "web"}))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let uid = created["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_string();
    let patch = |body: Value| {
        call(
            &server,
            Method::PATCH,
            "/api/v1/namespaces/default/pods/p",
            "application/merge-patch+json",
            Some(body),
        )
    };

    let bad_requests = [
        (
            json!({"metadata": null}),
            "the name of the object (p based on URL) was undeterminable: name must be provided",
        ),
        (
            json!({"metadata": {"name": "q"}}),
            "the name of the object (q) does not match the name on the URL (p)",
        ),
        (
            json!({"metadata": {"namespace": "other"}}),
            "the namespace of the object (other) does not match the namespace on the URL (default)",
        ),
    ];
    for (body, message) in bad_requests {
        let (status, answer) = patch(body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(answer["reason"], "BadRequest", "{answer}");
        assert_eq!(answer["message"], message, "{answer}");
    }

    let (status, answer) = patch(json!({"metadata": {"uid": "other"}})).await;
    let detail = "Invalid value: \"other\": field is immutable";
    let message = format!("Pod \"p\" is invalid: metadata.uid: {detail}");
    let cause = ("FieldValueInvalid", detail, "metadata.uid");
    assert_invalid(&(status, answer), &message, "p", None, "Pod", &[cause; 2]);

    let (status, answer) =
        patch(json!({"metadata": {"uid": null, "labels": {"step": "1"}}})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["metadata"]["uid"], uid.as_str());
    assert_eq!(answer["metadata"]["labels"]["step"], "1");

    let (status, answer) = patch(
        json!({"metadata": {"resourceVersion": null, "labels": {"step": "2"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["metadata"]["labels"]["step"], "2");

    let (status, stored) =
        call(&server, Method::GET, &format!("{PODS}/p"), "", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(stored["metadata"]["uid"], uid.as_str());
    assert_eq!(
        stored["metadata"]["labels"],
        json!({"app": "web", "step": "2"})
    );
    assert_eq!(
        stored["metadata"]["resourceVersion"],
        answer["metadata"]["resourceVersion"]
    );
    server.shutdown().await;
}
