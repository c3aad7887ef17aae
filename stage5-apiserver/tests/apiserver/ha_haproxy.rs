//! Several API servers on one etcd cluster, as production runs kube-apiserver:
//! three `mini-apiserver` processes on a three-member etcd, behind a real load
//! balancer (HAProxy, started by the test with health checks on `/readyz`).
//! kube-client, stage 4's shared informer and kubectl connect through it.
//!
//! Mid-run the test kills (SIGKILL) the API server that carries the informer's
//! watch, then an etcd member, and starts both again, while a writer keeps
//! creating pods through the balancer (retrying a write that failed, as a
//! client retries a dropped connection). Then:
//! - nothing is lost: every pod the writer created is in etcd, once;
//! - the informer re-watched through the balancer from its last
//!   resourceVersion and never listed again: every pod reached its handler as
//!   one add, and no update (a relist replays every pod as an update), and its
//!   cache equals etcd's state;
//! - each server's watch cache converges: a list at the final resourceVersion
//!   (`NotOlderThan`, served from the cache) on each server equals etcd's;
//! - kubectl through the balancer lists every pod.
//!
//! This works because every server's resource versions are etcd's revisions:
//! a version one server gave is valid on every other. Where etcd, HAProxy or
//! kubectl is missing a local run skips loudly; with `CI=true` it fails. Every
//! wait is bounded, and the test stops every process it started, by its PID.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{ListParams, PostParams, VersionMatch};
use stage3_reflector::KubeListerWatcher;
use stage4_shared_informer::{
    DeletedObject, KubeSource, ResourceEventHandlerFuncs, SharedInformerFactory,
    parse_label_selector,
};
use stage5_apiserver::testing::{Kubectl, kubectl_or_skip};
use stage5_storage::testing::{EtcdCluster, etcd_available, free_port, http_get};
use tokio::sync::mpsc;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::server_informer::state_of;
use super::server_informer_watch_reset::pod;

/// The whole scenario must end within this.
const SCENARIO: Duration = Duration::from_secs(150);
/// How long one step (a process's start, a write, an event) may take.
const WAIT: Duration = Duration::from_secs(20);
/// Pods the writer creates in each phase.
const PER_PHASE: usize = 15;

/// One `mini-apiserver` process on a fixed loopback port, so it can be killed
/// and started again where the balancer expects it.
struct ApiServer {
    addr: SocketAddr,
    etcd: String,
    child: Option<Child>,
}

impl ApiServer {
    fn new(etcd: &[String]) -> std::io::Result<ApiServer> {
        let mut server = ApiServer {
            addr: free_port()?,
            etcd: etcd.join(","),
            child: None,
        };
        server.start()?;
        Ok(server)
    }

    /// Starts the process and waits (bounded) until it answers `/readyz`.
    fn start(&mut self) -> std::io::Result<()> {
        let child = Command::new(env!("CARGO_BIN_EXE_mini-apiserver"))
            .arg("--bind")
            .arg(self.addr.to_string())
            .arg("--etcd")
            .arg(&self.etcd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        self.child = Some(child);
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(std::io::Error::other(format!(
                    "mini-apiserver exited at start: {status}"
                )));
            }
            if http_get(self.addr, "/readyz")
                .is_ok_and(|r| r.starts_with("HTTP/1.0 200"))
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(std::io::Error::other(
                    "mini-apiserver not ready in time",
                ));
            }
            // Polling an outside process until it is ready.
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL, by the PID the test started, and reaped.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Live HTTP watches on pods (`apiserver_registered_watchers`).
    fn pod_watches(&self) -> u64 {
        let Ok(metrics) = http_get(self.addr, "/metrics") else {
            return 0;
        };
        metrics
            .lines()
            .filter(|line| {
                line.starts_with("apiserver_registered_watchers{")
                    && line.contains("resource=\"pods\"")
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// HAProxy in TCP mode before the servers, as a control plane's load balancer:
/// round robin, a health check on `/readyz` every 200 ms that takes a server out
/// after one failure, and a failed connect retried on another server.
struct HaProxy {
    addr: SocketAddr,
    child: Child,
    _dir: tempfile::TempDir,
}

impl HaProxy {
    fn start(bin: &Path, servers: &[SocketAddr]) -> std::io::Result<HaProxy> {
        let addr = free_port()?;
        let dir = tempfile::tempdir()?;
        let mut config = format!(
            "global\n    maxconn 4096\n\
             defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 1h\n    \
             timeout server 1h\n    retries 3\n    option redispatch\n\
             frontend api\n    bind {addr}\n    default_backend apiservers\n\
             backend apiservers\n    balance roundrobin\n    option httpchk GET /readyz\n    \
             default-server inter 200ms fall 1 rise 1\n"
        );
        for (i, server) in servers.iter().enumerate() {
            config.push_str(&format!("    server api{i} {server} check\n"));
        }
        let file = dir.path().join("haproxy.cfg");
        std::fs::write(&file, config)?;
        let child = Command::new(bin)
            .arg("-db")
            .arg("-f")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let mut proxy = HaProxy {
            addr,
            child,
            _dir: dir,
        };
        let deadline = Instant::now() + WAIT;
        while !http_get(addr, "/readyz").is_ok_and(|r| r.starts_with("HTTP/1.0 200"))
        {
            if let Some(status) = proxy.child.try_wait()? {
                return Err(std::io::Error::other(format!(
                    "haproxy exited: {status}"
                )));
            }
            if Instant::now() > deadline {
                proxy.stop();
                return Err(std::io::Error::other("haproxy not serving in time"));
            }
            // Polling an outside process until it is ready.
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(proxy)
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HaProxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// HAProxy on `PATH`, or Debian's `/usr/sbin/haproxy` (`sbin` is not on every
/// user's `PATH`); with `CI=true` its absence fails the test.
fn haproxy_or_skip(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("haproxy"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin/haproxy")])
        .find(|p| p.is_file());
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !ci,
            "{test}: haproxy is not installed and CI=true: install haproxy (see .ci/run)"
        );
        eprintln!(
            "\n**********\n SKIPPED {test}: haproxy is not installed (apt-get install haproxy)\n**********\n"
        );
    }
    found
}

/// Creates `pod-{from}` … `pod-{to - 1}` through the balancer, each retried until
/// it is stored (a connection that died with its server, a 5xx while etcd
/// elects a leader); an attempt whose outcome was lost may have stored it, so
/// AlreadyExists counts as stored. Answers the failed attempts.
async fn write(api: &Api<Pod>, from: usize, to: usize) -> usize {
    let mut failures = 0;
    for i in from..to {
        let name = format!("pod-{i}");
        let deadline = Instant::now() + WAIT;
        loop {
            match timeout(
                Duration::from_secs(5),
                api.create(&PostParams::default(), &pod(&name)),
            )
            .await
            {
                Ok(Ok(_)) => break,
                Ok(Err(kube::Error::Api(status))) if status.code == 409 => break,
                _ => failures += 1,
            }
            assert!(Instant::now() < deadline, "{name} is stored in time");
            // A client's retry backoff, not synchronisation.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    failures
}

/// What the informer's handler saw.
#[derive(Debug)]
enum Seen {
    Add(String),
    Update(String),
    Delete(String),
}

/// Waits until the handler has reported the adds of `pod-0` … `pod-{to - 1}`.
async fn adds_up_to(
    seen: &mut mpsc::UnboundedReceiver<Seen>,
    log: &mut Vec<Seen>,
    to: usize,
) {
    let added =
        |log: &[Seen]| log.iter().filter(|s| matches!(s, Seen::Add(_))).count();
    while added(log) < to {
        let next = timeout(WAIT, seen.recv())
            .await
            .unwrap_or_else(|_| {
                panic!("the informer reports {to} pods in time: {log:?}")
            })
            .expect("the handler is registered");
        log.push(next);
    }
}

/// The API server whose pods watch is the informer's: the one watch on pods
/// that any server counts (polled on the servers' `/metrics`, bounded).
fn informers_server(servers: &[ApiServer]) -> usize {
    let deadline = Instant::now() + WAIT;
    loop {
        let watches: Vec<u64> = servers.iter().map(ApiServer::pod_watches).collect();
        if watches.iter().sum::<u64>() == 1 {
            return watches.iter().position(|w| *w == 1).expect("one server");
        }
        assert!(
            Instant::now() < deadline,
            "one pods watch in time: {watches:?}"
        );
        // Polling other processes' metrics.
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn scenario(
    cluster: &mut EtcdCluster,
    kubectl: Kubectl,
    servers: Vec<ApiServer>,
    proxy: &HaProxy,
) {
    let mut servers = servers;
    let config = kube::Config::new(proxy.url().parse().expect("url"));
    let client = KubeListerWatcher::<Pod>::client(config).expect("client");
    let api = Api::<Pod>::namespaced(client.clone(), "default");
    let mut failures = write(&api, 0, PER_PHASE).await;

    let factory =
        SharedInformerFactory::new(KubeSource::new(client), Duration::ZERO);
    let pods = factory.pods();
    let informer = pods.informer();
    let (report, mut seen) = mpsc::unbounded_channel();
    let (on_update, on_delete) = (report.clone(), report.clone());
    let name = |pod: &Pod| pod.metadata.name.clone().unwrap_or_default();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |pod: &Arc<Pod>, _| {
                    let _ = report.send(Seen::Add(name(pod)));
                })
                .update_func(move |_, pod: &Arc<Pod>| {
                    let _ = on_update.send(Seen::Update(name(pod)));
                })
                .delete_func(move |deleted: &DeletedObject<Pod>| {
                    let _ = on_delete.send(Seen::Delete(format!("{deleted:?}")));
                }),
        )
        .expect("the informer is not stopped");
    informer
        .set_watch_error_handler(|_, error| {
            eprintln!("the informer's watch: {error}")
        })
        .expect("the informer is not started");
    factory.start();
    let stop = CancellationToken::new();
    let synced = timeout(WAIT, factory.wait_for_cache_sync(&stop))
        .await
        .expect("sync in time");
    assert!(synced.values().all(|s| *s), "{synced:?}");
    let mut log = Vec::new();
    adds_up_to(&mut seen, &mut log, PER_PHASE).await;
    // One more pod, over the watch: a watch that ends within a second without
    // an event is a "very short watch", after which client-go lists again.
    failures += write(&api, PER_PHASE, PER_PHASE + 1).await;
    adds_up_to(&mut seen, &mut log, PER_PHASE + 1).await;

    // The informer's server dies under its watch.
    let victim = tokio::task::block_in_place(|| informers_server(&servers));
    servers[victim].kill();
    failures += write(&api, PER_PHASE + 1, 2 * PER_PHASE).await;
    adds_up_to(&mut seen, &mut log, 2 * PER_PHASE).await;
    let survivor = tokio::task::block_in_place(|| informers_server(&servers));
    assert_ne!(survivor, victim, "the informer re-watched on a live server");

    // An etcd member dies: the leader, the one every write goes through.
    let leader = tokio::task::block_in_place(|| cluster.leader()).expect("a leader");
    cluster.members[leader].kill();
    failures += write(&api, 2 * PER_PHASE, 3 * PER_PHASE).await;
    adds_up_to(&mut seen, &mut log, 3 * PER_PHASE).await;

    // Both come back; the balancer's health check puts the server back in.
    tokio::task::block_in_place(|| {
        cluster.start_member(leader).expect("etcd member restarts");
        cluster.wait_healthy(leader).expect("etcd member healthy");
        servers[victim].start().expect("mini-apiserver restarts");
    });
    failures += write(&api, 3 * PER_PHASE, 4 * PER_PHASE).await;
    adds_up_to(&mut seen, &mut log, 4 * PER_PHASE).await;
    eprintln!("writes retried through the failures: {failures}");

    // Nothing lost: etcd holds every pod once.
    let quorum = api
        .list(&ListParams::default())
        .await
        .expect("a quorum list");
    let version = quorum.metadata.resource_version.clone().expect("a version");
    let want = state_of(&quorum.items);
    let names: Vec<String> = (0..4 * PER_PHASE)
        .map(|i| format!("default/pod-{i}"))
        .collect();
    let mut expected = names.clone();
    expected.sort();
    assert_eq!(want.keys().cloned().collect::<Vec<_>>(), expected);

    // The informer: each pod added once, nothing updated or deleted, so no
    // relist (a relist replays every pod it had as an update); its cache equals
    // etcd's state.
    let replayed: Vec<&str> = log
        .iter()
        .filter_map(|s| match s {
            Seen::Update(name) | Seen::Delete(name) => Some(name.as_str()),
            Seen::Add(_) => None,
        })
        .collect();
    assert_eq!(
        replayed,
        Vec::<&str>::new(),
        "no update or delete, so no relist"
    );
    let mut added: Vec<&str> = log
        .iter()
        .filter_map(|s| match s {
            Seen::Add(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    added.sort_unstable();
    added.dedup();
    assert_eq!(added.len(), 4 * PER_PHASE, "{log:?}");
    // Every add was reported after the pod entered the cache.
    let everything = parse_label_selector("").expect("selector");
    assert_eq!(
        state_of(pods.lister().list(&everything).iter().map(|p| p.as_ref())),
        want
    );

    // Each server's watch cache converges on etcd's state.
    for (i, server) in servers.iter().enumerate() {
        let config = kube::Config::new(server.url().parse().expect("url"));
        let client = KubeListerWatcher::<Pod>::client(config).expect("client");
        let direct = Api::<Pod>::namespaced(client, "default");
        let params = ListParams::default()
            .at(&version)
            .matching(VersionMatch::NotOlderThan);
        let cached = timeout(WAIT, direct.list(&params))
            .await
            .expect("the cache answers in time")
            .unwrap_or_else(|e| panic!("server {i} lists from its cache: {e}"));
        assert_eq!(state_of(&cached.items), want, "server {i}'s watch cache");
    }

    // kubectl through the balancer.
    let listed = kubectl.ok(&["get", "pods", "-o", "name"]).await;
    let mut listed: Vec<String> = listed
        .lines()
        .map(|line| line.replace("pod/", "default/"))
        .collect();
    listed.sort();
    assert_eq!(listed, expected);

    timeout(WAIT, factory.shutdown())
        .await
        .expect("informers stop in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_api_servers_behind_haproxy_survive_a_server_and_an_etcd_member() {
    const TEST: &str =
        "three_api_servers_behind_haproxy_survive_a_server_and_an_etcd_member";
    let Some(kubectl) = kubectl_or_skip(TEST) else {
        return;
    };
    let Some(haproxy) = haproxy_or_skip(TEST) else {
        return;
    };
    if !etcd_available() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!ci, "{TEST}: etcd is not on PATH and CI=true");
        eprintln!(
            "\n**********\n SKIPPED {TEST}: etcd is not on PATH\n**********\n"
        );
        return;
    }
    let (mut cluster, servers, proxy) = tokio::task::spawn_blocking(move || {
        let cluster = EtcdCluster::start().expect("a three-member etcd");
        let urls = cluster.client_urls();
        let servers: Vec<ApiServer> = (0..3)
            .map(|_| ApiServer::new(&urls).expect("mini-apiserver starts"))
            .collect();
        let addrs: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();
        let proxy = HaProxy::start(&haproxy, &addrs).expect("haproxy starts");
        (cluster, servers, proxy)
    })
    .await
    .expect("start");
    let kubectl = Kubectl::for_url(kubectl, proxy.url());
    timeout(SCENARIO, scenario(&mut cluster, kubectl, servers, &proxy))
        .await
        .expect("the scenario ends in time");
    drop(proxy);
    drop(cluster);
}
