//! The kinds the real control plane needs (kube-scheduler,
//! kube-controller-manager, kubelets), each through kube-client and the real
//! kubectl, on the embedded store and on real etcd: create, get, list, watch,
//! update and delete, the `status` and `scale` subresources where upstream has
//! them, discovery with their short names, the server's printer columns, and
//! the subresources that are not a store (`pods/eviction` against a disruption
//! budget, `namespaces/finalize`, the CSR's `approval`). Also: a service's
//! cluster IP and node port, a kind that needs a resourceVersion on `PUT`, and
//! the kinds whose delete orphans by default.

use futures::{StreamExt, TryStreamExt};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, EvictParams, ListParams, Patch,
    PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::{Client, Error};
use serde_json::{Value, json};
use stage5_apiserver::testing::{Kubectl, WAIT, kubectl_or_skip};
use stage5_apiserver::{Backend, RunningServer, Server, ServerConfig};
use tokio::time::timeout;

use super::server_kubectl::write;

/// A PEM certificate request, as `spec.request` carries it (base64).
const CSR_PEM: &str = "-----BEGIN CERTIFICATE REQUEST-----\nMIIBADCBpwIBADAVMRMwEQYDVQQDEwpzeXN0ZW06bm9kZTBZMBMGByqGSM49AgEG\n-----END CERTIFICATE REQUEST-----\n";

/// One kind under test.
struct Kind {
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    short: Option<&'static str>,
    namespaced: bool,
    /// The body of a valid object, without type and metadata.
    body: Value,
    /// A merge of the main resource, and where its result shows.
    change: (Value, &'static str, Value),
    /// A merge of `…/status`, and where its result shows.
    status: Option<(Value, &'static str, Value)>,
    scale: bool,
    /// The header `kubectl get` prints.
    columns: &'static str,
}

fn template(app: &str, restart: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
        "spec": {"restartPolicy": restart, "containers": [{"name": "c", "image": "nginx:1.27"}]}})
}

fn kinds() -> Vec<Kind> {
    use base64::Engine as _;
    let csr = base64::engine::general_purpose::STANDARD.encode(CSR_PEM);
    vec![
        Kind {
            group: "",
            kind: "Service",
            plural: "services",
            short: Some("svc"),
            namespaced: true,
            body: json!({"spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}}),
            change: (
                json!({"spec": {"selector": {"app": "api"}}}),
                "/spec/selector/app",
                json!("api"),
            ),
            status: Some((
                json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.7"}]}}}),
                "/status/loadBalancer/ingress/0/ip",
                json!("192.0.2.7"),
            )),
            scale: false,
            columns: "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE",
        },
        Kind {
            group: "",
            kind: "Endpoints",
            plural: "endpoints",
            short: Some("ep"),
            namespaced: true,
            body: json!({"subsets": [{"addresses": [{"ip": "10.1.0.1"}], "ports": [{"port": 80}]}]}),
            change: (
                json!({"subsets": [{"addresses": [{"ip": "10.1.0.2"}], "ports": [{"port": 80}]}]}),
                "/subsets/0/addresses/0/ip",
                json!("10.1.0.2"),
            ),
            status: None,
            scale: false,
            columns: "NAME ENDPOINTS AGE",
        },
        Kind {
            group: "",
            kind: "PersistentVolume",
            plural: "persistentvolumes",
            short: Some("pv"),
            namespaced: false,
            body: json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/pv"}}}),
            change: (
                json!({"spec": {"persistentVolumeReclaimPolicy": "Delete"}}),
                "/spec/persistentVolumeReclaimPolicy",
                json!("Delete"),
            ),
            status: Some((
                json!({"status": {"phase": "Available"}}),
                "/status/phase",
                json!("Available"),
            )),
            scale: false,
            columns: "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE",
        },
        Kind {
            group: "",
            kind: "PersistentVolumeClaim",
            plural: "persistentvolumeclaims",
            short: Some("pvc"),
            namespaced: true,
            body: json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
            change: (
                json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}),
                "/spec/resources/requests/storage",
                json!("2Gi"),
            ),
            status: Some((
                json!({"status": {"phase": "Bound"}}),
                "/status/phase",
                json!("Bound"),
            )),
            scale: false,
            columns: "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE",
        },
        Kind {
            group: "",
            kind: "ReplicationController",
            plural: "replicationcontrollers",
            short: Some("rc"),
            namespaced: true,
            body: json!({"spec": {"replicas": 1, "selector": {"app": "rc"}, "template": template("rc", "Always")}}),
            change: (
                json!({"spec": {"minReadySeconds": 5}}),
                "/spec/minReadySeconds",
                json!(5),
            ),
            status: Some((
                json!({"status": {"replicas": 1, "readyReplicas": 1}}),
                "/status/readyReplicas",
                json!(1),
            )),
            scale: true,
            columns: "NAME DESIRED CURRENT READY AGE",
        },
        Kind {
            group: "",
            kind: "ServiceAccount",
            plural: "serviceaccounts",
            short: Some("sa"),
            namespaced: true,
            body: json!({"secrets": [{"name": "token", "namespace": "elsewhere"}]}),
            change: (
                json!({"automountServiceAccountToken": false}),
                "/automountServiceAccountToken",
                json!(false),
            ),
            status: None,
            scale: false,
            columns: "NAME SECRETS AGE",
        },
        Kind {
            group: "",
            kind: "ResourceQuota",
            plural: "resourcequotas",
            short: Some("quota"),
            namespaced: true,
            body: json!({"spec": {"hard": {"pods": "10"}}}),
            change: (
                json!({"spec": {"hard": {"pods": "20"}}}),
                "/spec/hard/pods",
                json!("20"),
            ),
            status: Some((
                json!({"status": {"hard": {"pods": "20"}, "used": {"pods": "1"}}}),
                "/status/used/pods",
                json!("1"),
            )),
            scale: false,
            columns: "NAME REQUEST LIMIT AGE",
        },
        Kind {
            group: "apps",
            kind: "StatefulSet",
            plural: "statefulsets",
            short: Some("sts"),
            namespaced: true,
            body: json!({"spec": {"replicas": 1, "serviceName": "web",
                "selector": {"matchLabels": {"app": "sts"}}, "template": template("sts", "Always")}}),
            change: (
                json!({"spec": {"minReadySeconds": 3}}),
                "/spec/minReadySeconds",
                json!(3),
            ),
            status: Some((
                json!({"status": {"replicas": 1, "readyReplicas": 1}}),
                "/status/readyReplicas",
                json!(1),
            )),
            scale: true,
            columns: "NAME READY AGE",
        },
        Kind {
            group: "apps",
            kind: "DaemonSet",
            plural: "daemonsets",
            short: Some("ds"),
            namespaced: true,
            body: json!({"spec": {"selector": {"matchLabels": {"app": "ds"}}, "template": template("ds", "Always")}}),
            change: (
                json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.28"}]}}}}),
                "/metadata/annotations/deprecated.daemonset.template.generation",
                json!("2"),
            ),
            status: Some((
                json!({"status": {"desiredNumberScheduled": 2, "numberReady": 1}}),
                "/status/desiredNumberScheduled",
                json!(2),
            )),
            scale: false,
            columns: "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE",
        },
        Kind {
            group: "apps",
            kind: "ControllerRevision",
            plural: "controllerrevisions",
            short: None,
            namespaced: true,
            body: json!({"data": {"spec": {"template": template("ds", "Always")}}, "revision": 1}),
            change: (
                json!({"metadata": {"labels": {"seen": "yes"}}}),
                "/metadata/labels/seen",
                json!("yes"),
            ),
            status: None,
            scale: false,
            columns: "NAME CONTROLLER REVISION AGE",
        },
        Kind {
            group: "batch",
            kind: "Job",
            plural: "jobs",
            short: None,
            namespaced: true,
            body: json!({"spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "pi", "image": "perl:5.34"}]}}}}),
            change: (
                json!({"spec": {"parallelism": 2}}),
                "/spec/parallelism",
                json!(2),
            ),
            status: Some((
                json!({"status": {"active": 1}}),
                "/status/active",
                json!(1),
            )),
            scale: false,
            columns: "NAME STATUS COMPLETIONS DURATION AGE",
        },
        Kind {
            group: "batch",
            kind: "CronJob",
            plural: "cronjobs",
            short: Some("cj"),
            namespaced: true,
            body: json!({"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
            change: (
                json!({"spec": {"schedule": "0 * * * *"}}),
                "/spec/schedule",
                json!("0 * * * *"),
            ),
            status: Some((
                json!({"status": {"lastScheduleTime": "2026-11-28T00:00:00Z"}}),
                "/status/lastScheduleTime",
                json!("2026-11-28T00:00:00Z"),
            )),
            scale: false,
            columns: "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE",
        },
        Kind {
            group: "certificates.k8s.io",
            kind: "CertificateSigningRequest",
            plural: "certificatesigningrequests",
            short: Some("csr"),
            namespaced: false,
            body: json!({"spec": {"request": csr, "signerName": "kubernetes.io/kube-apiserver-client",
                "usages": ["client auth"]}}),
            change: (
                json!({"metadata": {"labels": {"seen": "yes"}}}),
                "/metadata/labels/seen",
                json!("yes"),
            ),
            status: Some((
                json!({"status": {"certificate": "Y2VydA=="}}),
                "/status/certificate",
                json!("Y2VydA=="),
            )),
            scale: false,
            columns: "NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION",
        },
        Kind {
            group: "discovery.k8s.io",
            kind: "EndpointSlice",
            plural: "endpointslices",
            short: None,
            namespaced: true,
            body: json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.1.0.1"]}], "ports": [{"port": 80}]}),
            change: (
                json!({"endpoints": [{"addresses": ["10.1.0.3"]}]}),
                "/endpoints/0/addresses/0",
                json!("10.1.0.3"),
            ),
            status: None,
            scale: false,
            columns: "NAME ADDRESSTYPE PORTS ENDPOINTS AGE",
        },
        Kind {
            group: "policy",
            kind: "PodDisruptionBudget",
            plural: "poddisruptionbudgets",
            short: Some("pdb"),
            namespaced: true,
            body: json!({"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "nobody"}}}}),
            change: (
                json!({"spec": {"minAvailable": 2}}),
                "/spec/minAvailable",
                json!(2),
            ),
            status: Some((
                json!({"status": {"disruptionsAllowed": 1}}),
                "/status/disruptionsAllowed",
                json!(1),
            )),
            scale: false,
            columns: "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE",
        },
        Kind {
            group: "storage.k8s.io",
            kind: "CSIDriver",
            plural: "csidrivers",
            short: None,
            namespaced: false,
            body: json!({"spec": {"attachRequired": true}}),
            change: (
                json!({"spec": {"podInfoOnMount": true}}),
                "/spec/podInfoOnMount",
                json!(true),
            ),
            status: None,
            scale: false,
            columns: "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE",
        },
        Kind {
            group: "storage.k8s.io",
            kind: "CSINode",
            plural: "csinodes",
            short: None,
            namespaced: false,
            body: json!({"spec": {"drivers": [{"name": "hostpath.csi.k8s.io", "nodeID": "n1"}]}}),
            change: (
                json!({"spec": {"drivers": [{"name": "hostpath.csi.k8s.io", "nodeID": "n2"}]}}),
                "/spec/drivers/0/nodeID",
                json!("n2"),
            ),
            status: None,
            scale: false,
            columns: "NAME DRIVERS AGE",
        },
        Kind {
            group: "storage.k8s.io",
            kind: "CSIStorageCapacity",
            plural: "csistoragecapacities",
            short: None,
            namespaced: true,
            body: json!({"storageClassName": "standard", "capacity": "1Gi"}),
            change: (json!({"capacity": "2Gi"}), "/capacity", json!("2Gi")),
            status: None,
            scale: false,
            columns: "NAME STORAGECLASSNAME CAPACITY",
        },
        Kind {
            group: "storage.k8s.io",
            kind: "StorageClass",
            plural: "storageclasses",
            short: Some("sc"),
            namespaced: false,
            body: json!({"provisioner": "example.com/nfs"}),
            change: (
                json!({"allowVolumeExpansion": true}),
                "/allowVolumeExpansion",
                json!(true),
            ),
            status: None,
            scale: false,
            columns: "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE",
        },
        Kind {
            group: "storage.k8s.io",
            kind: "VolumeAttachment",
            plural: "volumeattachments",
            short: None,
            namespaced: false,
            body: json!({"spec": {"attacher": "hostpath.csi.k8s.io", "nodeName": "n1",
                "source": {"persistentVolumeName": "pv-1"}}}),
            change: (
                json!({"metadata": {"labels": {"seen": "yes"}}}),
                "/metadata/labels/seen",
                json!("yes"),
            ),
            status: Some((
                json!({"status": {"attached": true}}),
                "/status/attached",
                json!(true),
            )),
            scale: false,
            columns: "NAME ATTACHER PV NODE ATTACHED AGE",
        },
        Kind {
            group: "node.k8s.io",
            kind: "RuntimeClass",
            plural: "runtimeclasses",
            short: None,
            namespaced: false,
            body: json!({"handler": "runc"}),
            change: (
                json!({"scheduling": {"nodeSelector": {"runtime": "runc"}}}),
                "/scheduling/nodeSelector/runtime",
                json!("runc"),
            ),
            status: None,
            scale: false,
            columns: "NAME HANDLER AGE",
        },
    ]
}

const NS: &str = "kinds";

fn resource(kind: &Kind) -> ApiResource {
    let api_version = if kind.group.is_empty() {
        "v1".to_string()
    } else {
        format!("{}/v1", kind.group)
    };
    ApiResource {
        group: kind.group.into(),
        version: "v1".into(),
        api_version,
        kind: kind.kind.into(),
        plural: kind.plural.into(),
    }
}

fn api(client: &Client, kind: &Kind) -> Api<DynamicObject> {
    let ar = resource(kind);
    if kind.namespaced {
        Api::namespaced_with(client.clone(), NS, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    }
}

/// The object `name` of `kind`, as a manifest.
fn manifest(kind: &Kind, name: &str) -> Value {
    let ar = resource(kind);
    let mut object = json!({"apiVersion": ar.api_version, "kind": kind.kind,
        "metadata": {"name": name}});
    json_patch::merge(&mut object, &kind.body);
    object
}

/// The `Status` of a request that must fail with `code`.
fn refused<T: std::fmt::Debug>(
    result: Result<T, Error>,
    code: u16,
) -> kube::core::Status {
    match result {
        Err(Error::Api(status)) if status.code == code => *status,
        other => panic!("expected {code}, got {other:?}"),
    }
}

/// The value at `pointer` in `object` (`null` when there is none).
fn at(object: &DynamicObject, pointer: &str) -> Value {
    let whole = serde_json::to_value(object).expect("json");
    whole.pointer(pointer).cloned().unwrap_or(Value::Null)
}

/// The next event of `watch` for `name`, within the bound.
async fn next_event(
    watch: &mut (
             impl futures::Stream<Item = Result<WatchEvent<DynamicObject>, Error>> + Unpin
         ),
    name: &str,
) -> WatchEvent<DynamicObject> {
    loop {
        let event = timeout(WAIT, watch.try_next())
            .await
            .expect("an event in time")
            .expect("a watch event")
            .expect("the watch stays open");
        let named = match &event {
            WatchEvent::Added(o)
            | WatchEvent::Modified(o)
            | WatchEvent::Deleted(o) => o.metadata.name.as_deref() == Some(name),
            _ => false,
        };
        if named {
            return event;
        }
    }
}

/// create, get, list, watch, update, status, scale and delete of `kind`
/// through kube-client.
async fn through_kube_client(client: &Client, kind: &Kind) {
    let api = api(client, kind);
    let name = format!("kc-{}", kind.plural);
    let object: DynamicObject =
        serde_json::from_value(manifest(kind, &name)).expect("manifest");
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("create {}: {e}", kind.plural));
    assert!(created.metadata.uid.is_some(), "{}", kind.plural);
    let got = api.get(&name).await.expect("get");
    assert_eq!(got.metadata.uid, created.metadata.uid);
    let list = api.list(&ListParams::default()).await.expect("list");
    assert!(
        list.items
            .iter()
            .any(|o| o.metadata.name.as_deref() == Some(name.as_str()))
    );
    let version = list
        .metadata
        .resource_version
        .clone()
        .expect("list version");
    let mut watch = api
        .watch(&WatchParams::default().timeout(60), &version)
        .await
        .expect("watch")
        .boxed();

    // An update through `PUT`, carrying the resourceVersion read.
    let (change, pointer, wanted) = &kind.change;
    let mut next = serde_json::to_value(&got).expect("json");
    json_patch::merge(&mut next, change);
    let next: DynamicObject = serde_json::from_value(next).expect("object");
    let replaced = api
        .replace(&name, &PostParams::default(), &next)
        .await
        .unwrap_or_else(|e| panic!("replace {}: {e}", kind.plural));
    assert_eq!(&at(&replaced, pointer), wanted, "{} after PUT", kind.plural);
    match next_event(&mut watch, &name).await {
        WatchEvent::Modified(o) => {
            assert_eq!(&at(&o, pointer), wanted, "{}", kind.plural)
        }
        other => panic!("{}: expected MODIFIED, got {other:?}", kind.plural),
    }

    if let Some((patch, pointer, wanted)) = &kind.status {
        let patched = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .unwrap_or_else(|e| panic!("status {}: {e}", kind.plural));
        assert_eq!(&at(&patched, pointer), wanted, "{} status", kind.plural);
        // A write to the main resource keeps the status.
        let mut again = serde_json::to_value(&patched).expect("json");
        again["status"] = json!({});
        let again: DynamicObject = serde_json::from_value(again).expect("object");
        let kept = api
            .replace(&name, &PostParams::default(), &again)
            .await
            .expect("replace");
        assert_eq!(
            &at(&kept, pointer),
            wanted,
            "{} keeps its status",
            kind.plural
        );
    }
    if kind.scale {
        let scale = api
            .patch_scale(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 3}})),
            )
            .await
            .expect("scale");
        assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
        let read = api.get_scale(&name).await.expect("get scale");
        let selector = read.status.and_then(|s| s.selector).unwrap_or_default();
        assert!(selector.starts_with("app="), "{}: {selector}", kind.plural);
        let object = api.get(&name).await.expect("get");
        assert_eq!(at(&object, "/spec/replicas"), json!(3));
    }

    api.delete(&name, &DeleteParams::background())
        .await
        .expect("delete");
    loop {
        if let WatchEvent::Deleted(_) = next_event(&mut watch, &name).await {
            break;
        }
    }
    assert!(
        api.get_opt(&name).await.expect("get").is_none(),
        "{}",
        kind.plural
    );
}

/// `args` and then `ns`.
fn with_ns<'a>(ns: &[&'a str], args: &[&'a str]) -> Vec<&'a str> {
    args.iter().chain(ns).copied().collect()
}

/// create, get (the printer's columns), list by short name, update and
/// delete of `kind` through kubectl.
async fn through_kubectl(kubectl: &Kubectl, kind: &Kind) {
    let name = format!("k-{}", kind.plural);
    let file = kubectl.path(&format!("{name}.json"));
    write(&file, &manifest(kind, &name).to_string());
    let file = file.to_str().expect("path");
    let ns: &[&str] = if kind.namespaced { &["-n", NS] } else { &[] };
    let created = kubectl.ok(&with_ns(ns, &["create", "-f", file])).await;
    assert!(created.contains(&name), "{created}");
    let table = kubectl.ok(&with_ns(ns, &["get", kind.plural, &name])).await;
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header.join(" "), kind.columns, "{}", kind.plural);
    let row = table.lines().nth(1).unwrap_or_default();
    assert!(row.starts_with(&name), "{table}");
    let by = kind.short.unwrap_or(kind.plural);
    let names = kubectl.ok(&with_ns(ns, &["get", by, "-o", "name"])).await;
    assert!(names.contains(&format!("/{name}")), "{names}");
    let merged = kubectl
        .ok(&with_ns(
            ns,
            &[
                "patch",
                kind.plural,
                &name,
                "--type",
                "merge",
                "-p",
                &kind.change.0.to_string(),
            ],
        ))
        .await;
    assert!(merged.contains("patched"), "{merged}");
    let json: Value = serde_json::from_str(
        &kubectl
            .ok(&with_ns(ns, &["get", kind.plural, &name, "-o", "json"]))
            .await,
    )
    .expect("json");
    assert_eq!(
        json.pointer(kind.change.1),
        Some(&kind.change.2),
        "{}",
        kind.plural
    );
    let deleted = kubectl
        .ok(&with_ns(ns, &["delete", kind.plural, &name]))
        .await;
    assert!(deleted.contains("deleted"), "{deleted}");
}

/// Discovery lists every kind with its short name, and its subresources.
async fn discovery(client: &Client) {
    let mut served = Vec::new();
    for group_version in [
        "v1",
        "apps/v1",
        "batch/v1",
        "certificates.k8s.io/v1",
        "discovery.k8s.io/v1",
        "policy/v1",
        "storage.k8s.io/v1",
        "node.k8s.io/v1",
    ] {
        let list = client.list_api_group_resources(group_version).await;
        let list = match group_version {
            "v1" => client.list_core_api_resources("v1").await,
            _ => list,
        }
        .unwrap_or_else(|e| panic!("{group_version}: {e}"));
        for r in list.resources {
            served.push((r.name.clone(), r.short_names.clone().unwrap_or_default()));
        }
    }
    for kind in kinds() {
        let found = served.iter().find(|(name, _)| name == kind.plural);
        let (_, shorts) =
            found.unwrap_or_else(|| panic!("{} in discovery", kind.plural));
        assert_eq!(
            shorts.first().map(String::as_str),
            kind.short,
            "{}",
            kind.plural
        );
        if kind.status.is_some() {
            let status = format!("{}/status", kind.plural);
            assert!(served.iter().any(|(n, _)| *n == status), "{status}");
        }
    }
    for sub in [
        "pods/eviction",
        "pods/binding",
        "namespaces/finalize",
        "certificatesigningrequests/approval",
        "replicationcontrollers/scale",
        "statefulsets/scale",
    ] {
        assert!(served.iter().any(|(n, _)| n == sub), "{sub} in discovery");
    }
}

/// `pods/eviction` against a disruption budget: refused while it allows no
/// disruption (429 with the budget's numbers), then spent.
async fn eviction(client: &Client, kubectl: &Kubectl) {
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::namespaced(client.clone(), NS);
    let pdbs = api(
        client,
        &kinds()
            .into_iter()
            .find(|k| k.plural == "poddisruptionbudgets")
            .expect("pdb"),
    );
    let pdb: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "guard"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}))
    .expect("pdb");
    pdbs.create(&PostParams::default(), &pdb)
        .await
        .expect("create pdb");
    let status = json!({"status": {"observedGeneration": 1, "disruptionsAllowed": 0,
        "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}});
    pdbs.patch_status("guard", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("pdb status");
    for name in ["guarded-1", "guarded-2"] {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"app": "guarded"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}))
        .expect("pod");
        pods.create(&PostParams::default(), &pod)
            .await
            .expect("create pod");
        let running = json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}});
        pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&running))
            .await
            .expect("pod status");
    }
    let status =
        refused(pods.evict("guarded-1", &EvictParams::default()).await, 429);
    assert_eq!(
        status.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    let allow = json!({"status": {"disruptionsAllowed": 1}});
    pdbs.patch_status("guard", &PatchParams::default(), &Patch::Merge(&allow))
        .await
        .expect("allow one");
    pods.evict("guarded-1", &EvictParams::default())
        .await
        .expect("evicted");
    assert!(pods.get_opt("guarded-1").await.expect("get").is_none());
    let spent = pdbs.get("guard").await.expect("pdb");
    assert_eq!(at(&spent, "/status/disruptionsAllowed"), json!(0));
    assert!(
        !at(&spent, "/status/disruptedPods/guarded-1").is_null(),
        "{spent:?}"
    );
    // kubectl posts an Eviction itself: refused again, the budget being spent.
    let eviction = kubectl.path("eviction.json");
    write(
        &eviction,
        &json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "guarded-2", "namespace": NS}})
        .to_string(),
    );
    let refused = kubectl
        .run(&[
            "create",
            "--raw",
            &format!("/api/v1/namespaces/{NS}/pods/guarded-2/eviction"),
            "-f",
            eviction.to_str().expect("path"),
        ])
        .await;
    assert!(
        !refused.ok && refused.stderr.contains("disruption budget"),
        "{}",
        refused.stderr
    );
}

/// `namespaces/finalize` and the CSR's `approval`, with kube-client and kubectl.
async fn finalize_and_approve(client: &Client, kubectl: &Kubectl) {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> =
        Api::all(client.clone());
    let mut ns = k8s_openapi::api::core::v1::Namespace::default();
    ns.metadata.name = Some("to-finalize".into());
    let created = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("ns");
    assert_eq!(
        created.spec.as_ref().and_then(|s| s.finalizers.clone()),
        Some(vec!["kubernetes".to_string()])
    );
    let mut body = serde_json::to_value(&created).expect("json");
    body["spec"]["finalizers"] = json!(["example.com/keep"]);
    let finalized = namespaces
        .replace_subresource(
            "finalize",
            "to-finalize",
            &PostParams::default(),
            &body,
        )
        .await
        .expect("finalize");
    assert_eq!(
        finalized.spec.and_then(|s| s.finalizers),
        Some(vec!["example.com/keep".to_string()])
    );
    body["spec"]["finalizers"] = json!(["Not A Name!"]);
    body["metadata"]["resourceVersion"] = json!(null);
    refused(
        namespaces
            .replace_subresource(
                "finalize",
                "to-finalize",
                &PostParams::default(),
                &body,
            )
            .await,
        422,
    );
    let file = kubectl.path("finalize.json");
    body["spec"]["finalizers"] = json!([]);
    body["metadata"]["resourceVersion"] = json!(null);
    write(&file, &body.to_string());
    kubectl
        .ok(&[
            "replace",
            "--raw",
            "/api/v1/namespaces/to-finalize/finalize",
            "-f",
            file.to_str().expect("path"),
        ])
        .await;
    let done = namespaces.get("to-finalize").await.expect("ns");
    assert_eq!(done.spec.and_then(|s| s.finalizers), Some(vec![]));

    // A terminating namespace stays through a write of its status, and goes
    // with its `finalize` once nothing holds it.
    let mut ns = k8s_openapi::api::core::v1::Namespace::default();
    ns.metadata.name = Some("terminating".into());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("ns");
    namespaces
        .delete("terminating", &DeleteParams::default())
        .await
        .expect("delete");
    let condition = json!({"status": {"conditions": [{"type": "NamespaceDeletionContentFailure",
        "status": "False", "reason": "ContentDeleted", "message": "All content successfully deleted"}]}});
    let kept = namespaces
        .patch_status(
            "terminating",
            &PatchParams::default(),
            &Patch::Merge(&condition),
        )
        .await
        .expect("a status write");
    assert!(kept.metadata.deletion_timestamp.is_some());
    assert!(
        namespaces
            .get_opt("terminating")
            .await
            .expect("get")
            .is_some()
    );
    let mut body = serde_json::to_value(&kept).expect("json");
    body["spec"]["finalizers"] = json!([]);
    body["metadata"]["resourceVersion"] = json!(null);
    namespaces
        .replace_subresource(
            "finalize",
            "terminating",
            &PostParams::default(),
            &body,
        )
        .await
        .expect("finalize");
    assert!(
        namespaces
            .get_opt("terminating")
            .await
            .expect("get")
            .is_none()
    );

    let csr = kinds()
        .into_iter()
        .find(|k| k.plural == "certificatesigningrequests")
        .expect("csr");
    let csrs = api(client, &csr);
    let object: DynamicObject =
        serde_json::from_value(manifest(&csr, "node-csr")).expect("csr");
    csrs.create(&PostParams::default(), &object)
        .await
        .expect("create csr");
    let approved = kubectl.ok(&["certificate", "approve", "node-csr"]).await;
    assert!(approved.contains("approved"), "{approved}");
    let read = csrs.get("node-csr").await.expect("csr");
    assert_eq!(at(&read, "/status/conditions/0/type"), json!("Approved"));
    assert!(!at(&read, "/status/conditions/0/lastUpdateTime").is_null());
    let table = kubectl.ok(&["get", "csr", "node-csr"]).await;
    assert!(
        table
            .lines()
            .nth(1)
            .unwrap_or_default()
            .ends_with("Approved"),
        "{table}"
    );
    let deny = json!({"status": {"conditions": [
        {"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]}});
    refused(
        csrs.patch_subresource(
            "approval",
            "node-csr",
            &PatchParams::default(),
            &Patch::Merge(&deny),
        )
        .await,
        422,
    );
}

/// A service's cluster IP and node port; a PUT without a resourceVersion on a
/// kind that needs one; a job and a controller whose delete orphans by
/// default.
async fn allocation_and_update_rules(client: &Client) {
    let services: Api<k8s_openapi::api::core::v1::Service> =
        Api::namespaced(client.clone(), NS);
    let service: k8s_openapi::api::core::v1::Service = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80}]}}))
    .expect("service");
    let created = services
        .create(&PostParams::default(), &service)
        .await
        .expect("svc");
    let spec = created.spec.expect("spec");
    let ip: std::net::Ipv4Addr =
        spec.cluster_ip.clone().expect("ip").parse().expect("v4");
    assert!(
        ip.octets()[0] == 10 && (96..112).contains(&ip.octets()[1]),
        "{ip}"
    );
    assert_eq!(spec.cluster_ips, Some(vec![ip.to_string()]));
    let port = spec.ports.expect("ports")[0].node_port.expect("node port");
    assert!((30000..=32767).contains(&port), "{port}");
    let mut clash = service.clone();
    clash.metadata.name = Some("web-2".into());
    clash.spec.as_mut().expect("spec").cluster_ip = Some(ip.to_string());
    let status = refused(services.create(&PostParams::default(), &clash).await, 422);
    assert!(
        status.message.contains("provided IP is already allocated"),
        "{}",
        status.message
    );

    let pdb = kinds()
        .into_iter()
        .find(|k| k.plural == "poddisruptionbudgets")
        .expect("pdb");
    let pdbs = api(client, &pdb);
    let object: DynamicObject =
        serde_json::from_value(manifest(&pdb, "strict")).expect("pdb");
    pdbs.create(&PostParams::default(), &object)
        .await
        .expect("create");
    let status = refused(
        pdbs.replace("strict", &PostParams::default(), &object)
            .await,
        422,
    );
    assert!(
        status.message.contains("must be specified for an update"),
        "{}",
        status.message
    );

    for plural in ["replicationcontrollers", "jobs"] {
        let kind = kinds()
            .into_iter()
            .find(|k| k.plural == plural)
            .expect("kind");
        let api = api(client, &kind);
        let object: DynamicObject =
            serde_json::from_value(manifest(&kind, "orphaning")).expect("obj");
        api.create(&PostParams::default(), &object)
            .await
            .expect("create");
        api.delete("orphaning", &DeleteParams::default())
            .await
            .expect("delete");
        let held = api.get("orphaning").await.expect("still there");
        assert_eq!(
            held.metadata.finalizers,
            Some(vec!["orphan".to_string()]),
            "{plural}"
        );
        assert!(held.metadata.deletion_timestamp.is_some());
        api.patch(
            "orphaning",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("the garbage collector's part");
        assert!(
            api.get_opt("orphaning").await.expect("get").is_none(),
            "{plural}"
        );
    }
}

async fn all_kinds(backend: Backend) {
    let Some(bin) = kubectl_or_skip("all_kinds") else {
        return;
    };
    let server: RunningServer = Server::start(ServerConfig {
        backend,
        ..ServerConfig::for_tests()
    })
    .await
    .expect("start");
    let kubectl = Kubectl::new(bin, &server);
    // No retries of a 429: an eviction's refusal is the answer under test.
    let mut config = kube::Config::new(server.url().parse().expect("url"));
    config.default_retry = false;
    let client = Client::try_from(config).expect("client");
    kubectl.ok(&["create", "namespace", NS]).await;
    discovery(&client).await;
    for kind in kinds() {
        through_kube_client(&client, &kind).await;
        through_kubectl(&kubectl, &kind).await;
    }
    eviction(&client, &kubectl).await;
    finalize_and_approve(&client, &kubectl).await;
    allocation_and_update_rules(&client).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_on_the_embedded_store() {
    timeout(8 * WAIT, all_kinds(Backend::Embedded))
        .await
        .expect("in time");
}

#[cfg(feature = "etcd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_on_real_etcd() {
    use stage5_storage::testing::EtcdServer;
    let Some(etcd) =
        EtcdServer::start_or_skip_async("every_kind_on_real_etcd").await
    else {
        return;
    };
    timeout(8 * WAIT, all_kinds(Backend::Etcd(vec![etcd.client_url()])))
        .await
        .expect("in time");
    drop(etcd);
}
