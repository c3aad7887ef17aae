//! The status a hollow kubelet writes for a pod whose containers "started":
//! phase `Running`, its IPs, its conditions, and a running status per
//! container with the ids a container runtime would report.
//!
//! Mirrors the kubelet's
//! [kubelet_pods.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/kubelet/kubelet_pods.go)
//! (`generateAPIPodStatus`, `convertToAPIContainerStatuses`) and
//! [status/generate.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/kubelet/status/generate.go)
//! (`GeneratePodReadyToStartContainersCondition`,
//! `GeneratePodInitializedCondition`, `GeneratePodReadyCondition`,
//! `GenerateContainersReadyCondition`) for a pod whose sandbox and containers
//! all run and have no probes. Init containers are reported as completed. The
//! runtime is kubemark's fake one: container ids are
//! `containerd://<64 hex digits>`, image ids `<repository>@sha256:<64 hex
//! digits>`, both derived from names (not random, so they stay the same for a
//! pod across a kubelet restart).

use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Value, json};

use super::node_status::hex_id;

/// Mirrors docker's `ParseNormalizedNamed` + `TagNameOnly`, as containerd
/// reports a container's image: `nginx` is `docker.io/library/nginx:latest`,
/// `registry.k8s.io/pause:3.10` stays as it is.
#[must_use]
pub fn normalize_image(image: &str) -> String {
    let (first, rest) = image.split_once('/').unwrap_or(("", image));
    let has_domain = !first.is_empty()
        && (first.contains('.') || first.contains(':') || first == "localhost");
    let mut name = if has_domain {
        image.to_string()
    } else if first.is_empty() {
        format!("docker.io/library/{rest}")
    } else {
        format!("docker.io/{image}")
    };
    let last = name.rsplit('/').next().unwrap_or_default();
    if !last.contains(':') && !last.contains('@') {
        name.push_str(":latest");
    }
    name
}

/// The image's repository (without tag or digest) and a digest for it:
/// `docker.io/library/nginx@sha256:…`.
#[must_use]
pub fn image_id(image: &str) -> String {
    let normalized = normalize_image(image);
    let repository = normalized.split('@').next().unwrap_or_default();
    let last_slash = repository.rfind('/').map_or(0, |i| i + 1);
    let repository = match repository[last_slash..].find(':') {
        Some(colon) => &repository[..last_slash + colon],
        None => repository,
    };
    format!("{repository}@sha256:{}", hex_id(&normalized, 64))
}

/// A container's id as containerd reports it.
#[must_use]
pub fn container_id(pod_uid: &str, container: &str) -> String {
    format!(
        "containerd://{}",
        hex_id(&format!("{pod_uid}/{container}"), 64)
    )
}

/// A `True` pod condition of `kind`, keeping the pod's transition time when it
/// already has it `True` (the scheduler's `PodScheduled`).
fn true_condition(pod: &Pod, kind: &str, now: &Time) -> Value {
    let since = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == kind && c.status == "True"))
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now.clone());
    json!({"type": kind, "status": "True", "lastProbeTime": null, "lastTransitionTime": since})
}

/// One container's running status.
fn running_status(pod_uid: &str, container: &Container, now: &Time) -> Value {
    let image = container.image.as_deref().unwrap_or_default();
    json!({
        "name": container.name,
        "image": normalize_image(image),
        "imageID": image_id(image),
        "containerID": container_id(pod_uid, &container.name),
        "ready": true,
        "started": true,
        "restartCount": 0,
        "state": {"running": {"startedAt": now}},
        "lastState": {},
    })
}

/// One init container's completed status.
fn completed_status(pod_uid: &str, container: &Container, now: &Time) -> Value {
    let image = container.image.as_deref().unwrap_or_default();
    let id = container_id(pod_uid, &container.name);
    json!({
        "name": container.name,
        "image": normalize_image(image),
        "imageID": image_id(image),
        "containerID": id,
        "ready": true,
        "started": false,
        "restartCount": 0,
        "state": {"terminated": {
            "exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now, "containerID": id,
        }},
        "lastState": {},
    })
}

/// Mirrors `generateAPIPodStatus` for a pod now running on the node at
/// `host_ip` with `pod_ip`: the `status` to merge into the pod (through a
/// strategic merge patch of `pods/status`, so conditions merge by type and
/// `qosClass` stays).
#[must_use]
pub fn running_pod_status(
    pod: &Pod,
    host_ip: Ipv4Addr,
    pod_ip: Ipv4Addr,
    now: &Time,
) -> Value {
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let spec = pod.spec.as_ref();
    let containers: Vec<Value> = spec
        .map(|s| {
            s.containers
                .iter()
                .map(|c| running_status(uid, c, now))
                .collect()
        })
        .unwrap_or_default();
    let init: Vec<Value> = spec
        .and_then(|s| s.init_containers.as_ref())
        .map(|ics| ics.iter().map(|c| completed_status(uid, c, now)).collect())
        .unwrap_or_default();
    let mut status = json!({
        "phase": "Running",
        "hostIP": host_ip.to_string(),
        "hostIPs": [{"ip": host_ip.to_string()}],
        "podIP": pod_ip.to_string(),
        "podIPs": [{"ip": pod_ip.to_string()}],
        "startTime": now,
        "conditions": [
            true_condition(pod, "PodReadyToStartContainers", now),
            true_condition(pod, "Initialized", now),
            true_condition(pod, "Ready", now),
            true_condition(pod, "ContainersReady", now),
            true_condition(pod, "PodScheduled", now),
        ],
        "containerStatuses": containers,
    });
    if !init.is_empty() {
        status["initContainerStatuses"] = Value::Array(init);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_normalize_image() {
        for (image, want) in [
            ("nginx", "docker.io/library/nginx:latest"),
            ("nginx:1.27", "docker.io/library/nginx:1.27"),
            ("bitnami/redis", "docker.io/bitnami/redis:latest"),
            ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
            ("localhost:5000/app", "localhost:5000/app:latest"),
            ("localhost/app:v1", "localhost/app:v1"),
            ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
        ] {
            assert_eq!(normalize_image(image), want, "{image}");
        }
        assert!(
            image_id("nginx:1.27").starts_with("docker.io/library/nginx@sha256:")
        );
        assert!(
            image_id("localhost:5000/app").starts_with("localhost:5000/app@sha256:")
        );
        assert_eq!(container_id("uid", "c").len(), "containerd://".len() + 64);
    }

    /// What a running hollow pod reports: phase, IPs, conditions, one running
    /// status per container, the scheduler's `PodScheduled` time kept.
    #[test]
    fn test_running_pod_status() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default", "uid": "u-1"},
            "spec": {
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "web", "image": "nginx"}],
            },
            "status": {"conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"},
            ]},
        }))
        .expect("pod");
        let now = apimachinery::apis::meta::v1::time::now();
        let status = running_pod_status(
            &pod,
            Ipv4Addr::new(10, 240, 0, 1),
            Ipv4Addr::new(10, 244, 0, 2),
            &now,
        );
        assert_eq!(status["phase"], "Running");
        assert_eq!(status["podIP"], "10.244.0.2");
        assert_eq!(status["podIPs"][0]["ip"], "10.244.0.2");
        assert_eq!(status["hostIP"], "10.240.0.1");
        let kinds: Vec<&str> = status["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .filter_map(|c| c["type"].as_str())
            .collect();
        assert_eq!(
            kinds,
            [
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled"
            ]
        );
        assert_eq!(
            status["conditions"][4]["lastTransitionTime"],
            "2024-01-01T00:00:00Z"
        );
        let web = &status["containerStatuses"][0];
        assert_eq!(web["name"], "web");
        assert_eq!(web["image"], "docker.io/library/nginx:latest");
        assert_eq!(web["ready"], true);
        assert_eq!(web["restartCount"], 0);
        assert!(web["state"]["running"]["startedAt"].is_string());
        assert!(
            web["containerID"]
                .as_str()
                .expect("id")
                .starts_with("containerd://")
        );
        assert_eq!(
            status["initContainerStatuses"][0]["state"]["terminated"]["reason"],
            "Completed"
        );
        // It is a valid PodStatus.
        let typed: k8s_openapi::api::core::v1::PodStatus =
            serde_json::from_value(status).expect("a PodStatus");
        assert_eq!(typed.container_statuses.map(|c| c.len()), Some(1));
    }
}
