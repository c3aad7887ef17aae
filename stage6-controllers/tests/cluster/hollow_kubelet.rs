//! Hollow kubelets against the server: registration, leases, heartbeats, and
//! the life of the pods bound to them.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams};
use tokio::time::timeout;

use crate::common::{
    Components, WAIT, client, create_pod, fast_kubelet, get_pod, node_condition,
    pod, pod_condition, start_server, wait_for, wait_ready_node, wait_running,
};

/// The renew time of the node's Lease, once it has the kubelet's shape.
async fn lease_renew_time(leases: &Api<Lease>, node: &str) -> Option<String> {
    let lease = leases.get_opt(node).await.ok().flatten()?;
    let spec = lease.spec?;
    let owner = lease.metadata.owner_references?;
    let shaped = spec.holder_identity.as_deref() == Some(node)
        && spec.lease_duration_seconds == Some(40)
        && owner.iter().any(|o| o.kind == "Node" && o.name == node);
    shaped
        .then(|| serde_json::to_string(&spec.renew_time?).ok())
        .flatten()
}

/// (a) Two hollow nodes register with capacity and a Ready condition; their
/// Leases in `kube-node-lease` are renewed (the renew time moves) and their
/// Ready heartbeats move while they stay Ready.
#[tokio::test]
async fn two_hollow_nodes_register_renew_their_leases_and_stay_ready() {
    let server = start_server().await;
    let client = client(&server);
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("hollow-node-0", 0));
    components.kubelet(fast_kubelet("hollow-node-1", 1));

    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    for (index, name) in ["hollow-node-0", "hollow-node-1"].into_iter().enumerate() {
        let node = wait_ready_node(&client, name).await;
        let status = node.status.as_ref().expect("status");
        let allocatable = status.allocatable.as_ref().expect("allocatable");
        assert_eq!(allocatable["pods"].0, "110");
        assert_eq!(allocatable["cpu"].0, "4");
        assert_eq!(allocatable["memory"].0, "8Gi");
        assert!(allocatable.contains_key("ephemeral-storage"));
        let ready = node_condition(&node, "Ready").expect("Ready");
        assert_eq!(ready["reason"], "KubeletReady");
        assert_eq!(ready["message"], "kubelet is posting ready status");
        let info = status.node_info.as_ref().expect("nodeInfo");
        assert_eq!(info.kubelet_version, "v1.36.0-mini");
        let addresses = status.addresses.as_ref().expect("addresses");
        assert!(addresses.iter().any(|a| a.type_ == "InternalIP"));
        assert!(
            addresses
                .iter()
                .any(|a| a.type_ == "Hostname" && a.address == name)
        );
        assert_eq!(
            node.spec.as_ref().and_then(|s| s.pod_cidr.as_deref()),
            Some(format!("10.244.{index}.0/24").as_str())
        );

        let first = wait_for(&client, &format!("the lease of {name}"), || {
            lease_renew_time(&leases, name)
        })
        .await;
        wait_for(&client, &format!("the lease of {name} renewed"), || async {
            lease_renew_time(&leases, name)
                .await
                .filter(|renewed| *renewed != first)
        })
        .await;

        let heartbeat = ready["lastHeartbeatTime"].clone();
        let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
        wait_for(&client, &format!("a newer heartbeat of {name}"), || async {
            let node = nodes.get_opt(name).await.ok().flatten()?;
            let ready = node_condition(&node, "Ready")?;
            (ready["status"] == "True" && ready["lastHeartbeatTime"] != heartbeat)
                .then_some(())
        })
        .await;
    }

    components.stop().await;
    server.shutdown().await;
}

/// A pod bound to the node is reported Running, with an IP in the node's pod
/// CIDR, the host's IP, the kubelet's conditions and a running container.
#[tokio::test]
async fn a_bound_pod_runs_with_an_ip_and_container_statuses() {
    let server = start_server().await;
    let client = client(&server);
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("hollow-node-5", 5));
    wait_ready_node(&client, "hollow-node-5").await;

    create_pod(&client, &pod("web-0", Some("100m"), Some("hollow-node-5"))).await;
    create_pod(&client, &pod("web-1", None, Some("hollow-node-5"))).await;
    let first = wait_running(&client, "web-0").await;
    let second = wait_running(&client, "web-1").await;

    let status = first.status.as_ref().expect("status");
    let ip = status.pod_ip.as_deref().expect("pod IP");
    assert!(ip.starts_with("10.244.5."), "{ip}");
    assert_eq!(
        status.pod_ips.as_ref().map(|ips| ips[0].ip.clone()),
        Some(ip.to_string())
    );
    assert_ne!(
        second.status.as_ref().and_then(|s| s.pod_ip.as_deref()),
        Some(ip)
    );
    assert_eq!(status.host_ip.as_deref(), Some("10.240.0.6"));
    assert!(status.start_time.is_some());
    for kind in [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ] {
        assert_eq!(
            pod_condition(&first, kind).map(|c| c["status"].clone()),
            Some("True".into()),
            "{kind}"
        );
    }
    let containers = status
        .container_statuses
        .as_ref()
        .expect("container statuses");
    let web = &containers[0];
    assert_eq!(web.name, "web");
    assert!(web.ready);
    assert_eq!(web.started, Some(true));
    assert_eq!(web.restart_count, 0);
    assert_eq!(web.image, "docker.io/library/nginx:latest");
    assert!(web.image_id.starts_with("docker.io/library/nginx@sha256:"));
    assert!(
        web.container_id
            .as_deref()
            .is_some_and(|id| id.starts_with("containerd://"))
    );
    assert!(
        web.state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .is_some()
    );
    // The server's QoS class survives the kubelet's status patch.
    assert_eq!(status.qos_class.as_deref(), Some("Burstable"));

    components.stop().await;
    server.shutdown().await;
}

/// A pod bound to the node before its kubelet starts is picked up from the
/// first list.
#[tokio::test]
async fn pods_already_on_the_node_at_start_are_picked_up() {
    let server = start_server().await;
    let client = client(&server);
    create_pod(&client, &pod("early", None, Some("hollow-node-7"))).await;
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("hollow-node-7", 7));
    let running = wait_running(&client, "early").await;
    assert_eq!(
        running.status.as_ref().and_then(|s| s.pod_ip.as_deref()),
        Some("10.244.7.2")
    );
    components.stop().await;
    server.shutdown().await;
}

/// (f) Deleting a running pod marks it (deletionTimestamp, the pod's grace
/// period); the hollow kubelet then removes it with gracePeriodSeconds=0.
#[tokio::test]
async fn deleting_a_running_pod_marks_it_then_the_kubelet_removes_it() {
    let server = start_server().await;
    let client = client(&server);
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("hollow-node-2", 2));
    wait_ready_node(&client, "hollow-node-2").await;
    create_pod(&client, &pod("doomed", None, Some("hollow-node-2"))).await;
    wait_running(&client, "doomed").await;

    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let deleted = timeout(WAIT, pods.delete("doomed", &DeleteParams::default()))
        .await
        .expect("delete in time")
        .expect("delete");
    let marked = deleted
        .left()
        .expect("a graceful delete answers with the pod");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(30));
    // Still there, marked, right after the DELETE (the kubelet waits its stop
    // delay).
    assert!(
        get_pod(&client, "doomed")
            .await
            .is_none_or(|p| p.metadata.deletion_timestamp.is_some())
    );

    wait_for(&client, "the kubelet to remove the pod", || async {
        match pods.get_opt("doomed").await {
            Ok(None) => Some(()),
            _ => None,
        }
    })
    .await;

    components.stop().await;
    server.shutdown().await;
}
