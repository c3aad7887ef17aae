//! The kube-client lister against a small HTTP server in this process: the query
//! parameters it sends, how it decodes lists and watch events, and how server errors
//! become typed errors.
//!
//! These tests do real (local) I/O, so they run on real time; every wait is bounded.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client, Config};
use parking_lot::Mutex;
use pretty_assertions::assert_eq;
use stage3_reflector::{
    KubeListerWatcher, ListOptions, ListerWatcher, Reflector, ReflectorOptions,
    ResourceVersionMatch, WatchEvent, WatchOptions, connection_refused,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

/// What the test server answers to one request.
enum Reply {
    /// A complete JSON body with this HTTP code.
    Json(u16, String),
    /// Watch lines, then keep the connection open (`true`) or close it.
    Stream(Vec<String>, bool),
    /// Watch lines; then, once the test says so, reset the connection (an RST, as
    /// when an apiserver or a proxy between dies).
    Reset(Vec<String>, Arc<Notify>),
}

/// A one-route HTTP/1.1 server: answers every request with `reply(target)` and
/// records the request targets (`/api/v1/pods?…`).
struct TestServer {
    address: String,
    targets: Arc<Mutex<Vec<String>>>,
}

impl TestServer {
    async fn start(
        reply: impl Fn(&str) -> Reply + Send + Sync + 'static,
    ) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = format!("http://{}", listener.local_addr().expect("address"));
        let targets = Arc::new(Mutex::new(Vec::new()));
        let reply = Arc::new(reply);
        let recorded = Arc::clone(&targets);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let reply = Arc::clone(&reply);
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move { serve(socket, &*reply, &recorded).await });
            }
        });
        TestServer { address, targets }
    }

    fn client(&self) -> Client {
        let config = Config::new(self.address.parse().expect("a valid URL"));
        KubeListerWatcher::<Pod>::client(config).expect("a client for plain http")
    }

    fn lister(&self) -> KubeListerWatcher<Pod> {
        KubeListerWatcher::new(Api::<Pod>::all(self.client()))
    }

    fn targets(&self) -> Vec<String> {
        self.targets.lock().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    reply: &(dyn Fn(&str) -> Reply + Send + Sync),
    recorded: &Mutex<Vec<String>>,
) {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        match socket.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => head.extend_from_slice(&buffer[..read]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let target = head.split_whitespace().nth(1).unwrap_or("").to_string();
    recorded.lock().push(target.clone());
    let mut reset = None;
    let (code, body, keep_open) = match reply(&target) {
        Reply::Json(code, body) => (code, body, false),
        Reply::Stream(lines, keep_open) => (200, lines.concat(), keep_open),
        Reply::Reset(lines, when) => {
            reset = Some(when);
            (200, lines.concat(), false)
        }
    };
    let response = format!(
        "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{body}"
    );
    if socket.write_all(response.as_bytes()).await.is_err() {
        return;
    }
    let _ = socket.flush().await;
    if let Some(when) = reset {
        when.notified().await;
        // SO_LINGER 0: closing sends an RST instead of a FIN ("connection reset by
        // peer"). A zero linger never blocks the thread, unlike the non-zero
        // ones tokio warns about.
        #[allow(deprecated)]
        socket.set_linger(Some(Duration::ZERO)).expect("SO_LINGER");
        return;
    }
    if keep_open {
        // Hold the watch open until the client goes away.
        let _ = socket.read(&mut buffer).await;
    }
}

fn pod_json(name: &str, resource_version: &str, with_type: bool) -> String {
    let type_meta = if with_type {
        r#""apiVersion":"v1","kind":"Pod","#
    } else {
        ""
    };
    format!(
        r#"{{{type_meta}"metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{resource_version}"}}}}"#
    )
}

fn status_json(code: u16, reason: &str, message: &str) -> String {
    format!(
        r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{message}","reason":"{reason}","code":{code}}}"#
    )
}

fn event_line(event_type: &str, object: &str) -> String {
    format!("{{\"type\":\"{event_type}\",\"object\":{object}}}\n")
}

fn pod_list_json(
    resource_version: &str,
    continue_token: &str,
    pods: &[(&str, &str)],
) -> String {
    let items: Vec<String> = pods
        .iter()
        .map(|(name, rv)| pod_json(name, rv, false))
        .collect();
    format!(
        r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"{resource_version}","continue":"{continue_token}"}},"items":[{}]}}"#,
        items.join(",")
    )
}

fn has_param(target: &str, param: &str) -> bool {
    target
        .split_once('?')
        .is_some_and(|(_, query)| query.split('&').any(|pair| pair == param))
}

#[tokio::test]
async fn a_list_sends_client_go_parameters_and_decodes_the_page() {
    let server = TestServer::start(|_| {
        Reply::Json(
            200,
            pod_list_json("7", "next-page", &[("a", "3"), ("b", "7")]),
        )
    })
    .await;
    let page = tokio::time::timeout(
        WAIT,
        server.lister().label_selector("app=web").list(ListOptions {
            resource_version: "0".to_string(),
            limit: 500,
            ..ListOptions::default()
        }),
    )
    .await
    .expect("in time")
    .expect("listed");
    assert_eq!(page.items.len(), 2);
    assert_eq!(
        page.items[1].metadata.resource_version.as_deref(),
        Some("7")
    );
    assert_eq!(page.resource_version, "7");
    assert_eq!(page.continue_token, "next-page");
    let target = &server.targets()[0];
    assert!(target.starts_with("/api/v1/pods?"), "{target}");
    for param in ["limit=500", "resourceVersion=0", "labelSelector=app%3Dweb"] {
        assert!(has_param(target, param), "{param} missing from {target}");
    }
}

#[tokio::test]
async fn a_continue_request_carries_the_token_and_no_version() {
    let server =
        TestServer::start(|_| Reply::Json(200, pod_list_json("7", "", &[]))).await;
    tokio::time::timeout(
        WAIT,
        server.lister().list(ListOptions {
            limit: 500,
            continue_token: "abc".to_string(),
            ..ListOptions::default()
        }),
    )
    .await
    .expect("in time")
    .expect("listed");
    let target = &server.targets()[0];
    assert!(has_param(target, "continue=abc"), "{target}");
    assert!(!target.contains("resourceVersion"), "{target}");
}

#[tokio::test]
async fn a_410_list_is_an_expired_error_and_other_codes_are_kept() {
    let server = TestServer::start(|target| {
        if has_param(target, "resourceVersion=10") {
            Reply::Json(
                410,
                status_json(410, "Expired", "too old resource version: 10 (20)"),
            )
        } else {
            Reply::Json(429, status_json(429, "TooManyRequests", "slow down"))
        }
    })
    .await;
    let lister = server.lister();
    let expired = tokio::time::timeout(
        WAIT,
        lister.list(ListOptions {
            resource_version: "10".to_string(),
            ..ListOptions::default()
        }),
    )
    .await
    .expect("in time")
    .expect_err("410");
    assert!(expired.is_expired(), "{expired}");
    assert_eq!(expired.code(), Some(410));
    let throttled = tokio::time::timeout(WAIT, lister.list(ListOptions::default()))
        .await
        .expect("in time")
        .expect_err("429");
    assert!(throttled.is_too_many_requests());
    assert_eq!(throttled.code(), Some(429));
    assert_eq!(
        throttled
            .status()
            .and_then(|status| status.message.as_deref()),
        Some("slow down")
    );
}

#[tokio::test]
async fn a_504_too_large_resource_version_reaches_the_caller_at_once() {
    let body = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 99, current: 10","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}"#;
    let server =
        TestServer::start(move |_| Reply::Json(504, body.to_string())).await;
    let error = tokio::time::timeout(
        WAIT,
        server.lister().list(ListOptions {
            resource_version: "99".to_string(),
            ..ListOptions::default()
        }),
    )
    .await
    .expect("no client-side retries: the error arrives at once")
    .expect_err("504");
    assert!(error.is_too_large_resource_version(), "{error}");
    assert_eq!(error.code(), Some(504));
    assert_eq!(server.targets().len(), 1, "exactly one request");
}

#[tokio::test]
async fn watch_events_are_decoded_and_an_object_of_another_type_is_reported() {
    let service = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","resourceVersion":"6"}}"#;
    let bookmark = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"resourceVersion":"8","annotations":{"k8s.io/initial-events-end":"true"}}}"#;
    let lines = vec![
        event_line("ADDED", &pod_json("a", "5", true)),
        event_line("ADDED", service),
        event_line("MODIFIED", &pod_json("a", "7", true)),
        event_line("BOOKMARK", bookmark),
        event_line(
            "ERROR",
            &status_json(410, "Expired", "too old resource version: 5 (9)"),
        ),
    ];
    let server =
        TestServer::start(move |_| Reply::Stream(lines.clone(), false)).await;
    let watch = tokio::time::timeout(
        WAIT,
        server.lister().watch(WatchOptions {
            resource_version: "4".to_string(),
            timeout_seconds: Some(300),
            allow_watch_bookmarks: true,
            ..WatchOptions::default()
        }),
    )
    .await
    .expect("in time")
    .expect("watching");
    let items: Vec<_> = tokio::time::timeout(WAIT, watch.collect())
        .await
        .expect("the stream ends");
    let seen: Vec<String> = items
        .into_iter()
        .map(|item| match item {
            Ok(WatchEvent::Added(pod)) => {
                format!("ADDED {:?}", pod.metadata.resource_version)
            }
            Ok(WatchEvent::Modified(pod)) => {
                format!("MODIFIED {:?}", pod.metadata.resource_version)
            }
            Ok(WatchEvent::Deleted(pod)) => {
                format!("DELETED {:?}", pod.metadata.resource_version)
            }
            Ok(WatchEvent::Bookmark(bookmark)) => format!(
                "BOOKMARK {} end={}",
                bookmark.resource_version,
                bookmark.is_initial_events_end()
            ),
            Ok(WatchEvent::Error(status)) => format!(
                "ERROR {} expired={}",
                status.code.unwrap_or_default(),
                stage3_reflector::Error::from_status(*status).is_expired()
            ),
            Err(error) => format!("error {}: {error}", kind(&error)),
        })
        .collect();
    assert_eq!(
        seen,
        [
            "ADDED Some(\"5\")",
            "error UnexpectedType: expected a v1/Pod but the watch event object is a v1/Service; the event is skipped",
            "MODIFIED Some(\"7\")",
            "BOOKMARK 8 end=true",
            "ERROR 410 expired=true",
        ]
    );
    let target = &server.targets()[0];
    for param in [
        "watch=true",
        "resourceVersion=4",
        "timeoutSeconds=300",
        "allowWatchBookmarks=true",
    ] {
        assert!(has_param(target, param), "{param} missing from {target}");
    }
}

#[tokio::test]
async fn a_streaming_list_watch_asks_for_initial_events_not_older_than() {
    let server = TestServer::start(|_| Reply::Stream(vec![], false)).await;
    tokio::time::timeout(
        WAIT,
        server.lister().watch(WatchOptions {
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            send_initial_events: true,
            allow_watch_bookmarks: true,
            ..WatchOptions::default()
        }),
    )
    .await
    .expect("in time")
    .expect("watching");
    let target = &server.targets()[0];
    for param in [
        "sendInitialEvents=true",
        "resourceVersionMatch=NotOlderThan",
    ] {
        assert!(has_param(target, param), "{param} missing from {target}");
    }
}

#[tokio::test]
async fn a_version_match_on_a_plain_watch_is_rejected_before_sending() {
    let server = TestServer::start(|_| Reply::Stream(vec![], false)).await;
    let error = server
        .lister()
        .watch(WatchOptions {
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..WatchOptions::default()
        })
        .await
        .expect_err("the API server would reject it");
    assert_eq!(kind(&error), "InvalidOptions");
    assert!(server.targets().is_empty());
}

#[tokio::test]
async fn a_server_that_is_down_is_connection_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener);
    let config =
        Config::new(format!("http://{address}").parse().expect("a valid URL"));
    let client =
        KubeListerWatcher::<Pod>::client(config).expect("a client for plain http");
    let lister = KubeListerWatcher::new(Api::<Pod>::all(client));
    let error = tokio::time::timeout(WAIT, lister.list(ListOptions::default()))
        .await
        .expect("in time")
        .expect_err("nobody listens");
    assert!(error.is_connection_refused(), "{error:?}");
    assert!(error.is_watch_error_retriable());
    assert_eq!(kind(&error), kind(&connection_refused()));
}

#[tokio::test]
async fn a_reflector_over_kube_client_fills_a_store() {
    let server = TestServer::start(|target| {
        if has_param(target, "watch=true") {
            Reply::Stream(vec![event_line("ADDED", &pod_json("c", "6", true))], true)
        } else {
            Reply::Json(200, pod_list_json("5", "", &[("a", "3"), ("b", "5")]))
        }
    })
    .await;
    let store = Arc::new(RecordingStore::default());
    let reflector = Reflector::new(
        server.lister(),
        Arc::clone(&store),
        ReflectorOptions::default().name("pods"),
    );
    let shutdown = CancellationToken::new();
    let scenario = async {
        until_in_real_time("the watch event in the store", || {
            reflector.last_sync_resource_version() == "6"
        })
        .await;
        shutdown.cancel();
    };
    tokio::time::timeout(WAIT * 2, async {
        tokio::join!(reflector.run(shutdown.clone()), scenario)
    })
    .await
    .expect("the reflector stops");
    assert_eq!(
        store.ops(),
        vec![Op::Replace(2, "5".to_string()), Op::Add("c".to_string())]
    );
    let targets = server.targets();
    assert!(
        has_param(&targets[0], "resourceVersion=0"),
        "{}",
        targets[0]
    );
    assert!(
        has_param(&targets[1], "resourceVersion=5"),
        "{}",
        targets[1]
    );
}

/// What apimachinery's `StreamWatcher.receive` (`pkg/watch/streamwatcher.go`) and
/// client-go's `handleWatch` do together: an established watch whose connection is
/// reset after it delivered an event ends quietly (`net.IsProbableEOF`),
/// `handleWatch` returns normally, and the Reflector opens a new watch from its last
/// resourceVersion. It does not relist.
#[tokio::test]
async fn a_reset_watch_connection_rewatches_from_the_last_version_without_a_list() {
    let reset = Arc::new(Notify::new());
    let (requests_tx, mut requests) = mpsc::unbounded_channel::<String>();
    let server = {
        let reset = Arc::clone(&reset);
        TestServer::start(move |target| {
            let _ = requests_tx.send(target.to_string());
            if has_param(target, "watch=true")
                && has_param(target, "resourceVersion=5")
            {
                Reply::Reset(
                    vec![event_line("ADDED", &pod_json("c", "6", true))],
                    Arc::clone(&reset),
                )
            } else if has_param(target, "watch=true") {
                Reply::Stream(vec![], true)
            } else {
                Reply::Json(200, pod_list_json("5", "", &[("a", "3"), ("b", "5")]))
            }
        })
        .await
    };
    let store = Arc::new(RecordingStore::default());
    let reflector = Reflector::new(
        server.lister(),
        Arc::clone(&store),
        ReflectorOptions::default().name("pods"),
    );
    let shutdown = CancellationToken::new();
    let scenario = async {
        let list = next_request(&mut requests).await;
        assert!(!has_param(&list, "watch=true"), "first a list: {list}");
        let watch = next_request(&mut requests).await;
        assert!(has_param(&watch, "resourceVersion=5"), "{watch}");
        // Let the event reach the store, then reset the connection under the watch.
        until_in_real_time("the watch event in the store", || {
            reflector.last_sync_resource_version() == "6"
        })
        .await;
        reset.notify_one();
        let after = next_request(&mut requests).await;
        shutdown.cancel();
        after
    };
    let (_, after) = tokio::time::timeout(WAIT * 3, async {
        tokio::join!(reflector.run(shutdown.clone()), scenario)
    })
    .await
    .expect("the reflector stops");
    assert!(
        has_param(&after, "watch=true") && has_param(&after, "resourceVersion=6"),
        "after the reset the reflector re-watches from 6, it does not relist: {after}"
    );
    assert_eq!(
        store.ops(),
        vec![Op::Replace(2, "5".to_string()), Op::Add("c".to_string())]
    );
}

/// Waits until `condition` holds, checking every few milliseconds of real time, for
/// at most [`WAIT`] (these tests do real I/O, so `common::eventually`'s paused-clock
/// patience does not fit them).
async fn until_in_real_time(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn next_request(requests: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(WAIT, requests.recv())
        .await
        .expect("the reflector sends its next request in time")
        .expect("the server is up")
}

/// Mirrors apimachinery's `TestIsProbableEOF` (`pkg/util/net/http_test.go`).
#[test]
fn test_is_probable_eof() {
    use stage3_reflector::is_probable_eof;
    use std::io::{Error as IoError, ErrorKind};
    for kind in [
        ErrorKind::ConnectionReset,
        ErrorKind::ConnectionAborted,
        ErrorKind::BrokenPipe,
        ErrorKind::UnexpectedEof,
    ] {
        assert!(is_probable_eof(&IoError::new(kind, "x")), "{kind:?}");
    }
    // Deeper in a source chain, and by message as upstream matches them.
    let wrapped = stage3_reflector::Error::Transport {
        source: Box::new(IoError::new(ErrorKind::ConnectionReset, "reset")),
    };
    assert!(is_probable_eof(&wrapped));
    let by_message =
        IoError::other("read tcp 127.0.0.1:1: connection reset by peer");
    assert!(is_probable_eof(&by_message));
    assert!(!is_probable_eof(&IoError::new(
        ErrorKind::TimedOut,
        "timed out"
    )));
    assert!(!is_probable_eof(&IoError::other("invalid chunk size")));
}
