//! The scheduler with hollow nodes: pods are bound where they fit best, run,
//! and wait (with `FailedScheduling`) where they fit nowhere.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::time::timeout;

use crate::common::{
    Components, WAIT, client, create_pod, fast_kubelet, get_pod, node_of, pod,
    pod_condition, start_server, wait_for, wait_ready_node, wait_running,
};

/// The scheduler's events about the pod `name`, as core `v1` readers (kubectl)
/// see them.
async fn events_about(client: &kube::Client, name: &str) -> Vec<Event> {
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    events
        .list(&ListParams::default())
        .await
        .map(|list| {
            list.items
                .into_iter()
                .filter(|e| e.involved_object.name.as_deref() == Some(name))
                .collect()
        })
        .unwrap_or_default()
}

/// (b) A pod created without a node is bound to a Ready node with room, gets
/// a `Scheduled` event, and turns Running with a pod IP and container
/// statuses.
#[tokio::test]
async fn a_pod_without_a_node_is_bound_to_a_ready_node_and_runs() {
    let server = start_server().await;
    let client = client(&server);
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("hollow-node-0", 0));
    components.kubelet(fast_kubelet("hollow-node-1", 1));
    components.scheduler();
    wait_ready_node(&client, "hollow-node-0").await;
    wait_ready_node(&client, "hollow-node-1").await;

    create_pod(&client, &pod("web", Some("250m"), None)).await;
    let running = wait_running(&client, "web").await;
    let node = node_of(&running).expect("bound").to_string();
    assert!(node == "hollow-node-0" || node == "hollow-node-1", "{node}");
    let index = &node["hollow-node-".len()..];
    let ip = running
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .expect("pod IP");
    assert!(
        ip.starts_with(&format!("10.244.{index}.")),
        "{ip} on {node}"
    );
    assert_eq!(
        pod_condition(&running, "PodScheduled").map(|c| c["status"].clone()),
        Some("True".into())
    );
    let containers = running
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .expect("container statuses");
    assert!(containers[0].ready);

    let scheduled = wait_for(&client, "the Scheduled event", || async {
        events_about(&client, "web")
            .await
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("Scheduled"))
    })
    .await;
    assert_eq!(scheduled.type_.as_deref(), Some("Normal"));
    assert_eq!(
        scheduled.message.as_deref(),
        Some(format!("Successfully assigned default/web to {node}").as_str())
    );
    assert_eq!(
        scheduled.reporting_component.as_deref(),
        Some("default-scheduler")
    );

    components.stop().await;
    server.shutdown().await;
}

/// (c) A pod requesting more cpu than any node has gets a `FailedScheduling`
/// Warning (`0/2 nodes are available: 2 Insufficient cpu.`) and
/// `PodScheduled=False` with reason `Unschedulable` and the same message; it
/// is scheduled once a bigger hollow node joins.
#[tokio::test]
async fn a_pod_too_big_for_every_node_waits_then_runs_on_a_bigger_node() {
    let server = start_server().await;
    let client = client(&server);
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("small-0", 0).cpu("2"));
    components.kubelet(fast_kubelet("small-1", 1).cpu("2"));
    components.scheduler();
    wait_ready_node(&client, "small-0").await;
    wait_ready_node(&client, "small-1").await;

    create_pod(&client, &pod("big", Some("3"), None)).await;
    let message = "0/2 nodes are available: 2 Insufficient cpu.";
    let failed = wait_for(&client, "the FailedScheduling event", || async {
        events_about(&client, "big")
            .await
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("FailedScheduling"))
    })
    .await;
    assert_eq!(failed.type_.as_deref(), Some("Warning"));
    assert_eq!(failed.message.as_deref(), Some(message));
    assert_eq!(
        failed.reporting_component.as_deref(),
        Some("default-scheduler")
    );
    assert_eq!(failed.action.as_deref(), Some("Scheduling"));
    let unschedulable = wait_for(&client, "PodScheduled=False", || async {
        let pod = get_pod(&client, "big").await?;
        pod_condition(&pod, "PodScheduled").filter(|c| c["status"] == "False")
    })
    .await;
    assert_eq!(unschedulable["reason"], "Unschedulable");
    assert_eq!(unschedulable["message"], message);
    assert_eq!(node_of(&get_pod(&client, "big").await.expect("pod")), None);

    components.kubelet(fast_kubelet("big-2", 2).cpu("4"));
    let running = wait_running(&client, "big").await;
    assert_eq!(node_of(&running), Some("big-2"));
    assert_eq!(
        pod_condition(&running, "PodScheduled").map(|c| c["status"].clone()),
        Some("True".into())
    );

    components.stop().await;
    server.shutdown().await;
}

/// (d) A cordoned node (`spec.unschedulable`) gets no pods: every pod lands
/// on the other node.
#[tokio::test]
async fn a_cordoned_node_gets_no_pods() {
    let server = start_server().await;
    let client = client(&server);
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("cordoned", 0));
    components.kubelet(fast_kubelet("open", 1));
    wait_ready_node(&client, "cordoned").await;
    wait_ready_node(&client, "open").await;
    let nodes: Api<Node> = Api::all(client.clone());
    timeout(
        WAIT,
        nodes.patch(
            "cordoned",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": true}})),
        ),
    )
    .await
    .expect("cordon in time")
    .expect("cordon");
    components.scheduler();

    for i in 0..4 {
        create_pod(&client, &pod(&format!("p-{i}"), Some("100m"), None)).await;
    }
    for i in 0..4 {
        let running = wait_running(&client, &format!("p-{i}")).await;
        assert_eq!(node_of(&running), Some("open"), "p-{i}");
    }

    components.stop().await;
    server.shutdown().await;
}

/// A node that is not Ready (here one no kubelet runs, registered NotReady)
/// gets no pods, however big it is.
#[tokio::test]
async fn a_not_ready_node_gets_no_pods() {
    let server = start_server().await;
    let client = client(&server);
    let nodes: Api<Node> = Api::all(client.clone());
    let not_ready: Node = serde_json::from_value(json!({
        "metadata": {"name": "not-ready"},
        "status": {
            "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
            "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}],
        },
    }))
    .expect("node");
    timeout(WAIT, nodes.create(&PostParams::default(), &not_ready))
        .await
        .expect("create in time")
        .expect("create");
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("ready", 1));
    wait_ready_node(&client, "ready").await;
    components.scheduler();

    for i in 0..3 {
        create_pod(&client, &pod(&format!("q-{i}"), Some("100m"), None)).await;
    }
    for i in 0..3 {
        let running = wait_running(&client, &format!("q-{i}")).await;
        assert_eq!(node_of(&running), Some("ready"), "q-{i}");
    }

    components.stop().await;
    server.shutdown().await;
}

/// (e) Least allocated spreads pods: six equal pods on two equal nodes, three
/// each (every pod goes to the emptier node, ties at random).
#[tokio::test]
async fn least_allocated_spreads_pods_over_nodes() {
    let server = start_server().await;
    let client = client(&server);
    let mut components = Components::new(client.clone());
    components.kubelet(fast_kubelet("spread-0", 0));
    components.kubelet(fast_kubelet("spread-1", 1));
    wait_ready_node(&client, "spread-0").await;
    wait_ready_node(&client, "spread-1").await;
    components.scheduler();

    for i in 0..6 {
        create_pod(&client, &pod(&format!("s-{i}"), Some("500m"), None)).await;
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let placement = wait_for(&client, "all six pods bound", || async {
        let list = pods.list(&ListParams::default()).await.ok()?;
        let nodes: Vec<String> = list
            .items
            .iter()
            .filter_map(|p| node_of(p).map(str::to_string))
            .collect();
        (nodes.len() == 6).then_some(nodes)
    })
    .await;
    let mut per_node: BTreeMap<String, usize> = BTreeMap::new();
    for node in placement {
        *per_node.entry(node).or_default() += 1;
    }
    assert_eq!(
        per_node,
        BTreeMap::from([("spread-0".to_string(), 3), ("spread-1".to_string(), 3)])
    );

    components.stop().await;
    server.shutdown().await;
}
