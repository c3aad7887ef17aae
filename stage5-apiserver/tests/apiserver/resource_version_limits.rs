//! Resource versions at the integer limits, and `timeoutSeconds=0`, over raw HTTP,
//! each answered as kube-apiserver answers, on the embedded store with and without
//! the watch cache.
//!
//! A resource version is a `uint64`: `9223372036854775807` (`i64::MAX`),
//! `9223372036854775808` and `18446744073709551615` are versions the store has not
//! reached, like `current + 1`. A list or a get of one is 504 `Timeout` with the
//! `ResourceVersionTooLarge` cause (`storage.NewTooLargeResourceVersionError`): at
//! once from etcd (no `Retry-After`), after the cache's 3 s wait from the cache
//! (`Retry-After: 1`). A watch from one is an open watch that gets only the events
//! after that version (none, beyond `i64::MAX`), never an error, a panic or a watch
//! "from now". `18446744073709551616` and `-1` are not `uint64`s: 400
//! `invalid resource version`.
//!
//! Every wait is bounded; nothing sleeps to synchronise.

use std::sync::Arc;

use hyper::{Method, StatusCode};
use serde_json::{Value, json};
use stage5_apiserver::{Backend, RunningServer, Server, ServerConfig};
use stage5_storage::kv::{EmbeddedKv, Kv};

use super::server_http::{Answer, Http, Lines};

const PODS: &str = "/api/v1/namespaces/default/pods";

/// Versions no store here reaches, without `current + 1` (which depends on the
/// store).
const TOO_LARGE: [&str; 3] = [
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
];

/// Not `uint64`s, with the reason `strconv.ParseUint` gives.
const INVALID: [(&str, &str); 2] = [
    ("18446744073709551616", "value out of range"),
    ("-1", "invalid syntax"),
];

/// Creates pod `name` and answers its resourceVersion.
async fn create(http: &Http, name: &str) -> u64 {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    });
    let answer = http.post(PODS, pod).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
    rv_of(&answer.body["metadata"])
}

/// Opens a watch: its lines, or the error answer it got instead.
async fn watch(http: &Http, path: &str) -> Result<Lines, Answer> {
    let response = http.send(Method::GET, path, "", Vec::new()).await;
    if response.status() != StatusCode::OK {
        let (status, headers, bytes) = Http::raw(response).await;
        return Err(Answer {
            status,
            headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        });
    }
    Ok(Lines {
        body: response.into_body(),
        buffer: Vec::new(),
    })
}

fn rv_of(metadata: &Value) -> u64 {
    metadata["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("a resourceVersion")
}

async fn start(watch_cache: bool) -> RunningServer {
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    let config = ServerConfig::for_tests()
        .backend(Backend::Kv(kv))
        .watch_cache(watch_cache);
    Server::start(config).await.expect("server starts")
}

/// 504 `Timeout`, the cause, the exact message and the `Retry-After` each backend
/// sends.
fn assert_too_large(answer: &Answer, rv: &str, current: u64, watch_cache: bool) {
    let context = format!("rv {rv}, watch cache {watch_cache}: {}", answer.body);
    assert_eq!(answer.status.as_u16(), 504, "{context}");
    assert_eq!(answer.body["kind"], "Status", "{context}");
    assert_eq!(answer.body["code"], 504, "{context}");
    assert_eq!(answer.body["reason"], "Timeout", "{context}");
    assert_eq!(
        answer.body["message"],
        format!("Timeout: Too large resource version: {rv}, current: {current}"),
        "{context}"
    );
    assert_eq!(
        answer.body["details"]["causes"],
        json!([{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]),
        "{context}"
    );
    let retry_after = answer.headers.get("retry-after").map(|v| v.to_str().ok());
    if watch_cache {
        assert_eq!(answer.body["details"]["retryAfterSeconds"], 1, "{context}");
        assert_eq!(retry_after, Some(Some("1")), "{context}");
    } else {
        assert!(
            answer.body["details"].get("retryAfterSeconds").is_none(),
            "{context}"
        );
        assert_eq!(retry_after, None, "{context}");
    }
}

/// 400 `BadRequest` with `validateMinimumResourceVersion`'s message.
fn assert_invalid(answer: &Answer, rv: &str, why: &str) {
    assert_eq!(answer.status.as_u16(), 400, "rv {rv}: {}", answer.body);
    assert_eq!(answer.body["kind"], "Status", "{}", answer.body);
    assert_eq!(answer.body["code"], 400, "{}", answer.body);
    assert_eq!(answer.body["reason"], "BadRequest", "{}", answer.body);
    assert_eq!(
        answer.body["message"],
        format!(
            "invalid resource version: resourceVersion: Invalid value: \"{rv}\": \
             strconv.ParseUint: parsing \"{rv}\": {why}"
        ),
        "{}",
        answer.body
    );
}

async fn lists_and_gets_at_the_limits(watch_cache: bool) {
    let server = start(watch_cache).await;
    let http = Http::new(&server);
    let current = create(&http, "p").await;
    // The cache has caught up with `current` before the versions ahead of it.
    let list = http.get(&format!("{PODS}?resourceVersion={current}")).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert_eq!(rv_of(&list.body["metadata"]), current);

    let next = (current + 1).to_string();
    let versions: Vec<&str> =
        TOO_LARGE.iter().copied().chain([next.as_str()]).collect();
    // With the cache each waits 3 s: all at once.
    let answers = futures::future::join_all(versions.iter().flat_map(|rv| {
        [
            format!("{PODS}?resourceVersion={rv}"),
            format!("{PODS}/p?resourceVersion={rv}"),
        ]
        .map(|path| {
            let http = &http;
            async move { (path.clone(), http.get(&path).await) }
        })
    }))
    .await;
    for (path, answer) in &answers {
        let rv = path.rsplit('=').next().expect("rv");
        assert_too_large(answer, rv, current, watch_cache);
    }
    for (rv, why) in INVALID {
        assert_invalid(
            &http.get(&format!("{PODS}?resourceVersion={rv}")).await,
            rv,
            why,
        );
        assert_invalid(
            &http.get(&format!("{PODS}/p?resourceVersion={rv}")).await,
            rv,
            why,
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn lists_and_gets_at_the_integer_limits_without_the_watch_cache() {
    lists_and_gets_at_the_limits(false).await;
}

#[tokio::test]
async fn lists_and_gets_at_the_integer_limits_with_the_watch_cache() {
    lists_and_gets_at_the_limits(true).await;
}

async fn watches_at_the_limits(watch_cache: bool) {
    let server = start(watch_cache).await;
    let http = Http::new(&server);
    let current = create(&http, "p").await;
    let list = http.get(&format!("{PODS}?resourceVersion={current}")).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);

    // Beyond `i64::MAX`-1 nothing can follow: open, no event, ended by the timeout.
    let mut watches = Vec::new();
    for rv in TOO_LARGE {
        let lines = watch(
            &http,
            &format!("{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=2"),
        )
        .await
        .unwrap_or_else(|a| panic!("rv {rv}: {} {}", a.status, a.body));
        watches.push((rv, lines));
    }
    // `current + 1`: the event at `current + 1` is not after it, the next one is.
    let mut next = watch(
        &http,
        &format!(
            "{PODS}?watch=1&resourceVersion={}&timeoutSeconds=5",
            current + 1
        ),
    )
    .await
    .unwrap_or_else(|a| panic!("current + 1: {} {}", a.status, a.body));
    assert_eq!(create(&http, "q").await, current + 1);
    assert_eq!(create(&http, "r").await, current + 2);
    let event = next.next().await.expect("an event after current + 1");
    assert_eq!(event["type"], "ADDED", "{event}");
    assert_eq!(event["object"]["metadata"]["name"], "r", "{event}");
    for (rv, mut lines) in watches {
        let line = lines.next().await;
        assert!(
            line.is_none(),
            "rv {rv}, watch cache {watch_cache}: {line:?}"
        );
    }
    drop(next);

    for (rv, why) in INVALID {
        match watch(&http, &format!("{PODS}?watch=1&resourceVersion={rv}")).await {
            Err(answer) => assert_invalid(&answer, rv, why),
            Ok(_) => panic!("rv {rv}: a watch opened"),
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn watches_at_the_integer_limits_without_the_watch_cache() {
    watches_at_the_limits(false).await;
}

#[tokio::test]
async fn watches_at_the_integer_limits_with_the_watch_cache() {
    watches_at_the_limits(true).await;
}

/// `timeoutSeconds=0` is "the default", a watch of 30 to 60 minutes here: it is
/// still open for an event written after it started. `timeoutSeconds=1` ends.
async fn a_zero_timeout_is_the_default(watch_cache: bool) {
    let server = start(watch_cache).await;
    let http = Http::new(&server);
    let current = create(&http, "p").await;
    let mut zero = watch(
        &http,
        &format!("{PODS}?watch=1&resourceVersion={current}&timeoutSeconds=0"),
    )
    .await
    .unwrap_or_else(|a| panic!("{} {}", a.status, a.body));
    let mut one = watch(
        &http,
        &format!("{PODS}?watch=1&resourceVersion={current}&timeoutSeconds=1"),
    )
    .await
    .unwrap_or_else(|a| panic!("{} {}", a.status, a.body));
    // The one-second watch ends (bounded by `WAIT`).
    assert!(one.next().await.is_none(), "timeoutSeconds=1 ends");
    create(&http, "later").await;
    let event = zero.next().await.expect("timeoutSeconds=0 is still open");
    assert_eq!(event["type"], "ADDED", "{event}");
    assert_eq!(event["object"]["metadata"]["name"], "later", "{event}");
    drop(zero);
    server.shutdown().await;
}

#[tokio::test]
async fn a_zero_timeout_watch_stays_open_without_the_watch_cache() {
    a_zero_timeout_is_the_default(false).await;
}

#[tokio::test]
async fn a_zero_timeout_watch_stays_open_with_the_watch_cache() {
    a_zero_timeout_is_the_default(true).await;
}
