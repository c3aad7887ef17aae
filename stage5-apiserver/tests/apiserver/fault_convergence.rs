//! Issue 15: fault injection under a seeded random workload. Stage 4's shared
//! informer (through stage 3's kube ListerWatcher and kube-client) keeps a cache of
//! every pod while a driver makes 1,200 seeded random creates, updates and deletes
//! (8 lanes of 150, each lane its own `StdRng` from the printed seed, over its own
//! names, so the sequence of operations is the same on every run). During the run:
//!
//! - a forced compaction of the KV at its current revision (the KV's `compact`, on
//!   the `Backend::Kv` the server shares with the test);
//! - cut connections: a loopback proxy between the informer and the server resets
//!   its watch connection, and later every connection (an RST, as when a load
//!   balancer dies);
//! - a frozen client: the proxy stops reading the informer's watch connection
//!   (the server's writes back up, the client sees nothing) while more than the
//!   watch cache's window (`watch_cache_capacity` 64) of writes go by; then the
//!   connection is cut. The informer re-watches from its stale resourceVersion,
//!   really receives 410 (`too old resource version`, the Cacher's
//!   `getAllEventsSinceLocked`) and relists: the proxy sees the watch, the 410 on
//!   its response, and then the list;
//! - a server restart: a new mini-apiserver over the same store on the same port;
//!   while no server is up, the store moves on (20 creates straight through the
//!   etcd3 store) and is compacted, so the informer's old version is gone from
//!   the new server's watch cache and from etcd alike.
//!
//! At the end, within a bounded wait, the informer's cache equals the server's list
//! (names and resourceVersions) and the server's list equals the driver's model:
//! 0 lost creates, updates or deletes, 0 phantoms. Run on the embedded store and on
//! a real etcd the test starts itself. `RUST_LOG=stage3_reflector=info` shows the
//! 410s and relists.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::json;
use stage3_reflector::{BackoffSettings, KubeListerWatcher, ReflectorOptions};
use stage4_shared_informer::{
    KubeSource, ResourceEventHandlerFuncs, SharedInformerFactory,
    parse_label_selector,
};
use stage5_apiserver::{Backend, RunningServer, ServerConfig};
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::Kv;
use stage5_storage::{Object, ResourceInfo, Storage, object_key};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{RwLock, watch};
use tokio::time::{Instant, timeout};
use tokio_util::sync::CancellationToken;

use super::server_informer::state_of;

/// The whole test's deadline: it fails, not hangs, past this.
const TEST_DEADLINE: Duration = Duration::from_secs(50);
/// One wait for one thing (a sync, a request through the proxy, convergence).
const WAIT: Duration = Duration::from_secs(20);
const NAMESPACE: &str = "default";
/// The watch cache's window: small, so that a frozen client falls out of it.
const WATCH_CACHE_CAPACITY: usize = 64;
const LANES: usize = 8;
const OPS_PER_LANE: usize = 150;
const NAMES_PER_LANE: usize = 20;
/// Pods created straight in the store while no server is up.
const OFFLINE_CREATES: usize = 20;
/// The seed when `FAULT_SEED` is not set.
const DEFAULT_SEED: u64 = 0x5EED_0015;

// ----------------------------------------------------------------------------
// The proxy: relays, reports request lines and 410s, freezes and cuts.
// ----------------------------------------------------------------------------

/// What the proxy saw, in order.
#[derive(Debug, Clone)]
enum Seen {
    /// A request line's target on a connection.
    Request { connection: u64, target: String },
    /// A 410 in the server's bytes on a connection (a `Status` with `code` 410 in
    /// a watch's ERROR event, or a `410 Gone` status line).
    Gone { connection: u64 },
}

impl Seen {
    fn param<'a>(target: &'a str, name: &str) -> Option<&'a str> {
        let (_, query) = target.split_once('?')?;
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key == name).then_some(value)
        })
    }

    fn is_pods_watch(target: &str) -> bool {
        target.starts_with("/api/v1/pods")
            && Seen::param(target, "watch") == Some("true")
    }

    fn is_pods_list(target: &str) -> bool {
        target.starts_with("/api/v1/pods")
            && Seen::param(target, "watch") != Some("true")
    }
}

/// How a proxied connection is relayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Relay,
    /// Nothing is read from either side: the client "stops reading".
    Frozen,
    /// Reset (RST) towards the client and closed.
    Cut,
}

struct Connection {
    id: u64,
    last_target: Mutex<String>,
    mode: watch::Sender<Mode>,
    closed: AtomicBool,
}

/// A loopback TCP proxy in front of the server, for the informer only.
struct Proxy {
    address: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    seen_count: watch::Receiver<usize>,
    connections: Arc<Mutex<Vec<Arc<Connection>>>>,
    stop: CancellationToken,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let (count_tx, seen_count) = watch::channel(0usize);
        let count_tx = Arc::new(count_tx);
        let connections: Arc<Mutex<Vec<Arc<Connection>>>> = Arc::default();
        let stop = CancellationToken::new();
        let next_id = AtomicU64::new(1);
        let registry = Arc::clone(&connections);
        let stopped = stop.clone();
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let client = tokio::select! {
                    () = stopped.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((client, _)) => client,
                        Err(_) => return,
                    },
                };
                // While the server restarts, the client sees the refusal as an
                // immediate close.
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let connection = Arc::new(Connection {
                    id: next_id.fetch_add(1, Ordering::Relaxed),
                    last_target: Mutex::new(String::new()),
                    mode: watch::Sender::new(Mode::Relay),
                    closed: AtomicBool::new(false),
                });
                registry.lock().push(Arc::clone(&connection));
                let report = Reporter {
                    log: Arc::clone(&log),
                    count: Arc::clone(&count_tx),
                };
                tokio::spawn(relay(
                    client,
                    server,
                    connection,
                    report,
                    stopped.clone(),
                ));
            }
        });
        Proxy {
            address,
            seen,
            seen_count,
            connections,
            stop,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    fn seen_len(&self) -> usize {
        self.seen.lock().len()
    }

    /// Waits (bounded) until `found` finds something in what was seen from
    /// `from` on.
    async fn wait_for<T>(
        &self,
        what: &str,
        from: usize,
        found: impl Fn(&[Seen]) -> Option<T>,
    ) -> T {
        let mut count = self.seen_count.clone();
        let result = timeout(WAIT, async {
            loop {
                if let Some(value) = found(&self.seen.lock()[from..]) {
                    return value;
                }
                count.changed().await.expect("the proxy is running");
            }
        })
        .await;
        result.unwrap_or_else(|_| {
            panic!("{what}: not seen through the proxy within {WAIT:?}")
        })
    }

    fn open(&self) -> Vec<Arc<Connection>> {
        self.connections
            .lock()
            .iter()
            .filter(|c| !c.closed.load(Ordering::Acquire))
            .cloned()
            .collect()
    }

    /// Resets every open connection whose latest request is a watch, or every
    /// open connection; returns how many.
    fn cut(&self, watches_only: bool) -> usize {
        let mut cut = 0;
        for connection in self.open() {
            if !watches_only || Seen::is_pods_watch(&connection.last_target.lock()) {
                connection.mode.send_replace(Mode::Cut);
                cut += 1;
            }
        }
        cut
    }

    /// Freezes every open connection whose latest request is a watch, if the
    /// latest watch request's connection is among them; returns them.
    fn freeze_watches(&self) -> Option<Vec<Arc<Connection>>> {
        let latest = self.seen.lock().iter().rev().find_map(|seen| match seen {
            Seen::Request { connection, target } if Seen::is_pods_watch(target) => {
                Some(*connection)
            }
            _ => None,
        })?;
        let watches: Vec<_> = self
            .open()
            .into_iter()
            .filter(|c| Seen::is_pods_watch(&c.last_target.lock()))
            .collect();
        if !watches.iter().any(|c| c.id == latest) {
            return None;
        }
        for connection in &watches {
            connection.mode.send_replace(Mode::Frozen);
        }
        Some(watches)
    }

    /// What the proxy saw, for a failure message.
    fn log(&self) -> String {
        format!("{:#?}", self.seen.lock())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[derive(Clone)]
struct Reporter {
    log: Arc<Mutex<Vec<Seen>>>,
    count: Arc<watch::Sender<usize>>,
}

impl Reporter {
    fn report(&self, seen: Seen) {
        let len = {
            let mut log = self.log.lock();
            log.push(seen);
            log.len()
        };
        self.count.send_replace(len);
    }
}

/// Waits while the connection is frozen; returns false once it is cut.
async fn relaying(mode: &mut watch::Receiver<Mode>) -> bool {
    match mode.wait_for(|m| *m != Mode::Frozen).await {
        Ok(m) => *m == Mode::Relay,
        Err(_) => false,
    }
}

/// Relays one connection until either side closes it, the proxy stops, or the
/// test cuts it. A cut closes the client's side with `SO_LINGER` 0, so the client
/// sees an RST ("connection reset by peer").
async fn relay(
    mut client: TcpStream,
    mut server: TcpStream,
    connection: Arc<Connection>,
    report: Reporter,
    stop: CancellationToken,
) {
    let cut = {
        let (mut client_read, mut client_write) = client.split();
        let (mut server_read, mut server_write) = server.split();
        let mut up_mode = connection.mode.subscribe();
        let mut down_mode = connection.mode.subscribe();
        let mut cut_mode = connection.mode.subscribe();
        let upstream = async {
            let mut buffer = vec![0u8; 16 * 1024];
            let mut partial_line = Vec::new();
            loop {
                if !relaying(&mut up_mode).await {
                    return;
                }
                let read = match client_read.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(read) => read,
                };
                for target in request_targets(&mut partial_line, &buffer[..read]) {
                    connection.last_target.lock().clone_from(&target);
                    report.report(Seen::Request {
                        connection: connection.id,
                        target,
                    });
                }
                if server_write.write_all(&buffer[..read]).await.is_err() {
                    return;
                }
            }
        };
        let downstream = async {
            let mut buffer = vec![0u8; 16 * 1024];
            // The end of the previous read, so a match split across reads is found.
            let mut carry: Vec<u8> = Vec::new();
            loop {
                if !relaying(&mut down_mode).await {
                    return;
                }
                let read = match server_read.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(read) => read,
                };
                carry.extend_from_slice(&buffer[..read]);
                if is_gone(&carry) {
                    report.report(Seen::Gone {
                        connection: connection.id,
                    });
                    carry.clear();
                }
                let keep = carry.len().saturating_sub(24);
                carry.drain(..keep);
                // A read that was pending when the connection froze: hold its
                // bytes, so the client gets nothing the server sent after the
                // freeze.
                if !relaying(&mut down_mode).await {
                    return;
                }
                if client_write.write_all(&buffer[..read]).await.is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            _ = cut_mode.wait_for(|m| *m == Mode::Cut) => true,
            () = stop.cancelled() => false,
            () = upstream => false,
            () = downstream => false,
        }
    };
    connection.closed.store(true, Ordering::Release);
    if cut {
        // A zero linger never blocks the thread, unlike the non-zero ones tokio
        // warns about.
        #[allow(deprecated)]
        let _ = client.set_linger(Some(Duration::ZERO));
    }
}

/// Whether these server bytes carry a 410: a `Status` with `"code":410` or a
/// `410 Gone` status line.
fn is_gone(bytes: &[u8]) -> bool {
    let contains = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    contains(b"\"code\":410") || contains(b"HTTP/1.1 410 ")
}

/// The targets of the HTTP/1.1 request lines completed by `bytes`, keeping an
/// unfinished line in `partial_line` for the next read.
pub(super) fn request_targets(
    partial_line: &mut Vec<u8>,
    bytes: &[u8],
) -> Vec<String> {
    let mut targets = Vec::new();
    for &byte in bytes {
        if byte != b'\n' {
            // Header lines can be long; only request lines matter.
            if partial_line.len() < 4096 {
                partial_line.push(byte);
            }
            continue;
        }
        let line = String::from_utf8_lossy(partial_line).trim_end().to_string();
        partial_line.clear();
        let mut words = line.split(' ');
        if let (Some(method), Some(target), Some("HTTP/1.1"), None) =
            (words.next(), words.next(), words.next(), words.next())
            && ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method)
        {
            targets.push(target.to_string());
        }
    }
    targets
}

// ----------------------------------------------------------------------------
// The driver: seeded random creates, updates and deletes against a model.
// ----------------------------------------------------------------------------

#[derive(Debug, Default, Clone, Copy)]
struct OpCounts {
    creates: usize,
    updates: usize,
    deletes: usize,
    /// Requests sent again after a transport error (a restart racing a request).
    retries: usize,
}

impl OpCounts {
    fn total(&self) -> usize {
        self.creates + self.updates + self.deletes
    }

    fn add(&mut self, other: OpCounts) {
        self.creates += other.creates;
        self.updates += other.updates;
        self.deletes += other.deletes;
        self.retries += other.retries;
    }
}

/// The driver's client to the server (not through the proxy), replaced after a
/// restart so no request goes out on a connection to the old server.
type SharedApi = Arc<Mutex<Api<Pod>>>;

fn pod(name: &str, lane: usize) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"lane": lane.to_string()}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }))
    .expect("pod")
}

fn pod_api(url: &str) -> Api<Pod> {
    let config = kube::Config::new(url.parse().expect("url"));
    let client = KubeListerWatcher::<Pod>::client(config).expect("client");
    Api::namespaced(client, NAMESPACE)
}

/// Runs `request` until it gets an answer, sending it again after a transport
/// error (at most 10 times). A resent create may find its object (409) and a
/// resent delete may find it gone (404): both mean the first one was applied.
async fn with_retries<T>(
    counts: &mut OpCounts,
    what: &str,
    request: impl Fn() -> BoxFuture<'static, Result<T, kube::Error>>,
) -> Option<T> {
    let mut attempt = 0;
    loop {
        match request().await {
            Ok(value) => return Some(value),
            Err(kube::Error::Api(status))
                if attempt > 0 && (status.code == 409 || status.code == 404) =>
            {
                return None;
            }
            Err(kube::Error::Api(status)) => panic!("{what}: {status:?}"),
            Err(error) if attempt < 10 => {
                eprintln!("{what}: {error}; sending it again");
                counts.retries += 1;
                attempt += 1;
                // A pause before a resend, not synchronisation.
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => panic!("{what}: {error}"),
        }
    }
}

/// One lane: `OPS_PER_LANE` operations on its own names, chosen by its own RNG.
/// Returns its counts and the names alive at its end (its model).
async fn lane(
    lane: usize,
    seed: u64,
    api: SharedApi,
    gate: Arc<RwLock<()>>,
    done: Arc<AtomicUsize>,
    progress: Arc<watch::Sender<usize>>,
) -> (OpCounts, BTreeSet<String>) {
    let mut rng =
        StdRng::seed_from_u64(seed ^ (lane as u64).wrapping_mul(0x9E37_79B9));
    let names: Vec<String> = (0..NAMES_PER_LANE)
        .map(|i| format!("fc-{lane}-{i:02}"))
        .collect();
    let mut alive = BTreeSet::new();
    let mut counts = OpCounts::default();
    for op in 0..OPS_PER_LANE {
        let name = names[rng.random_range(0..names.len())].clone();
        let roll: u32 = rng.random_range(0..100);
        // A restart holds the gate while no server is up.
        let _open = gate.read().await;
        let api = api.lock().clone();
        if !alive.contains(&name) {
            let body = pod(&name, lane);
            with_retries(&mut counts, "create", || {
                let api = api.clone();
                let body = body.clone();
                Box::pin(
                    async move { api.create(&PostParams::default(), &body).await },
                )
            })
            .await;
            alive.insert(name);
            counts.creates += 1;
        } else if roll < 65 {
            let patch = Patch::Merge(json!({
                "metadata": {"annotations": {"op": format!("{lane}-{op}")}}
            }));
            with_retries(&mut counts, "update", || {
                let api = api.clone();
                let name = name.clone();
                let patch = patch.clone();
                Box::pin(async move {
                    api.patch(&name, &PatchParams::default(), &patch).await
                })
            })
            .await;
            counts.updates += 1;
        } else {
            with_retries(&mut counts, "delete", || {
                let api = api.clone();
                let name = name.clone();
                Box::pin(
                    async move { api.delete(&name, &DeleteParams::default()).await },
                )
            })
            .await;
            alive.remove(&name);
            counts.deletes += 1;
        }
        let total = done.fetch_add(1, Ordering::AcqRel) + 1;
        progress.send_replace(total);
    }
    (counts, alive)
}

// ----------------------------------------------------------------------------
// The scenario.
// ----------------------------------------------------------------------------

/// The server's list: its state and its resourceVersion (a consistent read: the
/// store's current revision).
async fn server_list(api: &Api<Pod>) -> (BTreeMap<String, String>, u64) {
    let list = api.list(&ListParams::default()).await.expect("list");
    let rv = list
        .metadata
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .expect("a list has a resourceVersion");
    (state_of(&list.items), rv)
}

async fn start_server(kv: &Arc<dyn Kv>, bind: SocketAddr) -> RunningServer {
    let config = ServerConfig::for_tests()
        .bind(bind)
        .backend(Backend::Kv(Arc::clone(kv)))
        .watch_cache_capacity(WATCH_CACHE_CAPACITY);
    super::server_informer::start_retrying(config).await
}

/// Waits (bounded) until the driver has made `ops` operations.
async fn ops_reach(progress: &watch::Receiver<usize>, ops: usize) {
    let mut progress = progress.clone();
    timeout(WAIT, progress.wait_for(|done| *done >= ops))
        .await
        .unwrap_or_else(|_| panic!("the driver reaches {ops} operations in time"))
        .expect("the driver is running");
}

/// What the informer's handler was told.
#[derive(Debug, Default)]
struct Delivered {
    adds: AtomicUsize,
    updates: AtomicUsize,
    deletes: AtomicUsize,
    /// Bumped after each of them.
    changes: watch::Sender<usize>,
}

impl Delivered {
    fn count(&self, counter: &AtomicUsize) {
        counter.fetch_add(1, Ordering::Relaxed);
        self.changes.send_modify(|n| *n += 1);
    }
}

/// The whole scenario over `kv` (`backend` names it in the report).
async fn faults_converge(backend: &str, kv: Arc<dyn Kv>) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let seed = std::env::var("FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    println!("[{backend}] seed {seed} (set FAULT_SEED to replay another)");
    let started = Instant::now();

    let mut server = start_server(&kv, "127.0.0.1:0".parse().expect("addr")).await;
    let addr = server.local_addr();
    let api: SharedApi = Arc::new(Mutex::new(pod_api(&server.url())));

    // The informer, through the proxy, with the reflector's backoff scaled down
    // (100 ms doubling to 2 s instead of 800 ms to 30 s) so that four faults in a
    // row stay within the test's deadline.
    let proxy = Proxy::start(addr).await;
    let proxied = kube::Config::new(proxy.url().parse().expect("url"));
    let client = KubeListerWatcher::<Pod>::client(proxied).expect("client");
    let factory =
        SharedInformerFactory::new(KubeSource::new(client), Duration::ZERO);
    let pods = factory.pods();
    let informer = pods.informer();
    informer
        .set_reflector_options(ReflectorOptions::default().backoff(
            BackoffSettings {
                initial: Duration::from_millis(100),
                cap: Duration::from_secs(2),
                ..BackoffSettings::REFLECTOR
            },
        ))
        .expect("not started");
    let delivered = Arc::new(Delivered::default());
    let (on_add, on_update, on_delete) = (
        Arc::clone(&delivered),
        Arc::clone(&delivered),
        Arc::clone(&delivered),
    );
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |_, _| {
                    on_add.count(&on_add.adds);
                })
                .update_func(move |_, _| {
                    on_update.count(&on_update.updates);
                })
                .delete_func(move |_| {
                    on_delete.count(&on_delete.deletes);
                }),
        )
        .expect("the informer is not stopped");
    factory.start();
    let stop = CancellationToken::new();
    let synced = timeout(WAIT, factory.wait_for_cache_sync(&stop))
        .await
        .expect("sync in time");
    assert!(synced.values().all(|s| *s), "{synced:?}");

    // The driver.
    let gate = Arc::new(RwLock::new(()));
    let done = Arc::new(AtomicUsize::new(0));
    let progress = Arc::new(watch::Sender::new(0usize));
    let progress_rx = progress.subscribe();
    let lanes: Vec<_> = (0..LANES)
        .map(|i| {
            tokio::spawn(lane(
                i,
                seed,
                Arc::clone(&api),
                Arc::clone(&gate),
                Arc::clone(&done),
                Arc::clone(&progress),
            ))
        })
        .collect();
    let total_ops = LANES * OPS_PER_LANE;
    let mut faults: Vec<String> = Vec::new();
    let mark = |faults: &mut Vec<String>, what: String| {
        let line = format!(
            "{:>6.2}s at op {:>4}: {what}",
            started.elapsed().as_secs_f64(),
            done.load(Ordering::Acquire)
        );
        println!("[{backend}] {line}");
        faults.push(line);
    };

    // 1. Cut the informer's watch connection.
    ops_reach(&progress_rx, 150).await;
    let cut = proxy.cut(true);
    mark(&mut faults, format!("cut {cut} watch connection(s)"));

    // 2. Forced compaction at the current revision, while writes go on.
    ops_reach(&progress_rx, 300).await;
    let api_now = api.lock().clone();
    let (_, revision) = server_list(&api_now).await;
    kv.compact(i64::try_from(revision).expect("revision fits"))
        .await
        .expect("compact");
    mark(&mut faults, format!("compacted at revision {revision}"));

    // 3. The frozen client: stop reading the informer's watch while more than the
    // watch cache's window of writes goes by, then cut it.
    ops_reach(&progress_rx, 400).await;
    // The informer may be between watches (a backoff after the cut): wait,
    // bounded, for its open watch.
    let frozen = {
        let mut requests = proxy.seen_count.clone();
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(frozen) = proxy.freeze_watches() {
                break frozen;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            timeout(left, requests.changed())
                .await
                .expect("the informer has an open watch to freeze")
                .expect("the proxy is running");
        }
    };
    // Read after the freeze: the client cannot have seen more than this.
    let (_, frozen_at) = server_list(&api_now).await;
    mark(
        &mut faults,
        format!(
            "froze watch connection(s) {:?} at revision {frozen_at}",
            frozen.iter().map(|c| c.id).collect::<Vec<_>>()
        ),
    );
    ops_reach(&progress_rx, 400 + 4 * WATCH_CACHE_CAPACITY).await;
    let (_, thawed_at) = server_list(&api_now).await;
    assert!(
        thawed_at > frozen_at + WATCH_CACHE_CAPACITY as u64,
        "the window moved past the frozen client ({frozen_at} → {thawed_at})"
    );
    let after_cut = proxy.seen_len();
    for connection in &frozen {
        connection.mode.send_replace(Mode::Cut);
    }
    mark(
        &mut faults,
        format!("cut the frozen connection at revision {thawed_at}"),
    );
    // Its re-watch from the stale version gets 410, then it lists.
    let (rewatch_conn, rewatch_rv) = proxy
        .wait_for("the frozen client's re-watch", after_cut, |seen| {
            seen.iter().find_map(|s| match s {
                Seen::Request { connection, target }
                    if Seen::is_pods_watch(target) =>
                {
                    let rv = Seen::param(target, "resourceVersion")?.parse().ok()?;
                    Some((*connection, rv))
                }
                _ => None,
            })
        })
        .await;
    let rewatch_rv: u64 = rewatch_rv;
    assert!(
        rewatch_rv <= frozen_at,
        "the re-watch is from the stale version ({rewatch_rv} > {frozen_at}); \
         the proxy saw {}",
        proxy.log()
    );
    let gone_at = proxy
        .wait_for("the 410 on the re-watch", after_cut, |seen| {
            seen.iter().position(|s| {
                matches!(s, Seen::Gone { connection } if *connection == rewatch_conn)
            })
        })
        .await;
    let relist_target = proxy
        .wait_for("the relist after the 410", after_cut + gone_at, |seen| {
            seen.iter().find_map(|s| match s {
                Seen::Request { target, .. } if Seen::is_pods_list(target) => {
                    Some(target.clone())
                }
                _ => None,
            })
        })
        .await;
    mark(
        &mut faults,
        format!(
            "frozen client re-watched from {rewatch_rv}, got 410, relisted ({relist_target})"
        ),
    );

    // 4. Cut every connection of the informer, lists included.
    ops_reach(&progress_rx, 750).await;
    let cut = proxy.cut(false);
    mark(&mut faults, format!("cut all {cut} informer connection(s)"));

    // 5. A server restart on the same port. While no server is up the store moves
    // on (creates straight through the etcd3 store) and is compacted.
    ops_reach(&progress_rx, 900).await;
    let blocked = timeout(WAIT, gate.write())
        .await
        .expect("in-flight operations finish");
    timeout(WAIT, server.shutdown())
        .await
        .expect("shutdown in time");
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let mut offline = BTreeSet::new();
    for i in 0..OFFLINE_CREATES {
        let obj =
            Object::new(&ResourceInfo::PODS, Some(NAMESPACE), &format!("off-{i}"));
        store
            .create(
                object_key(&ResourceInfo::PODS, Some(NAMESPACE), obj.name()),
                obj,
            )
            .await
            .expect("create while no server is up");
        offline.insert(format!("off-{i}"));
    }
    let revision = store.current_resource_version().await.expect("revision");
    kv.compact(i64::try_from(revision).expect("revision fits"))
        .await
        .expect("compact");
    server = start_server(&kv, addr).await;
    *api.lock() = pod_api(&server.url());
    drop(blocked);
    mark(
        &mut faults,
        format!(
            "restarted the server on {addr}; {OFFLINE_CREATES} creates and a compaction at {revision} while it was down"
        ),
    );

    // The driver finishes.
    let mut counts = OpCounts::default();
    let mut model: BTreeSet<String> = offline;
    for lane in lanes {
        let (lane_counts, alive) = timeout(WAIT, lane)
            .await
            .expect("the driver finishes in time")
            .expect("a lane panicked");
        counts.add(lane_counts);
        model.extend(alive);
    }
    assert_eq!(counts.total(), total_ops);
    let driven = started.elapsed();

    // Convergence, bounded.
    let api_now = api.lock().clone();
    let (expected, final_rv) = server_list(&api_now).await;
    let on_server: BTreeSet<String> = expected
        .keys()
        .map(|k| k.trim_start_matches("default/").to_string())
        .collect();
    assert_eq!(
        on_server, model,
        "the server holds exactly the driver's model"
    );
    let lister = pods.lister();
    let everything = parse_label_selector("").expect("selector");
    let informer_state =
        || state_of(lister.list(&everything).iter().map(|p| p.as_ref()));
    let convergence_started = Instant::now();
    let mut changes = delivered.changes.subscribe();
    let mut informed = informer_state();
    while informed != expected {
        // Every handler call comes after the informer's store changed.
        let left = WAIT.saturating_sub(convergence_started.elapsed());
        if timeout(left, changes.changed()).await.is_err() {
            break;
        }
        informed = informer_state();
    }
    let converged_in = convergence_started.elapsed();

    // The report.
    let missing = expected
        .keys()
        .filter(|k| !informed.contains_key(*k))
        .count();
    let stale = expected
        .iter()
        .filter(|(k, v)| informed.get(*k).is_some_and(|mine| mine != *v))
        .count();
    let driven_names: BTreeSet<String> = (0..LANES)
        .flat_map(|l| {
            (0..NAMES_PER_LANE).map(move |i| format!("default/fc-{l}-{i:02}"))
        })
        .chain((0..OFFLINE_CREATES).map(|i| format!("default/off-{i}")))
        .collect();
    let lost_deletes = informed
        .keys()
        .filter(|k| !expected.contains_key(*k) && driven_names.contains(*k))
        .count();
    let phantoms = informed
        .keys()
        .filter(|k| !driven_names.contains(*k))
        .count();
    let metrics = &server.state().metrics;
    println!(
        "[{backend}] ops: {} creates, {} updates, {} deletes ({} total, {} resent), {OFFLINE_CREATES} offline creates",
        counts.creates,
        counts.updates,
        counts.deletes,
        counts.total(),
        counts.retries
    );
    let (gones, lists) = {
        let seen = proxy.seen.lock();
        let gones = seen
            .iter()
            .filter(|s| matches!(s, Seen::Gone { .. }))
            .count();
        let lists = seen
            .iter()
            .filter(|s| {
                matches!(s, Seen::Request { target, .. } if Seen::is_pods_list(target))
            })
            .count();
        (gones, lists)
    };
    println!(
        "[{backend}] informer handler saw {} adds, {} updates, {} deletes; 410s seen by the proxy: {gones}; lists through the proxy: {lists}",
        delivered.adds.load(Ordering::Relaxed),
        delivered.updates.load(Ordering::Relaxed),
        delivered.deletes.load(Ordering::Relaxed),
    );
    println!(
        "[{backend}] final: server {} pods at revision {final_rv}, informer {}; missing {missing}, stale (lost updates) {stale}, lost deletes {lost_deletes}, phantoms {phantoms}; restarted server's watch errors {}",
        expected.len(),
        informed.len(),
        metrics.watch_errors(),
    );
    println!(
        "[{backend}] driven in {:.2}s, converged {:.2}s after the driver, {:.2}s in all",
        driven.as_secs_f64(),
        converged_in.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        (missing, stale, lost_deletes, phantoms),
        (0, 0, 0, 0),
        "[{backend}] the informer converges within {WAIT:?} (seed {seed}); faults: {faults:#?}"
    );
    assert_eq!(informed, expected);

    timeout(WAIT, factory.shutdown())
        .await
        .expect("informers stop in time");
    drop(proxy);
    timeout(WAIT, server.shutdown())
        .await
        .expect("shutdown in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_converges_through_faults_on_the_embedded_store() {
    let kv: Arc<dyn Kv> = Arc::new(stage5_storage::kv::EmbeddedKv::new());
    timeout(TEST_DEADLINE, faults_converge("embedded", kv))
        .await
        .expect("the test finishes within its deadline");
}

#[cfg(feature = "etcd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_converges_through_faults_on_real_etcd() {
    use stage5_storage::testing::EtcdServer;
    let Some(etcd) = EtcdServer::start_or_skip_async(
        "informer_converges_through_faults_on_real_etcd",
    )
    .await
    else {
        return;
    };
    let kv = stage5_storage::kv::EtcdKv::connect([etcd.client_url()])
        .await
        .expect("connect to etcd");
    let kv: Arc<dyn Kv> = Arc::new(kv);
    timeout(TEST_DEADLINE, faults_converge("etcd", kv))
        .await
        .expect("the test finishes within its deadline");
    drop(etcd);
}
