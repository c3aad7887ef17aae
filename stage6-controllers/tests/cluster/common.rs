//! What every cluster test needs: a server, clients, hollow kubelets and a
//! scheduler on tasks the test owns, and bounded waits.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use stage5_apiserver::{RunningServer, Server, ServerConfig};
use stage6_controllers::kubemark::{HollowKubelet, HollowKubeletConfig};
use stage6_controllers::scheduler::{Scheduler, SchedulerConfig};
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout};
use tokio_util::sync::CancellationToken;

/// The longest any condition is waited for.
pub const WAIT: Duration = Duration::from_secs(30);

/// How often a polled condition is checked again.
const POLL: Duration = Duration::from_millis(50);

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

/// Polls `check` until it gives a value, for at most [`WAIT`].
pub async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(Some(value)) = timeout(WAIT, check()).await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(POLL).await;
    }
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
    wait_for(&format!("pod {name} Running"), || async {
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
    wait_for(&format!("node {name} Ready"), || async {
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
