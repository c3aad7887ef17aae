//! The live pages in a real headless Chromium, used as a facilitator uses them:
//!
//! - the server's `/debug/ui` is open while pods are created, changed and
//!   deleted, watches come and go, one client stops reading, and another asks
//!   for a version the ring no longer holds;
//! - a stage 4 informer's page is open while pods arrive faster than a handler
//!   takes them, and then the handler catches up.
//!
//! Every check waits on the page's own DOM (a MutationObserver in the page),
//! bounded by [`WAIT`].
//!
//! The screenshots it takes go to `target/tmp/screenshots/`; with
//! `SCREENSHOTS_TO_BOOK=1` the ones the book shows ([`BOOK_SHOTS`]) replace
//! the book's (`book/src/images/`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chromium_driver::{Browser, Page};
use http_body_util::BodyExt;
use hyper::Method;
use serde_json::{Value, json};
use stage5_apiserver::{RunningServer, Server, ServerConfig};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpSocket;
use tokio::task::JoinHandle;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::server_http::Http;

const WAIT: Duration = Duration::from_secs(20);
/// What a failed wait prints: the page as a person would read it.
const SHOWN: &str = "document.body.innerText";
/// The ring's size: small, so that it wraps during the test.
const CAPACITY: usize = 16;
/// The most writes the slow watcher may take to be closed.
const SLOW_WRITES: usize = 400;
/// The page's languages: one screenshot of each for each edition of the book.
const LANGUAGES: [&str; 2] = ["en", "zh"];
const WIDTH: u32 = 1600;
const HEIGHT: u32 = 1150;

/// Chromium, or `None` (the test is skipped) where none is installed; with
/// `CI=true` a missing Chromium fails the run.
async fn browser_or_skip(test: &str) -> Option<Browser> {
    if Browser::find().is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: CI=true but no Chromium (install Debian's chromium, or set CHROMIUM)"
        );
        eprintln!("{test}: skipped, no Chromium on PATH (set CHROMIUM)");
        return None;
    }
    Some(Browser::launch().await.expect("Chromium starts"))
}

/// The screenshots the book shows, in both languages.
const BOOK_SHOTS: [&str; 2] = ["relist", "informer-pending"];

/// Where the screenshot `name` goes.
fn screenshot_dir(name: &str) -> PathBuf {
    let in_book = BOOK_SHOTS.iter().any(|shot| {
        LANGUAGES
            .iter()
            .any(|lang| name == format!("live-ui-{shot}-{lang}.png"))
    });
    if in_book && std::env::var_os("SCREENSHOTS_TO_BOOK").is_some() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../book/src/images")
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("screenshots")
    }
}

async fn screenshot(page: &Page, name: &str) {
    let png = page.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "{name} is a PNG");
    let dir = screenshot_dir(name);
    std::fs::create_dir_all(&dir).expect("screenshot directory");
    std::fs::write(dir.join(name), png).expect("write screenshot");
}

/// Waits until every page shows `condition`.
async fn wait(pages: &[Page], what: &str, condition: &str) {
    for page in pages {
        if let Err(err) = page.wait_for(condition, WAIT, SHOWN).await {
            panic!("the page never showed {what}: {err}");
        }
    }
}

/// A screenshot of each page: `live-ui-{name}-en.png` and `…-zh.png`.
async fn screenshots(pages: &[Page], name: &str) {
    for (page, lang) in pages.iter().zip(LANGUAGES) {
        screenshot(page, &format!("live-ui-{name}-{lang}.png")).await;
    }
}

async fn call(http: &Http, method: Method, path: &str, body: Value) -> Value {
    let content_type = if method == Method::PATCH {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    let body = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let response = http.send(method, path, content_type, body).await;
    let (status, _, bytes) = Http::raw(response).await;
    assert!(status.is_success(), "{path}: {status} {bytes:?}");
    serde_json::from_slice(&bytes).expect("JSON answer")
}

fn pod(name: &str, annotation_bytes: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "web"},
            "annotations": {"padding": "x".repeat(annotation_bytes)},
        },
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    })
}

/// A watch whose events are read (and dropped) by a task until it is aborted.
async fn drained_watch(http: &Http, path: &str) -> JoinHandle<()> {
    let response = http.send(Method::GET, path, "", Vec::new()).await;
    assert!(response.status().is_success(), "{path}");
    let mut body = response.into_body();
    tokio::spawn(async move { while let Some(Ok(_)) = body.frame().await {} })
}

/// A watch from a client that never reads: a receive buffer of 4 KiB, and
/// nothing taken from it.
async fn stalled_watch(server: &RunningServer, path: &str) -> tokio::net::TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("receive buffer");
    let mut stream = timeout(WAIT, socket.connect(server.local_addr()))
        .await
        .expect("connect in time")
        .expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    stream
}

/// A row of the event strip for `key` of `event_type` that reached dispatch.
fn dispatched(key: &str, event_type: &str) -> String {
    format!(
        "[...document.querySelectorAll('#flow li[data-key=\"{key}\"]')]\
         .some(li => li.querySelector('.type-{event_type}') \
         && li.querySelector('[data-stage=\"dispatch\"].done'))"
    )
}

const SLOW_CLOSED: &str = "document.querySelector('#watchers .watcher.ended[data-reason=\"slow\"]') !== null \
     && document.querySelector('#moments li.slow') !== null";

/// A list answered after the 410 (the moments are newest first).
const RELIST_AFTER_410: &str = "(() => { \
    const items = [...document.querySelectorAll('#moments li')]; \
    const expired = items.findIndex(li => li.dataset.note === 'expired'); \
    const list = items.findIndex(li => li.dataset.verb === 'list'); \
    return expired >= 0 && list >= 0 && list < expired; })()";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_page_shows_events_watchers_a_slow_close_and_a_relist() {
    let test = "the_live_page_shows_events_watchers_a_slow_close_and_a_relist";
    let Some(browser) = browser_or_skip(test).await else {
        return;
    };
    let server =
        Server::start(ServerConfig::for_tests().watch_cache_capacity(CAPACITY))
            .await
            .expect("server starts");
    let http = Http::new(&server);
    let mut pages = Vec::new();
    for lang in LANGUAGES {
        let url = format!("{}/debug/ui?lang={lang}", server.url());
        pages.push(browser.open(&url, WIDTH, HEIGHT).await.expect("page opens"));
    }
    wait(
        &pages,
        "a live stream and etcd's revision",
        "document.getElementById('conn').dataset.state === 'open' \
         && document.getElementById('etcd-rev').textContent !== '–'",
    )
    .await;

    // Each event of a pod's life, from etcd through the ring to dispatch.
    let pods = "/api/v1/namespaces/default/pods";
    call(&http, Method::POST, pods, pod("web", 0)).await;
    let web = format!("{pods}/web");
    let patch = json!({"metadata": {"labels": {"tier": "front"}}});
    call(&http, Method::PATCH, &web, patch).await;
    call(&http, Method::DELETE, &web, Value::Null).await;
    for event_type in ["ADDED", "MODIFIED", "DELETED"] {
        let what = format!("the {event_type} of default/web dispatched");
        wait(&pages, &what, &dispatched("default/web", event_type)).await;
    }

    // Three watchers, counted as they register.
    let mut readers = Vec::new();
    for path in [
        "/api/v1/pods?watch=true&allowWatchBookmarks=true",
        "/api/v1/namespaces/default/pods?watch=true&labelSelector=app%3Dweb",
        "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=600",
    ] {
        readers.push(drained_watch(&http, path).await);
    }
    let three = "document.getElementById('watcher-count').textContent === '3'";
    wait(&pages, "three watchers", three).await;
    call(&http, Method::POST, pods, pod("api", 0)).await;
    wait(
        &pages,
        "default/api dispatched",
        &dispatched("default/api", "ADDED"),
    )
    .await;
    screenshots(&pages, "watchers").await;

    // A client that stops reading: its buffer fills, the dispatcher waits out
    // the time budget for it, and closes it.
    let slow_ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "slow"}});
    call(&http, Method::POST, "/api/v1/namespaces", slow_ns).await;
    let stalled =
        stalled_watch(&server, "/api/v1/namespaces/slow/pods?watch=true").await;
    wait(
        &pages,
        "the fourth watcher",
        "document.getElementById('watcher-count').textContent === '4'",
    )
    .await;
    let mut closed = false;
    for i in 0..SLOW_WRITES {
        let path = "/api/v1/namespaces/slow/pods";
        call(
            &http,
            Method::POST,
            path,
            pod(&format!("big-{i}"), 64 * 1024),
        )
        .await;
        if i % 8 == 7
            && pages[0].eval(SLOW_CLOSED).await.expect("eval") == json!(true)
        {
            closed = true;
            break;
        }
    }
    if !closed {
        wait(
            &pages,
            "the stalled watcher closed as too slow",
            SLOW_CLOSED,
        )
        .await;
    }
    screenshots(&pages, "slow").await;
    drop(stalled);

    // A watch from a version the ring has dropped gets 410; the client lists
    // again, as a Reflector does, and watches from the list's version.
    let old = "/api/v1/namespaces/default/pods?watch=true&resourceVersion=2";
    let response = http.send(Method::GET, old, "", Vec::new()).await;
    let (_, _, bytes) = Http::raw(response).await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("\"ERROR\"") && text.contains("410"), "{text}");
    let list = call(&http, Method::GET, pods, Value::Null).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("list rv");
    let rewatch = format!("{pods}?watch=true&resourceVersion={rv}");
    readers.push(drained_watch(&http, &rewatch).await);
    wait(&pages, "a 410 and the relist after it", RELIST_AFTER_410).await;
    screenshots(&pages, "relist").await;
    let zh = "document.documentElement.lang === 'zh-CN'";
    assert_eq!(pages[1].eval(zh).await.expect("eval"), json!(true));
    for page in &pages {
        assert_eq!(page.console_errors(), Vec::<String>::new());
    }

    for reader in readers {
        reader.abort();
    }
    server.shutdown().await;
}

/// A gate a handler waits at until the test opens it.
#[derive(Default)]
struct Gate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    /// Waits until the gate is open (at most [`WAIT`]).
    fn pass(&self) {
        let open = self.open.lock().expect("gate");
        let (_open, _) = self
            .opened
            .wait_timeout_while(open, WAIT, |open| !*open)
            .expect("gate");
    }

    fn open(&self) {
        *self.open.lock().expect("gate") = true;
        self.opened.notify_all();
    }
}

/// A listener with `pending` notifications or more.
fn pending_at_least(pending: usize) -> String {
    format!(
        "[...document.querySelectorAll('[data-listener]')]\
         .some(l => Number(l.dataset.pending) >= {pending})"
    )
}

const NOTHING_PENDING: &str = "document.querySelectorAll('[data-listener]').length === 2 \
     && [...document.querySelectorAll('[data-listener]')]\
     .every(l => l.dataset.pending === '0')";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_informer_page_shows_its_reflector_queue_indexer_and_listeners() {
    use k8s_openapi::api::core::v1::Pod;
    use stage3_reflector::KubeListerWatcher;
    use stage4_shared_informer::debug_ui::InformerPage;
    use stage4_shared_informer::{
        KubeSource, ResourceEventHandlerFuncs, SharedInformerFactory,
    };

    let test = "the_informer_page_shows_its_reflector_queue_indexer_and_listeners";
    let Some(browser) = browser_or_skip(test).await else {
        return;
    };
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("server starts");
    let http = Http::new(&server);
    let config = kube::Config::new(server.url().parse().expect("url"));
    let client = KubeListerWatcher::<Pod>::client(config).expect("client");
    let factory =
        SharedInformerFactory::new(KubeSource::new(client), Duration::ZERO);
    let informer = factory.pods().informer();
    // One handler takes every notification at once; the other waits at a gate
    // the test holds, so its notifications pile up.
    let gate = Arc::new(Gate::default());
    informer
        .add_event_handler(ResourceEventHandlerFuncs::<Pod>::new())
        .expect("handler");
    let waits = Arc::clone(&gate);
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::<Pod>::new()
                .add_func(move |_, _| waits.pass()),
        )
        .expect("handler");
    factory.start();
    let stop = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let page = InformerPage::new().with("pods", Arc::new(informer.clone()));
    let serving = tokio::spawn(page.serve(listener, stop.clone()));
    let mut pages = Vec::new();
    for lang in LANGUAGES {
        let url = format!("http://{addr}/debug/ui?lang={lang}");
        pages.push(browser.open(&url, WIDTH, 900).await.expect("page opens"));
    }
    let watching = "document.querySelector('[data-phase=\"watching\"]') !== null";
    wait(&pages, "the Reflector watching", watching).await;

    let pods = "/api/v1/namespaces/default/pods";
    for i in 0..5 {
        call(&http, Method::POST, pods, pod(&format!("web-{i}"), 0)).await;
    }
    let five = "document.querySelector('[data-indexer-len=\"5\"]') !== null";
    wait(&pages, "five pods in the indexer", five).await;
    wait(&pages, "notifications piling up", &pending_at_least(4)).await;
    let popped =
        "document.querySelector('.flow li[data-key=\"default/web-4\"]') !== null";
    wait(&pages, "the last pod popped from the queue", popped).await;
    screenshots(&pages, "informer-pending").await;

    gate.open();
    wait(&pages, "the handler caught up", NOTHING_PENDING).await;
    call(&http, Method::DELETE, &format!("{pods}/web-0"), Value::Null).await;
    let deleted = "document.querySelector('.flow li[data-key=\"default/web-0\"] .delta-Deleted') !== null \
         && document.querySelector('[data-indexer-len=\"4\"]') !== null";
    wait(&pages, "the delete popped and applied", deleted).await;
    screenshots(&pages, "informer").await;
    for page in &pages {
        assert_eq!(page.console_errors(), Vec::<String>::new());
    }

    stop.cancel();
    let served = timeout(WAIT, serving).await.expect("page server stops");
    served.expect("page task").expect("page server");
    factory.shutdown().await;
    server.shutdown().await;
}
