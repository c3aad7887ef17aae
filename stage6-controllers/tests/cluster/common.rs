//! What every cluster test needs: a server, clients, hollow kubelets and a
//! scheduler on tasks the test owns, and bounded waits.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    Container, Event, Node, Pod, PodSpec, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use stage5_apiserver::{RunningServer, Server, ServerConfig};
use stage6_controllers::app::controllermanager::ControllerManager;
use stage6_controllers::app::options::ControllerManagerOptions;
use stage6_controllers::kubemark::{HollowKubelet, HollowKubeletConfig};
use stage6_controllers::scheduler::{Scheduler, SchedulerConfig};
use tokio::task::JoinHandle;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

/// The longest any condition is waited for. Each takes a second or two; the
/// bound is short enough that a test whose controller is stubbed (an exercise
/// not yet written) fails within `cargo xtask exercise verify`'s 60 s limit for
/// one test instead of running into it.
pub const WAIT: Duration = Duration::from_secs(25);

/// A server on a free port, on the embedded store.
pub async fn start_server() -> RunningServer {
    timeout(WAIT, Server::start(ServerConfig::for_tests()))
        .await
        .expect("the server starts in time")
        .expect("the server starts")
}

/// A client of `server` with kube's retries off, as the binaries build theirs.
pub fn client(server: &RunningServer) -> kube::Client {
    let mut config = kube::Config::new(server.url().parse().expect("url"));
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}

/// A hollow kubelet on test time: the Lease renewed every 200 ms, the status
/// reported every 500 ms, pods started after 100 ms and stopped within 200 ms.
pub fn fast_kubelet(name: &str, index: u32) -> HollowKubeletConfig {
    HollowKubeletConfig::new(name, index)
        .node_lease(40, Duration::from_millis(200))
        .node_status_frequencies(
            Duration::from_millis(100),
            Duration::from_millis(500),
        )
        .pod_start_delay(Duration::from_millis(100))
        .pod_stop_delay(Duration::from_millis(200))
}

/// The components a test started, each on its own task, all stopped by one
/// token.
pub struct Components {
    shutdown: CancellationToken,
    tasks: Vec<(String, JoinHandle<()>)>,
    client: kube::Client,
}

impl Components {
    pub fn new(client: kube::Client) -> Self {
        Components {
            shutdown: CancellationToken::new(),
            tasks: Vec::new(),
            client,
        }
    }

    /// Starts a hollow kubelet.
    pub fn kubelet(&mut self, config: HollowKubeletConfig) {
        let name = config.node_name.clone();
        let kubelet =
            HollowKubelet::new(self.client.clone(), config).expect("a valid config");
        let task = tokio::spawn(kubelet.run(self.shutdown.child_token()));
        self.tasks.push((name, task));
    }

    /// Starts the scheduler, retrying quickly (100 ms, at most 1 s).
    pub fn scheduler(&mut self) {
        let config = SchedulerConfig::default()
            .pod_initial_backoff(Duration::from_millis(100))
            .pod_max_backoff(Duration::from_secs(1));
        let scheduler = Scheduler::new(self.client.clone(), config);
        let task = tokio::spawn(scheduler.run(self.shutdown.child_token()));
        self.tasks.push(("scheduler".into(), task));
    }

    /// Cancels every component and waits until each task has ended: nothing
    /// is left running.
    pub async fn stop(self) {
        self.shutdown.cancel();
        for (name, task) in self.tasks {
            timeout(WAIT, task)
                .await
                .unwrap_or_else(|_| panic!("{name} stops in time"))
                .unwrap_or_else(|e| panic!("{name} ends cleanly: {e}"));
        }
    }
}

/// Runs `check` until it gives a value, for at most [`WAIT`]: once now, and
/// again after every change the cluster reports (a watch event on pods, nodes,
/// events, leases, Deployments or ReplicaSets), never on a timer.
pub async fn wait_for<T, F, Fut>(
    client: &kube::Client,
    what: &str,
    mut check: F,
) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let outcome = timeout(WAIT, async {
        // Watching before the first check: a change after it is not missed.
        let mut changes = cluster_changes(client).await;
        loop {
            if let Some(value) = check().await {
                return value;
            }
            if changes.next().await.is_none() {
                changes = cluster_changes(client).await;
            }
        }
    })
    .await;
    outcome.unwrap_or_else(|_| panic!("timed out after {WAIT:?} waiting for {what}"))
}

/// The cluster's changes, one at a time, until a deadline: for a test that
/// looks at the cluster after every change (to check an invariant on the
/// way), not only at the end.
pub struct Changes {
    client: kube::Client,
    stream: BoxStream<'static, ()>,
    deadline: tokio::time::Instant,
}

impl Changes {
    /// Follows the cluster's changes from now, for at most [`WAIT`].
    pub async fn follow(client: &kube::Client) -> Self {
        Changes {
            client: client.clone(),
            stream: cluster_changes(client).await,
            deadline: tokio::time::Instant::now() + WAIT,
        }
    }

    /// Waits for the next change; panics, naming `what`, at the deadline.
    pub async fn next(&mut self, what: &str) {
        let next = tokio::time::timeout_at(self.deadline, async {
            while self.stream.next().await.is_none() {
                self.stream = cluster_changes(&self.client).await;
            }
        });
        if next.await.is_err() {
            panic!("timed out after {WAIT:?} waiting for {what}");
        }
    }
}

/// One item per change of a pod, node, event, lease, Deployment or
/// ReplicaSet in any namespace (the
/// stream ends when one of the watches does).
async fn cluster_changes(client: &kube::Client) -> BoxStream<'static, ()> {
    async fn changes_of<K>(api: Api<K>) -> BoxStream<'static, ()>
    where
        K: kube::Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        match api.watch(&WatchParams::default().timeout(290), "0").await {
            Ok(events) => events
                .take_while(|e| futures::future::ready(e.is_ok()))
                .map(|_| ())
                .boxed(),
            Err(_) => futures::stream::empty().boxed(),
        }
    }
    let streams = vec![
        changes_of(Api::<Pod>::all(client.clone())).await,
        changes_of(Api::<Node>::all(client.clone())).await,
        changes_of(Api::<Event>::all(client.clone())).await,
        changes_of(Api::<Lease>::all(client.clone())).await,
        changes_of(Api::<Deployment>::all(client.clone())).await,
        changes_of(Api::<ReplicaSet>::all(client.clone())).await,
    ];
    futures::stream::select_all(streams).boxed()
}

/// A pod of one `nginx` container requesting `cpu` (if any), optionally bound
/// to `node` already.
pub fn pod(name: &str, cpu: Option<&str>, node: Option<&str>) -> Pod {
    let resources = cpu.map_or(json!({}), |cpu| json!({"requests": {"cpu": cpu}}));
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "test"}},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "web", "image": "nginx", "resources": resources}],
        },
    }))
    .expect("pod")
}

/// Creates `pod` in `default`.
pub async fn create_pod(client: &kube::Client, pod: &Pod) -> Pod {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    timeout(WAIT, pods.create(&PostParams::default(), pod))
        .await
        .expect("create in time")
        .expect("create")
}

/// The pod `name` in `default`, if it exists.
pub async fn get_pod(client: &kube::Client, name: &str) -> Option<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.get_opt(name).await.ok().flatten()
}

/// The pod's phase.
pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// The pod's node.
pub fn node_of(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref())
}

/// Waits until the pod `name` is Running (with a pod IP), and returns it.
pub async fn wait_running(client: &kube::Client, name: &str) -> Pod {
    wait_for(client, &format!("pod {name} Running"), || async {
        get_pod(client, name).await.filter(|pod| {
            phase(pod) == "Running"
                && pod
                    .status
                    .as_ref()
                    .and_then(|s| s.pod_ip.as_deref())
                    .is_some()
        })
    })
    .await
}

/// Waits until the node `name` is registered and Ready.
pub async fn wait_ready_node(client: &kube::Client, name: &str) -> Node {
    let nodes: Api<Node> = Api::all(client.clone());
    wait_for(client, &format!("node {name} Ready"), || async {
        let node = nodes.get_opt(name).await.ok().flatten()?;
        let ready = node_condition(&node, "Ready")?;
        (ready["status"] == "True").then_some(node)
    })
    .await
}

/// A node condition, as JSON.
pub fn node_condition(node: &Node, kind: &str) -> Option<Value> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .and_then(|c| serde_json::to_value(c).ok())
}

/// A pod condition, as JSON.
pub fn pod_condition(pod: &Pod, kind: &str) -> Option<Value> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .and_then(|c| serde_json::to_value(c).ok())
}

/// An API server and a controller manager over it.
pub struct Cluster {
    pub server: RunningServer,
    pub client: kube::Client,
    pub manager: ControllerManager,
}

impl Cluster {
    /// Starts the server on a free loopback port and the `controllers`.
    pub async fn start(controllers: &[&str]) -> Self {
        Self::start_with(&ControllerManagerOptions::only(controllers)).await
    }

    /// Starts the server and a controller manager with `options`.
    pub async fn start_with(options: &ControllerManagerOptions) -> Self {
        let server = start_server().await;
        let client = client(&server);
        let manager = ControllerManager::start(client.clone(), options)
            .await
            .expect("controllers start");
        Self {
            server,
            client,
            manager,
        }
    }

    /// The namespaced API of `K` in `default`.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), "default")
    }

    /// Stops the controllers, then the server. Panics after [`WAIT`] if the
    /// controllers do not stop: each drains its queue, and a key whose sync
    /// panicked (a stubbed exercise, say) is never done.
    pub async fn stop(self) {
        timeout(WAIT, self.manager.shutdown())
            .await
            .expect("the controllers stop, each queue drained");
        self.server.shutdown().await;
    }
}

/// Follows `api`'s objects (a list, then a watch from its resourceVersion)
/// until `done` holds for them, and returns them by name. Panics after
/// [`WAIT`], saying what it waited for and what it saw last.
pub async fn wait_until<K>(
    api: &Api<K>,
    what: &str,
    done: impl Fn(&BTreeMap<String, K>) -> bool,
) -> BTreeMap<String, K>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let mut objects = BTreeMap::new();
    let outcome = tokio::time::timeout(WAIT, async {
        loop {
            let list = api.list(&ListParams::default()).await.expect("list");
            objects = list
                .items
                .into_iter()
                .map(|object| (object.name_any(), object))
                .collect();
            if done(&objects) {
                return;
            }
            let version = list.metadata.resource_version.unwrap_or_default();
            let mut events = api
                .watch(&WatchParams::default().timeout(290), &version)
                .await
                .expect("watch")
                .boxed();
            while let Some(event) = events.try_next().await.expect("watch event") {
                match event {
                    WatchEvent::Added(object) | WatchEvent::Modified(object) => {
                        objects.insert(object.name_any(), object);
                    }
                    WatchEvent::Deleted(object) => {
                        objects.remove(&object.name_any());
                    }
                    WatchEvent::Bookmark(_) => {}
                    // Too old: list again.
                    WatchEvent::Error(_) => break,
                }
                if done(&objects) {
                    return;
                }
            }
        }
    })
    .await;
    if outcome.is_err() {
        panic!(
            "timed out after {WAIT:?} waiting for {what}; last seen: {:#?}",
            objects.keys().collect::<Vec<_>>()
        );
    }
    objects
}

/// A ReplicaSet of `replicas` pods labelled `app: <name>`.
pub fn replica_set(name: &str, replicas: i32) -> ReplicaSet {
    let labels: BTreeMap<String, String> =
        [("app".to_string(), name.to_string())].into();
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".to_string(),
                        image: Some("nginx:1.27".to_string()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            }),
            ..ReplicaSetSpec::default()
        },
        ..ReplicaSet::default()
    }
}
