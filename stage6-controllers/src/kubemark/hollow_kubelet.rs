//! [`HollowKubelet`]: a kubelet without containers. It registers its Node,
//! keeps its Lease and Ready condition fresh, and "runs" the pods bound to it:
//! after a start delay it reports them Running with an IP and container
//! statuses; when they are deleted it removes them after their grace period
//! (or a shorter stop delay).
//!
//! Mirrors kubemark's
//! [hollow_kubelet.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/kubemark/hollow_kubelet.go)
//! (`HollowKubelet`, `NewHollowKubelet`, `Run`, `GetHollowKubeletConfig`:
//! `nodeStatusUpdateFrequency` 10 s, `nodeStatusReportFrequency` 5 min,
//! `nodeLeaseDurationSeconds` 40), which runs the real kubelet over a fake
//! container runtime. Here the kubelet is the part the control plane sees:
//!
//! - the Node and its status ([`node_status`](super::node_status));
//! - the node Lease ([`node_lease`](super::node_lease));
//! - the pods: a stage 4 informer with the field selector
//!   `spec.nodeName=<node>` (the kubelet's pod config source), and one worker
//!   syncing each pod's key from a workqueue (the kubelet's `syncLoop` and pod
//!   workers), writing statuses through `pods/status`
//!   ([`pod_status`](super::pod_status)) and deleting terminated pods with
//!   `gracePeriodSeconds=0` and the pod's uid as a precondition, as the
//!   kubelet's status manager does once a deleted pod's containers are gone.
//!
//! Pods already bound to the node when it starts come with the informer's
//! first list: a Pending one is started, a Running one keeps its IP.
//!
//! # Shutdown
//!
//! [`HollowKubelet::run`] owns its tasks (status loop, lease controller, pod
//! worker, the informer through its factory) and returns once all have
//! stopped. The Node stays registered, as when a real kubelet stops.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use parking_lot::Mutex;
use serde_json::json;
use stage4_shared_informer::{
    KubeSource, Lister, ResourceEventHandlerFuncs, SharedInformerFactory,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::node_lease::NodeLeaseController;
use super::node_status::{
    initial_node, register_with_api_server, run_node_status_loop,
};
use super::pod_status::running_pod_status;
use crate::scheduler::cache::pod_key;
use crate::workqueue::{ItemExponentialFailureRateLimiter, RateLimitingQueue};

pub use super::config::{HollowKubeletConfig, HollowKubeletError, MAX_NODE_INDEX};

/// Where a pod is in the hollow kubelet's life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PodPhase {
    /// Seen; its containers "start" at this instant.
    Starting(Instant),
    /// Reported Running (or found finished): nothing to do until deleted.
    Running,
    /// Being deleted; removed at this instant.
    Terminating(Instant),
}

/// What the hollow kubelet remembers of a pod on its node.
#[derive(Clone, Debug)]
struct PodRecord {
    uid: String,
    phase: PodPhase,
    ip: Option<Ipv4Addr>,
}

/// What the pod worker and the informer's handler share.
struct Kubelet {
    client: kube::Client,
    config: HollowKubeletConfig,
    pods: Lister<Pod>,
    queue: RateLimitingQueue<String>,
    records: Mutex<HashMap<String, PodRecord>>,
}

/// Mirrors kubemark's `HollowKubelet`: one hollow node (see the module docs).
pub struct HollowKubelet {
    client: kube::Client,
    config: HollowKubeletConfig,
}

impl std::fmt::Debug for HollowKubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HollowKubelet")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl HollowKubelet {
    /// Mirrors `NewHollowKubelet`: a hollow kubelet talking through `client`.
    ///
    /// # Errors
    ///
    /// [`HollowKubeletError`] when a capacity is not a quantity or the index is
    /// out of range.
    pub fn new(
        client: kube::Client,
        config: HollowKubeletConfig,
    ) -> Result<Self, HollowKubeletError> {
        config.validate()?;
        Ok(HollowKubelet { client, config })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &HollowKubeletConfig {
        &self.config
    }

    /// Mirrors `HollowKubelet.Run`: registers the Node, then keeps its status,
    /// its Lease and its pods until `shutdown` is cancelled, and returns once
    /// every task it started has stopped.
    pub async fn run(self, shutdown: CancellationToken) {
        let HollowKubelet { client, config } = self;
        let node_name = config.node_name.clone();
        let Some(node) =
            register_with_api_server(&client, &initial_node(&config), &shutdown)
                .await
        else {
            return;
        };
        let tasks = TaskTracker::new();
        tasks.spawn(run_node_status_loop(
            client.clone(),
            config.clone(),
            node.clone(),
            shutdown.clone(),
        ));
        tasks.spawn(
            NodeLeaseController::new(
                client.clone(),
                &node_name,
                node.metadata.uid.clone(),
                config.node_lease_duration_seconds,
                config.node_lease_renew_interval,
            )
            .run(shutdown.clone()),
        );

        // The pod config source: only this node's pods.
        let selector = format!("spec.nodeName={node_name}");
        let factory = SharedInformerFactory::builder(
            KubeSource::new(client.clone()),
            Duration::ZERO,
        )
        .tweak_list_options(move |options| {
            options.field_selector.clone_from(&selector)
        })
        .build();
        let informer = factory.pods();
        let kubelet = Arc::new(Kubelet {
            client,
            config,
            pods: informer.lister(),
            queue: RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
                Duration::from_millis(100),
                Duration::from_secs(10),
            )),
            records: Mutex::new(HashMap::new()),
        });
        let (on_add, on_update, on_delete) = (
            kubelet.queue.clone(),
            kubelet.queue.clone(),
            kubelet.queue.clone(),
        );
        let registered = informer.informer().add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |pod: &Arc<Pod>, _| on_add.add(pod_key(pod)))
                .update_func(move |_, pod: &Arc<Pod>| on_update.add(pod_key(pod)))
                .delete_func(move |pod| {
                    if let Some(pod) = pod.object() {
                        on_delete.add(pod_key(pod));
                    }
                }),
        );
        match registered {
            Ok(_) => {
                factory.start();
                tasks.spawn(pod_worker(Arc::clone(&kubelet), shutdown.clone()));
                shutdown.cancelled().await;
            }
            Err(error) => {
                tracing::error!(node = %node_name, %error, "could not watch the node's pods")
            }
        }
        kubelet.queue.shut_down();
        tasks.close();
        tokio::join!(factory.shutdown(), tasks.wait());
        tracing::info!(node = %node_name, "hollow kubelet stopped");
    }
}

/// Mirrors the kubelet's `syncLoop` with one pod worker: syncs pod keys until
/// the queue shuts down; a sync that fails is retried with backoff.
async fn pod_worker(kubelet: Arc<Kubelet>, shutdown: CancellationToken) {
    loop {
        let key = tokio::select! {
            () = shutdown.cancelled() => return,
            key = kubelet.queue.get() => key,
        };
        let Some(key) = key else { return };
        let result = tokio::select! {
            () = shutdown.cancelled() => Ok(()),
            result = kubelet.sync_pod(&key) => result,
        };
        match result {
            Ok(()) => kubelet.queue.forget(&key),
            Err(error) => {
                tracing::warn!(node = %kubelet.config.node_name, pod = %key, %error, "error syncing pod, retrying");
                kubelet.queue.add_rate_limited(key.clone());
            }
        }
        kubelet.queue.done(&key);
    }
}

impl Kubelet {
    // ANCHOR: sync_pod
    /// Mirrors `SyncPod`/`SyncTerminatingPod` for the pod under `key`: steps
    /// its [`PodPhase`] and writes what changed.
    async fn sync_pod(&self, key: &str) -> Result<(), kube::Error> {
        let Some((namespace, name)) = key.split_once('/') else {
            return Ok(());
        };
        let Ok(pod) = self.pods.namespaced(namespace).get(name) else {
            // Gone: its IP is free again.
            self.records.lock().remove(key);
            return Ok(());
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let now = Instant::now();
        let record = {
            let mut records = self.records.lock();
            let record = records
                .entry(key.to_string())
                .or_insert_with(|| self.first_sight(&pod, &uid, now));
            if record.uid != uid {
                // The same name, a new pod.
                *record = self.first_sight(&pod, &uid, now);
            }
            if pod.metadata.deletion_timestamp.is_some()
                && !matches!(record.phase, PodPhase::Terminating(_))
            {
                let grace = pod
                    .metadata
                    .deletion_grace_period_seconds
                    .and_then(|s| u64::try_from(s).ok())
                    .map_or(Duration::ZERO, Duration::from_secs);
                record.phase = PodPhase::Terminating(
                    now + grace.min(self.config.pod_stop_delay),
                );
            }
            record.clone()
        };
        match record.phase {
            PodPhase::Running => Ok(()),
            PodPhase::Starting(at) if at > now => {
                self.queue.add_after(key.to_string(), at - now);
                Ok(())
            }
            PodPhase::Starting(_) => self.start_pod(key, &pod).await,
            PodPhase::Terminating(at) if at > now => {
                self.queue.add_after(key.to_string(), at - now);
                Ok(())
            }
            PodPhase::Terminating(_) => self.delete_pod(namespace, name, &uid).await,
        }
    }
    // ANCHOR_END: sync_pod

    /// A pod seen for the first time: one already running (after a restart)
    /// keeps its IP, one that has finished is left alone (both need nothing
    /// until they are deleted); any other starts after the start delay.
    fn first_sight(&self, pod: &Pod, uid: &str, now: Instant) -> PodRecord {
        let status = pod.status.as_ref();
        let phase = status.and_then(|s| s.phase.as_deref());
        let running_ip = status
            .filter(|_| phase == Some("Running"))
            .and_then(|s| s.pod_ip.as_deref())
            .and_then(|ip| ip.parse().ok());
        let started =
            running_ip.is_some() || matches!(phase, Some("Succeeded" | "Failed"));
        PodRecord {
            uid: uid.to_string(),
            phase: if started {
                PodPhase::Running
            } else {
                PodPhase::Starting(now + self.config.pod_start_delay)
            },
            ip: running_ip,
        }
    }

    /// The lowest free pod IP of the node's CIDR, from `.2` (`.1` is the
    /// bridge's).
    fn allocate_ip(&self, key: &str) -> Option<Ipv4Addr> {
        let mut records = self.records.lock();
        if let Some(ip) = records.get(key).and_then(|r| r.ip) {
            return Some(ip);
        }
        let network = u32::from(self.config.pod_network());
        let used: std::collections::HashSet<Ipv4Addr> =
            records.values().filter_map(|r| r.ip).collect();
        let ip = (2..=254)
            .map(|host| Ipv4Addr::from(network + host))
            .find(|ip| !used.contains(ip))?;
        if let Some(record) = records.get_mut(key) {
            record.ip = Some(ip);
        }
        Some(ip)
    }

    /// The containers "started": writes the Running status.
    async fn start_pod(&self, key: &str, pod: &Pod) -> Result<(), kube::Error> {
        let Some(ip) = self.allocate_ip(key) else {
            tracing::warn!(node = %self.config.node_name, pod = key, "no pod IP left in the node's CIDR");
            return Ok(());
        };
        let status = running_pod_status(
            pod,
            self.config.internal_ip(),
            ip,
            &apimachinery::apis::meta::v1::time::now(),
        );
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        pods.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Strategic(json!({"status": status})),
        )
        .await?;
        if let Some(record) = self.records.lock().get_mut(key) {
            record.phase = PodPhase::Running;
        }
        tracing::debug!(node = %self.config.node_name, pod = key, %ip, "pod running");
        Ok(())
    }

    /// Mirrors the status manager's final delete of a terminated pod:
    /// `gracePeriodSeconds=0` with the uid as a precondition (a pod recreated
    /// under the same name is not touched). Gone already is fine.
    async fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> Result<(), kube::Error> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let params = DeleteParams {
            grace_period_seconds: Some(0),
            preconditions: Some(Preconditions {
                uid: Some(uid.to_string()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match pods.delete(name, &params).await {
            Ok(_) => {
                tracing::debug!(node = %self.config.node_name, pod = %format!("{namespace}/{name}"), "pod deleted");
                Ok(())
            }
            Err(kube::Error::Api(status))
                if status.code == 404 || status.code == 409 =>
            {
                Ok(())
            }
            Err(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_config_addresses() {
        let config = HollowKubeletConfig::new("n", 0);
        assert_eq!(config.internal_ip(), Ipv4Addr::new(10, 240, 0, 1));
        assert_eq!(config.pod_cidr(), "10.244.0.0/24");
        let config = HollowKubeletConfig::new("n", 257);
        assert_eq!(config.internal_ip(), Ipv4Addr::new(10, 240, 1, 2));
        assert_eq!(config.pod_cidr(), "10.245.1.0/24");
        assert_eq!(
            HollowKubeletConfig::new("n", MAX_NODE_INDEX).pod_cidr(),
            "10.255.255.0/24"
        );
    }

    #[test]
    fn test_config_validate() {
        assert!(HollowKubeletConfig::new("n", 0).validate().is_ok());
        assert!(matches!(
            HollowKubeletConfig::new("n", 0).cpu("four").validate(),
            Err(HollowKubeletError::InvalidQuantity {
                resource: "cpu",
                ..
            })
        ));
        assert!(matches!(
            HollowKubeletConfig::new("n", MAX_NODE_INDEX + 1).validate(),
            Err(HollowKubeletError::NodeIndexOutOfRange(_))
        ));
    }
}
