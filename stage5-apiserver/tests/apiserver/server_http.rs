//! The mini-apiserver over raw HTTP: discovery, every verb, every error as a
//! `Status` with its code and reason, the watch stream's format (chunked
//! newline-delimited JSON, bookmarks with kind and apiVersion, `sendInitialEvents`),
//! 410 on a list versus an `ERROR` event on a watch, server-side printing
//! (`Table`s and `PartialObjectMetadata` by Accept header, 406), auth, `/metrics`,
//! `/debug/watchers`, shutdown ending watches, and malformed input not hurting it.
//!
//! Each test starts its own server on `127.0.0.1:0` over the embedded store. Every
//! wait is bounded.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use stage5_apiserver::{Backend, RunningServer, Server, ServerConfig};
use stage5_storage::kv::{EmbeddedKv, Kv};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(10);

pub(super) struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
    token: Option<String>,
}

pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Value,
}

impl Http {
    pub(super) fn new(server: &RunningServer) -> Self {
        Http {
            client: Client::builder(TokioExecutor::new()).build_http(),
            base: server.url(),
            token: None,
        }
    }

    pub(super) async fn send(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Response<Incoming> {
        self.send_with(method, path, &[("content-type", content_type)], body)
            .await
    }

    /// Sends a request with these headers (an empty value is left out).
    pub(super) async fn send_with(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Response<Incoming> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        for (name, value) in headers {
            if !value.is_empty() {
                request = request.header(*name, *value);
            }
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request.body(Full::new(Bytes::from(body))).expect("request");
        timeout(WAIT, self.client.request(request))
            .await
            .expect("response in time")
            .expect("response")
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Answer {
        let response = self.send(method, path, content_type, body).await;
        Self::answer(response).await
    }

    /// A response's status, headers and whole body, read within [`WAIT`].
    pub(super) async fn raw(
        response: Response<Incoming>,
    ) -> (StatusCode, HeaderMap, Bytes) {
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = timeout(WAIT, response.into_body().collect())
            .await
            .expect("body in time")
            .expect("body")
            .to_bytes();
        (status, headers, bytes)
    }

    async fn answer(response: Response<Incoming>) -> Answer {
        let (status, headers, bytes) = Self::raw(response).await;
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            Value::String(String::from_utf8_lossy(&bytes).into_owned())
        });
        Answer {
            status,
            headers,
            body,
        }
    }

    pub(super) async fn get(&self, path: &str) -> Answer {
        self.call(Method::GET, path, "", Vec::new()).await
    }

    /// A `GET` with an `Accept` header.
    pub(super) async fn get_accept(&self, path: &str, accept: &str) -> Answer {
        let response = self
            .send_with(Method::GET, path, &[("accept", accept)], Vec::new())
            .await;
        Self::answer(response).await
    }

    /// Opens a watch with an `Accept` header.
    async fn watch_accept(
        &self,
        path: &str,
        accept: &str,
    ) -> (StatusCode, HeaderMap, Lines) {
        let response = self
            .send_with(Method::GET, path, &[("accept", accept)], Vec::new())
            .await;
        let status = response.status();
        let headers = response.headers().clone();
        (
            status,
            headers,
            Lines {
                body: response.into_body(),
                buffer: Vec::new(),
            },
        )
    }

    pub(super) async fn post(&self, path: &str, body: Value) -> Answer {
        self.call(
            Method::POST,
            path,
            "application/json",
            body.to_string().into_bytes(),
        )
        .await
    }

    async fn put(&self, path: &str, body: Value) -> Answer {
        self.call(
            Method::PUT,
            path,
            "application/json",
            body.to_string().into_bytes(),
        )
        .await
    }

    async fn patch(&self, path: &str, content_type: &str, body: Value) -> Answer {
        self.call(
            Method::PATCH,
            path,
            content_type,
            body.to_string().into_bytes(),
        )
        .await
    }

    async fn delete(&self, path: &str) -> Answer {
        self.call(Method::DELETE, path, "", Vec::new()).await
    }

    /// A `DELETE`'s status code.
    pub(super) async fn delete_path(&self, path: &str) -> u16 {
        self.delete(path).await.status.as_u16()
    }

    /// Opens a watch and returns its response (headers) and a line reader.
    async fn watch(&self, path: &str) -> (StatusCode, HeaderMap, Lines) {
        let response = self.send(Method::GET, path, "", Vec::new()).await;
        let status = response.status();
        let headers = response.headers().clone();
        (
            status,
            headers,
            Lines {
                body: response.into_body(),
                buffer: Vec::new(),
            },
        )
    }
}

/// Reads a streamed body line by line.
pub(super) struct Lines {
    pub(super) body: Incoming,
    pub(super) buffer: Vec<u8>,
}

impl Lines {
    /// The next line as JSON; `None` at the end of the stream.
    pub(super) async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                return Some(
                    serde_json::from_slice(&line).expect("each line is JSON"),
                );
            }
            let frame = timeout(WAIT, self.body.frame())
                .await
                .expect("event in time")?;
            if let Ok(data) = frame.expect("frame").into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }

    /// The next event, which must exist.
    async fn event(&mut self) -> Value {
        self.next().await.expect("another event")
    }
}

async fn start(config: ServerConfig) -> RunningServer {
    Server::start(config).await.expect("server starts")
}

async fn start_default() -> RunningServer {
    start(ServerConfig::for_tests()).await
}

fn pod(name: &str, node: &str, app: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]},
    })
}

fn assert_status(answer: &Answer, code: u16, reason: &str) {
    assert_eq!(answer.status.as_u16(), code, "{}", answer.body);
    assert_eq!(answer.body["kind"], "Status", "{}", answer.body);
    assert_eq!(answer.body["apiVersion"], "v1", "{}", answer.body);
    assert_eq!(answer.body["code"], code, "{}", answer.body);
    assert_eq!(answer.body["reason"], reason, "{}", answer.body);
    assert_eq!(
        answer
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
}

const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test]
async fn discovery_is_enough_for_kubectl() {
    let server = start_default().await;
    let http = Http::new(&server);
    let api = http.get("/api").await;
    assert_eq!(api.body["kind"], "APIVersions");
    assert_eq!(api.body["versions"], json!(["v1"]));
    let apis = http.get("/apis").await;
    assert_eq!(apis.body["kind"], "APIGroupList");
    assert_eq!(apis.body["groups"][0]["name"], "apps");
    assert_eq!(
        apis.body["groups"][0]["preferredVersion"]["groupVersion"],
        "apps/v1"
    );
    let v1 = http.get("/api/v1").await;
    assert_eq!(v1.body["kind"], "APIResourceList");
    let pods = v1.body["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "pods"))
        .cloned()
        .expect("pods in /api/v1");
    assert_eq!(pods["kind"], "Pod");
    assert_eq!(pods["namespaced"], true);
    assert_eq!(pods["singularName"], "pod");
    assert_eq!(pods["shortNames"], json!(["po"]));
    for verb in [
        "create", "delete", "get", "list", "patch", "update", "watch",
    ] {
        assert!(
            pods["verbs"]
                .as_array()
                .is_some_and(|v| v.contains(&json!(verb))),
            "{verb}"
        );
    }
    let nodes = v1.body["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "nodes"))
        .cloned()
        .expect("nodes");
    assert_eq!(nodes["namespaced"], false);
    let apps = http.get("/apis/apps/v1").await;
    assert_eq!(apps.body["groupVersion"], "apps/v1");
    assert_eq!(apps.body["resources"][0]["kind"], "Deployment");
    assert_eq!(http.get("/version").await.body["major"], "1");
    assert_eq!(http.get("/healthz").await.body, "ok");
    assert_eq!(http.get("/readyz").await.status, StatusCode::OK);
    // Aggregated discovery is answered with the plain document, as JSON.
    let aggregated = http
        .client
        .request(
            Request::get(format!("{}/api", http.base))
                .header(
                    "accept",
                    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
                )
                .body(Full::new(Bytes::new()))
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(aggregated.headers()["content-type"], "application/json");
    let openapi = http.get("/openapi/v3").await;
    assert!(openapi.body["paths"]["api/v1"]["serverRelativeURL"].is_string());
    assert_status(&http.get("/apis/nope/v1").await, 404, "NotFound");
    assert_status(&http.get("/nope").await, 404, "NotFound");
    server.shutdown().await;
}

#[tokio::test]
async fn every_verb_and_its_errors() {
    let server = start_default().await;
    let http = Http::new(&server);

    // create
    let created = http.post(PODS, pod("web-0", "n1", "web")).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let meta = &created.body["metadata"];
    assert_eq!(meta["namespace"], "default");
    assert!(meta["uid"].as_str().is_some_and(|u| u.len() == 36));
    assert!(meta["creationTimestamp"].is_string());
    let rv0 = meta["resourceVersion"].as_str().expect("rv").to_string();
    assert_status(
        &http.post(PODS, pod("web-0", "n1", "web")).await,
        409,
        "AlreadyExists",
    );
    let mut other_ns = pod("x", "n1", "web");
    other_ns["metadata"]["namespace"] = json!("kube-system");
    assert_status(&http.post(PODS, other_ns).await, 400, "BadRequest");
    assert_status(
        &http.post(PODS, json!({"metadata": {}})).await,
        422,
        "Invalid",
    );
    assert_status(
        &http.post(PODS, pod("Not_A_Name", "n1", "web")).await,
        422,
        "Invalid",
    );
    let mut wrong_kind = pod("cm", "n1", "web");
    wrong_kind["kind"] = json!("ConfigMap");
    assert_status(&http.post(PODS, wrong_kind).await, 400, "BadRequest");
    assert_status(
        &http
            .call(
                Method::POST,
                PODS,
                "application/json",
                b"{not json".to_vec(),
            )
            .await,
        400,
        "BadRequest",
    );
    assert_status(
        &http
            .call(
                Method::POST,
                PODS,
                "application/vnd.kubernetes.protobuf",
                b"k8s\0".to_vec(),
            )
            .await,
        400,
        "BadRequest",
    );
    assert_status(
        &http
            .call(
                Method::POST,
                PODS,
                "application/yaml",
                b"kind: Pod".to_vec(),
            )
            .await,
        415,
        "UnsupportedMediaType",
    );
    let generated = http
        .post(PODS, json!({"metadata": {"generateName": "gen-"}}))
        .await;
    assert_eq!(generated.status, StatusCode::CREATED, "{}", generated.body);
    assert!(
        generated.body["metadata"]["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("gen-") && n.len() == 9)
    );
    http.post(PODS, pod("web-1", "n2", "web")).await;
    http.post(PODS, pod("db-0", "n1", "db")).await;

    // get
    let got = http.get(&format!("{PODS}/web-0")).await;
    assert_eq!(got.body["metadata"]["resourceVersion"], rv0.as_str());
    assert_status(&http.get(&format!("{PODS}/missing")).await, 404, "NotFound");
    assert_status(
        &http.get("/api/v1/namespaces/default/widgets").await,
        404,
        "NotFound",
    );
    // pods/status is served (the object); pods have no scale, no log here.
    let status = http.get(&format!("{PODS}/web-0/status")).await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    assert_eq!(status.body["metadata"]["name"], "web-0");
    for sub in ["scale", "log"] {
        assert_status(
            &http.get(&format!("{PODS}/web-0/{sub}")).await,
            404,
            "NotFound",
        );
    }

    // list with selectors and paging
    let list = http.get(PODS).await;
    assert_eq!(list.body["kind"], "PodList");
    assert_eq!(list.body["apiVersion"], "v1");
    assert!(list.body["metadata"]["resourceVersion"].is_string());
    assert_eq!(list.body["items"].as_array().map(Vec::len), Some(4));
    let web = http.get(&format!("{PODS}?labelSelector=app%3Dweb")).await;
    assert_eq!(web.body["items"].as_array().map(Vec::len), Some(2));
    let on_n1 = http
        .get(&format!("{PODS}?fieldSelector=spec.nodeName%3Dn1"))
        .await;
    assert_eq!(
        on_n1.body["items"].as_array().map(Vec::len),
        Some(2),
        "{}",
        on_n1.body
    );
    assert_status(
        &http.get(&format!("{PODS}?labelSelector=a%20in%20(")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &http
            .get(&format!("{PODS}?fieldSelector=spec.foo%3Dx"))
            .await,
        400,
        "BadRequest",
    );
    assert_status(
        &http.get(&format!("{PODS}?resourceVersion=abc")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &http.get(&format!("{PODS}?limit=x")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &http.get(&format!("{PODS}?continue=garbage")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &http.get(&format!("{PODS}?watch=maybe")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &http
            .get(&format!("{PODS}?resourceVersionMatch=Exact"))
            .await,
        422,
        "Invalid",
    );
    let page1 = http.get(&format!("{PODS}?limit=3")).await;
    assert_eq!(page1.body["items"].as_array().map(Vec::len), Some(3));
    // remainingItemCount is optional ("when known"); when sent it must be right.
    let remaining = &page1.body["metadata"]["remainingItemCount"];
    assert!(remaining.is_null() || *remaining == 1, "{remaining}");
    let token = page1.body["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    let page2 = http.get(&format!("{PODS}?limit=3&continue={token}")).await;
    assert_eq!(page2.body["items"].as_array().map(Vec::len), Some(1));
    assert!(page2.body["metadata"].get("continue").is_none());
    let all_ns = http.get("/api/v1/pods").await;
    assert_eq!(all_ns.body["items"].as_array().map(Vec::len), Some(4));

    // update
    let mut changed = got.body.clone();
    changed["metadata"]["labels"]["tier"] = json!("front");
    let updated = http.put(&format!("{PODS}/web-0"), changed.clone()).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.body);
    assert_eq!(updated.body["metadata"]["labels"]["tier"], "front");
    assert_eq!(updated.body["metadata"]["uid"], got.body["metadata"]["uid"]);
    assert_status(
        &http.put(&format!("{PODS}/web-0"), changed.clone()).await,
        409,
        "Conflict",
    );
    assert_status(
        &http.put(&format!("{PODS}/other"), changed.clone()).await,
        400,
        "BadRequest",
    );
    let mut missing = pod("ghost", "n1", "web");
    missing["metadata"]["resourceVersion"] = json!("1");
    assert_status(
        &http.put(&format!("{PODS}/ghost"), missing).await,
        404,
        "NotFound",
    );

    // patch
    let path = format!("{PODS}/web-0");
    let patched = http
        .patch(
            &path,
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"tier": null, "x": "1"}}}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(
        patched.body["metadata"]["labels"],
        json!({"app": "web", "x": "1"})
    );
    let strategic = http
        .patch(
            &path,
            "application/strategic-merge-patch+json",
            json!({"spec": {"nodeName": "n9"}}),
        )
        .await;
    assert_eq!(strategic.body["spec"]["nodeName"], "n9");
    let json_patched = http
        .patch(
            &path,
            "application/json-patch+json",
            json!([
                {"op": "test", "path": "/spec/nodeName", "value": "n9"},
                {"op": "add", "path": "/metadata/labels/y", "value": "2"},
            ]),
        )
        .await;
    assert_eq!(json_patched.status, StatusCode::OK, "{}", json_patched.body);
    assert_eq!(json_patched.body["metadata"]["labels"]["y"], "2");
    // A failed operation: 422 with upstream's generic message, nothing stored.
    let failed = http
        .patch(
            &path,
            "application/json-patch+json",
            json!([
                {"op": "add", "path": "/metadata/labels/z", "value": "3"},
                {"op": "test", "path": "/spec/nodeName", "value": "elsewhere"},
            ]),
        )
        .await;
    assert_status(&failed, 422, "Invalid");
    assert_eq!(
        failed.body["message"],
        "the server rejected our request due to an error in our request"
    );
    assert_eq!(
        http.get(&path).await.body["metadata"]["labels"]["z"],
        Value::Null
    );
    assert_status(
        &http
            .patch(&path, "application/json-patch+json", json!({"op": "add"}))
            .await,
        400,
        "BadRequest",
    );
    assert_status(
        &http.patch(&path, "application/yaml", json!({})).await,
        415,
        "UnsupportedMediaType",
    );
    assert_status(
        &http
            .patch(
                &path,
                "application/merge-patch+json",
                json!({"metadata": {"resourceVersion": rv0}}),
            )
            .await,
        409,
        "Conflict",
    );
    assert_status(
        &http
            .patch(
                &path,
                "application/merge-patch+json",
                json!({"metadata": {"name": "renamed"}}),
            )
            .await,
        // `checkName`, after the patch and before validation.
        400,
        "BadRequest",
    );
    assert_status(
        &http
            .patch(
                &format!("{PODS}/ghost"),
                "application/merge-patch+json",
                json!({}),
            )
            .await,
        404,
        "NotFound",
    );

    // verbs not allowed
    assert_status(
        &http.post(&path, pod("web-0", "n1", "web")).await,
        405,
        "MethodNotAllowed",
    );
    assert_status(
        &http.put(PODS, pod("web-0", "n1", "web")).await,
        405,
        "MethodNotAllowed",
    );
    assert_status(&http.delete(PODS).await, 405, "MethodNotAllowed");
    assert_status(
        &http.call(Method::OPTIONS, PODS, "", Vec::new()).await,
        405,
        "MethodNotAllowed",
    );

    // delete: the pod is bound to a node, so a plain delete is graceful (it
    // only marks the pod); with a grace period of 0, as a kubelet finishes it
    // (or `kubectl delete --grace-period=0 --force`), it goes at once.
    let deleted = http.delete(&format!("{path}?gracePeriodSeconds=0")).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(deleted.body["metadata"]["name"], "web-0");
    assert_status(&http.delete(&path).await, 404, "NotFound");
    let precondition = http
        .call(
            Method::DELETE,
            &format!("{PODS}/web-1"),
            "application/json",
            json!({"preconditions": {"uid": "not-it"}})
                .to_string()
                .into_bytes(),
        )
        .await;
    assert_status(&precondition, 409, "Conflict");

    // cluster-scoped
    let node = http
        .post(
            "/api/v1/nodes",
            json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": true}}),
        )
        .await;
    assert_eq!(node.status, StatusCode::CREATED, "{}", node.body);
    assert!(node.body["metadata"].get("namespace").is_none());
    assert_eq!(http.get("/api/v1/nodes/n1").await.status, StatusCode::OK);
    assert_status(
        &http.get("/api/v1/namespaces/default/nodes/n1").await,
        404,
        "NotFound",
    );
    let ns = http
        .post(
            "/api/v1/namespaces",
            json!({"metadata": {"name": "team-a"}}),
        )
        .await;
    assert_eq!(ns.status, StatusCode::CREATED);
    let team_a = http.get("/api/v1/namespaces/team-a").await.body;
    assert_eq!(team_a["kind"], "Namespace");
    // The namespace strategy's PrepareForCreate.
    assert_eq!(team_a["status"]["phase"], "Active");
    assert_eq!(team_a["spec"]["finalizers"], json!(["kubernetes"]));
    let deploy = http
        .post(
            "/apis/apps/v1/namespaces/team-a/deployments",
            json!({"metadata": {"name": "d"}, "spec": {"replicas": 1}}),
        )
        .await;
    assert_eq!(deploy.status, StatusCode::CREATED, "{}", deploy.body);
    assert_eq!(deploy.body["apiVersion"], "apps/v1");
    server.shutdown().await;
}

#[tokio::test]
async fn a_fresh_server_has_the_system_namespaces_and_keeps_them() {
    let server = start_default().await;
    let http = Http::new(&server);
    let names = |list: &Value| {
        let mut names: Vec<String> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|ns| ns["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        names.sort_unstable();
        names
    };
    let listed = http.get("/api/v1/namespaces").await;
    assert_eq!(
        names(&listed.body),
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
    let default = http.get("/api/v1/namespaces/default").await.body;
    assert_eq!(default["status"]["phase"], "Active");
    assert!(default["metadata"]["uid"].is_string());
    assert!(default["metadata"]["creationTimestamp"].is_string());

    // default, kube-system and kube-public may not be deleted.
    let refused = http.delete("/api/v1/namespaces/kube-public").await;
    assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        refused.body["message"],
        "namespaces \"kube-public\" is forbidden: this namespace may not be deleted"
    );
    // kube-node-lease may; deleted (the namespace controller's sync finishes
    // it, if the controller's own run has not yet), it comes back at the system
    // namespaces controller's next round.
    assert_eq!(
        http.delete("/api/v1/namespaces/kube-node-lease")
            .await
            .status,
        StatusCode::OK
    );
    let registry = &server.state().registry;
    stage5_apiserver::namespace_deletion::sync(registry, "kube-node-lease")
        .await
        .expect("the storage answers");
    assert_eq!(
        http.get("/api/v1/namespaces/kube-node-lease").await.status,
        StatusCode::NOT_FOUND
    );
    let created = stage5_apiserver::system_namespaces::ensure(registry)
        .await
        .expect("the storage answers");
    assert_eq!(created, 1);
    assert_eq!(
        http.get("/api/v1/namespaces/kube-node-lease").await.status,
        StatusCode::OK
    );
    server.shutdown().await;
}

#[tokio::test]
async fn namespace_lifecycle_refuses_missing_and_terminating_namespaces() {
    let server = start_default().await;
    let http = Http::new(&server);
    // A create in a namespace that does not exist: 404 for the namespace.
    let missing = http
        .post("/api/v1/namespaces/nowhere/pods", pod("p", "n1", "web"))
        .await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(missing.body["message"], "namespaces \"nowhere\" not found");
    assert_eq!(missing.body["details"]["kind"], "namespaces");
    // Validation comes first: a bad name in a missing namespace is still 422.
    assert_status(
        &http
            .post(
                "/api/v1/namespaces/nowhere/pods",
                pod("Bad_Name", "n1", "web"),
            )
            .await,
        422,
        "Invalid",
    );

    // A namespace being terminated refuses new content: 403 with the cause.
    let namespaces = server
        .state()
        .registry
        .find("", "v1", "namespaces")
        .expect("namespaces are served");
    let mut closing = stage5_storage::Object::new(
        &stage5_storage::ResourceInfo::NAMESPACES,
        None,
        "closing",
    )
    .with_data(json!({"status": {"phase": "Terminating"}}));
    closing.metadata.uid = Some("u-closing".into());
    namespaces
        .dyn_storage
        .create("/registry/namespaces/closing".into(), closing)
        .await
        .expect("stored");
    let refused = http
        .post("/api/v1/namespaces/closing/pods", pod("p", "n1", "web"))
        .await;
    assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        refused.body["message"],
        "pods \"p\" is forbidden: unable to create new content in namespace closing \
         because it is being terminated"
    );
    assert_eq!(
        refused.body["details"]["causes"][0]["reason"],
        "NamespaceTerminating"
    );

    server.shutdown().await;
}

/// `DELETE` of a namespace answers it `Terminating` (200, with its
/// deletionTimestamp), and the namespace controller, after its five-second grace
/// period, deletes its objects and then the namespace: a watch sees the
/// namespace go.
#[tokio::test]
async fn deleting_a_namespace_terminates_it_then_removes_its_content_and_it() {
    let server = start_default().await;
    let http = Http::new(&server);
    let created = http
        .post(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-x"}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let pod_created = http
        .post("/api/v1/namespaces/team-x/pods", pod("p", "n1", "web"))
        .await;
    assert_eq!(pod_created.status, StatusCode::CREATED);
    let config_created = http
        .post(
            "/api/v1/namespaces/team-x/configmaps",
            json!({"metadata": {"name": "c"}, "data": {"k": "v"}}),
        )
        .await;
    assert_eq!(config_created.status, StatusCode::CREATED);
    let (status, _, mut events) = http
        .watch(&format!(
            "/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3Dteam-x&resourceVersion={}",
            config_created.body["metadata"]["resourceVersion"]
                .as_str()
                .expect("rv")
        ))
        .await;
    assert_eq!(status, StatusCode::OK);

    let deleted = http.delete("/api/v1/namespaces/team-x").await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(deleted.body["kind"], "Namespace");
    assert_eq!(deleted.body["status"]["phase"], "Terminating");
    assert!(deleted.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(deleted.body["spec"]["finalizers"], json!(["kubernetes"]));

    // The controller's steps, as the watch sees them: marked, finalized, gone.
    let mut seen = Vec::new();
    loop {
        let event = events.event().await;
        let phase = event["object"]["status"]["phase"].clone();
        let finalizers = event["object"]["spec"]["finalizers"].clone();
        seen.push((
            event["type"].as_str().unwrap_or_default().to_string(),
            phase,
            finalizers,
        ));
        if event["type"] == "DELETED" {
            break;
        }
    }
    assert_eq!(
        seen.first().map(|(t, p, _)| (t.as_str(), p.clone())),
        Some(("MODIFIED", json!("Terminating")))
    );
    assert_eq!(seen.last().map(|(_, _, f)| f.clone()), Some(json!([])));
    // The content went before the namespace.
    for path in [
        "/api/v1/namespaces/team-x/pods/p",
        "/api/v1/namespaces/team-x/configmaps/c",
        "/api/v1/namespaces/team-x",
    ] {
        assert_status(&http.get(path).await, 404, "NotFound");
    }
    // A second delete of a namespace that is gone is 404.
    assert_status(
        &http.delete("/api/v1/namespaces/team-x").await,
        404,
        "NotFound",
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_a_413_status() {
    let server = start(ServerConfig::for_tests().body_limit(1024)).await;
    let http = Http::new(&server);
    let mut big = pod("big", "n1", "web");
    big["metadata"]["annotations"] = json!({"a": "x".repeat(4096)});
    assert_status(
        &http.post(PODS, big.clone()).await,
        413,
        "RequestEntityTooLarge",
    );
    assert_status(
        &http
            .patch(&format!("{PODS}/big"), "application/merge-patch+json", big)
            .await,
        413,
        "RequestEntityTooLarge",
    );
    assert_eq!(
        http.post(PODS, pod("small", "n1", "web")).await.status,
        StatusCode::CREATED
    );
    server.shutdown().await;
}

/// A pod with `n` labels `l00000`… of 63-byte values: 75 bytes of JSON a
/// label, and 14 more in its `managedFields` entry.
fn pod_with_labels(name: &str, n: usize) -> Value {
    let value = "v".repeat(63);
    let labels: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("l{i:05}"), Value::from(value.as_str())))
        .collect();
    let mut pod = pod(name, "n1", "web");
    pod["metadata"]["labels"] = Value::Object(labels);
    pod
}

/// Objects too large for etcd's 1.5 MiB request limit, answered as
/// kube-apiserver answers them (`isTooLargeError` in `create.go` and
/// `patch.go`), the same on both backends:
/// - a pod that fits only without its `managedFields` is stored without them;
/// - so is a patch that makes a pod so;
/// - a pod too large even without them is 500 with etcd's own message and no
///   reason, and nothing is stored;
/// - a body over the 3 MiB request limit is 413 before it is decoded.
async fn objects_too_large_for_etcd(server: RunningServer) {
    let http = Http::new(&server);
    // 19,000 labels: 1.43 MB, and 1.69 MB with the manager's entries.
    let fits = http.post(PODS, pod_with_labels("fits", 19_000)).await;
    assert_eq!(fits.status, StatusCode::CREATED, "{}", fits.body["message"]);
    assert_eq!(
        fits.body["metadata"]["labels"]["l18999"]
            .as_str()
            .map(str::len),
        Some(63)
    );
    assert!(fits.body["metadata"].get("managedFields").is_none());

    let small = http.post(PODS, pod("grows", "n1", "web")).await;
    assert_eq!(small.status, StatusCode::CREATED);
    assert!(small.body["metadata"]["managedFields"].is_array());
    let labels = pod_with_labels("grows", 19_000)["metadata"]["labels"].clone();
    let grown = http
        .patch(
            &format!("{PODS}/grows"),
            "application/merge-patch+json",
            json!({"metadata": {"labels": labels}}),
        )
        .await;
    assert_eq!(grown.status, StatusCode::OK, "{}", grown.body["message"]);
    assert!(grown.body["metadata"].get("managedFields").is_none());
    assert_eq!(grown.body["metadata"]["labels"]["app"], "web");

    // 22,000 labels: 1.65 MB without managedFields.
    let refused = http.post(PODS, pod_with_labels("too-large", 22_000)).await;
    assert_eq!(refused.status.as_u16(), 500, "{}", refused.body);
    assert_eq!(refused.body["kind"], "Status");
    assert_eq!(refused.body["code"], 500);
    assert_eq!(refused.body["message"], "etcdserver: request is too large");
    assert!(refused.body.get("reason").is_none(), "{}", refused.body);
    assert_status(
        &http.get(&format!("{PODS}/too-large")).await,
        404,
        "NotFound",
    );

    // 45,000 labels: 3.4 MB, over kube-apiserver's `MaxRequestBodyBytes`.
    let body = http.post(PODS, pod_with_labels("over-body", 45_000)).await;
    assert_status(&body, 413, "RequestEntityTooLarge");
    assert_eq!(
        body.body["message"],
        "Request entity too large: limit is 3145728"
    );

    let list = http.get(PODS).await;
    let names: Vec<&str> = list.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|pod| pod["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["fits", "grows"]);
    server.shutdown().await;
}

#[tokio::test]
async fn objects_too_large_for_etcd_are_refused_on_the_embedded_store() {
    timeout(6 * WAIT, objects_too_large_for_etcd(start_default().await))
        .await
        .expect("the requests finish in time");
}

#[cfg(feature = "etcd")]
#[tokio::test]
async fn objects_too_large_for_etcd_are_refused_on_real_etcd() {
    use stage5_storage::testing::EtcdServer;
    let Some(etcd) = EtcdServer::start_or_skip_async(
        "objects_too_large_for_etcd_are_refused_on_real_etcd",
    )
    .await
    else {
        return;
    };
    let config =
        ServerConfig::for_tests().backend(Backend::Etcd(vec![etcd.client_url()]));
    timeout(6 * WAIT, objects_too_large_for_etcd(start(config).await))
        .await
        .expect("the requests finish in time");
    drop(etcd);
}

#[tokio::test]
async fn a_watch_streams_chunked_json_lines_until_its_timeout() {
    let server = start_default().await;
    let http = Http::new(&server);
    let list = http.get(PODS).await;
    let rv = list.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let (status, headers, mut lines) = http
        .watch(&format!(
            "{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=3"
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["transfer-encoding"], "chunked");
    http.post(PODS, pod("w", "n1", "web")).await;
    http.patch(
        &format!("{PODS}/w"),
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"v": "2"}}}),
    )
    .await;
    // A bound pod without a kubelet: deleted at once (grace period 0).
    http.delete(&format!("{PODS}/w?gracePeriodSeconds=0")).await;
    let added = lines.event().await;
    assert_eq!(added["type"], "ADDED");
    assert_eq!(added["object"]["kind"], "Pod");
    assert_eq!(added["object"]["metadata"]["name"], "w");
    let modified = lines.event().await;
    assert_eq!(modified["type"], "MODIFIED");
    assert_eq!(modified["object"]["metadata"]["labels"]["v"], "2");
    assert_eq!(lines.event().await["type"], "DELETED");
    // The server ends the stream at timeoutSeconds.
    assert!(lines.next().await.is_none());

    // A watch of one object through its path (`kubectl get pod x -w`).
    http.post(PODS, pod("one", "n1", "web")).await;
    http.post(PODS, pod("two", "n1", "web")).await;
    let (_, _, mut one) = http
        .watch(&format!("{PODS}/one?watch=true&timeoutSeconds=2"))
        .await;
    let first = one.event().await;
    assert_eq!(
        (
            first["type"].as_str(),
            first["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("one"))
    );
    assert!(one.next().await.is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn send_initial_events_ends_with_an_annotated_bookmark_with_kind_and_api_version()
 {
    let server = start_default().await;
    let http = Http::new(&server);
    for name in ["a", "b", "c"] {
        http.post(PODS, pod(name, "n1", "web")).await;
    }
    let bad = http
        .get(&format!(
            "{PODS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
        ))
        .await;
    assert_status(&bad, 422, "Invalid");
    let (status, _, mut lines) = http
        .watch(&format!(
            "{PODS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=5"
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut names = Vec::new();
    let bookmark = loop {
        let event = lines.event().await;
        match event["type"].as_str() {
            Some("ADDED") => names.push(
                event["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            ),
            Some("BOOKMARK") => break event,
            other => panic!("unexpected {other:?}: {event}"),
        }
    };
    names.sort();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(bookmark["object"]["kind"], "Pod");
    assert_eq!(bookmark["object"]["apiVersion"], "v1");
    assert_eq!(
        bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert!(bookmark["object"]["metadata"]["resourceVersion"].is_string());
    // Deployments' bookmarks say apps/v1. (From "0": a quiet resource's watch cache
    // cannot prove it is as fresh as etcd without progress notifications; see
    // the report.)
    let (_, _, mut deploys) = http
        .watch("/apis/apps/v1/deployments?watch=1&resourceVersion=0&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=2")
        .await;
    let bookmark = deploys.event().await;
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    assert_eq!(bookmark["object"]["kind"], "Deployment");
    assert_eq!(bookmark["object"]["apiVersion"], "apps/v1");
    server.shutdown().await;
}

#[tokio::test]
async fn compaction_is_410_on_a_list_and_an_error_event_on_a_watch_without_the_cache()
 {
    compaction_is_410_on_a_list_and_an_error_event_on_a_watch(false).await;
}

#[tokio::test]
async fn an_rv_older_than_the_watch_cache_window_is_410_on_a_list_and_an_error_event_on_a_watch()
 {
    compaction_is_410_on_a_list_and_an_error_event_on_a_watch(true).await;
}

/// With the watch cache, events older than its window (here 8 events) are gone from
/// memory, as compacted revisions are gone from etcd.
async fn compaction_is_410_on_a_list_and_an_error_event_on_a_watch(
    watch_cache: bool,
) {
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    let config = ServerConfig::for_tests()
        .backend(Backend::Kv(Arc::clone(&kv)))
        .watch_cache(watch_cache)
        .watch_cache_capacity(8);
    let server = start(config).await;
    let http = Http::new(&server);
    let first = http.post(PODS, pod("p0", "n1", "web")).await;
    let old_rv = first.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    for i in 1..30 {
        http.post(PODS, pod(&format!("p{i}"), "n1", "web")).await;
    }
    let now: i64 = http.get(PODS).await.body["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("rv");
    kv.compact(now).await.expect("compact");

    let list = http
        .get(&format!(
            "{PODS}?resourceVersion={old_rv}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_status(&list, 410, "Expired");
    let paged = http
        .get(&format!("{PODS}?resourceVersion={old_rv}&limit=2"))
        .await;
    assert_status(&paged, 410, "Expired");

    let (status, _, mut lines) = http
        .watch(&format!(
            "{PODS}?watch=1&resourceVersion={old_rv}&timeoutSeconds=5"
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    let error = lines.event().await;
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["kind"], "Status");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    assert!(
        lines.next().await.is_none(),
        "the stream ends after the error"
    );

    // 504 for a version the store has not reached, with the cause; Retry-After only
    // from the cache (etcd3's `validateMinimumResourceVersion` passes 0 seconds).
    let future = http
        .get(&format!(
            "{PODS}?resourceVersion={}&resourceVersionMatch=NotOlderThan",
            now + 1000
        ))
        .await;
    assert_status(&future, 504, "Timeout");
    assert_eq!(
        future.body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(future.headers.contains_key("retry-after"), watch_cache);
    server.shutdown().await;
}

#[tokio::test]
async fn a_token_file_requires_a_bearer_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, "# tokens\nsecret-1,alice\n").expect("write");
    let server = start(ServerConfig::for_tests().token_file(&path)).await;
    let mut http = Http::new(&server);
    let denied = http.get(PODS).await;
    assert_status(&denied, 401, "Unauthorized");
    assert_status(&http.get("/api").await, 401, "Unauthorized");
    assert_eq!(http.get("/healthz").await.status, StatusCode::OK);
    http.token = Some("wrong".into());
    assert_status(&http.get(PODS).await, 401, "Unauthorized");
    http.token = Some("secret-1".into());
    assert_eq!(http.get(PODS).await.status, StatusCode::OK);
    server.shutdown().await;

    let missing =
        Server::start(ServerConfig::for_tests().token_file(dir.path().join("nope")))
            .await;
    assert!(missing.is_err());
}

#[tokio::test]
async fn metrics_and_the_debug_page_show_the_watchers() {
    let server = start_default().await;
    let http = Http::new(&server);
    http.post(PODS, pod("m", "n1", "web")).await;
    let (_, _, mut lines) = http
        .watch(&format!("{PODS}?watch=1&timeoutSeconds=30"))
        .await;
    assert_eq!(lines.event().await["type"], "ADDED");

    let metrics = http.get("/metrics").await;
    let text = metrics.body.as_str().expect("text").to_string();
    for series in [
        "apiserver_request_total",
        "apiserver_registered_watchers",
        "apiserver_watch_cache_events_dispatched_total",
        "apiserver_terminated_watchers_total",
    ] {
        assert!(text.contains(series), "{series} missing in\n{text}");
    }
    assert!(
        text.contains(r#"apiserver_registered_watchers{resource="pods"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"verb="POST""#) && text.contains(r#"code="201""#),
        "{text}"
    );
    if server.state().registry.resources()[0]
        .storage
        .cache_stats()
        .is_some()
    {
        for series in [
            "apiserver_watch_cache_capacity",
            "apiserver_watch_cache_resource_version",
            "apiserver_watch_cache_watchers",
        ] {
            assert!(text.contains(series), "{series} missing in\n{text}");
        }
    }

    let page = http.get("/debug/watchers").await;
    let html = page.body.as_str().expect("html").to_string();
    assert!(html.contains("<h2>pods</h2>"), "{html}");
    assert!(html.contains("ns=default pods"), "{html}");
    drop(lines);
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_open_watch_streams() {
    let server = start_default().await;
    let http = Http::new(&server);
    http.post(PODS, pod("s", "n1", "web")).await;
    let (_, _, mut lines) = http.watch(&format!("{PODS}?watch=1")).await;
    assert_eq!(lines.event().await["type"], "ADDED");
    let token = server.shutdown_token();
    timeout(WAIT, server.shutdown())
        .await
        .expect("shutdown in time");
    assert!(token.is_cancelled());
    assert!(lines.next().await.is_none(), "the watch stream ended");
}

#[tokio::test]
async fn malformed_requests_never_hurt_the_server() {
    let server = start_default().await;
    let http = Http::new(&server);
    let paths = [
        "/api/v1/namespaces//pods",
        "/api/v1/namespaces/default/pods/a/b/c/d",
        "/apis/apps",
        "/apis/apps/v2/deployments",
        "/api/v1/watch/pods?timeoutSeconds=1",
        "/api/v1/pods?limit=-5",
        "/api/v1/pods?timeoutSeconds=-1&watch=true",
        "/api/v1/pods?resourceVersion=99999999999999999999999",
        "/api/v1/pods?fieldSelector=%ff%fe",
        "/api/v1/pods?labelSelector=!!!",
        "/api/v1/pods?continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi8ifQ",
        "/api/v1/namespaces/default/pods?%zz=1",
        "/metrics?x=%00",
    ];
    for path in paths {
        let answer = http.get(path).await;
        assert!(answer.status.as_u16() < 500, "{path}: {}", answer.body);
    }
    let bodies: [&[u8]; 7] = [
        b"",
        b"null",
        b"[]",
        b"\"str\"",
        b"{\"metadata\": 5}",
        b"{\"metadata\": {\"name\": 5}}",
        &[0xff, 0xfe, 0x00],
    ];
    for body in bodies {
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            let path = if method == Method::POST {
                PODS.to_string()
            } else {
                format!("{PODS}/x")
            };
            let content_type = if method == Method::PATCH {
                "application/merge-patch+json"
            } else {
                "application/json"
            };
            let answer = http
                .call(method.clone(), &path, content_type, body.to_vec())
                .await;
            assert!(
                answer.status.is_client_error(),
                "{method} {body:?}: {} {}",
                answer.status,
                answer.body
            );
        }
    }
    assert_eq!(http.get("/healthz").await.status, StatusCode::OK);
    server.shutdown().await;
}

/// A strategic merge patch merges the lists its fields' tags say merge (a pod's
/// containers by name, finalizers as a set), honours the directives, and
/// answers bad ones as kube-apiserver does (`interpretStrategicMergePatchError`).
#[tokio::test]
async fn a_strategic_merge_patch_merges_containers_and_answers_bad_directives() {
    const SMP: &str = "application/strategic-merge-patch+json";
    let server = start_default().await;
    let http = Http::new(&server);
    let mut web = pod("web", "n1", "web");
    web["metadata"]["finalizers"] = json!(["example.com/a", "example.com/b"]);
    let created = http.post(PODS, web).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let path = format!("{PODS}/web");
    let names = |pod: &Value| -> Vec<String> {
        pod["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect()
    };

    let sidecar = http
        .patch(
            &path,
            SMP,
            json!({"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}),
        )
        .await;
    assert_eq!(sidecar.status, StatusCode::OK, "{}", sidecar.body);
    assert_eq!(names(&sidecar.body), ["sidecar", "c"]);
    assert_eq!(sidecar.body["spec"]["containers"][1]["image"], "nginx");
    // The same body as a merge patch replaces the list.
    let replaced = http
        .patch(
            &path,
            "application/merge-patch+json",
            json!({"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}),
        )
        .await;
    assert_eq!(names(&replaced.body), ["sidecar"]);

    let directives = http
        .patch(
            &path,
            SMP,
            json!({
                "metadata": {
                    "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
                    "finalizers": ["example.com/c"],
                },
                "spec": {"containers": [
                    {"name": "sidecar", "$patch": "delete"},
                    {"name": "c", "image": "nginx:2"},
                ]},
            }),
        )
        .await;
    assert_eq!(directives.status, StatusCode::OK, "{}", directives.body);
    assert_eq!(names(&directives.body), ["c"]);
    assert_eq!(directives.body["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(
        directives.body["metadata"]["finalizers"],
        json!(["example.com/c", "example.com/b"])
    );
    let stored = http.get(&path).await.body;
    assert_eq!(names(&stored), ["c"]);
    assert!(!stored.to_string().contains('$'), "{stored}");

    // Bad directives: as upstream, 400 for a malformed directive list and 500
    // (no reason) for the errors that are not a Status.
    let retain = http
        .patch(
            &path,
            SMP,
            json!({"spec": {"$retainKeys": ["nodeName"], "hostname": "h"}}),
        )
        .await;
    assert_status(&retain, 400, "BadRequest");
    assert_eq!(retain.body["message"], "invalid patch format of retainKeys");
    let lists = http
        .patch(&path, SMP, json!({"spec": {"containers": [["c"]]}}))
        .await;
    assert_eq!(lists.status.as_u16(), 500, "{}", lists.body);
    assert!(
        lists.body["message"].as_str().is_some_and(
            |m| m.starts_with("list element types are not identical: [[map[")
        ),
        "{}",
        lists.body
    );
    let unknown = http
        .patch(
            &path,
            SMP,
            json!({"spec": {"containers": [{"name": "c", "$patch": "frobnicate"}]}}),
        )
        .await;
    assert_eq!(unknown.status.as_u16(), 500, "{}", unknown.body);
    assert_eq!(unknown.body["kind"], "Status");
    assert_eq!(unknown.body.get("reason"), None, "{}", unknown.body);
    assert_eq!(
        unknown.body["message"],
        "unknown patch type: frobnicate in map: map[$patch:frobnicate name:c]"
    );
    let no_key = http
        .patch(
            &path,
            SMP,
            json!({"spec": {"containers": [{"image": "x"}]}}),
        )
        .await;
    assert_eq!(no_key.status.as_u16(), 500, "{}", no_key.body);
    assert_eq!(
        no_key.body["message"],
        "map: map[image:x] does not contain declared merge key: name"
    );
    assert_status(
        &http.patch(&path, SMP, json!(["not", "a", "map"])).await,
        400,
        "BadRequest",
    );
    assert_eq!(names(&http.get(&path).await.body), ["c"], "nothing stored");
    server.shutdown().await;
}

/// kubectl's Accept header for `get`.
const KUBECTL_TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

fn column_names(table: &Value) -> Vec<String> {
    table["columnDefinitions"]
        .as_array()
        .expect("column definitions")
        .iter()
        .map(|c| c["name"].as_str().expect("a name").to_string())
        .collect()
}

#[tokio::test]
async fn a_table_accept_header_gets_tables_for_list_get_and_watch() {
    let server = start_default().await;
    let http = Http::new(&server);
    let created = http.post(PODS, pod("web-0", "n1", "web")).await;
    assert_eq!(created.status, 201, "{}", created.body);
    // A create drops the status (`PrepareForCreate`); the kubelet writes it
    // through the status subresource.
    let running = http
        .patch(
            &format!("{PODS}/web-0/status"),
            "application/merge-patch+json",
            json!({"status": {
                "phase": "Running",
                "podIP": "10.0.0.7",
                "containerStatuses": [{"name": "c", "ready": true, "restartCount": 0,
                                       "state": {"running": {}}}],
            }}),
        )
        .await;
    assert_eq!(running.status, 200, "{}", running.body);

    // A list: every column (the wide ones too), one row, a PartialObjectMetadata.
    let list = http.get_accept(PODS, KUBECTL_TABLE).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.headers["content-type"], "application/json");
    let table = &list.body;
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    let list_rv = table["metadata"]["resourceVersion"]
        .as_str()
        .expect("a resourceVersion")
        .to_string();
    assert!(!list_rv.is_empty());
    assert_eq!(
        column_names(table),
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    assert_eq!(table["columnDefinitions"][5]["priority"], 1);
    assert_eq!(table["columnDefinitions"][0]["format"], "name");
    let row = &table["rows"][0];
    assert_eq!(table["rows"].as_array().map(Vec::len), Some(1));
    let cells = row["cells"].as_array().expect("cells");
    assert_eq!(
        cells[..4],
        [json!("web-0"), json!("1/1"), json!("Running"), json!("0")]
    );
    assert!(
        cells[4].as_str().is_some_and(|age| age.ends_with('s')),
        "{}",
        cells[4]
    );
    assert_eq!(
        cells[5..],
        [
            json!("10.0.0.7"),
            json!("n1"),
            json!("<none>"),
            json!("<none>")
        ]
    );
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(row["object"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(row["object"]["metadata"]["name"], "web-0");
    assert_eq!(row["object"]["metadata"]["labels"]["app"], "web");
    assert!(row["object"].get("spec").is_none(), "{}", row["object"]);

    // includeObject: the whole object, or none; anything else is 400.
    let whole = http
        .get_accept(&format!("{PODS}?includeObject=Object"), KUBECTL_TABLE)
        .await;
    assert_eq!(whole.body["rows"][0]["object"]["kind"], "Pod");
    assert_eq!(whole.body["rows"][0]["object"]["spec"]["nodeName"], "n1");
    let none = http
        .get_accept(&format!("{PODS}?includeObject=None"), KUBECTL_TABLE)
        .await;
    assert_eq!(none.body["rows"][0]["object"], Value::Null);
    let bad = http
        .get_accept(&format!("{PODS}?includeObject=All"), KUBECTL_TABLE)
        .await;
    assert_status(&bad, 400, "BadRequest");
    assert_eq!(
        bad.body["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
    );

    // One object: a Table with its row and its resourceVersion; v1beta1 if asked.
    let one = http
        .get_accept(
            &format!("{PODS}/web-0"),
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        )
        .await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.body["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(one.body["rows"][0]["cells"][0], "web-0");
    assert_eq!(
        one.body["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    assert_eq!(
        one.body["metadata"]["resourceVersion"],
        running.body["metadata"]["resourceVersion"]
    );
    // A plain Accept still gets the object.
    let plain = http
        .get_accept(&format!("{PODS}/web-0"), "application/json")
        .await;
    assert_eq!(plain.body["kind"], "Pod");

    // A watch: each event's object a Table of one row; the columns come once.
    let (status, headers, mut lines) = http
        .watch_accept(
            &format!("{PODS}?watch=1&resourceVersion={list_rv}"),
            KUBECTL_TABLE,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    for name in ["web-1", "web-2"] {
        assert_eq!(http.post(PODS, pod(name, "n2", "web")).await.status, 201);
    }
    let first = lines.event().await;
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(column_names(&first["object"]).len(), 9);
    assert_eq!(first["object"]["rows"][0]["cells"][0], "web-1");
    assert_eq!(
        first["object"]["rows"][0]["object"]["kind"],
        "PartialObjectMetadata"
    );
    let second = lines.event().await;
    assert_eq!(second["object"]["kind"], "Table");
    assert_eq!(second["object"]["columnDefinitions"], Value::Null);
    assert_eq!(second["object"]["rows"][0]["cells"][0], "web-2");
    assert_eq!(second["object"]["rows"][0]["cells"][6], "n2");
    assert_eq!(
        second["object"]["metadata"]["resourceVersion"],
        second["object"]["rows"][0]["object"]["metadata"]["resourceVersion"]
    );
    server.shutdown().await;
}

/// A Table and a `PartialObjectMetadataList` of a list are built from the
/// items the watch cache keeps encoded, without decoding their managed fields;
/// each row and each item equals the one built from the decoded object (a get
/// of that object), and each item's metadata the full list's, managed fields
/// included. With the cache and without it.
#[tokio::test]
async fn tables_and_metadata_of_a_list_equal_those_of_each_object() {
    const LIST: &str =
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    const ONE: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    for watch_cache in [true, false] {
        let server = start(ServerConfig::for_tests().watch_cache(watch_cache)).await;
        let http = Http::new(&server);
        for i in 0..5 {
            let created =
                http.post(PODS, pod(&format!("web-{i}"), "n1", "web")).await;
            assert_eq!(created.status, 201, "{}", created.body);
        }
        let running = http
            .patch(
                &format!("{PODS}/web-1/status"),
                "application/merge-patch+json",
                json!({"status": {"phase": "Running", "podIP": "10.0.0.1"}}),
            )
            .await;
        assert_eq!(running.status, 200, "{}", running.body);
        for list_path in [format!("{PODS}?resourceVersion=0"), PODS.to_string()] {
            let full = http.get(&list_path).await;
            let table = http.get_accept(&list_path, KUBECTL_TABLE).await;
            let partial = http.get_accept(&list_path, LIST).await;
            let items = full.body["items"].as_array().expect("items");
            let rows = table.body["rows"].as_array().expect("rows");
            let partials = partial.body["items"].as_array().expect("items");
            assert_eq!((rows.len(), partials.len()), (5, 5));
            for ((item, row), partial) in items.iter().zip(rows).zip(partials) {
                let name = item["metadata"]["name"].as_str().expect("name");
                assert!(item["metadata"]["managedFields"].is_array());
                let one = http
                    .get_accept(&format!("{PODS}/{name}"), KUBECTL_TABLE)
                    .await;
                // The same row, but for the age (column 4), which a second
                // between the list and the get may change.
                let mut single = one.body["rows"][0].clone();
                single["cells"][4] = row["cells"][4].clone();
                assert_eq!(row, &single, "watch cache {watch_cache}");
                assert_eq!(row["object"]["metadata"], item["metadata"]);
                let one = http.get_accept(&format!("{PODS}/{name}"), ONE).await;
                assert_eq!(partial, &one.body, "watch cache {watch_cache}");
                assert_eq!(partial["metadata"], item["metadata"]);
            }
            assert_eq!(rows[1]["cells"][2], "Running");
            assert_eq!(rows[1]["cells"][5], "10.0.0.1");
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn metadata_only_answers_and_406_for_what_cannot_be_served() {
    let server = start_default().await;
    let http = Http::new(&server);
    assert_eq!(http.post(PODS, pod("a", "n1", "web")).await.status, 201);
    const LIST: &str =
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    const ONE: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

    let list = http.get_accept(PODS, LIST).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.body["kind"], "PartialObjectMetadataList");
    assert_eq!(list.body["apiVersion"], "meta.k8s.io/v1");
    assert!(list.body["metadata"]["resourceVersion"].is_string());
    assert_eq!(list.body["items"][0]["kind"], "PartialObjectMetadata");
    assert_eq!(list.body["items"][0]["metadata"]["name"], "a");
    assert!(list.body["items"][0].get("spec").is_none());
    let one = http.get_accept(&format!("{PODS}/a"), ONE).await;
    assert_eq!(one.body["kind"], "PartialObjectMetadata");
    assert_eq!(one.body["metadata"]["labels"]["app"], "web");

    // The one on the other is 406, as `asPartialObjectMetadata(List)` answers.
    let wrong = http.get_accept(PODS, ONE).await;
    assert_status(&wrong, 406, "NotAcceptable");
    assert_eq!(
        wrong.body["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"
    );
    let wrong = http.get_accept(&format!("{PODS}/a"), LIST).await;
    assert_status(&wrong, 406, "NotAcceptable");

    // A conversion nobody serves, or a media type this server does not write:
    // 406 before anything else (even for a pod that does not exist), on a
    // list, a get and a watch alike.
    for accept in [
        "application/json;as=Table;g=other;v=v1",
        "application/json;as=Table;g=meta.k8s.io;v=v2",
        "application/yaml",
    ] {
        for path in [
            PODS.to_string(),
            format!("{PODS}/missing"),
            format!("{PODS}?watch=1"),
        ] {
            let refused = http.get_accept(&path, accept).await;
            assert_status(&refused, 406, "NotAcceptable");
            assert_eq!(
                refused.body["message"],
                "only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf"
            );
        }
    }
    // A fallback clause is taken instead.
    let fallback = http
        .get_accept(PODS, "application/json;as=Table;g=other;v=v1, */*")
        .await;
    assert_eq!(fallback.body["kind"], "PodList");

    // A metadata-only watch (kube-rs' metadata watcher): PartialObjectMetadata
    // events.
    let rv = list.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    let (status, _, mut lines) = http
        .watch_accept(&format!("{PODS}?watch=1&resourceVersion={rv}"), ONE)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(http.post(PODS, pod("b", "n1", "web")).await.status, 201);
    let event = lines.event().await;
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(event["object"]["metadata"]["name"], "b");
    server.shutdown().await;
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

impl Http {
    /// A server-side apply of a YAML (or JSON) body.
    async fn apply(&self, path: &str, query: &str, body: &str) -> Answer {
        self.call(
            Method::PATCH,
            &format!("{path}?{query}"),
            "application/apply-patch+yaml",
            body.as_bytes().to_vec(),
        )
        .await
    }
}

/// The (manager, operation) of each `managedFields` entry, in order.
fn managers_of(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_string(),
                e["operation"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn fields_of<'v>(obj: &'v Value, manager: &str) -> &'v Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == manager)
        .map_or(&Value::Null, |e| &e["fieldsV1"])
}

#[tokio::test]
async fn server_side_apply_creates_merges_conflicts_and_forces() {
    let server = start_default().await;
    let http = Http::new(&server);
    let path = format!("{CONFIGMAPS}/cfg");
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels:\n    app: web\n\
                  data:\n  a: \"1\"\n";

    // fieldManager is required: 422 for PatchOptions.
    let unnamed = http.apply(&path, "", config).await;
    assert_status(&unnamed, 422, "Invalid");
    assert_eq!(
        unnamed.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    assert_eq!(unnamed.body["details"]["kind"], "PatchOptions");
    assert_eq!(
        unnamed.body["details"]["causes"][0]["field"],
        "fieldManager"
    );
    // Another kind in the body: 400.
    let wrong = http
        .apply(
            &path,
            "fieldManager=alice",
            "apiVersion: v1\nkind: Secret\nmetadata: {name: cfg}\n",
        )
        .await;
    assert_status(&wrong, 400, "BadRequest");
    assert_eq!(
        wrong.body["message"],
        "invalid object type: /v1, Kind=Secret"
    );
    // force on another patch type is 422.
    let forced_merge = http
        .call(
            Method::PATCH,
            &format!("{path}?force=true"),
            "application/merge-patch+json",
            b"{}".to_vec(),
        )
        .await;
    assert_status(&forced_merge, 422, "Invalid");
    // No namespace: 404 as for a create.
    let nowhere = http
        .apply(
            "/api/v1/namespaces/nowhere/configmaps/cfg",
            "fieldManager=alice",
            config,
        )
        .await;
    assert_status(&nowhere, 404, "NotFound");

    // The first apply creates: 201, with alice's Apply entry.
    let created = http.apply(&path, "fieldManager=alice", config).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["data"]["a"], "1");
    assert_eq!(created.body["metadata"]["labels"]["app"], "web");
    assert!(created.body["metadata"]["uid"].is_string());
    assert_eq!(
        managers_of(&created.body),
        [("alice".into(), "Apply".into())]
    );
    let entry = &created.body["metadata"]["managedFields"][0];
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
    );
    let time = entry["time"].as_str().expect("time");
    assert!(time.ends_with('Z') && time.len() == 20, "{time}");

    // The body names another object: 400 as upstream's checkName.
    let renamed = http
        .apply(
            &path,
            "fieldManager=alice",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
        )
        .await;
    assert_status(&renamed, 400, "BadRequest");
    assert_eq!(
        renamed.body["message"],
        "the name of the object (other) does not match the name on the URL (cfg)"
    );

    // The same apply again: 200 and nothing written.
    let again = http.apply(&path, "fieldManager=alice", config).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(
        again.body["metadata"]["resourceVersion"],
        created.body["metadata"]["resourceVersion"]
    );

    // bob applies the same value: shared, no conflict.
    let shared = http
        .apply(&path, "fieldManager=bob", r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1"}}"#)
        .await;
    assert_eq!(shared.status, StatusCode::OK, "{}", shared.body);
    // bob changed nothing, so his entry has no time (as upstream's
    // managedFieldsUpdater leaves it) and sorts first.
    assert_eq!(
        managers_of(&shared.body),
        [
            ("bob".into(), "Apply".into()),
            ("alice".into(), "Apply".into())
        ]
    );
    assert_eq!(
        fields_of(&shared.body, "bob"),
        &json!({"f:data": {"f:a": {}}})
    );

    // bob changes alice's field: 409 with the cause.
    let bob =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: \"2\"}\n";
    let conflict = http.apply(&path, "fieldManager=bob", bob).await;
    assert_status(&conflict, 409, "Conflict");
    assert_eq!(
        conflict.body["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .data.a"
    );
    assert_eq!(
        conflict.body["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".data.a"}])
    );
    assert_eq!(
        http.get(&path).await.body["data"]["a"],
        "1",
        "nothing changed"
    );

    // Forced: bob takes the field.
    let forced = http.apply(&path, "fieldManager=bob&force=true", bob).await;
    assert_eq!(forced.status, StatusCode::OK, "{}", forced.body);
    assert_eq!(forced.body["data"]["a"], "2");
    assert_eq!(
        fields_of(&forced.body, "alice"),
        &json!({"f:metadata": {"f:labels": {"f:app": {}}}})
    );
    assert_eq!(
        fields_of(&forced.body, "bob"),
        &json!({"f:data": {"f:a": {}}})
    );

    // alice stops applying her label: it goes, as nobody else owns it; a stays.
    let dropped = http
        .apply(
            &path,
            "fieldManager=alice",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {b: x}\n",
        )
        .await;
    assert_eq!(dropped.status, StatusCode::OK, "{}", dropped.body);
    assert_eq!(
        dropped.body["metadata"]["labels"],
        Value::Null,
        "{}",
        dropped.body
    );
    assert_eq!(dropped.body["data"], json!({"a": "2", "b": "x"}));

    // A create records the creator's Update; an apply that changes its field
    // conflicts with it.
    let made = http
        .post(
            &format!("{CONFIGMAPS}?fieldManager=creator"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made"}, "data": {"k": "v"}}),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    assert_eq!(
        managers_of(&made.body),
        [("creator".into(), "Update".into())]
    );
    assert_eq!(
        fields_of(&made.body, "creator"),
        &json!({"f:data": {".": {}, "f:k": {}}})
    );
    let clash = http
        .apply(
            &format!("{CONFIGMAPS}/made"),
            "fieldManager=applier",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: made}\ndata: {k: other}\n",
        )
        .await;
    assert_status(&clash, 409, "Conflict");
    assert_eq!(
        clash.body["message"],
        "Apply failed with 1 conflict: conflict with \"creator\" using v1: .data.k"
    );
    // A merge patch is an Update by its manager, and takes the field.
    let patched = http
        .call(
            Method::PATCH,
            &format!("{CONFIGMAPS}/made?fieldManager=patcher"),
            "application/merge-patch+json",
            br#"{"data":{"k":"patched"}}"#.to_vec(),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(
        fields_of(&patched.body, "patcher"),
        &json!({"f:data": {"f:k": {}}})
    );
    assert_eq!(fields_of(&patched.body, "creator"), &json!({"f:data": {}}));

    // A pod applied with its containers keyed by name, then its status written
    // through the subresource: an Update entry that names the subresource.
    let pod = http
        .apply(
            &format!("{PODS}/applied"),
            "fieldManager=alice",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: applied}\n\
             spec:\n  containers:\n  - name: web\n    image: nginx\n    ports:\n    - containerPort: 80\n",
        )
        .await;
    assert_eq!(pod.status, StatusCode::CREATED, "{}", pod.body);
    assert_eq!(
        fields_of(&pod.body, "alice"),
        &json!({"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {
            ".": {}, "f:image": {}, "f:name": {},
            "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}},
        }}}})
    );
    let status = http
        .call(
            Method::PATCH,
            &format!("{PODS}/applied/status?fieldManager=kubelet"),
            "application/merge-patch+json",
            br#"{"status":{"phase":"Running"}}"#.to_vec(),
        )
        .await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    let kubelet = status.body["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == "kubelet")
        .expect("the kubelet's entry");
    assert_eq!(kubelet["operation"], "Update");
    assert_eq!(kubelet["subresource"], "status");
    assert_eq!(kubelet["fieldsV1"], json!({"f:status": {"f:phase": {}}}));

    server.shutdown().await;
}

/// A missing object outside the core group is named by its group-qualified
/// resource, as `apierrors.NewNotFound(schema.GroupResource{…})` names it: kubectl
/// prints `deployments.apps "web" not found`.
#[tokio::test]
async fn errors_name_the_group_qualified_resource() {
    let server = start_default().await;
    let http = Http::new(&server);
    let missing = http
        .get("/apis/apps/v1/namespaces/default/deployments/web")
        .await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(
        missing.body["message"],
        "deployments.apps \"web\" not found"
    );
    assert_eq!(
        missing.body["details"],
        json!({"name": "web", "group": "apps", "kind": "deployments"})
    );
    let core = http.get(&format!("{PODS}/web")).await;
    assert_eq!(core.body["message"], "pods \"web\" not found");
    assert_eq!(core.body["details"], json!({"name": "web", "kind": "pods"}));
    server.shutdown().await;
}

/// A write to the main resource of a kind with a `status` subresource cannot
/// change the status (the strategies' `PrepareForUpdate`), nor a namespace's
/// finalizers; the status subresource can. A spec change bumps `generation`.
#[tokio::test]
async fn the_main_resource_keeps_the_status_and_the_spec_bumps_the_generation() {
    let server = start_default().await;
    let http = Http::new(&server);
    let created = http.post(PODS, pod("web-0", "n1", "web")).await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.body["status"]["phase"], "Pending");
    assert_eq!(created.body["metadata"]["generation"], 1);
    let path = format!("{PODS}/web-0");
    let mut changed = created.body.clone();
    changed["status"] = json!({"phase": "Running"});
    changed["metadata"]["labels"]["tier"] = json!("front");
    let updated = http.put(&path, changed).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.body);
    assert_eq!(updated.body["status"]["phase"], "Pending");
    assert_eq!(updated.body["metadata"]["labels"]["tier"], "front");
    assert_eq!(updated.body["metadata"]["generation"], 1, "no spec change");
    let patched = http
        .patch(
            &path,
            "application/merge-patch+json",
            json!({"status": {"phase": "Failed"}, "spec": {"activeDeadlineSeconds": 60}}),
        )
        .await;
    assert_eq!(patched.body["status"]["phase"], "Pending");
    assert_eq!(patched.body["metadata"]["generation"], 2, "a spec change");
    let through_status = http
        .patch(
            &format!("{path}/status"),
            "application/merge-patch+json",
            json!({"status": {"phase": "Running"}}),
        )
        .await;
    assert_eq!(through_status.body["status"]["phase"], "Running");
    assert_eq!(through_status.body["metadata"]["generation"], 2);

    let namespace = http
        .patch(
            "/api/v1/namespaces/default",
            "application/merge-patch+json",
            json!({"spec": {"finalizers": []}, "status": {"phase": "Terminating"}}),
        )
        .await;
    assert_eq!(namespace.status, StatusCode::OK, "{}", namespace.body);
    assert_eq!(namespace.body["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(namespace.body["status"]["phase"], "Active");
    server.shutdown().await;
}

/// `dryRun=All` runs a write through everything but the storage: the answer is
/// what would be stored, and nothing is; another value is 422.
#[tokio::test]
async fn dry_run_writes_answer_without_storing() {
    let server = start_default().await;
    let http = Http::new(&server);
    let dry = http
        .post(&format!("{PODS}?dryRun=All"), pod("web-0", "n1", "web"))
        .await;
    assert_eq!(dry.status, StatusCode::CREATED, "{}", dry.body);
    assert_eq!(dry.body["metadata"]["name"], "web-0");
    assert!(dry.body["metadata"]["uid"].is_string());
    assert!(dry.body["metadata"].get("resourceVersion").is_none());
    assert_eq!(dry.body["spec"]["restartPolicy"], "Always", "defaulted");
    assert_status(&http.get(&format!("{PODS}/web-0")).await, 404, "NotFound");

    let created = http.post(PODS, pod("web-0", "n1", "web")).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let rv = created.body["metadata"]["resourceVersion"].clone();
    assert_status(
        &http
            .post(&format!("{PODS}?dryRun=All"), pod("web-0", "n1", "web"))
            .await,
        409,
        "AlreadyExists",
    );
    let path = format!("{PODS}/web-0");
    let patched = http
        .patch(
            &format!("{path}?dryRun=All"),
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"tier": "front"}}}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["metadata"]["labels"]["tier"], "front");
    assert_eq!(patched.body["metadata"]["resourceVersion"], rv);
    let stored = http.get(&path).await;
    assert_eq!(stored.body["metadata"]["labels"].get("tier"), None);
    assert_eq!(stored.body["metadata"]["resourceVersion"], rv);

    let deleted = http.delete(&format!("{path}?dryRun=All")).await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(http.get(&path).await.status, StatusCode::OK);

    let bogus = http
        .post(&format!("{PODS}?dryRun=Bogus"), pod("web-1", "n1", "web"))
        .await;
    assert_status(&bogus, 422, "Invalid");
    assert_eq!(
        bogus.body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: \"Bogus\": supported values: \"All\""
    );
    server.shutdown().await;
}

/// A list answer is sent from the watch cache's kept JSON without copying it
/// into one buffer; it still says its exact length, as kube-apiserver's does, and
/// pages and empty lists are whole JSON.
#[tokio::test]
async fn a_list_answer_carries_its_exact_length_and_the_cached_items() {
    let server = start_default().await;
    let http = Http::new(&server);
    for name in ["a", "b", "c"] {
        let answer = http.post(PODS, pod(name, "node-1", "web")).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
    }
    for path in [
        "/api/v1/namespaces/default/pods",
        "/api/v1/namespaces/default/pods?limit=2",
        "/api/v1/namespaces/kube-public/pods",
        "/api/v1/pods?labelSelector=app%3Dweb&resourceVersion=0",
    ] {
        let response = http.send(Method::GET, path, "", Vec::new()).await;
        let (status, headers, bytes) = Http::raw(response).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let length = headers
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        assert_eq!(length, Some(bytes.len()), "{path}");
        assert!(headers.get("transfer-encoding").is_none(), "{path}");
        let list: Value = serde_json::from_slice(&bytes).expect("a whole JSON list");
        assert_eq!(list["kind"], "PodList", "{path}");
        let names: Vec<&str> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| item["metadata"]["name"].as_str().expect("name"))
            .collect();
        let expected: &[&str] = match path {
            p if p.contains("kube-public") => &[],
            p if p.contains("limit=2") => &["a", "b"],
            _ => &["a", "b", "c"],
        };
        assert_eq!(names, expected, "{path}");
    }
    server.shutdown().await;
}

/// The generic store's deletion (`Store.Delete`, `rest.BeforeDelete`,
/// `deletionFinalizersForGarbageCollection`): a bound pod is deleted
/// gracefully, an unbound one at once; finalizers hold an object until an
/// update removes the last one; `propagationPolicy=Orphan` adds the garbage
/// collector's `orphan` finalizer; a bad policy is 422.
#[tokio::test]
async fn graceful_deletion_finalizers_and_propagation_policies() {
    let server = start_default().await;
    let http = Http::new(&server);

    // A pod bound to a node: the delete marks it for its grace period.
    http.post(PODS, pod("bound", "n1", "web")).await;
    let marked = http.delete(&format!("{PODS}/bound")).await;
    assert_eq!(marked.status, StatusCode::OK, "{}", marked.body);
    assert_eq!(marked.body["metadata"]["deletionGracePeriodSeconds"], 30);
    assert!(marked.body["metadata"]["deletionTimestamp"].is_string());
    let still = http.get(&format!("{PODS}/bound")).await;
    assert_eq!(still.status, StatusCode::OK);
    // A status update by the kubelet keeps it; its final delete removes it.
    let gone = http
        .delete(&format!("{PODS}/bound?gracePeriodSeconds=0"))
        .await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.body);
    assert_status(&http.get(&format!("{PODS}/bound")).await, 404, "NotFound");

    // An unbound pod goes at once.
    let mut pending = pod("pending", "", "web");
    pending["spec"]["nodeName"] = Value::Null;
    http.post(PODS, pending).await;
    http.delete(&format!("{PODS}/pending")).await;
    assert_status(&http.get(&format!("{PODS}/pending")).await, 404, "NotFound");

    // A finalizer holds a configmap until an update removes it.
    const CMS: &str = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "held", "finalizers": ["example.com/keep"]}});
    http.post(CMS, cm).await;
    let held = http.delete(&format!("{CMS}/held")).await;
    assert_eq!(held.status, StatusCode::OK, "{}", held.body);
    assert!(held.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(held.body["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        http.get(&format!("{CMS}/held")).await.status,
        StatusCode::OK
    );
    let released = http
        .patch(
            &format!("{CMS}/held"),
            "application/merge-patch+json",
            json!({"metadata": {"finalizers": null}}),
        )
        .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    assert_status(&http.get(&format!("{CMS}/held")).await, 404, "NotFound");

    // Orphan: the garbage collector's finalizer, in the body or the query.
    http.post(
        CMS,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "owner"}}),
    )
    .await;
    let orphaning = http
        .call(
            Method::DELETE,
            &format!("{CMS}/owner"),
            "application/json",
            json!({"propagationPolicy": "Orphan"})
                .to_string()
                .into_bytes(),
        )
        .await;
    assert_eq!(orphaning.status, StatusCode::OK, "{}", orphaning.body);
    assert_eq!(orphaning.body["metadata"]["finalizers"], json!(["orphan"]));
    // Background replaces it, and the object goes.
    let background = http
        .delete(&format!("{CMS}/owner?propagationPolicy=Background"))
        .await;
    assert_eq!(background.status, StatusCode::OK, "{}", background.body);
    assert_status(&http.get(&format!("{CMS}/owner")).await, 404, "NotFound");

    // ValidateDeleteOptions.
    http.post(
        CMS,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}}),
    )
    .await;
    assert_status(
        &http
            .delete(&format!("{CMS}/c?propagationPolicy=Sideways"))
            .await,
        422,
        "Invalid",
    );
    server.shutdown().await;
}

/// `pods/binding` (`BindingREST.Create`): the pod gets its node and its
/// `PodScheduled` condition; a second binding is a conflict; a binding whose
/// name is not the URL's is 400; other verbs are 405.
#[tokio::test]
async fn a_binding_assigns_a_pod_to_a_node_once() {
    let server = start_default().await;
    let http = Http::new(&server);
    let mut unbound = pod("web-0", "", "web");
    unbound["spec"]["nodeName"] = Value::Null;
    http.post(PODS, unbound).await;
    let binding = |name: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": name, "annotations": {"scheduled-by": "test"}},
            "target": {"kind": "Node", "name": node}})
    };
    let path = format!("{PODS}/web-0/binding");
    let bound = http.post(&path, binding("web-0", "node-1")).await;
    assert_eq!(bound.status, StatusCode::CREATED, "{}", bound.body);
    assert_eq!(bound.body["kind"], "Status");
    assert_eq!(bound.body["status"], "Success");
    let pod = http.get(&format!("{PODS}/web-0")).await.body;
    assert_eq!(pod["spec"]["nodeName"], "node-1");
    assert_eq!(pod["metadata"]["annotations"]["scheduled-by"], "test");
    assert_eq!(pod["status"]["conditions"][0]["type"], "PodScheduled");
    assert_eq!(pod["status"]["conditions"][0]["status"], "True");
    let again = http.post(&path, binding("web-0", "node-2")).await;
    assert_status(&again, 409, "Conflict");
    assert_eq!(
        again.body["message"],
        "Operation cannot be fulfilled on pods/binding \"web-0\": pod web-0 is already assigned to node \"node-1\""
    );
    assert_status(
        &http.post(&path, binding("other", "n")).await,
        400,
        "BadRequest",
    );
    assert_status(&http.get(&path).await, 405, "MethodNotAllowed");
    assert_status(
        &http
            .post(&format!("{PODS}/missing/binding"), binding("missing", "n"))
            .await,
        404,
        "NotFound",
    );
    server.shutdown().await;
}
