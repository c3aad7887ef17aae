//! The real kubectl against the mini-apiserver: `get pods`, `get pods -w` seeing a
//! change, `create -f` a YAML file (with kubectl's default strict validation),
//! `delete`, `get pods -A`, `patch` (a strategic merge patch adding a sidecar keeps
//! the containers), client-side `apply` (its `$setElementOrder` and
//! `$patch: delete`), the typed creates' protobuf bodies, and the server's tables
//! as `kubectl get` prints them (`-o wide` included).
//!
//! kubectl runs with `--server http://127.0.0.1:PORT`, `--cache-dir` in the test's temp dir and
//! `KUBECONFIG` pointing at an empty file there, so the user's own config is never
//! read or touched. Where kubectl is missing, a local run skips loudly; with
//! `CI=true` it fails. Every wait is bounded; the watching kubectl is killed once it
//! printed the change.

use std::path::Path;

use serde_json::Value;
pub(super) use stage5_apiserver::testing::{
    Kubectl, WAIT, Watching, kubectl_or_skip, output_in_time,
};
use stage5_apiserver::{RunningServer, Server, ServerConfig};

/// The real kubectl against a fresh server on the embedded store, or `None`
/// when kubectl is missing (the test skips; with `CI=true` it fails).
pub async fn kubectl_and_server(test: &str) -> Option<(RunningServer, Kubectl)> {
    let bin = kubectl_or_skip(test)?;
    let server = Server::start(ServerConfig::for_tests())
        .await
        .expect("start");
    let kubectl = Kubectl::new(bin, &server);
    Some((server, kubectl))
}

pub(super) fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

const POD_YAML: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: from-yaml
  labels:
    app: web
spec:
  containers:
  - name: c
    image: nginx
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_get_delete() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_create_get_delete").await
    else {
        return;
    };

    let empty = kubectl.run(&["get", "pods"]).await;
    assert!(empty.ok, "{}", empty.stderr);
    assert!(
        empty.stderr.contains("No resources found"),
        "{}",
        empty.stderr
    );

    let file = kubectl.path("pod.yaml");
    write(&file, POD_YAML);
    let created = kubectl
        .ok(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;
    assert!(created.contains("pod/from-yaml created"), "{created}");
    let again = kubectl
        .run(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;
    assert!(
        !again.ok && again.stderr.contains("AlreadyExists"),
        "{}",
        again.stderr
    );

    let listed = kubectl.ok(&["get", "pods"]).await;
    assert!(
        listed.lines().any(|l| l.starts_with("from-yaml ")),
        "{listed}"
    );
    let everywhere = kubectl.ok(&["get", "pods", "-A"]).await;
    assert!(everywhere.starts_with("NAMESPACE"), "{everywhere}");
    assert!(
        everywhere
            .lines()
            .any(|l| l.starts_with("default ") && l.contains("from-yaml")),
        "{everywhere}"
    );
    let json: Value = serde_json::from_str(
        &kubectl.ok(&["get", "pod", "from-yaml", "-o", "json"]).await,
    )
    .expect("json");
    assert_eq!(json["metadata"]["labels"]["app"], "web");
    assert_eq!(json["spec"]["containers"][0]["image"], "nginx");
    let by_label = kubectl
        .ok(&["get", "pods", "-l", "app=web", "-o", "name"])
        .await;
    assert_eq!(by_label.trim(), "pod/from-yaml");
    kubectl
        .ok(&["label", "pod", "from-yaml", "tier=front"])
        .await;
    let labels = kubectl
        .ok(&[
            "get",
            "pod",
            "from-yaml",
            "-o",
            "jsonpath={.metadata.labels.tier}",
        ])
        .await;
    assert_eq!(labels, "front");

    // A namespace and a deployment from one file (cluster-scoped and apps/v1).
    let multi = kubectl.path("multi.yaml");
    write(
        &multi,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: team-a}\nspec: {replicas: 1}\n",
    );
    kubectl
        .ok(&["create", "-f", multi.to_str().expect("utf-8 path")])
        .await;
    assert!(kubectl.ok(&["get", "ns"]).await.contains("team-a"));
    assert!(
        kubectl
            .ok(&["get", "deploy", "-n", "team-a"])
            .await
            .contains("d ")
    );

    let deleted = kubectl.ok(&["delete", "pod", "from-yaml"]).await;
    assert!(deleted.contains("pod \"from-yaml\" deleted"), "{deleted}");
    let gone = kubectl.run(&["get", "pod", "from-yaml"]).await;
    assert!(
        !gone.ok && gone.stderr.contains("NotFound"),
        "{}",
        gone.stderr
    );
    kubectl
        .ok(&["delete", "-f", multi.to_str().expect("utf-8 path")])
        .await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_sees_a_change() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_get_watch_sees_a_change").await
    else {
        return;
    };
    let file = kubectl.path("pod.yaml");
    write(&file, POD_YAML);
    kubectl
        .ok(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;

    let mut watching = Watching::start(&kubectl, &["get", "pods", "-w"]);
    let mut wait_for = async |what: &str| {
        loop {
            let line = watching.next_line().await;
            if line.contains(what) {
                return line;
            }
        }
    };
    wait_for("from-yaml").await;
    // The change: a new pod, made with a second kubectl.
    let second = POD_YAML.replace("from-yaml", "second-pod");
    let second_file = kubectl.path("second.yaml");
    write(&second_file, &second);
    kubectl
        .ok(&["create", "-f", second_file.to_str().expect("utf-8 path")])
        .await;
    let seen = wait_for("second-pod").await;
    assert!(seen.starts_with("second-pod"), "{seen}");
    watching.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_all_api_resources_and_events() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_get_all_api_resources_and_events").await
    else {
        return;
    };

    // Discovery: short names and the `all` category, as upstream reports them.
    let resources = kubectl.ok(&["api-resources", "--no-headers"]).await;
    let row = |name: &str| {
        resources
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            .find(|fields| fields.first() == Some(&name))
            .unwrap_or_default()
    };
    assert_eq!(
        row("pods"),
        ["pods", "po", "v1", "true", "Pod"],
        "{resources}"
    );
    assert_eq!(
        row("events"),
        ["events", "ev", "v1", "true", "Event"],
        "{resources}"
    );
    assert_eq!(
        row("deployments"),
        ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    );
    let in_all = kubectl
        .ok(&["api-resources", "--categories=all", "-o", "name"])
        .await;
    let mut in_all: Vec<&str> = in_all.lines().collect();
    in_all.sort_unstable();
    assert_eq!(
        in_all,
        [
            "cronjobs.batch",
            "daemonsets.apps",
            "deployments.apps",
            "jobs.batch",
            "pods",
            "replicasets.apps",
            "replicationcontrollers",
            "services",
            "statefulsets.apps"
        ]
    );

    // `get all` lists the pods and deployments of the namespace, nothing else.
    let file = kubectl.path("objects.yaml");
    write(
        &file,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx}]}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
    );
    kubectl
        .ok(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;
    let all = kubectl.ok(&["get", "all", "-o", "name"]).await;
    let mut all: Vec<&str> = all.lines().collect();
    all.sort_unstable();
    assert_eq!(all, ["deployment.apps/d", "pod/p"]);

    // Events are an ordinary resource: created, listed by short name, selected
    // by the involved object's name.
    write(
        &file,
        "apiVersion: v1\nkind: Event\nmetadata: {name: p.1}\n\
         involvedObject: {kind: Pod, name: p, namespace: default}\n\
         reason: Started\nmessage: Started container c\ntype: Normal\n",
    );
    kubectl
        .ok(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;
    let events = kubectl.ok(&["get", "ev", "-o", "name"]).await;
    assert_eq!(events.trim(), "event/p.1");
    let selected = kubectl
        .ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=p,reason=Started",
            "-o",
            "jsonpath={.items[*].message}",
        ])
        .await;
    assert_eq!(selected, "Started container c");
    let none = kubectl
        .run(&["get", "events", "--field-selector", "involvedObject.name=q"])
        .await;
    assert!(
        none.ok && none.stderr.contains("No resources found"),
        "{}",
        none.stderr
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_scale_goes_through_the_scale_subresource() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_scale_goes_through_the_scale_subresource").await
    else {
        return;
    };
    let file = kubectl.path("deploy.yaml");
    write(
        &file,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n\
         spec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n\
         \x20 template:\n    metadata: {labels: {app: web}}\n\
         \x20   spec: {containers: [{name: c, image: nginx}]}\n",
    );
    kubectl
        .ok(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;
    let scaled = kubectl
        .ok(&["scale", "deployment", "web", "--replicas=3"])
        .await;
    assert!(scaled.contains("deployment.apps/web scaled"), "{scaled}");
    let replicas = kubectl
        .ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"])
        .await;
    assert_eq!(replicas, "3");
    // A stale precondition is refused (kubectl checks it against the Scale it
    // read from the subresource).
    let stale = kubectl
        .run(&[
            "scale",
            "deployment",
            "web",
            "--replicas=5",
            "--resource-version=1",
        ])
        .await;
    assert!(
        !stale.ok && stale.stderr.contains("Expected resource version to be 1"),
        "{}",
        stale.stderr
    );
    let replicas = kubectl
        .ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"])
        .await;
    assert_eq!(replicas, "3");
    server.shutdown().await;
}

/// `kubectl create namespace|configmap|secret generic|deployment` use client-go's
/// typed clients, which send protobuf bodies: each is stored as its JSON form, the
/// same object `kubectl create -f` of the `--dry-run=client -o json` output gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_typed_creates_send_protobuf_and_store_the_same_objects() {
    let Some((server, kubectl)) = kubectl_and_server(
        "kubectl_typed_creates_send_protobuf_and_store_the_same_objects",
    )
    .await
    else {
        return;
    };
    let created = kubectl.ok(&["create", "namespace", "workshop"]).await;
    assert_eq!(created.trim(), "namespace/workshop created");
    let in_workshop = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-n", "workshop"]);
        all.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    for (args, answer) in [
        (
            in_workshop(&[
                "create",
                "configmap",
                "settings",
                "--from-literal=color=blue",
            ]),
            "configmap/settings created",
        ),
        (
            in_workshop(&[
                "create",
                "secret",
                "generic",
                "creds",
                "--from-literal=password=s3cr3t",
            ]),
            "secret/creds created",
        ),
        (
            in_workshop(&[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.27",
                "--replicas=2",
                "--port=80",
            ]),
            "deployment.apps/web created",
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(kubectl.ok(&args).await.trim(), answer);
    }
    let get = |kind: &str, name: &str| {
        let args = in_workshop(&["get", kind, name, "-o", "json"]);
        let kubectl = &kubectl;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            serde_json::from_str::<Value>(&kubectl.ok(&args).await).expect("json")
        }
    };
    let configmap = get("configmap", "settings").await;
    assert_eq!(configmap["data"], serde_json::json!({"color": "blue"}));
    let secret = get("secret", "creds").await;
    assert_eq!(secret["data"], serde_json::json!({"password": "czNjcjN0"}));
    let deployment = get("deployment", "web").await;
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"],
        serde_json::json!([{"name": "nginx", "image": "nginx:1.27",
            "ports": [{"containerPort": 80, "protocol": "TCP"}], "resources": {},
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"}])
    );
    assert!(deployment["metadata"]["creationTimestamp"].is_string());
    let namespace = kubectl
        .ok(&["get", "namespace", "workshop", "-o", "json"])
        .await;
    let namespace: Value = serde_json::from_str(&namespace).expect("json");
    assert_eq!(namespace["status"]["phase"], "Active");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_patch_adds_a_sidecar_and_keeps_the_containers() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_patch_adds_a_sidecar_and_keeps_the_containers")
            .await
    else {
        return;
    };
    let file = kubectl.path("deploy.yaml");
    write(
        &file,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n\
         spec:\n  replicas: 1\n  selector: {matchLabels: {app: x}}\n\
         \x20 template:\n    metadata: {labels: {app: x}}\n\
         \x20   spec: {containers: [{name: web, image: nginx}]}\n",
    );
    kubectl
        .ok(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;
    // `kubectl patch` sends a strategic merge patch by default.
    let patched = kubectl
        .ok(&[
            "patch",
            "deployment",
            "x",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}"#,
        ])
        .await;
    assert!(patched.contains("deployment.apps/x patched"), "{patched}");
    let containers = kubectl
        .ok(&[
            "get",
            "deploy",
            "x",
            "-o",
            "jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}",
        ])
        .await;
    assert_eq!(containers.trim(), "sidecar=busybox web=nginx");
    // `--type merge` replaces the list, as a JSON merge patch does.
    kubectl
        .ok(&[
            "patch",
            "deployment",
            "x",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"busybox"}]}}}}"#,
        ])
        .await;
    let containers = kubectl
        .ok(&[
            "get",
            "deploy",
            "x",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}",
        ])
        .await;
    assert_eq!(containers, "only");
    server.shutdown().await;
}

/// Client-side `kubectl apply` diffs with the built-in types' patch metadata and
/// sends a strategic merge patch with `$setElementOrder` and `$patch: delete`:
/// the order of the file wins and a container removed from it goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_orders_and_deletes_containers_as_the_file_says() {
    let Some((server, kubectl)) = kubectl_and_server(
        "kubectl_apply_orders_and_deletes_containers_as_the_file_says",
    )
    .await
    else {
        return;
    };
    let file = kubectl.path("deploy.yaml");
    let deployment = |containers: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: x}}\n\
             spec:\n  replicas: 1\n  selector: {{matchLabels: {{app: x}}}}\n\
             \x20 template:\n    metadata: {{labels: {{app: x}}}}\n\
             \x20   spec: {{containers: [{containers}]}}\n"
        )
    };
    let path = file.to_str().expect("utf-8 path");
    let names = || async {
        kubectl
            .ok(&[
                "get",
                "deploy",
                "x",
                "-o",
                "jsonpath={.spec.template.spec.containers[*].name}",
            ])
            .await
    };
    write(&file, &deployment("{name: web, image: nginx}"));
    kubectl.ok(&["apply", "-f", path]).await;
    write(
        &file,
        &deployment("{name: web, image: nginx}, {name: sidecar, image: busybox}"),
    );
    kubectl.ok(&["apply", "-f", path]).await;
    assert_eq!(names().await, "web sidecar");
    write(&file, &deployment("{name: sidecar, image: busybox}"));
    kubectl.ok(&["apply", "-f", path]).await;
    assert_eq!(names().await, "sidecar");
    server.shutdown().await;
}

/// The header and the row with a cell `name` in kubectl's table output, split at runs of
/// two or more spaces (a column name may have one space: `NOMINATED NODE`).
fn table_row(output: &str, name: &str) -> (Vec<String>, Vec<String>) {
    let split = |line: &str| -> Vec<String> {
        line.split("  ")
            .map(str::trim)
            .filter(|cell| !cell.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut lines = output.lines();
    let header = split(lines.next().unwrap_or_default());
    let row = lines
        .map(split)
        .find(|cells| cells.iter().any(|cell| cell == name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{output}"));
    (header, row)
}

/// The status a kubelet would write for `web-0` (a create drops a pod's status,
/// as upstream's `PrepareForCreate` does), through the `status` subresource.
const PRINTED_POD_STATUS: &str = r#"{"status": {"phase": "Running", "podIP": "10.1.2.3",
  "containerStatuses": [
    {"name": "c", "ready": true, "restartCount": 0, "image": "nginx", "imageID": "",
     "state": {"running": {}}},
    {"name": "d", "ready": false, "restartCount": 4, "image": "busybox", "imageID": "",
     "state": {"waiting": {"reason": "CrashLoopBackOff"}},
     "lastState": {"terminated": {"exitCode": 1, "finishedAt": "FINISHED"}}}]}}"#;

const PRINTED_YAML: &str = "\
apiVersion: v1
kind: Pod
metadata: {name: web-0, labels: {app: web}}
spec:
  nodeName: node-a
  containers: [{name: c, image: nginx}, {name: d, image: busybox}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {node-role.kubernetes.io/control-plane: ''}}
status:
  conditions: [{type: Ready, status: 'True'}]
  addresses: [{type: InternalIP, address: 192.168.9.1}]
  nodeInfo: {kubeletVersion: v1.28.3, osImage: Debian, kernelVersion: '6.1', containerRuntimeVersion: 'containerd://1.7', machineID: m, systemUUID: s, bootID: b, kubeProxyVersion: '', operatingSystem: linux, architecture: amd64}
---
apiVersion: v1
kind: Event
metadata: {name: web-0.backoff}
involvedObject: {kind: Pod, name: web-0, namespace: default, fieldPath: 'spec.containers{d}'}
reason: BackOff
type: Warning
message: Back-off restarting failed container d
source: {component: kubelet, host: node-a}
firstTimestamp: FINISHED
lastTimestamp: FINISHED
count: 4
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_prints_the_servers_tables() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_prints_the_servers_tables").await
    else {
        return;
    };
    let file = kubectl.path("objects.yaml");
    // The last restart 200 s ago: RESTARTS says `4 (3m20s ago)`.
    let finished = k8s_openapi::jiff::Timestamp::from_second(
        k8s_openapi::jiff::Timestamp::now().as_second() - 200,
    )
    .expect("a time");
    write(
        &file,
        &PRINTED_YAML.replace("FINISHED", &format!("'{finished}'")),
    );
    kubectl
        .ok(&["create", "-f", file.to_str().expect("utf-8 path")])
        .await;
    let status = PRINTED_POD_STATUS.replace("FINISHED", &finished.to_string());
    kubectl
        .ok(&[
            "patch",
            "pod",
            "web-0",
            "--subresource=status",
            "--type=merge",
            "-p",
            &status,
        ])
        .await;

    // Pods: the server's columns and the printPod values.
    let pods = kubectl.ok(&["get", "pods"]).await;
    let (header, row) = table_row(&pods, "web-0");
    assert_eq!(
        header,
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{pods}"
    );
    assert_eq!(row[..3], ["web-0", "1/2", "CrashLoopBackOff"], "{pods}");
    assert!(
        ["4 (3m20s ago)", "4 (3m21s ago)", "4 (3m22s ago)"]
            .contains(&row[3].as_str()),
        "{pods}"
    );
    assert!(row[4].ends_with('s'), "an age in seconds: {pods}");
    let wide = kubectl.ok(&["get", "pods", "-o", "wide"]).await;
    let (header, row) = table_row(&wide, "web-0");
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES"
        ],
        "{wide}"
    );
    assert_eq!(
        row[5..],
        ["10.1.2.3", "node-a", "<none>", "<none>"],
        "{wide}"
    );

    let deployments = kubectl.ok(&["get", "deployments", "-o", "wide"]).await;
    let (header, row) = table_row(&deployments, "web");
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ],
        "{deployments}"
    );
    assert_eq!(row[..4], ["web", "0/2", "0", "0"], "{deployments}");
    assert_eq!(row[5..], ["c", "nginx", "app=web"], "{deployments}");

    let namespaces = kubectl.ok(&["get", "namespaces"]).await;
    let (header, row) = table_row(&namespaces, "default");
    assert_eq!(header, ["NAME", "STATUS", "AGE"], "{namespaces}");
    assert_eq!(row[1], "Active", "{namespaces}");

    let nodes = kubectl.ok(&["get", "nodes", "-o", "wide"]).await;
    let (header, row) = table_row(&nodes, "node-a");
    assert_eq!(
        header[..7],
        [
            "NAME",
            "STATUS",
            "ROLES",
            "AGE",
            "VERSION",
            "INTERNAL-IP",
            "EXTERNAL-IP"
        ],
        "{nodes}"
    );
    assert_eq!(row[1..3], ["Ready", "control-plane"], "{nodes}");
    assert_eq!(row[4..7], ["v1.28.3", "192.168.9.1", "<none>"], "{nodes}");

    // Events: the event printer's columns; wide adds the subobject, source,
    // count, first seen and name.
    let events = kubectl.ok(&["get", "events", "-o", "wide"]).await;
    let (header, row) = table_row(&events, "web-0.backoff");
    assert_eq!(
        header,
        [
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME"
        ],
        "{events}"
    );
    assert_eq!(
        row[1..],
        [
            "Warning",
            "BackOff",
            "pod/web-0",
            "spec.containers{d}",
            "kubelet, node-a",
            "Back-off restarting failed container d",
            &row[7],
            "4",
            "web-0.backoff"
        ],
        "{events}"
    );
    assert!(row[7].starts_with("3m2"), "{events}");
    let events = kubectl.ok(&["get", "events"]).await;
    assert!(
        events.starts_with("LAST SEEN") && events.contains("pod/web-0"),
        "{events}"
    );
    server.shutdown().await;
}

const DEPLOY_YAML: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_server_side_conflicts_and_forces() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_apply_server_side_conflicts_and_forces").await
    else {
        return;
    };
    let file = kubectl.path("deploy.yaml");
    write(&file, DEPLOY_YAML);
    let file = file.to_str().expect("utf-8 path");
    for _ in 0..2 {
        let applied = kubectl.ok(&["apply", "--server-side", "-f", file]).await;
        assert!(
            applied.contains("deployment.apps/web serverside-applied"),
            "{applied}"
        );
    }
    let json: Value = serde_json::from_str(
        &kubectl
            .ok(&[
                "get",
                "deploy",
                "web",
                "-o",
                "json",
                "--show-managed-fields",
            ])
            .await,
    )
    .expect("json");
    let entries = json["metadata"]["managedFields"]
        .as_array()
        .expect("entries");
    assert_eq!(entries.len(), 1, "{json}");
    assert_eq!(entries[0]["manager"], "kubectl");
    assert_eq!(entries[0]["operation"], "Apply");
    assert_eq!(
        entries[0]["fieldsV1"]["f:spec"]["f:replicas"],
        serde_json::json!({})
    );

    // Another manager changing replicas: kubectl shows upstream's conflict.
    let other = kubectl.path("other.yaml");
    write(&other, &DEPLOY_YAML.replace("replicas: 2", "replicas: 3"));
    let other = other.to_str().expect("utf-8 path");
    let refused = kubectl
        .run(&[
            "apply",
            "--server-side",
            "--field-manager=other",
            "-f",
            other,
        ])
        .await;
    assert!(!refused.ok, "{}", refused.stdout);
    assert!(
        refused.stderr.contains(
            "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas"
        ),
        "{}",
        refused.stderr
    );
    let replicas = kubectl
        .ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"])
        .await;
    assert_eq!(replicas, "2");
    let forced = kubectl
        .ok(&[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            other,
        ])
        .await;
    assert!(forced.contains("serverside-applied"), "{forced}");
    let replicas = kubectl
        .ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"])
        .await;
    assert_eq!(replicas, "3");

    // What kubectl create set is kubectl-create's: applying another value
    // conflicts with it.
    let created = kubectl.path("cm.yaml");
    write(
        &created,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n",
    );
    kubectl
        .ok(&["create", "-f", created.to_str().expect("utf-8 path")])
        .await;
    let changed = kubectl.path("cm2.yaml");
    write(
        &changed,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"2\"}\n",
    );
    let clash = kubectl
        .run(&[
            "apply",
            "--server-side",
            "-f",
            changed.to_str().expect("utf-8 path"),
        ])
        .await;
    assert!(!clash.ok, "{}", clash.stdout);
    assert!(
        clash
            .stderr
            .contains("conflict with \"kubectl-create\" using v1: .data.a"),
        "{}",
        clash.stderr
    );
    server.shutdown().await;
}

/// `kubectl apply --dry-run=server` and `kubectl diff` send `dryRun=All`: they
/// show what would change, and nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_diff_and_server_dry_run_change_nothing() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_diff_and_server_dry_run_change_nothing").await
    else {
        return;
    };
    let file = kubectl.path("cm.yaml");
    let path = file.to_str().expect("utf-8 path").to_string();
    let config = |mode: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: app}}\ndata: {{mode: {mode}}}\n"
        )
    };
    write(&file, &config("blue"));
    let dry = kubectl
        .ok(&["apply", "--dry-run=server", "-f", &path])
        .await;
    assert_eq!(dry.trim(), "configmap/app created (server dry run)");
    let missing = kubectl.run(&["get", "configmap", "app"]).await;
    assert!(!missing.ok, "a dry run stored nothing");
    kubectl.ok(&["apply", "-f", &path]).await;
    write(&file, &config("green"));
    let diff = kubectl.run(&["diff", "-f", &path]).await;
    assert!(!diff.ok, "kubectl diff exits 1 when there is a difference");
    assert!(
        diff.stdout.contains("-  mode: blue")
            && diff.stdout.contains("+  mode: green"),
        "{}",
        diff.stdout
    );
    let mode = kubectl
        .ok(&["get", "configmap", "app", "-o", "jsonpath={.data.mode}"])
        .await;
    assert_eq!(mode, "blue");
    server.shutdown().await;
}

/// `kubectl auth can-i` sends a protobuf `SelfSubjectAccessReview` (and
/// `--list` a `SelfSubjectRulesReview`): this server allows everything, as
/// kube-apiserver with `--authorization-mode=AlwaysAllow`, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth_can_i_answers_yes() {
    let Some((server, kubectl)) =
        kubectl_and_server("kubectl_auth_can_i_answers_yes").await
    else {
        return;
    };
    assert_eq!(
        kubectl.ok(&["auth", "can-i", "get", "pods"]).await.trim(),
        "yes"
    );
    assert_eq!(
        kubectl
            .ok(&[
                "auth",
                "can-i",
                "delete",
                "deployments",
                "-n",
                "kube-system"
            ])
            .await
            .trim(),
        "yes"
    );
    let list = kubectl.ok(&["auth", "can-i", "--list"]).await;
    assert!(list.lines().any(|l| l.starts_with("*.*")), "{list}");
    let resources = kubectl
        .ok(&["api-resources", "--api-group=authorization.k8s.io"])
        .await;
    assert!(
        resources.contains("selfsubjectaccessreviews"),
        "{resources}"
    );
    server.shutdown().await;
}
