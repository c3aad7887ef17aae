//! A hollow kubelet's Node: registered once, its status refreshed on the
//! kubelet's schedule.
//!
//! Mirrors the kubelet's
//! [kubelet_node_status.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/kubelet/kubelet_node_status.go)
//! (`initialNode`, `registerWithAPIServer` with `tryRegisterWithAPIServer`,
//! `syncNodeStatus`/`tryUpdateNodeStatus` with `nodeStatusHasChanged` and the
//! `nodeStatusReportFrequency` rule) and the setters of
//! [nodestatus/setters.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/kubelet/nodestatus/setters.go)
//! (`NodeAddress`, `MachineInfo`, `VersionInfo`, `DaemonEndpoints`,
//! `GoRuntime`, `MemoryPressureCondition`, `DiskPressureCondition`,
//! `PIDPressureCondition`, `ReadyCondition`), with kubemark's fixed machine:
//! the capacity it is configured with, all of it allocatable, never under
//! pressure, always Ready.
//!
//! Every `nodeStatusUpdateFrequency` the status is computed again; it is sent
//! (a strategic merge patch of `nodes/status`) when it changed other than in
//! its heartbeats, or when `nodeStatusReportFrequency` has passed since the
//! last report. With leases that is every 5 minutes: the Lease is the frequent
//! heartbeat.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::hollow_kubelet::HollowKubeletConfig;
use apimachinery::apis::meta::v1::time::now;

/// The kubelet's port in `status.daemonEndpoints` (upstream's default).
pub const KUBELET_PORT: i32 = 10250;

/// The runtime a hollow node reports (its containers' ids say `containerd://`).
pub const CONTAINER_RUNTIME_VERSION: &str = "containerd://2.1.0-hollow";

/// 32 hex digits derived from `seed` (machine and boot ids; a hash, not
/// randomness, so a restarted hollow node reports the same machine).
pub(crate) fn hex_id(seed: &str, digits: usize) -> String {
    let mut out = String::with_capacity(digits);
    let mut round = 0_u64;
    while out.len() < digits {
        let mut hasher = DefaultHasher::new();
        (seed, round).hash(&mut hasher);
        out.push_str(&format!("{:016x}", hasher.finish()));
        round += 1;
    }
    out.truncate(digits);
    out
}

/// Mirrors `initialNode`: the Node a kubelet registers, with the default
/// labels (`kubernetes.io/hostname`, `kubernetes.io/os`,
/// `kubernetes.io/arch` and their `beta.` forms), kubemark's provider id, the
/// pod CIDR its pods' IPs come from, and a first status.
#[must_use]
pub fn initial_node(config: &HollowKubeletConfig) -> Node {
    let name = &config.node_name;
    let mut labels: BTreeMap<String, String> = [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", name.as_str()),
        ("kubernetes.io/os", "linux"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    labels.extend(config.node_labels.clone());
    let pod_cidr = config.pod_cidr();
    let mut node: Node = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "podCIDR": pod_cidr,
            "podCIDRs": [pod_cidr],
            "providerID": format!("kubemark://{name}"),
        },
    }))
    .unwrap_or_default();
    set_node_status(&mut node, config, &now());
    node
}

/// Mirrors one condition setter: `kind` becomes `status` with `reason` and
/// `message`; the heartbeat is `now`, the transition time moves only with the
/// status.
fn set_condition(
    conditions: &mut Vec<NodeCondition>,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &Time,
) {
    let condition = NodeCondition {
        type_: kind.to_string(),
        status: status.to_string(),
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        last_heartbeat_time: Some(now.clone()),
        last_transition_time: Some(now.clone()),
    };
    match conditions.iter_mut().find(|c| c.type_ == kind) {
        Some(existing) => {
            let transition = if existing.status == status {
                existing.last_transition_time.clone()
            } else {
                Some(now.clone())
            };
            *existing = NodeCondition {
                last_transition_time: transition,
                ..condition
            };
        }
        None => conditions.push(condition),
    }
}

/// Mirrors `setNodeStatus` with the default setters, for a hollow machine:
/// addresses, capacity and allocatable, versions, the daemon endpoint, and
/// the conditions (no pressure, Ready) with heartbeats at `now`.
pub fn set_node_status(node: &mut Node, config: &HollowKubeletConfig, now: &Time) {
    let name = &config.node_name;
    let resources: BTreeMap<String, serde_json::Value> = [
        ("cpu", config.cpu.clone()),
        ("memory", config.memory.clone()),
        ("pods", config.pods.to_string()),
        ("ephemeral-storage", config.ephemeral_storage.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), json!(v)))
    .collect();
    let status = node.status.get_or_insert_with(NodeStatus::default);
    // NodeAddress: the hollow node's IP and its name.
    status.addresses = serde_json::from_value(json!([
        {"type": "InternalIP", "address": config.internal_ip().to_string()},
        {"type": "Hostname", "address": name},
    ]))
    .ok();
    // MachineInfo: no system reservations, so allocatable is the capacity.
    status.capacity = serde_json::from_value(json!(resources)).ok();
    status.allocatable.clone_from(&status.capacity);
    // VersionInfo, GoRuntime and the machine's ids.
    status.node_info = serde_json::from_value(json!({
        "architecture": "amd64",
        "bootID": hex_id(&format!("{name}/boot"), 32),
        "containerRuntimeVersion": CONTAINER_RUNTIME_VERSION,
        "kernelVersion": "6.1.0-hollow",
        "kubeProxyVersion": "",
        "kubeletVersion": config.kubelet_version,
        "machineID": hex_id(&format!("{name}/machine"), 32),
        "operatingSystem": "linux",
        "osImage": "Hollow Node (kubemark)",
        "systemUUID": hex_id(&format!("{name}/uuid"), 32),
    }))
    .ok();
    // DaemonEndpoints.
    status.daemon_endpoints =
        serde_json::from_value(json!({"kubeletEndpoint": {"Port": KUBELET_PORT}}))
            .ok();
    // The conditions, Ready last (upstream keeps it last for old clients).
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    set_condition(
        conditions,
        "MemoryPressure",
        "False",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
        now,
    );
    set_condition(
        conditions,
        "DiskPressure",
        "False",
        "KubeletHasNoDiskPressure",
        "kubelet has no disk pressure",
        now,
    );
    set_condition(
        conditions,
        "PIDPressure",
        "False",
        "KubeletHasSufficientPID",
        "kubelet has sufficient PID available",
        now,
    );
    set_condition(
        conditions,
        "Ready",
        "True",
        "KubeletReady",
        "kubelet is posting ready status",
        now,
    );
}

/// Mirrors `nodeStatusHasChanged`: the statuses differ in more than the
/// conditions' heartbeats.
#[must_use]
pub fn node_status_has_changed(original: &NodeStatus, status: &NodeStatus) -> bool {
    let without_heartbeats = |status: &NodeStatus| {
        let mut status = status.clone();
        for condition in status.conditions.iter_mut().flatten() {
            condition.last_heartbeat_time = None;
        }
        status
    };
    without_heartbeats(original) != without_heartbeats(status)
}

/// Mirrors `registerWithAPIServer`: creates the Node, or takes the one that
/// exists (`tryRegisterWithAPIServer` on `AlreadyExists`), retrying from
/// 100 ms up to 7 s apart. `None` when `shutdown` is cancelled first.
pub async fn register_with_api_server(
    client: &kube::Client,
    node: &Node,
    shutdown: &CancellationToken,
) -> Option<Node> {
    let nodes: Api<Node> = Api::all(client.clone());
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let mut step = Duration::from_millis(100);
    loop {
        let attempt = match nodes.create(&PostParams::default(), node).await {
            Ok(created) => Ok(created),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                nodes.get(name).await
            }
            Err(error) => Err(error),
        };
        match attempt {
            Ok(registered) => {
                tracing::info!(node = name, "successfully registered node");
                return Some(registered);
            }
            Err(error) => {
                tracing::warn!(node = name, %error, "unable to register node with API server")
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return None,
            () = tokio::time::sleep(step) => {}
        }
        step = (step * 2).min(Duration::from_secs(7));
    }
}

/// Mirrors the kubelet's node status loop (`syncNodeStatus` every
/// `nodeStatusUpdateFrequency`), starting from the `registered` Node.
pub async fn run_node_status_loop(
    client: kube::Client,
    config: HollowKubeletConfig,
    registered: Node,
    shutdown: CancellationToken,
) {
    let nodes: Api<Node> = Api::all(client);
    let name = config.node_name.clone();
    let mut last_status = registered.status.clone().unwrap_or_default();
    // The registration itself was a report.
    let mut last_report = Instant::now();
    let mut ticker = tokio::time::interval(config.node_status_update_frequency);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = ticker.tick() => {}
        }
        // tryUpdateNodeStatus
        let mut node = Node {
            status: Some(last_status.clone()),
            ..Node::default()
        };
        set_node_status(&mut node, &config, &now());
        let status = node.status.unwrap_or_default();
        let changed = node_status_has_changed(&last_status, &status);
        if !changed && last_report.elapsed() < config.node_status_report_frequency {
            continue;
        }
        let patch = Patch::Strategic(json!({"status": status}));
        let params = PatchParams::default();
        let result = tokio::select! {
            () = shutdown.cancelled() => return,
            result = nodes.patch_status(&name, &params, &patch) => result,
        };
        match result {
            Ok(_) => {
                last_status = status;
                last_report = Instant::now();
            }
            Err(error) => {
                tracing::warn!(node = %name, %error, "error updating node status, will retry")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> HollowKubeletConfig {
        HollowKubeletConfig::new("hollow-node-3", 3)
    }

    /// The Node a hollow kubelet registers: capacity, allocatable, addresses,
    /// versions, Ready with upstream's reason and message.
    #[test]
    fn test_initial_node() {
        let node = initial_node(&config());
        let status = node.status.as_ref().expect("status");
        let capacity = status.capacity.as_ref().expect("capacity");
        assert_eq!(capacity["pods"].0, "110");
        assert_eq!(capacity["cpu"].0, "4");
        assert_eq!(status.allocatable.as_ref(), Some(capacity));
        let ready = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Ready")
            .expect("ready");
        assert_eq!(ready.status, "True");
        assert_eq!(ready.reason.as_deref(), Some("KubeletReady"));
        assert_eq!(
            ready.message.as_deref(),
            Some("kubelet is posting ready status")
        );
        let addresses = status.addresses.as_ref().expect("addresses");
        assert_eq!(addresses[0].type_, "InternalIP");
        assert_eq!(addresses[1].address, "hollow-node-3");
        let info = status.node_info.as_ref().expect("node info");
        assert_eq!(info.kubelet_version, "v1.36.0-mini");
        assert_eq!(info.machine_id.len(), 32);
        let spec = node.spec.as_ref().expect("spec");
        assert_eq!(spec.pod_cidr.as_deref(), Some("10.244.3.0/24"));
        assert_eq!(
            node.metadata.labels.as_ref().expect("labels")["kubernetes.io/hostname"],
            "hollow-node-3"
        );
    }

    /// Mirrors `TestNodeStatusHasChanged`: heartbeats alone are no change, a
    /// condition's status is.
    #[test]
    fn test_node_status_has_changed() {
        let node = initial_node(&config());
        let original = node.status.clone().expect("status");
        let mut later = node.clone();
        let t = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        set_node_status(&mut later, &config(), &t);
        let later = later.status.expect("status");
        assert!(!node_status_has_changed(&original, &later));
        let mut not_ready = later.clone();
        if let Some(ready) = not_ready
            .conditions
            .iter_mut()
            .flatten()
            .find(|c| c.type_ == "Ready")
        {
            ready.status = "False".into();
        }
        assert!(node_status_has_changed(&original, &not_ready));
    }

    #[test]
    fn test_hex_id() {
        assert_eq!(hex_id("a", 64).len(), 64);
        assert_eq!(hex_id("a", 64), hex_id("a", 64));
        assert_ne!(hex_id("a", 64), hex_id("b", 64));
        assert!(hex_id("a", 64).bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
