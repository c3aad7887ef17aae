//! Issue 19's "done means", over HTTP: stage 4's shared informer, through stage 3's
//! kube ListerWatcher, talks to the mini-apiserver through a loopback TCP proxy.
//! Once the informer has received an event on its watch, the proxy resets the
//! watch connection (an RST, as when a load balancer or the apiserver's node dies).
//! The informer must open a new watch from its last resourceVersion without
//! listing (client-go's `handleWatch` ends quietly on a probable EOF, and the
//! Reflector re-watches), and its cache must follow the server afterwards.
//!
//! The proxy reports every request line the informer sends, so the test sees the
//! re-watch's resourceVersion; the server's `apiserver_request_total` counts say
//! that no LIST reached it. Every wait is bounded.

use super::fault_convergence::request_targets;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{ListParams, PostParams};
use parking_lot::Mutex;
use serde_json::json;
use stage3_reflector::KubeListerWatcher;
use stage4_shared_informer::{
    KubeSource, ResourceEventHandlerFuncs, SharedInformerFactory,
    parse_label_selector,
};
use stage5_apiserver::{Server, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc};
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::server_informer::state_of;

const WAIT: Duration = Duration::from_secs(20);

/// One request the proxy saw: the connection it came on and its target
/// (`/api/v1/pods?…`).
#[derive(Debug, Clone)]
struct Request {
    connection: u64,
    target: String,
}

impl Request {
    fn param(&self, name: &str) -> Option<&str> {
        let (_, query) = self.target.split_once('?')?;
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key == name).then_some(value)
        })
    }

    fn is_watch(&self) -> bool {
        self.param("watch") == Some("true")
    }
}

/// A proxied connection: the request it carries now, and how to reset it.
struct Connection {
    id: u64,
    last_target: Mutex<String>,
    reset: Notify,
}

/// A loopback TCP proxy in front of the server. It relays bytes both ways, reports
/// every request line the client sends, and resets on demand the connections whose
/// latest request is a watch.
struct Proxy {
    address: SocketAddr,
    requests: mpsc::UnboundedReceiver<Request>,
    connections: Arc<Mutex<Vec<Arc<Connection>>>>,
    stop: CancellationToken,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let (report, requests) = mpsc::unbounded_channel();
        let connections: Arc<Mutex<Vec<Arc<Connection>>>> = Arc::default();
        let stop = CancellationToken::new();
        let next_id = AtomicU64::new(1);
        let registry = Arc::clone(&connections);
        let stopped = stop.clone();
        tokio::spawn(async move {
            loop {
                let client = tokio::select! {
                    () = stopped.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((client, _)) => client,
                        Err(_) => return,
                    },
                };
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let connection = Arc::new(Connection {
                    id: next_id.fetch_add(1, Ordering::Relaxed),
                    last_target: Mutex::new(String::new()),
                    reset: Notify::new(),
                });
                registry.lock().push(Arc::clone(&connection));
                tokio::spawn(relay(
                    client,
                    server,
                    connection,
                    report.clone(),
                    stopped.clone(),
                ));
            }
        });
        Proxy {
            address,
            requests,
            connections,
            stop,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The next request the client sent through the proxy.
    async fn next_request(&mut self) -> Request {
        timeout(WAIT, self.requests.recv())
            .await
            .expect("the informer sends its next request in time")
            .expect("the proxy is running")
    }

    /// Resets every connection whose latest request is a watch; returns how many.
    fn reset_watches(&self) -> usize {
        let connections = self.connections.lock();
        let watches: Vec<_> = connections
            .iter()
            .filter(|c| {
                let target = c.last_target.lock();
                Request {
                    connection: c.id,
                    target: target.clone(),
                }
                .is_watch()
            })
            .collect();
        for connection in &watches {
            connection.reset.notify_one();
        }
        watches.len()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Relays one connection until either side closes it, the proxy stops, or the
/// test resets it. A reset closes the client's side with `SO_LINGER` 0, so the
/// client sees an RST ("connection reset by peer") rather than a clean end.
async fn relay(
    mut client: TcpStream,
    mut server: TcpStream,
    connection: Arc<Connection>,
    report: mpsc::UnboundedSender<Request>,
    stop: CancellationToken,
) {
    let reset = {
        let (mut client_read, mut client_write) = client.split();
        let (mut server_read, mut server_write) = server.split();
        let upstream = async {
            let mut buffer = [0u8; 8192];
            let mut partial_line = Vec::new();
            loop {
                let read = match client_read.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(read) => read,
                };
                for target in request_targets(&mut partial_line, &buffer[..read]) {
                    connection.last_target.lock().clone_from(&target);
                    let _ = report.send(Request {
                        connection: connection.id,
                        target,
                    });
                }
                if server_write.write_all(&buffer[..read]).await.is_err() {
                    return;
                }
            }
        };
        let downstream = tokio::io::copy(&mut server_read, &mut client_write);
        tokio::select! {
            () = connection.reset.notified() => true,
            () = stop.cancelled() => false,
            () = upstream => false,
            _ = downstream => false,
        }
    };
    if reset {
        // A zero linger never blocks the thread, unlike the non-zero ones tokio
        // warns about.
        #[allow(deprecated)]
        client.set_linger(Some(Duration::ZERO)).expect("SO_LINGER");
    }
}

pub(super) fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }))
    .expect("pod")
}

/// Waits for the informer's handler to report the add of `name`; the adds it
/// reports on the way are returned too.
async fn added(
    adds: &mut mpsc::UnboundedReceiver<String>,
    name: &str,
) -> Vec<String> {
    let mut seen = Vec::new();
    while seen.last().map(String::as_str) != Some(name) {
        let next = timeout(WAIT, adds.recv())
            .await
            .unwrap_or_else(|_| panic!("the informer reports {name} in time"))
            .expect("the handler is registered");
        seen.push(next);
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_watch_connection_rewatches_from_the_last_version_without_a_list() {
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let direct = {
        let config = kube::Config::new(server.url().parse().expect("url"));
        let client = KubeListerWatcher::<Pod>::client(config).expect("client");
        Api::<Pod>::namespaced(client, "default")
    };
    let pp = PostParams::default();
    direct.create(&pp, &pod("before")).await.expect("create");

    let mut proxy = Proxy::start(server.local_addr()).await;
    let proxied = kube::Config::new(proxy.url().parse().expect("url"));
    let client = KubeListerWatcher::<Pod>::client(proxied).expect("client");
    let factory =
        SharedInformerFactory::new(KubeSource::new(client), Duration::ZERO);
    let pods = factory.pods();
    let informer = pods.informer();
    let (report, mut adds) = mpsc::unbounded_channel();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |pod: &Arc<Pod>, _| {
                let _ = report.send(pod.metadata.name.clone().unwrap_or_default());
            },
        ))
        .expect("the informer is not stopped");
    factory.start();
    let stop = CancellationToken::new();
    let synced = timeout(WAIT, factory.wait_for_cache_sync(&stop))
        .await
        .expect("sync in time");
    assert!(synced.values().all(|s| *s), "{synced:?}");
    assert_eq!(added(&mut adds, "before").await, ["before"]);

    // A list from "0", then a watch from the list's version.
    let list = proxy.next_request().await;
    assert!(!list.is_watch(), "first a list: {list:?}");
    assert_eq!(list.param("resourceVersion"), Some("0"), "{list:?}");
    let watch = proxy.next_request().await;
    assert!(watch.is_watch(), "then a watch: {watch:?}");

    // An event over the watch, then the reset under it.
    let metrics = &server.state().metrics;
    let lists_before = metrics.requests("LIST", "pods", 200);
    let watches_before = metrics.requests("WATCH", "pods", 200);
    let during = direct.create(&pp, &pod("during")).await.expect("create");
    assert_eq!(added(&mut adds, "during").await, ["during"]);
    let last_version = informer.last_sync_resource_version();
    assert_eq!(
        Some(last_version.as_str()),
        during.metadata.resource_version.as_deref(),
        "the informer is at the event's version"
    );
    assert_eq!(proxy.reset_watches(), 1, "one watch connection to reset");

    // The next request is a watch from that version, on a new connection: no list.
    let rewatch = proxy.next_request().await;
    assert!(rewatch.is_watch(), "a re-watch, not a list: {rewatch:?}");
    assert_eq!(
        rewatch.param("resourceVersion"),
        Some(last_version.as_str()),
        "{rewatch:?}"
    );
    assert_ne!(rewatch.connection, watch.connection, "a new connection");

    // The cache follows the server after the reset.
    direct.create(&pp, &pod("after")).await.expect("create");
    assert_eq!(added(&mut adds, "after").await, ["after"]);
    assert_eq!(
        metrics.requests("LIST", "pods", 200),
        lists_before,
        "the server saw no list after the reset"
    );
    assert_eq!(metrics.requests("WATCH", "pods", 200), watches_before + 1);
    assert!(
        proxy.requests.try_recv().is_err(),
        "nothing but the re-watch went through the proxy"
    );
    let everything = parse_label_selector("").expect("selector");
    let cached = pods.lister().list(&everything);
    let on_server = direct.list(&ListParams::default()).await.expect("list");
    assert_eq!(
        state_of(cached.iter().map(|p| p.as_ref())),
        state_of(&on_server.items)
    );
    assert_eq!(state_of(&on_server.items).len(), 3);

    timeout(WAIT, factory.shutdown())
        .await
        .expect("informers stop in time");
    drop(proxy);
    timeout(WAIT, server.shutdown())
        .await
        .expect("shutdown in time");
}
