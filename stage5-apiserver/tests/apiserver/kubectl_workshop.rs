//! A whole Kubernetes-basics session with the real kubectl against a fresh
//! server, as a workshop runs it, on the embedded store and on real etcd. Each
//! answer is checked:
//!
//! - `create namespace`, `configmap`, `secret generic` and `deployment` (typed
//!   clients: protobuf bodies), `run`, `scale`, `label`, `annotate`;
//! - `get` with the server's columns, `-o wide`, `-o yaml`, `-w`;
//! - the three patch types, a client-side `apply` twice, a server-side `apply`
//!   twice, a second field manager's conflict and `--force-conflicts`;
//! - `get all`, `get events`, `describe`, `explain`, `delete` (the namespace
//!   terminates, then goes).
//!
//! The session is written as a transcript; with `WORKSHOP_TRANSCRIPT=FILE` the
//! embedded-store run saves it there (the book's HTTP page shows one).

use serde_json::Value;
use stage5_apiserver::{Backend, Server, ServerConfig};
use tokio::time::timeout;

use super::server_kubectl::{Kubectl, WAIT, Watching, kubectl_or_skip, write};

/// The commands and their answers, as a terminal shows them.
#[derive(Default)]
struct Transcript {
    text: String,
}

/// One kubectl session in namespace `workshop`, recorded.
struct Session<'a> {
    kubectl: &'a Kubectl,
    transcript: Transcript,
}

impl Session<'_> {
    /// Runs `kubectl ARGS`, records it, and answers its output; it must succeed.
    async fn ok(&mut self, args: &[&str]) -> String {
        let out = self.kubectl.run(args).await;
        self.record(args, &out.stdout, &out.stderr);
        assert!(
            out.ok,
            "kubectl {args:?} failed:\n{}{}",
            out.stdout, out.stderr
        );
        out.stdout
    }

    /// Runs `kubectl ARGS`, which must fail; answers its error output.
    async fn fails(&mut self, args: &[&str]) -> String {
        let out = self.kubectl.run(args).await;
        self.record(args, &out.stdout, &out.stderr);
        assert!(!out.ok, "kubectl {args:?} succeeded:\n{}", out.stdout);
        out.stderr
    }

    fn record(&mut self, args: &[&str], stdout: &str, stderr: &str) {
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains([' ', '{', '"', '*']) {
                    format!("'{a}'")
                } else {
                    (*a).to_string()
                }
            })
            .collect();
        // Files are shown by name, without the test's temporary folder.
        let folder = self.kubectl.path("");
        let folder = folder.to_str().unwrap_or_default();
        let command = shown.join(" ").replace(folder, "");
        let text = &mut self.transcript.text;
        text.push_str(&format!("$ kubectl {command}\n{stdout}{stderr}"));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
}

/// The header and the row with a cell `cell` in kubectl's table output (cells
/// are two or more spaces apart).
fn row<'a>(table: &'a str, cell: &str) -> (Vec<&'a str>, Vec<&'a str>) {
    let columns = |line: &'a str| -> Vec<&'a str> {
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect()
    };
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default();
    let found = lines
        .map(columns)
        .find(|cells| cells.contains(&cell))
        .unwrap_or_else(|| panic!("no row with {cell} in\n{table}"));
    (columns(header), found)
}

const APP_CONFIG: &str = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: workshop}
data: {mode: COLOR}
";

const API_DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: workshop, labels: {app: api}}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: IMAGE}]
";

const EVENT: &str = "\
apiVersion: v1
kind: Event
metadata: {name: probe.pulled, namespace: workshop}
involvedObject: {kind: Pod, name: probe, namespace: workshop, uid: UID, apiVersion: v1}
reason: Pulled
type: Normal
message: Successfully pulled image busybox:1.36
source: {component: kubelet}
firstTimestamp: NOW
lastTimestamp: NOW
count: 1
";

async fn workshop(backend: Backend) -> String {
    let Some(bin) = kubectl_or_skip("kubectl_workshop") else {
        return String::new();
    };
    let server = Server::start(ServerConfig::for_tests().backend(backend))
        .await
        .expect("start");
    let kubectl = Kubectl::new(bin, &server);
    let mut s = Session {
        kubectl: &kubectl,
        transcript: Transcript::default(),
    };
    let ns = ["-n", "workshop"];
    let with_ns = |args: &[&'static str]| -> Vec<&'static str> {
        let mut all = ns.to_vec();
        all.extend(args);
        all
    };

    // Create: typed clients, protobuf bodies.
    assert_eq!(
        s.ok(&["create", "namespace", "workshop"]).await.trim(),
        "namespace/workshop created"
    );
    for (args, answer) in [
        (
            with_ns(&[
                "create",
                "configmap",
                "settings",
                "--from-literal=color=blue",
            ]),
            "configmap/settings created",
        ),
        (
            with_ns(&[
                "create",
                "secret",
                "generic",
                "creds",
                "--from-literal=password=s3cr3t",
            ]),
            "secret/creds created",
        ),
        (
            with_ns(&[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.27",
                "--replicas=2",
            ]),
            "deployment.apps/web created",
        ),
        (
            with_ns(&[
                "run",
                "probe",
                "--image=busybox:1.36",
                "--labels=app=probe",
                "--",
                "sleep",
                "3600",
            ]),
            "pod/probe created",
        ),
        (
            with_ns(&["scale", "deployment", "web", "--replicas=3"]),
            "deployment.apps/web scaled",
        ),
        (
            with_ns(&["label", "pod", "probe", "tier=debug"]),
            "pod/probe labeled",
        ),
        (
            with_ns(&["annotate", "pod", "probe", "owner=alice"]),
            "pod/probe annotated",
        ),
    ] {
        assert_eq!(s.ok(&args).await.trim(), answer);
    }

    // Get: the server's columns, -o wide, -o yaml.
    let pods = s.ok(&with_ns(&["get", "pods"])).await;
    let (header, probe) = row(&pods, "probe");
    assert_eq!(
        header,
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{pods}"
    );
    assert_eq!(probe[..4], ["probe", "0/1", "Pending", "0"], "{pods}");
    let wide = s.ok(&with_ns(&["get", "pods", "-o", "wide"])).await;
    let (header, probe) = row(&wide, "probe");
    assert_eq!(
        header[5..],
        ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"],
        "{wide}"
    );
    assert_eq!(probe[5..], ["<none>"; 4], "{wide}");
    let yaml = s
        .ok(&with_ns(&["get", "deployment", "web", "-o", "yaml"]))
        .await;
    let web: Value = serde_yaml::from_str(&yaml).expect("yaml");
    assert_eq!(web["spec"]["replicas"], 3);
    assert_eq!(web["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        web["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(
        web["metadata"]["generation"], 2,
        "the scale changed the spec"
    );
    let managers = s
        .ok(&with_ns(&[
            "get",
            "deployment",
            "web",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
        ]))
        .await;
    // Sorted by time, then by name: the order depends on whether the create
    // and the scale fell in the same second.
    let mut managers: Vec<&str> = managers.split_whitespace().collect();
    managers.sort_unstable();
    assert_eq!(managers, ["kubectl", "kubectl-create"]);

    // get -w: the first row, then the change a second kubectl makes.
    {
        let mut watching =
            Watching::start(&kubectl, &with_ns(&["get", "pods", "-w"]));
        let header = watching.next_line().await;
        let first = watching.next_line().await;
        let changed = s
            .ok(&with_ns(&["label", "pod", "probe", "stage=watched"]))
            .await;
        assert_eq!(changed.trim(), "pod/probe labeled");
        let second = watching.next_line().await;
        s.transcript.text.push_str(&format!(
            "$ kubectl -n workshop get pods -w    # in a second terminal\n{header}\n{first}\n{second}\n"
        ));
        assert!(header.starts_with("NAME"), "{header}");
        assert!(
            first.starts_with("probe") && second.starts_with("probe"),
            "{second}"
        );
        watching.stop().await;
    }

    // The three patch types.
    let json_patch = r#"[{"op": "replace", "path": "/spec/replicas", "value": 4}]"#;
    let merge_patch = r#"{"metadata": {"labels": {"team": "blue"}}}"#;
    let strategic = r#"{"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox:1.36"}]}}}}"#;
    for (kind, patch) in [
        ("json", json_patch),
        ("merge", merge_patch),
        ("strategic", strategic),
    ] {
        let args = with_ns(&["patch", "deployment", "web"]);
        let type_flag = format!("--type={kind}");
        let mut args: Vec<&str> = args.clone();
        args.extend([type_flag.as_str(), "-p", patch]);
        assert_eq!(s.ok(&args).await.trim(), "deployment.apps/web patched");
    }
    let web = s
        .ok(&with_ns(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.labels.team} {.spec.template.spec.containers[*].name}",
        ]))
        .await;
    assert_eq!(web, "4 blue sidecar nginx");

    // Client-side apply, twice.
    let file = kubectl.path("app-config.yaml");
    let path = file.to_str().expect("utf-8 path").to_string();
    write(&file, &APP_CONFIG.replace("COLOR", "blue"));
    assert_eq!(
        s.ok(&["apply", "-f", &path]).await.trim(),
        "configmap/app-config created"
    );
    write(&file, &APP_CONFIG.replace("COLOR", "green"));
    assert_eq!(
        s.ok(&["apply", "-f", &path]).await.trim(),
        "configmap/app-config configured"
    );

    // Server-side apply, twice; another manager's conflict; --force-conflicts.
    let api = kubectl.path("api.yaml");
    let api_path = api.to_str().expect("utf-8 path").to_string();
    let deployment = |replicas: &str, image: &str| {
        API_DEPLOYMENT
            .replace("REPLICAS", replicas)
            .replace("IMAGE", image)
    };
    write(&api, &deployment("2", "nginx:1.27"));
    assert_eq!(
        s.ok(&["apply", "--server-side", "-f", &api_path])
            .await
            .trim(),
        "deployment.apps/api serverside-applied"
    );
    write(&api, &deployment("2", "nginx:1.28"));
    assert_eq!(
        s.ok(&["apply", "--server-side", "-f", &api_path])
            .await
            .trim(),
        "deployment.apps/api serverside-applied"
    );
    let other = kubectl.path("api-scaled.yaml");
    let other_path = other.to_str().expect("utf-8 path").to_string();
    write(&other, &deployment("5", "nginx:1.28"));
    let conflict = s
        .fails(&[
            "apply",
            "--server-side",
            "--field-manager=autoscaler",
            "-f",
            &other_path,
        ])
        .await;
    assert!(
        conflict.contains(
            "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas"
        ),
        "{conflict}"
    );
    assert_eq!(
        s.ok(&[
            "apply",
            "--server-side",
            "--field-manager=autoscaler",
            "--force-conflicts",
            "-f",
            &other_path,
        ])
        .await
        .trim(),
        "deployment.apps/api serverside-applied"
    );
    let api = s
        .ok(&with_ns(&[
            "get",
            "deployment",
            "api",
            "-o",
            "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}",
        ]))
        .await;
    assert_eq!(api, "5 nginx:1.28");

    // get all, events, describe, explain.
    // What a kubelet would report, about the pod by its uid (`describe` finds
    // the pod's events by kind, name, namespace and uid).
    let uid = kubectl
        .ok(&with_ns(&[
            "get",
            "pod",
            "probe",
            "-o",
            "jsonpath={.metadata.uid}",
        ]))
        .await;
    let event = kubectl.path("event.yaml");
    let now = k8s_openapi::jiff::Timestamp::from_second(
        k8s_openapi::jiff::Timestamp::now().as_second(),
    )
    .expect("a time")
    .to_string();
    write(&event, &EVENT.replace("UID", &uid).replace("NOW", &now));
    let event_path = event.to_str().expect("utf-8 path").to_string();
    assert_eq!(
        s.ok(&["create", "-f", &event_path]).await.trim(),
        "event/probe.pulled created"
    );
    let all = s.ok(&with_ns(&["get", "all"])).await;
    for name in ["pod/probe", "deployment.apps/web", "deployment.apps/api"] {
        assert!(all.contains(name), "{all}");
    }
    let events = s.ok(&with_ns(&["get", "events"])).await;
    let (header, pulled) = row(&events, "pod/probe");
    assert!(pulled[0].ends_with('s'), "seen seconds ago: {events}");
    assert_eq!(
        header,
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{events}"
    );
    assert_eq!(pulled[1..4], ["Normal", "Pulled", "pod/probe"], "{events}");
    let describe = s.ok(&with_ns(&["describe", "pod", "probe"])).await;
    for line in [
        "Name:         probe",
        "Namespace:    workshop",
        "Status:       Pending",
        "Image:      busybox:1.36",
        "Normal  Pulled",
    ] {
        assert!(describe.contains(line), "{line:?} in\n{describe}");
    }
    let explain = s.ok(&["explain", "deployment.spec.replicas"]).await;
    assert!(explain.contains("FIELD: replicas <integer>"), "{explain}");
    assert!(explain.contains("Number of desired pods."), "{explain}");

    // Delete: the pod at once; the namespace terminates, then goes with all
    // it holds.
    assert_eq!(
        s.ok(&with_ns(&["delete", "pod", "probe"])).await.trim(),
        "pod \"probe\" deleted"
    );
    assert_eq!(
        s.ok(&["delete", "namespace", "workshop"]).await.trim(),
        "namespace \"workshop\" deleted"
    );
    let gone = s.fails(&["get", "namespace", "workshop"]).await;
    assert!(gone.contains("namespaces \"workshop\" not found"), "{gone}");
    let left = s.fails(&with_ns(&["get", "deployment", "web"])).await;
    assert!(left.contains("not found"), "{left}");
    server.shutdown().await;
    s.transcript.text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_workshop_on_the_embedded_store() {
    let transcript = timeout(4 * WAIT, workshop(Backend::Embedded))
        .await
        .expect("the session ends in time");
    if let Some(path) = std::env::var_os("WORKSHOP_TRANSCRIPT") {
        std::fs::write(path, transcript).expect("write the transcript");
    }
}

#[cfg(feature = "etcd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_workshop_on_real_etcd() {
    use stage5_storage::testing::EtcdServer;
    let Some(etcd) =
        EtcdServer::start_or_skip_async("kubectl_workshop_on_real_etcd").await
    else {
        return;
    };
    timeout(4 * WAIT, workshop(Backend::Etcd(vec![etcd.client_url()])))
        .await
        .expect("the session ends in time");
    drop(etcd);
}
