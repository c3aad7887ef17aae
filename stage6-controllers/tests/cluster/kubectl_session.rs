//! The part of a Kubernetes-basics session that needs controllers, a
//! scheduler and nodes, with the real kubectl against the `mini-cluster`
//! binary, on the embedded store and on real etcd:
//!
//! - the nodes are Ready; `create deployment` makes pods that `get pods -o wide
//!   -w` shows landing on the hollow nodes and turning Running;
//! - `scale` up and down; a deleted pod is replaced;
//! - `set image` and `rollout status` follow a rolling update; `rollout
//!   history` lists the revisions; `rollout undo` brings the first template
//!   back as revision 3;
//! - `delete deployment` takes its ReplicaSets and pods with it;
//!   `--cascade=orphan` leaves them, without their owner.
//!
//! Every wait is bounded: kubectl's own (`wait`, `rollout status`, `get -w`)
//! with a `--timeout`, or a look at the pods after every change the cluster
//! reports. The cluster process is stopped by its PID when the session ends,
//! or killed if the test fails.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use stage5_apiserver::testing::{Kubectl, WAIT, Watching, kubectl_or_skip};
use tokio::sync::mpsc;
use tokio::time::timeout;

use crate::common::wait_for;

/// `--timeout` for kubectl's own waits: each takes a few seconds, and a
/// stubbed controller (an exercise not yet written) fails the test well within
/// `cargo xtask exercise verify`'s 60 s limit for one test.
const KUBECTL_WAIT: &str = "--timeout=25s";

/// A `mini-cluster` process this test started.
struct MiniCluster {
    child: Child,
    url: String,
}

impl MiniCluster {
    /// Starts the binary on free loopback ports with `extra` flags, and waits
    /// (bounded) for the line that says where it serves.
    async fn start(extra: &[String]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mini-cluster"))
            .args([
                "--bind",
                "127.0.0.1:0",
                "--controller-manager-bind-address",
                "127.0.0.1:0",
                "--nodes",
                "3",
                "--pod-start-delay",
                "200ms",
                "--pod-stop-delay",
                "200ms",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("mini-cluster starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, mut lines) = mpsc::unbounded_channel::<String>();
        std::thread::spawn(move || {
            // Read to the end, whoever still listens: the cluster's output
            // never meets a closed pipe.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                eprintln!("mini-cluster: {line}");
                let _ = tx.send(line);
            }
        });
        let url = timeout(WAIT, async {
            while let Some(line) = lines.recv().await {
                if let Some(url) = line.strip_prefix("mini-cluster serving on ") {
                    return url.trim().to_string();
                }
            }
            panic!("mini-cluster exited before it served");
        })
        .await
        .expect("mini-cluster serves in time");
        MiniCluster { child, url }
    }

    /// SIGINT, as Ctrl-C, and the exit it answers with, within [`WAIT`].
    async fn stop(mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-INT", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "SIGINT to {pid}");
        let mut child = std::mem::replace(
            &mut self.child,
            Command::new("true").spawn().expect("a placeholder process"),
        );
        let status =
            timeout(WAIT, tokio::task::spawn_blocking(move || child.wait()))
                .await
                .expect("mini-cluster stops in time")
                .expect("join")
                .expect("wait");
        assert!(status.success(), "mini-cluster exited with {status}");
    }
}

impl Drop for MiniCluster {
    fn drop(&mut self) {
        // A failed test: no process outlives it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pods of `app`, as `NAME STATUS NODE IP` rows.
async fn pods(
    kubectl: &Kubectl,
    app: &str,
) -> Vec<(String, String, String, String)> {
    let selector = format!("app={app}");
    let out = kubectl
        .ok(&[
            "get",
            "pods",
            "-l",
            &selector,
            "-o",
            "custom-columns=NAME:.metadata.name,PHASE:.status.phase,NODE:.spec.nodeName,IP:.status.podIP",
            "--no-headers",
        ])
        .await;
    out.lines()
        .map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            let cell =
                |i: usize| cells.get(i).copied().unwrap_or_default().to_string();
            (cell(0), cell(1), cell(2), cell(3))
        })
        .collect()
}

/// `rollout status`, which returns once the rollout is complete.
async fn rolled_out(kubectl: &Kubectl, deployment: &str) {
    let target = format!("deployment/{deployment}");
    let out = kubectl
        .ok(&["rollout", "status", &target, KUBECTL_WAIT])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
}

/// Waits until `app` has exactly `count` pods, none of them terminating, each
/// Running on a hollow node with an IP from that node's range (read through
/// the API after every change, as the kubelets and controllers make them).
async fn running_on_nodes(client: &kube::Client, app: &str, count: usize) {
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let selector = format!("app={app}");
    let what = format!("{count} pods of {app} Running on hollow nodes");
    wait_for(client, &what, || async {
        let pods = api
            .list(&ListParams::default().labels(&selector))
            .await
            .ok()?;
        let settled = pods.items.len() == count
            && pods.items.iter().all(|pod| {
                let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
                let status = pod.status.as_ref();
                let ip =
                    status.and_then(|s| s.pod_ip.as_deref()).unwrap_or_default();
                let phase = status.and_then(|s| s.phase.as_deref());
                match node.and_then(|n| n.strip_prefix("hollow-node-")) {
                    Some(index) => {
                        pod.metadata.deletion_timestamp.is_none()
                            && phase == Some("Running")
                            && ip.starts_with(&format!("10.244.{index}."))
                    }
                    None => false,
                }
            });
        settled.then_some(())
    })
    .await;
}

async fn session(extra: &[String]) {
    let Some(bin) = kubectl_or_skip("kubectl_session") else {
        return;
    };
    let cluster = MiniCluster::start(extra).await;
    let kubectl = Kubectl::for_url(bin, cluster.url.clone());
    let client = kube::Client::try_from(kube::Config::new(
        cluster.url.parse().expect("the cluster's URL"),
    ))
    .expect("a client");

    // Three nodes, Ready.
    kubectl
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "node",
            "--all",
            KUBECTL_WAIT,
        ])
        .await;
    let nodes = kubectl.ok(&["get", "nodes", "--no-headers"]).await;
    assert_eq!(nodes.lines().count(), 3, "{nodes}");
    assert!(nodes.lines().all(|l| l.contains(" Ready ")), "{nodes}");

    // A deployment, its pods watched as they land on nodes and turn Running.
    let mut watching =
        Watching::start(&kubectl, &["get", "pods", "-o", "wide", "-w"]);
    let created = kubectl
        .ok(&[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=3",
        ])
        .await;
    assert!(created.contains("deployment.apps/web created"), "{created}");
    let mut running_on = std::collections::BTreeMap::new();
    while running_on.len() < 3 {
        let line = watching.next_line().await;
        let cells: Vec<&str> = line.split_whitespace().collect();
        // NAME READY STATUS RESTARTS AGE IP NODE ...
        if cells.get(2) == Some(&"Running") {
            let node = cells.get(6).copied().unwrap_or_default();
            assert!(node.starts_with("hollow-node-"), "{line}");
            running_on.insert(cells[0].to_string(), node.to_string());
        }
    }
    watching.stop().await;
    rolled_out(&kubectl, "web").await;
    running_on_nodes(&client, "web", 3).await;
    let rs = kubectl
        .ok(&["get", "rs", "-l", "app=web", "--no-headers"])
        .await;
    assert_eq!(rs.lines().count(), 1, "one ReplicaSet: {rs}");

    // Scale up and down.
    kubectl
        .ok(&["scale", "deployment", "web", "--replicas=5"])
        .await;
    rolled_out(&kubectl, "web").await;
    running_on_nodes(&client, "web", 5).await;
    kubectl
        .ok(&["scale", "deployment", "web", "--replicas=2"])
        .await;
    running_on_nodes(&client, "web", 2).await;

    // A deleted pod is replaced.
    let victim = pods(&kubectl, "web").await.remove(0).0;
    kubectl.ok(&["delete", "pod", &victim, KUBECTL_WAIT]).await;
    running_on_nodes(&client, "web", 2).await;
    assert!(
        pods(&kubectl, "web")
            .await
            .iter()
            .all(|(name, ..)| *name != victim),
        "{victim} is gone and replaced"
    );

    // A rolling update, its history, and an undo.
    kubectl
        .ok(&["set", "image", "deployment/web", "nginx=nginx:1.28"])
        .await;
    rolled_out(&kubectl, "web").await;
    running_on_nodes(&client, "web", 2).await;
    let images = kubectl
        .ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ])
        .await;
    assert_eq!(
        images.split_whitespace().collect::<Vec<_>>(),
        ["nginx:1.28"; 2]
    );
    let history = kubectl.ok(&["rollout", "history", "deployment/web"]).await;
    let revisions: Vec<&str> = history
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|cell| cell.parse::<u32>().is_ok())
        .collect();
    assert_eq!(revisions, ["1", "2"], "{history}");
    kubectl.ok(&["rollout", "undo", "deployment/web"]).await;
    rolled_out(&kubectl, "web").await;
    let image = kubectl
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(image, "nginx:1.27");
    let history = kubectl.ok(&["rollout", "history", "deployment/web"]).await;
    let revisions: Vec<&str> = history
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|cell| cell.parse::<u32>().is_ok())
        .collect();
    assert_eq!(revisions, ["2", "3"], "{history}");
    let rs = kubectl
        .ok(&[
            "get",
            "rs",
            "-l",
            "app=web",
            "-o",
            "custom-columns=DESIRED:.spec.replicas",
            "--no-headers",
        ])
        .await;
    let mut desired: Vec<&str> = rs.lines().map(str::trim).collect();
    desired.sort_unstable();
    assert_eq!(desired, ["0", "2"], "{rs}");

    // Deleting the deployment deletes its ReplicaSets and pods.
    kubectl.ok(&["delete", "deployment", "web"]).await;
    kubectl
        .ok(&["wait", "--for=delete", "pod", "-l", "app=web", KUBECTL_WAIT])
        .await;
    kubectl
        .ok(&["wait", "--for=delete", "rs", "-l", "app=web", KUBECTL_WAIT])
        .await;

    // --cascade=orphan leaves them, without their owner.
    kubectl
        .ok(&[
            "create",
            "deployment",
            "keep",
            "--image=nginx:1.27",
            "--replicas=2",
        ])
        .await;
    rolled_out(&kubectl, "keep").await;
    kubectl
        .ok(&[
            "delete",
            "deployment",
            "keep",
            "--cascade=orphan",
            KUBECTL_WAIT,
        ])
        .await;
    let owners = kubectl
        .ok(&[
            "get",
            "rs",
            "-l",
            "app=keep",
            "-o",
            "jsonpath={.items[*].metadata.ownerReferences}",
        ])
        .await;
    assert_eq!(owners.trim(), "", "the ReplicaSet lost its owner");
    let deployments = kubectl.run(&["get", "deployment", "keep"]).await;
    assert!(
        !deployments.ok && deployments.stderr.contains("NotFound"),
        "{}",
        deployments.stderr
    );
    running_on_nodes(&client, "keep", 2).await;

    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_session_on_the_embedded_store() {
    timeout(4 * WAIT, session(&[]))
        .await
        .expect("the session ends in time");
}

#[cfg(feature = "etcd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_session_on_real_etcd() {
    use stage5_storage::testing::EtcdServer;
    let Some(etcd) =
        EtcdServer::start_or_skip_async("kubectl_session_on_real_etcd").await
    else {
        return;
    };
    timeout(
        4 * WAIT,
        session(&["--etcd".to_string(), etcd.client_url()]),
    )
    .await
    .expect("the session ends in time");
    drop(etcd);
}
