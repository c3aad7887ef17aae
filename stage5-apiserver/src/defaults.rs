//! The defaults kube-apiserver fills in when it decodes an object. Each kind's
//! registry strategy applies its own ([`crate::registry`]). Mirrors
//! kube-apiserver 1.36's scheme defaults:
//!
//! - `pkg/apis/core/v1/defaults.go`: `SetDefaults_Pod`, `SetDefaults_PodSpec`,
//!   `SetDefaults_Container`, `SetDefaults_Volume` and the volume sources',
//!   `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`,
//!   `SetDefaults_ObjectFieldSelector`, `SetDefaults_Secret`,
//!   `SetDefaults_Service`, `SetDefaults_Endpoints`,
//!   `SetDefaults_PersistentVolume`, `SetDefaults_PersistentVolumeClaim`,
//!   `SetDefaults_PersistentVolumeClaimSpec`,
//!   `SetDefaults_ReplicationController`;
//! - `pkg/apis/apps/v1/defaults.go`: `SetDefaults_Deployment`,
//!   `SetDefaults_ReplicaSet`, `SetDefaults_StatefulSet`, `SetDefaults_DaemonSet`;
//! - `pkg/apis/batch/v1/defaults.go`: `SetDefaults_Job`, `SetDefaults_CronJob`,
//!   `SetDefaults_PodFailurePolicyOnPodConditionsPattern`;
//! - `pkg/apis/storage/v1/defaults.go`: `SetDefaults_StorageClass`,
//!   `SetDefaults_CSIDriver`;
//! - `pkg/apis/discovery/v1/defaults.go`: `SetDefaults_EndpointPort`;
//! - each package's generated `zz_generated.defaults.go`: the
//!   `SetObjectDefaults_*` that run those on every nested struct (a pod
//!   template's containers, probes and volumes, a StatefulSet's claim
//!   templates) plus the declarative `+default=` markers (a container port's
//!   and a service port's `TCP`, a ReplicationController's one replica).
//!
//! Upstream defaults every object it decodes from a request, so a pod created
//! with only a name and an image comes back with `restartPolicy: Always`,
//! `dnsPolicy: ClusterFirst` and the rest, which `kubectl describe` and `-o yaml`
//! show, and which kubelets and controllers rely on (a probe's period, a
//! configMap volume's `defaultMode`). Feature gates are taken at their 1.36
//! defaults. Not here: `SetDefaults_ResourceList`'s rounding of quantities
//! to milli-units, and `SetDefaults_Pod`'s pod-level resources.
//! Kinds with no defaults (ServiceAccount, ResourceQuota, ControllerRevision,
//! CertificateSigningRequest, PodDisruptionBudget, CSINode,
//! CSIStorageCapacity, VolumeAttachment, RuntimeClass) have no function.

use serde_json::{Map, Value, json};
use stage5_storage::Object;

/// Mirrors the generated `SetObjectDefaults_Pod`: `SetDefaults_Pod` and the
/// pod spec's defaults.
pub fn set_object_defaults_pod(pod: &mut Object) {
    if let Some(spec) = pod.data.get_mut("spec").and_then(Value::as_object_mut) {
        set_defaults_pod(spec);
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

/// Sets a field Go leaves at its zero value: absent, `null` or `""`.
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

/// Sets a pointer field Go leaves nil: absent or `null` (a `""` the client
/// sent is kept, for validation to judge).
fn default_nil(fields: &mut Map<String, Value>, key: &str, value: Value) {
    if fields.get(key).is_none_or(Value::is_null) {
        fields.insert(key.to_string(), value);
    }
}

/// Sets an `int32` field Go leaves at zero: absent, `null` or `0`.
fn default_zero(fields: &mut Map<String, Value>, key: &str, value: Value) {
    if fields
        .get(key)
        .is_none_or(|v| v.is_null() || v == &json!(0))
    {
        fields.insert(key.to_string(), value);
    }
}

/// The object at `key`, created (or replacing `null`) as Go's decoder makes a
/// struct that is not a pointer; `None` if it is something else.
fn object_entry<'a>(
    fields: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    let value = fields.entry(key).or_insert(Value::Null);
    if value.is_null() {
        *value = json!({});
    }
    value.as_object_mut()
}

/// The object at `key`, if the client sent one (a pointer Go leaves nil).
fn object_at<'a>(
    fields: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    fields.get_mut(key).and_then(Value::as_object_mut)
}

/// Each object in the list at `key`.
fn objects_at<'a>(
    fields: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    fields
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// The object's `spec`, created if absent as Go's `Spec` struct always is.
fn spec_of(data: &mut Value) -> Option<&mut Map<String, Value>> {
    object_entry(data.as_object_mut()?, "spec")
}

/// A non-empty label map at `metadata.labels` of a template.
fn template_labels(
    template: &Map<String, Value>,
) -> Option<std::collections::BTreeMap<String, String>> {
    let labels = template.get("metadata")?.get("labels")?.as_object()?;
    let labels: std::collections::BTreeMap<String, String> = labels
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    (!labels.is_empty()).then_some(labels)
}

/// The defaults of the pod template at `spec.template`: the generated
/// functions run `SetDefaults_PodSpec` and the container, probe and volume
/// defaults on every `PodTemplateSpec` (not `SetDefaults_Pod`).
fn set_defaults_template(spec: &mut Map<String, Value>) {
    if let Some(pod_spec) =
        object_at(spec, "template").and_then(|template| object_at(template, "spec"))
    {
        set_defaults_pod_spec(pod_spec);
    }
}

/// `SetDefaults_Pod`, for pods only (not templates): a container resource with
/// a limit and no request requests its limit, `enableServiceLinks` is true, and
/// on the host network a container port is also a host port.
fn set_defaults_pod(spec: &mut Map<String, Value>) {
    let host_network = spec.get("hostNetwork") == Some(&json!(true));
    for list in ["initContainers", "containers"] {
        for container in objects_at(spec, list) {
            requests_from_limits(container);
            if host_network {
                for port in objects_at(container, "ports") {
                    let container_port =
                        port.get("containerPort").cloned().unwrap_or(json!(0));
                    default_zero(port, "hostPort", container_port);
                }
            }
        }
    }
    default_nil(spec, "enableServiceLinks", json!(true));
}

fn requests_from_limits(container: &mut Map<String, Value>) {
    let Some(resources) = object_at(container, "resources") else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned()
    else {
        return;
    };
    if let Some(requests) = object_entry(resources, "requests") {
        for (name, quantity) in limits {
            requests.entry(name).or_insert(quantity);
        }
    }
}

/// `SetDefaults_PodSpec`, and what the generated functions run on the spec's
/// volumes and containers.
fn set_defaults_pod_spec(spec: &mut Map<String, Value>) {
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "restartPolicy", json!("Always"));
    default_nil(spec, "terminationGracePeriodSeconds", json!(30));
    default_nil(spec, "securityContext", json!({}));
    default(spec, "schedulerName", json!("default-scheduler"));
    for volume in objects_at(spec, "volumes") {
        set_defaults_volume(volume);
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in objects_at(spec, list) {
            set_defaults_container(container);
        }
    }
}

/// `SetDefaults_Container` (also `SetDefaults_EphemeralContainer`'s), and the
/// generated defaults of its ports, env, probes and lifecycle hooks.
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
    for port in objects_at(container, "ports") {
        default(port, "protocol", json!("TCP"));
    }
    for env in objects_at(container, "env") {
        let Some(value_from) = object_at(env, "valueFrom") else {
            continue;
        };
        if let Some(field_ref) = object_at(value_from, "fieldRef") {
            set_defaults_object_field_selector(field_ref);
        }
        if let Some(file_key_ref) = object_at(value_from, "fileKeyRef") {
            default_nil(file_key_ref, "optional", json!(false));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = object_at(container, probe) {
            set_defaults_probe(probe);
        }
    }
    if let Some(lifecycle) = object_at(container, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(http_get) = object_at(lifecycle, hook)
                .and_then(|hook| object_at(hook, "httpGet"))
            {
                set_defaults_http_get_action(http_get);
            }
        }
    }
}

/// `SetDefaults_Container`'s pull policy (and an image volume's): `Always` for
/// the tag `latest` or for neither a tag nor a digest, else `IfNotPresent`.
fn image_pull_policy(image: &str) -> &'static str {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    // The tag is after the last `:` that follows the last `/` (a registry's
    // port is not a tag).
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':') {
        Some((_, "latest")) => "Always",
        None if !digest => "Always",
        _ => "IfNotPresent",
    }
}

/// `SetDefaults_Probe`, and its handler's `SetDefaults_HTTPGetAction` and
/// gRPC `service` (`+default=""`).
fn set_defaults_probe(probe: &mut Map<String, Value>) {
    default_zero(probe, "timeoutSeconds", json!(1));
    default_zero(probe, "periodSeconds", json!(10));
    default_zero(probe, "successThreshold", json!(1));
    default_zero(probe, "failureThreshold", json!(3));
    if let Some(http_get) = object_at(probe, "httpGet") {
        set_defaults_http_get_action(http_get);
    }
    if let Some(grpc) = object_at(probe, "grpc") {
        default_nil(grpc, "service", json!(""));
    }
}

/// `SetDefaults_HTTPGetAction`.
fn set_defaults_http_get_action(action: &mut Map<String, Value>) {
    default(action, "path", json!("/"));
    default(action, "scheme", json!("HTTP"));
}

/// `SetDefaults_ObjectFieldSelector`.
fn set_defaults_object_field_selector(selector: &mut Map<String, Value>) {
    default(selector, "apiVersion", json!("v1"));
}

/// `SetDefaults_Volume` (no source is an `emptyDir`; an image volume's pull
/// policy), then the defaults of the source it has.
fn set_defaults_volume(volume: &mut Map<String, Value>) {
    if volume
        .iter()
        .all(|(key, value)| key == "name" || value.is_null())
    {
        volume.insert("emptyDir".to_string(), json!({}));
    }
    // The ImageVolume gate is on by default since 1.35.
    if let Some(image) = object_at(volume, "image") {
        let reference = image.get("reference").and_then(Value::as_str);
        let policy = image_pull_policy(reference.unwrap_or(""));
        default(image, "pullPolicy", json!(policy));
    }
    set_defaults_in_tree_sources(volume);
    // `SetDefaults_{Secret,ConfigMap,DownwardAPI,Projected}VolumeSource`: 0644.
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = object_at(volume, source) {
            default_nil(source, "defaultMode", json!(0o644));
        }
    }
    if let Some(downward_api) = object_at(volume, "downwardAPI") {
        set_defaults_downward_api_items(downward_api);
    }
    if let Some(projected) = object_at(volume, "projected") {
        for source in objects_at(projected, "sources") {
            if let Some(downward_api) = object_at(source, "downwardAPI") {
                set_defaults_downward_api_items(downward_api);
            }
            // `SetDefaults_ServiceAccountTokenProjection`: an hour.
            if let Some(token) = object_at(source, "serviceAccountToken") {
                default_nil(token, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(claim_spec) = object_at(volume, "ephemeral")
        .and_then(|ephemeral| object_at(ephemeral, "volumeClaimTemplate"))
        .and_then(|template| object_entry(template, "spec"))
    {
        set_defaults_persistent_volume_claim_spec(claim_spec);
    }
}

fn set_defaults_downward_api_items(source: &mut Map<String, Value>) {
    for item in objects_at(source, "items") {
        if let Some(field_ref) = object_at(item, "fieldRef") {
            set_defaults_object_field_selector(field_ref);
        }
    }
}

/// The in-tree sources' defaults a pod volume and a persistent volume share:
/// `SetDefaults_HostPathVolumeSource` and the `+default=` markers of `rbd`,
/// `iscsi`, `azureDisk` and `scaleIO`.
fn set_defaults_in_tree_sources(source: &mut Map<String, Value>) {
    if let Some(host_path) = object_at(source, "hostPath") {
        default_nil(host_path, "type", json!(""));
    }
    if let Some(rbd) = object_at(source, "rbd") {
        default(rbd, "pool", json!("rbd"));
        default(rbd, "user", json!("admin"));
        default(rbd, "keyring", json!("/etc/ceph/keyring"));
    }
    if let Some(iscsi) = object_at(source, "iscsi") {
        default(iscsi, "iscsiInterface", json!("default"));
    }
    if let Some(azure_disk) = object_at(source, "azureDisk") {
        default_nil(azure_disk, "cachingMode", json!("ReadWrite"));
        default_nil(azure_disk, "fsType", json!("ext4"));
        default_nil(azure_disk, "readOnly", json!(false));
        default_nil(azure_disk, "kind", json!("Shared"));
    }
    if let Some(scale_io) = object_at(source, "scaleIO") {
        default(scale_io, "storageMode", json!("ThinProvisioned"));
        default(scale_io, "fsType", json!("xfs"));
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`.
fn set_defaults_persistent_volume_claim_spec(spec: &mut Map<String, Value>) {
    default_nil(spec, "volumeMode", json!("Filesystem"));
}

/// `SetDefaults_PersistentVolumeClaim` and the spec's: what a claim and each of
/// a StatefulSet's claim templates get.
fn set_defaults_persistent_volume_claim(claim: &mut Map<String, Value>) {
    if let Some(status) = object_entry(claim, "status") {
        default(status, "phase", json!("Pending"));
    }
    if let Some(spec) = object_entry(claim, "spec") {
        set_defaults_persistent_volume_claim_spec(spec);
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
    set_defaults_template(spec);
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
    set_defaults_template(spec);
}

/// Mirrors the generated `SetObjectDefaults_Service`: `SetDefaults_Service`.
pub fn set_object_defaults_service(service: &mut Object) {
    let Some(spec) = spec_of(&mut service.data) else {
        return;
    };
    default(spec, "sessionAffinity", json!("None"));
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"));
            if timeout.is_none_or(Value::is_null) {
                spec.insert(
                    "sessionAffinityConfig".to_string(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    default(spec, "type", json!("ClusterIP"));
    for port in objects_at(spec, "ports") {
        default(port, "protocol", json!("TCP"));
        // A target port of 0 or "" is the port itself.
        let target = port.get("targetPort");
        if target.is_none_or(|t| is_unset(t) || t == &json!(0)) {
            let number = port.get("port").cloned().unwrap_or(json!(0));
            port.insert("targetPort".to_string(), number);
        }
    }
    let service_type = spec.get("type").and_then(Value::as_str).unwrap_or("");
    let has_external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    // `service.ExternallyAccessible`.
    let externally_accessible = matches!(service_type, "LoadBalancer" | "NodePort")
        || (service_type == "ClusterIP" && has_external_ips);
    let load_balancer = service_type == "LoadBalancer";
    let internal = matches!(service_type, "ClusterIP" | "NodePort" | "LoadBalancer");
    if externally_accessible {
        default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    // Not for ExternalName, nor any other type.
    if internal {
        default_nil(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if load_balancer {
        default_nil(spec, "allocateLoadBalancerNodePorts", json!(true));
        let ingress = service
            .data
            .get_mut("status")
            .and_then(|s| s.get_mut("loadBalancer"))
            .and_then(Value::as_object_mut);
        for ingress in ingress.into_iter().flat_map(|lb| objects_at(lb, "ingress")) {
            let has_ip = ingress.get("ip").is_some_and(|ip| !is_unset(ip));
            if has_ip {
                default_nil(ingress, "ipMode", json!("VIP"));
            }
        }
    }
}

/// Mirrors the generated `SetObjectDefaults_Endpoints`: `SetDefaults_Endpoints`
/// (each subset's ports are `TCP` unless given).
pub fn set_object_defaults_endpoints(endpoints: &mut Object) {
    let Some(fields) = endpoints.data.as_object_mut() else {
        return;
    };
    for subset in objects_at(fields, "subsets") {
        for port in objects_at(subset, "ports") {
            default(port, "protocol", json!("TCP"));
        }
    }
}

/// Mirrors the generated `SetObjectDefaults_PersistentVolume`:
/// `SetDefaults_PersistentVolume` (phase `Pending`, reclaim policy `Retain`,
/// volume mode `Filesystem`) and the in-tree sources' defaults.
pub fn set_object_defaults_persistent_volume(volume: &mut Object) {
    let Some(fields) = volume.data.as_object_mut() else {
        return;
    };
    if let Some(status) = object_entry(fields, "status") {
        default(status, "phase", json!("Pending"));
    }
    if let Some(spec) = object_entry(fields, "spec") {
        default(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
        default_nil(spec, "volumeMode", json!("Filesystem"));
        set_defaults_in_tree_sources(spec);
    }
}

/// Mirrors the generated `SetObjectDefaults_PersistentVolumeClaim`: phase
/// `Pending`, volume mode `Filesystem`.
pub fn set_object_defaults_persistent_volume_claim(claim: &mut Object) {
    if let Some(fields) = claim.data.as_object_mut() {
        set_defaults_persistent_volume_claim(fields);
    }
}

/// Mirrors the generated `SetObjectDefaults_ReplicationController`:
/// `SetDefaults_ReplicationController` (the template's labels are the selector
/// and the labels when those are empty), one replica (`+default=1`), and the
/// pod template's defaults.
pub fn set_object_defaults_replication_controller(controller: &mut Object) {
    let Some(spec) = spec_of(&mut controller.data) else {
        return;
    };
    if let Some(labels) =
        object_at(spec, "template").and_then(|t| template_labels(t))
    {
        let selector = spec.get("selector").and_then(Value::as_object);
        if selector.is_none_or(Map::is_empty) {
            spec.insert("selector".to_string(), json!(labels));
        }
        if controller
            .metadata
            .labels
            .as_ref()
            .is_none_or(|l| l.is_empty())
        {
            controller.metadata.labels = Some(labels);
        }
    }
    default_nil(spec, "replicas", json!(1));
    set_defaults_template(spec);
}

/// Mirrors the generated `SetObjectDefaults_StatefulSet`:
/// `SetDefaults_StatefulSet`, the pod template's defaults, and each claim
/// template's (`SetDefaults_PersistentVolumeClaim` and the spec's).
pub fn set_object_defaults_stateful_set(stateful_set: &mut Object) {
    let Some(spec) = spec_of(&mut stateful_set.data) else {
        return;
    };
    default(spec, "podManagementPolicy", json!("OrderedReady"));
    if let Some(strategy) = object_entry(spec, "updateStrategy") {
        // Only an unset type brings an empty `rollingUpdate`; a client's
        // `RollingUpdate` without one keeps none.
        if strategy.get("type").is_none_or(is_unset) {
            strategy.insert("type".to_string(), json!("RollingUpdate"));
            default_nil(strategy, "rollingUpdate", json!({}));
        }
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = object_at(strategy, "rollingUpdate")
        {
            default_nil(rolling, "partition", json!(0));
            // The MaxUnavailableStatefulSet gate is on by default since 1.35.
            default_nil(rolling, "maxUnavailable", json!(1));
        }
    }
    // The StatefulSetAutoDeletePVC gate is GA (1.32).
    if let Some(policy) = object_entry(spec, "persistentVolumeClaimRetentionPolicy")
    {
        default(policy, "whenDeleted", json!("Retain"));
        default(policy, "whenScaled", json!("Retain"));
    }
    default_nil(spec, "replicas", json!(1));
    default_nil(spec, "revisionHistoryLimit", json!(10));
    set_defaults_template(spec);
    for claim in objects_at(spec, "volumeClaimTemplates") {
        set_defaults_persistent_volume_claim(claim);
    }
}

/// Mirrors the generated `SetObjectDefaults_DaemonSet`: `SetDefaults_DaemonSet`
/// (a rolling update of one unavailable pod and no surge, ten revisions) and
/// the pod template's defaults.
pub fn set_object_defaults_daemon_set(daemon_set: &mut Object) {
    let Some(spec) = spec_of(&mut daemon_set.data) else {
        return;
    };
    if let Some(strategy) = object_entry(spec, "updateStrategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = object_entry(strategy, "rollingUpdate")
        {
            default_nil(rolling, "maxUnavailable", json!(1));
            default_nil(rolling, "maxSurge", json!(0));
        }
    }
    default_nil(spec, "revisionHistoryLimit", json!(10));
    set_defaults_template(spec);
}

/// Mirrors the generated `SetObjectDefaults_Job`: `SetDefaults_Job`, the pod
/// failure policy's patterns and the pod template's defaults.
pub fn set_object_defaults_job(job: &mut Object) {
    let Some(spec) = spec_of(&mut job.data) else {
        return;
    };
    // A job that sets neither runs one pod to one completion.
    let unset =
        |spec: &Map<String, Value>, key| spec.get(key).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".to_string(), json!(1));
    }
    default_nil(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i32::MAX
    };
    default_nil(spec, "backoffLimit", json!(backoff));
    default_nil(spec, "completionMode", json!("NonIndexed"));
    default_nil(spec, "suspend", json!(false));
    // The JobPodReplacementPolicy gate is GA (1.34).
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    default_nil(spec, "podReplacementPolicy", json!(replacement));
    default_nil(spec, "manualSelector", json!(false));
    set_defaults_job_spec(spec);
    let labels = object_at(spec, "template").and_then(|t| template_labels(t));
    if let Some(labels) = labels
        && job.metadata.labels.as_ref().is_none_or(|l| l.is_empty())
    {
        job.metadata.labels = Some(labels);
    }
}

/// What a job spec gets as part of a Job or a CronJob's job template:
/// `SetDefaults_PodFailurePolicyOnPodConditionsPattern` (a pattern's status
/// is `True`) and the pod template's defaults.
fn set_defaults_job_spec(spec: &mut Map<String, Value>) {
    if let Some(policy) = object_at(spec, "podFailurePolicy") {
        for rule in objects_at(policy, "rules") {
            for pattern in objects_at(rule, "onPodConditions") {
                default(pattern, "status", json!("True"));
            }
        }
    }
    set_defaults_template(spec);
}

/// Mirrors the generated `SetObjectDefaults_CronJob`: `SetDefaults_CronJob` and
/// the job template's pod failure policy and pod template (not
/// `SetDefaults_Job`: a job template is not a Job).
pub fn set_object_defaults_cron_job(cron_job: &mut Object) {
    let Some(spec) = spec_of(&mut cron_job.data) else {
        return;
    };
    default(spec, "concurrencyPolicy", json!("Allow"));
    default_nil(spec, "suspend", json!(false));
    default_nil(spec, "successfulJobsHistoryLimit", json!(3));
    default_nil(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(job_spec) =
        object_at(spec, "jobTemplate").and_then(|t| object_at(t, "spec"))
    {
        set_defaults_job_spec(job_spec);
    }
}

/// Mirrors the generated `SetObjectDefaults_EndpointSlice`:
/// `SetDefaults_EndpointPort` (a port's name is `""` and its protocol `TCP`).
pub fn set_object_defaults_endpoint_slice(slice: &mut Object) {
    let Some(fields) = slice.data.as_object_mut() else {
        return;
    };
    for port in objects_at(fields, "ports") {
        default_nil(port, "name", json!(""));
        default_nil(port, "protocol", json!("TCP"));
    }
}

/// Mirrors the generated `SetObjectDefaults_StorageClass`:
/// `SetDefaults_StorageClass` (reclaim `Delete`, bind `Immediate`).
pub fn set_object_defaults_storage_class(class: &mut Object) {
    if let Some(fields) = class.data.as_object_mut() {
        default_nil(fields, "reclaimPolicy", json!("Delete"));
        default_nil(fields, "volumeBindingMode", json!("Immediate"));
    }
}

/// Mirrors the generated `SetObjectDefaults_CSIDriver`: `SetDefaults_CSIDriver`
/// with 1.36's gates (CSIVolumeFSGroupPolicy and CSIInlineVolume are GA,
/// SELinuxMountReadWriteOncePod is on).
pub fn set_object_defaults_csi_driver(driver: &mut Object) {
    let Some(spec) = spec_of(&mut driver.data) else {
        return;
    };
    default_nil(spec, "attachRequired", json!(true));
    default_nil(spec, "podInfoOnMount", json!(false));
    default_nil(spec, "storageCapacity", json!(false));
    default_nil(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    let modes = spec.get("volumeLifecycleModes").and_then(Value::as_array);
    if modes.is_none_or(Vec::is_empty) {
        spec.insert("volumeLifecycleModes".to_string(), json!(["Persistent"]));
    }
    default_nil(spec, "requiresRepublish", json!(false));
    default_nil(spec, "seLinuxMount", json!(false));
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

    fn new(data: Value) -> Object {
        Object::default().with_data(data)
    }

    #[test]
    fn a_pull_policy_follows_the_tag_not_the_digest() {
        assert_eq!(image_pull_policy("nginx"), "Always");
        assert_eq!(image_pull_policy("nginx:latest"), "Always");
        assert_eq!(image_pull_policy("nginx@sha256:abc"), "IfNotPresent");
        assert_eq!(image_pull_policy("nginx:latest@sha256:abc"), "Always");
        assert_eq!(image_pull_policy("nginx:1@sha256:abc"), "IfNotPresent");
        assert_eq!(image_pull_policy("host:5000/nginx"), "Always");
    }

    #[test]
    fn a_template_gets_the_pod_spec_defaults_but_not_the_pods() {
        let pod_spec = json!({
            "volumes": [
                {"name": "scratch"},
                {"name": "cm", "configMap": {"name": "c"}},
                {"name": "mine", "secret": {"secretName": "s", "defaultMode": 256}},
                {"name": "token", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "t"}},
                    {"downwardAPI": {"items": [{"path": "n",
                        "fieldRef": {"fieldPath": "metadata.name"}}]}},
                ]}},
                {"name": "host", "hostPath": {"path": "/var"}},
            ],
            "containers": [{"name": "a", "image": "nginx:1",
                "resources": {"limits": {"cpu": "1"}},
                "env": [{"name": "N", "valueFrom":
                    {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "livenessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5},
                "readinessProbe": {"grpc": {"port": 9000}},
                "lifecycle": {"preStop": {"httpGet": {"port": 80}}}}],
        });
        let mut deployment =
            new(json!({"spec": {"template": {"spec": pod_spec.clone()}}}));
        set_object_defaults_deployment(&mut deployment);
        let spec = &deployment.data["spec"]["template"]["spec"];
        assert_eq!(spec["securityContext"], json!({}));
        assert_eq!(spec["volumes"][0]["emptyDir"], json!({}));
        assert_eq!(spec["volumes"][1]["configMap"]["defaultMode"], 420);
        assert_eq!(spec["volumes"][2]["secret"]["defaultMode"], 256);
        let sources = &spec["volumes"][3]["projected"];
        assert_eq!(sources["defaultMode"], 420);
        assert_eq!(
            sources["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3600
        );
        let item = &sources["sources"][1]["downwardAPI"]["items"][0];
        assert_eq!(item["fieldRef"]["apiVersion"], "v1");
        assert_eq!(spec["volumes"][4]["hostPath"]["type"], "");
        let container = &spec["containers"][0];
        assert_eq!(
            container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(
            container["livenessProbe"],
            json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1,
                "failureThreshold": 3})
        );
        assert_eq!(container["readinessProbe"]["grpc"]["service"], "");
        assert_eq!(container["lifecycle"]["preStop"]["httpGet"]["path"], "/");
        // `SetDefaults_Pod` is for pods only.
        assert_eq!(spec.get("enableServiceLinks"), None);
        assert_eq!(container["resources"], json!({"limits": {"cpu": "1"}}));

        let mut pod = new(json!({"spec": pod_spec}));
        set_object_defaults_pod(&mut pod);
        assert_eq!(pod.data["spec"]["enableServiceLinks"], true);
        assert_eq!(
            pod.data["spec"]["containers"][0]["resources"]["requests"],
            json!({"cpu": "1"})
        );
        assert_eq!(
            pod.data["spec"]["volumes"][1]["configMap"]["defaultMode"],
            420
        );
    }

    #[test]
    fn a_pod_on_the_host_network_gets_host_ports() {
        let mut pod = new(json!({"spec": {"hostNetwork": true, "containers": [
            {"name": "a", "image": "x", "ports": [{"containerPort": 53}]}]}}));
        set_object_defaults_pod(&mut pod);
        let port = &pod.data["spec"]["containers"][0]["ports"][0];
        assert_eq!(port["hostPort"], 53);
        assert_eq!(port["protocol"], "TCP");
    }

    #[test]
    fn a_cluster_ip_service_gets_its_ports_and_policies() {
        let mut service = new(json!({"spec": {"selector": {"app": "a"}, "ports": [
            {"port": 80},
            {"port": 53, "protocol": "UDP", "targetPort": "dns"},
        ]}}));
        set_object_defaults_service(&mut service);
        let spec = &service.data["spec"];
        assert_eq!(spec["type"], "ClusterIP");
        assert_eq!(spec["sessionAffinity"], "None");
        assert_eq!(spec["internalTrafficPolicy"], "Cluster");
        assert_eq!(spec.get("externalTrafficPolicy"), None);
        assert_eq!(spec.get("allocateLoadBalancerNodePorts"), None);
        assert_eq!(
            spec["ports"][0],
            json!({"port": 80, "protocol": "TCP",
            "targetPort": 80})
        );
        assert_eq!(
            spec["ports"][1],
            json!({"port": 53, "protocol": "UDP",
            "targetPort": "dns"})
        );
    }

    #[test]
    fn a_load_balancer_is_externally_accessible() {
        let mut service = new(json!({
            "spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP",
                "ports": [{"port": 443, "targetPort": 0}]},
            "status": {"loadBalancer": {"ingress": [
                {"ip": "1.2.3.4"}, {"hostname": "lb.example"},
                {"ip": "5.6.7.8", "ipMode": "Proxy"}]}},
        }));
        set_object_defaults_service(&mut service);
        let spec = &service.data["spec"];
        assert_eq!(spec["externalTrafficPolicy"], "Cluster");
        assert_eq!(spec["internalTrafficPolicy"], "Cluster");
        assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
        assert_eq!(
            spec["sessionAffinityConfig"],
            json!({"clientIP": {"timeoutSeconds": 10800}})
        );
        assert_eq!(spec["ports"][0]["targetPort"], 443);
        let ingress = &service.data["status"]["loadBalancer"]["ingress"];
        assert_eq!(ingress[0]["ipMode"], "VIP");
        assert_eq!(ingress[1].get("ipMode"), None);
        assert_eq!(ingress[2]["ipMode"], "Proxy");

        let mut local = new(json!({"spec": {"type": "NodePort",
            "externalTrafficPolicy": "Local", "internalTrafficPolicy": "Local",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}}}));
        set_object_defaults_service(&mut local);
        let spec = &local.data["spec"];
        assert_eq!(spec["externalTrafficPolicy"], "Local");
        assert_eq!(spec["internalTrafficPolicy"], "Local");
        assert_eq!(spec.get("allocateLoadBalancerNodePorts"), None);
        // Affinity `None` drops the config.
        assert_eq!(spec.get("sessionAffinityConfig"), None);
    }

    #[test]
    fn an_external_name_service_gets_no_traffic_policies() {
        let mut service = new(json!({"spec": {"type": "ExternalName",
            "externalName": "db.example", "externalIPs": ["1.2.3.4"]}}));
        set_object_defaults_service(&mut service);
        let spec = &service.data["spec"];
        assert_eq!(spec.get("internalTrafficPolicy"), None);
        assert_eq!(spec.get("externalTrafficPolicy"), None);

        let mut with_ips = new(json!({"spec": {"externalIPs": ["1.2.3.4"]}}));
        set_object_defaults_service(&mut with_ips);
        assert_eq!(with_ips.data["spec"]["externalTrafficPolicy"], "Cluster");
    }

    #[test]
    fn endpoints_ports_are_tcp_unless_given() {
        let mut endpoints =
            new(json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
            "ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}]}));
        set_object_defaults_endpoints(&mut endpoints);
        let ports = &endpoints.data["subsets"][0]["ports"];
        assert_eq!(ports[0]["protocol"], "TCP");
        assert_eq!(ports[1]["protocol"], "UDP");
    }

    #[test]
    fn a_persistent_volume_is_pending_retained_and_a_filesystem() {
        let mut volume = new(json!({"spec": {"capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/data"}}}));
        set_object_defaults_persistent_volume(&mut volume);
        let spec = &volume.data["spec"];
        assert_eq!(volume.data["status"], json!({"phase": "Pending"}));
        assert_eq!(spec["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(spec["volumeMode"], "Filesystem");
        assert_eq!(spec["hostPath"]["type"], "");

        let mut block = new(json!({
            "spec": {"volumeMode": "Block",
                "persistentVolumeReclaimPolicy": "Delete"},
            "status": {"phase": "Bound"},
        }));
        set_object_defaults_persistent_volume(&mut block);
        assert_eq!(block.data["spec"]["volumeMode"], "Block");
        assert_eq!(
            block.data["spec"]["persistentVolumeReclaimPolicy"],
            "Delete"
        );
        assert_eq!(block.data["status"]["phase"], "Bound");
    }

    #[test]
    fn a_claim_is_pending_and_a_filesystem() {
        let mut claim = new(json!({"spec": {"accessModes": ["ReadWriteOnce"]}}));
        set_object_defaults_persistent_volume_claim(&mut claim);
        assert_eq!(claim.data["status"], json!({"phase": "Pending"}));
        assert_eq!(claim.data["spec"]["volumeMode"], "Filesystem");

        let mut block = new(json!({"spec": {"volumeMode": "Block"}}));
        set_object_defaults_persistent_volume_claim(&mut block);
        assert_eq!(block.data["spec"]["volumeMode"], "Block");
    }

    fn template(labels: Value) -> Value {
        json!({"metadata": {"labels": labels},
            "spec": {"containers": [{"name": "a", "image": "nginx"}]}})
    }

    #[test]
    fn a_replication_controller_selects_its_templates_labels() {
        let mut controller =
            new(json!({"spec": {"template": template(json!({"app": "web"}))}}));
        set_object_defaults_replication_controller(&mut controller);
        let spec = &controller.data["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["selector"], json!({"app": "web"}));
        let labels = controller.metadata.labels.as_ref().unwrap();
        assert_eq!(labels.get("app").map(String::as_str), Some("web"));
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");

        let mut set = new(json!({"spec": {"replicas": 0, "selector": {"tier": "x"},
            "template": template(json!({"app": "web", "tier": "x"}))}}))
        .with_labels([("mine", "yes")]);
        set_object_defaults_replication_controller(&mut set);
        assert_eq!(set.data["spec"]["replicas"], 0);
        assert_eq!(set.data["spec"]["selector"], json!({"tier": "x"}));
        let labels = set.metadata.labels.as_ref().unwrap();
        assert_eq!(labels.len(), 1);
    }

    #[test]
    fn a_stateful_set_gets_its_policies_and_claim_templates() {
        let mut stateful_set = new(json!({"spec": {
            "template": template(json!({"app": "db"})),
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"]}}],
        }}));
        set_object_defaults_stateful_set(&mut stateful_set);
        let spec = &stateful_set.data["spec"];
        assert_eq!(spec["podManagementPolicy"], "OrderedReady");
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate",
                "rollingUpdate": {"partition": 0, "maxUnavailable": 1}})
        );
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        let claim = &spec["volumeClaimTemplates"][0];
        assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
        assert_eq!(claim["status"], json!({"phase": "Pending"}));

        let mut set = new(json!({"spec": {"replicas": 3,
            "updateStrategy": {"type": "RollingUpdate"},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}}));
        set_object_defaults_stateful_set(&mut set);
        let spec = &set.data["spec"];
        assert_eq!(spec["replicas"], 3);
        // A client's `RollingUpdate` without parameters keeps none.
        assert_eq!(spec["updateStrategy"], json!({"type": "RollingUpdate"}));
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
        );

        let mut on_delete =
            new(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}));
        set_object_defaults_stateful_set(&mut on_delete);
        assert_eq!(
            on_delete.data["spec"]["updateStrategy"],
            json!({"type": "OnDelete"})
        );
    }

    #[test]
    fn a_daemon_set_rolls_one_pod_at_a_time() {
        let mut daemon_set =
            new(json!({"spec": {"template": template(json!({"app": "agent"}))}}));
        set_object_defaults_daemon_set(&mut daemon_set);
        let spec = &daemon_set.data["spec"];
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(
            spec["template"]["spec"]["schedulerName"],
            "default-scheduler"
        );

        let mut set = new(json!({"spec": {"revisionHistoryLimit": 2,
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": "10%"}}}}));
        set_object_defaults_daemon_set(&mut set);
        assert_eq!(set.data["spec"]["revisionHistoryLimit"], 2);
        assert_eq!(
            set.data["spec"]["updateStrategy"]["rollingUpdate"],
            json!({"maxUnavailable": "10%", "maxSurge": 0})
        );

        let mut on_delete =
            new(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}));
        set_object_defaults_daemon_set(&mut on_delete);
        assert_eq!(
            on_delete.data["spec"]["updateStrategy"],
            json!({"type": "OnDelete"})
        );
    }

    #[test]
    fn a_job_runs_once_and_takes_its_templates_labels() {
        let mut job =
            new(json!({"spec": {"template": template(json!({"app": "x"}))}}));
        set_object_defaults_job(&mut job);
        let spec = &job.data["spec"];
        assert_eq!(spec["completions"], 1);
        assert_eq!(spec["parallelism"], 1);
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["manualSelector"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
        let labels = job.metadata.labels.as_ref().unwrap();
        assert_eq!(labels.get("app").map(String::as_str), Some("x"));

        let mut set = new(json!({"spec": {"completions": 5, "suspend": true,
            "backoffLimitPerIndex": 1, "completionMode": "Indexed",
            "podFailurePolicy": {"rules": [{"action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget"}]}]}}}))
        .with_labels([("mine", "yes")]);
        set_object_defaults_job(&mut set);
        let spec = &set.data["spec"];
        assert_eq!(spec["completions"], 5);
        assert_eq!(spec["parallelism"], 1);
        assert_eq!(spec["backoffLimit"], i32::MAX);
        assert_eq!(spec["completionMode"], "Indexed");
        assert_eq!(spec["suspend"], true);
        assert_eq!(spec["podReplacementPolicy"], "Failed");
        assert_eq!(
            spec["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True"
        );
        assert_eq!(set.metadata.labels.as_ref().unwrap().len(), 1);

        let mut parallel = new(json!({"spec": {"parallelism": 3}}));
        set_object_defaults_job(&mut parallel);
        assert_eq!(parallel.data["spec"].get("completions"), None);
        assert_eq!(parallel.data["spec"]["parallelism"], 3);
    }

    #[test]
    fn a_cron_job_defaults_its_policy_and_its_job_templates_pods() {
        let mut cron_job = new(json!({"spec": {"schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": template(json!({}))}}}}));
        set_object_defaults_cron_job(&mut cron_job);
        let spec = &cron_job.data["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        let job_spec = &spec["jobTemplate"]["spec"];
        assert_eq!(job_spec["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(
            job_spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "Always"
        );
        // A job template is not a Job: `SetDefaults_Job` does not run on it.
        assert_eq!(job_spec.get("backoffLimit"), None);

        let mut set = new(json!({"spec": {"concurrencyPolicy": "Forbid",
            "suspend": true, "successfulJobsHistoryLimit": 0}}));
        set_object_defaults_cron_job(&mut set);
        let spec = &set.data["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Forbid");
        assert_eq!(spec["suspend"], true);
        assert_eq!(spec["successfulJobsHistoryLimit"], 0);
    }

    #[test]
    fn endpoint_slice_ports_get_a_name_and_a_protocol() {
        let mut slice = new(json!({"addressType": "IPv4", "ports": [
            {"port": 80},
            {"name": "dns", "port": 53, "protocol": "UDP"},
        ]}));
        set_object_defaults_endpoint_slice(&mut slice);
        assert_eq!(
            slice.data["ports"],
            json!([{"name": "", "port": 80, "protocol": "TCP"},
                {"name": "dns", "port": 53, "protocol": "UDP"}])
        );
    }

    #[test]
    fn a_storage_class_deletes_and_binds_immediately() {
        let mut class = new(json!({"provisioner": "example.com/disk"}));
        set_object_defaults_storage_class(&mut class);
        assert_eq!(class.data["reclaimPolicy"], "Delete");
        assert_eq!(class.data["volumeBindingMode"], "Immediate");

        let mut set = new(json!({"reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer"}));
        set_object_defaults_storage_class(&mut set);
        assert_eq!(set.data["reclaimPolicy"], "Retain");
        assert_eq!(set.data["volumeBindingMode"], "WaitForFirstConsumer");
    }

    #[test]
    fn a_csi_driver_attaches_and_mounts_persistent_volumes() {
        let mut driver = new(json!({}));
        set_object_defaults_csi_driver(&mut driver);
        assert_eq!(
            driver.data["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false,
                "storageCapacity": false, "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "volumeLifecycleModes": ["Persistent"], "requiresRepublish": false,
                "seLinuxMount": false})
        );

        let mut set = new(json!({"spec": {"attachRequired": false,
            "fsGroupPolicy": "File", "volumeLifecycleModes": ["Ephemeral"],
            "seLinuxMount": true}}));
        set_object_defaults_csi_driver(&mut set);
        let spec = &set.data["spec"];
        assert_eq!(spec["attachRequired"], false);
        assert_eq!(spec["fsGroupPolicy"], "File");
        assert_eq!(spec["volumeLifecycleModes"], json!(["Ephemeral"]));
        assert_eq!(spec["seLinuxMount"], true);
    }
}
