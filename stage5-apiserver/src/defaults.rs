//! The defaults kube-apiserver fills in when it decodes an object: mirrors
//! `pkg/apis/core/v1/defaults.go` (`SetDefaults_PodSpec`,
//! `SetDefaults_Container`, `SetDefaults_Pod`, `SetDefaults_Secret`) and
//! `pkg/apis/apps/v1/defaults.go` (`SetDefaults_Deployment`). Each kind's
//! registry strategy applies its own ([`crate::registry`]).
//!
//! Upstream defaults every object it decodes from a request, so a pod created
//! with only a name and an image comes back with `restartPolicy: Always`,
//! `dnsPolicy: ClusterFirst` and the rest, which `kubectl describe` and `-o yaml`
//! show. Only the defaults of the served kinds that clients see are here; the
//! volume sources' and probes' defaults are not.

use serde_json::{Map, Value, json};
use stage5_storage::Object;

/// Mirrors the generated `SetObjectDefaults_Pod`: the pod spec's defaults.
pub fn set_object_defaults_pod(pod: &mut Object) {
    if let Some(spec) = pod.data.get_mut("spec").and_then(Value::as_object_mut) {
        set_defaults_pod_spec(spec);
    }
}

/// Mirrors the generated `SetObjectDefaults_Deployment`.
pub fn set_object_defaults_deployment(deployment: &mut Object) {
    set_defaults_deployment(&mut deployment.data);
}

/// Mirrors `SetDefaults_Secret`: a secret without a type is `Opaque`.
pub fn set_object_defaults_secret(secret: &mut Object) {
    if let Value::Object(fields) = &mut secret.data {
        default(fields, "type", json!("Opaque"));
    }
}

fn default(fields: &mut Map<String, Value>, key: &str, value: Value) {
    if fields.get(key).is_none_or(is_unset) {
        fields.insert(key.to_string(), value);
    }
}

fn is_unset(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// `SetDefaults_PodSpec` and, for each container, `SetDefaults_Container` and
/// `SetDefaults_ContainerPort`; `SetDefaults_Pod`'s requests from limits.
fn set_defaults_pod_spec(spec: &mut Map<String, Value>) {
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "securityContext", json!({}));
    default(spec, "schedulerName", json!("default-scheduler"));
    default(spec, "enableServiceLinks", json!(true));
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut)
        else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            set_defaults_container(container);
        }
    }
}

fn set_defaults_container(container: &mut Map<String, Value>) {
    let image = container.get("image").and_then(Value::as_str).unwrap_or("");
    default(
        container,
        "imagePullPolicy",
        json!(image_pull_policy(image)),
    );
    default(
        container,
        "terminationMessagePath",
        json!("/dev/termination-log"),
    );
    default(container, "terminationMessagePolicy", json!("File"));
    // Not a default upstream, but what Go's JSON writes for the zero
    // `ResourceRequirements` struct every decoded container has.
    default(container, "resources", json!({}));
    if let Some(ports) = container.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            default(port, "protocol", json!("TCP"));
        }
    }
    // `SetDefaults_Pod`: a resource with a limit and no request requests its
    // limit.
    let limits = container
        .get("resources")
        .and_then(|r| r.get("limits"))
        .and_then(Value::as_object)
        .cloned();
    if let Some(limits) = limits {
        let resources = container.entry("resources").or_insert_with(|| json!({}));
        if let Some(resources) = resources.as_object_mut() {
            let requests = resources.entry("requests").or_insert_with(|| json!({}));
            if let Some(requests) = requests.as_object_mut() {
                for (name, quantity) in limits {
                    requests.entry(name).or_insert(quantity);
                }
            }
        }
    }
}

/// `SetDefaults_Container`'s pull policy: `Always` for a `:latest` or untagged
/// image, `IfNotPresent` for any other tag or a digest.
fn image_pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    // The tag is after the last `:` that follows the last `/` (a registry's
    // port is not a tag).
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

/// Mirrors the generated `SetObjectDefaults_ReplicaSet`: `SetDefaults_ReplicaSet`
/// (one replica) and the pod template's defaults.
pub fn set_object_defaults_replica_set(replica_set: &mut Object) {
    let Some(spec) = replica_set
        .data
        .get_mut("spec")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    default(spec, "replicas", json!(1));
    if let Some(pod_spec) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        set_defaults_pod_spec(pod_spec);
    }
}

/// `SetDefaults_Deployment`, and the pod template's defaults.
fn set_defaults_deployment(data: &mut Value) {
    let Some(spec) = data.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    default(spec, "replicas", json!(1));
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
    let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
    if let Some(strategy) = strategy.as_object_mut() {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate")) {
            let rolling =
                strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if let Some(rolling) = rolling.as_object_mut() {
                default(rolling, "maxUnavailable", json!("25%"));
                default(rolling, "maxSurge", json!("25%"));
            }
        }
    }
    if let Some(pod_spec) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        set_defaults_pod_spec(pod_spec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    /// The kind's defaults, as its registry strategy applies them.
    fn set_defaults(info: &ResourceInfo, obj: &mut Object) {
        crate::registry::strategy_for(info).set_defaults(obj);
    }

    fn prepare_pod_for_create(pod: &mut Object) {
        crate::registry::strategy_for(&ResourceInfo::PODS).prepare_for_create(pod);
    }

    fn object(info: &ResourceInfo, data: Value) -> Object {
        Object::new(info, Some("default"), "x").with_data(data)
    }

    #[test]
    fn a_bare_pod_gets_upstreams_defaults_and_a_pending_status() {
        let mut pod = object(
            &ResourceInfo::PODS,
            json!({"spec": {"containers": [
                {"name": "a", "image": "nginx"},
                {"name": "b", "image": "nginx:1.27", "ports": [{"containerPort": 80}]},
                {"name": "c", "image": "registry:5000/app"},
            ]}}),
        );
        set_defaults(&ResourceInfo::PODS, &mut pod);
        prepare_pod_for_create(&mut pod);
        let spec = &pod.data["spec"];
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        assert_eq!(spec["schedulerName"], "default-scheduler");
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "Always");
        assert_eq!(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(spec["containers"][2]["imagePullPolicy"], "Always");
        assert_eq!(spec["containers"][1]["ports"][0]["protocol"], "TCP");
        assert_eq!(spec["containers"][0]["terminationMessagePolicy"], "File");
        assert_eq!(
            pod.data["status"],
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
    }

    #[test]
    fn limits_become_requests_and_set_values_stay() {
        let mut pod = object(
            &ResourceInfo::PODS,
            json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "a",
                "image": "x:1", "imagePullPolicy": "Never",
                "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}}]}}),
        );
        set_defaults(&ResourceInfo::PODS, &mut pod);
        let container = &pod.data["spec"]["containers"][0];
        assert_eq!(pod.data["spec"]["restartPolicy"], "Never");
        assert_eq!(container["imagePullPolicy"], "Never");
        assert_eq!(
            container["resources"]["requests"],
            json!({"cpu": "1", "memory": "1Gi"})
        );
    }

    #[test]
    fn a_deployment_gets_its_strategy_and_limits() {
        let mut deployment = object(
            &ResourceInfo::DEPLOYMENTS,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx"}]}}}}),
        );
        set_defaults(&ResourceInfo::DEPLOYMENTS, &mut deployment);
        let spec = &deployment.data["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(spec["progressDeadlineSeconds"], 600);
        assert_eq!(
            spec["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");

        let mut recreate = object(
            &ResourceInfo::DEPLOYMENTS,
            json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}}}),
        );
        set_defaults(&ResourceInfo::DEPLOYMENTS, &mut recreate);
        assert_eq!(recreate.data["spec"]["replicas"], 0);
        assert_eq!(
            recreate.data["spec"]["strategy"],
            json!({"type": "Recreate"})
        );
    }

    #[test]
    fn a_secret_is_opaque_unless_typed() {
        let mut secret = object(&ResourceInfo::SECRETS, json!({}));
        set_defaults(&ResourceInfo::SECRETS, &mut secret);
        assert_eq!(secret.data["type"], "Opaque");
    }
}
