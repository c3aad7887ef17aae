//! The printers of the served kinds: mirrors kubernetes'
//! `pkg/printers/internalversion/printers.go` (`AddHandlers`' column
//! definitions, `printPod`, `printDeployment`, `printNamespace`, `printNode`,
//! `printConfigMap`, `printSecret`, `printEvent`) and, for any other kind,
//! apiserver's `rest.DefaultTableConvertor` (`Name`, `Created At`).
//!
//! Upstream prints the internal (defaulted, converted) type; the objects here are
//! the stored v1 JSON, so a printer reads the v1 fields and applies the few
//! defaults and conversions that change a cell: a deployment without
//! `spec.replicas` wants 1, a secret without `type` is `Opaque` and its
//! `stringData` keys count as data, a pod's `status.podIP` wins over
//! `status.podIPs`.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use stage5_storage::Object;

use super::{Cell, Column, RowCondition, TableHandler};
use apimachinery::util::duration::human_duration;

/// A row's cells, each a [`Cell`]: a JSON value, or a time rendered as of the
/// answer.
macro_rules! cells {
    ($($cell:expr),* $(,)?) => {
        vec![$(Cell::from($cell)),*]
    };
}

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const NODE_ADDRESSES_DESCRIPTION: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
const CONTAINERS_DESCRIPTION: &str = "Names of each container in the template.";
const IMAGES_DESCRIPTION: &str =
    "Images referenced by each container in the template.";

const fn column(
    name: &'static str,
    type_: &'static str,
    description: &'static str,
    priority: i32,
) -> Column {
    Column {
        name,
        type_,
        format: "",
        description,
        priority,
    }
}

const NAME: Column = Column {
    name: "Name",
    type_: "string",
    format: "name",
    description: NAME_DESCRIPTION,
    priority: 0,
};
const AGE: Column = column("Age", "string", CREATION_TIMESTAMP_DESCRIPTION, 0);

/// `podColumnDefinitions`.
pub const POD_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Ready",
        "string",
        "The aggregate readiness state of this pod for accepting traffic.",
        0,
    ),
    column(
        "Status",
        "string",
        "The aggregate status of the containers in this pod.",
        0,
    ),
    column(
        "Restarts",
        "string",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        0,
    ),
    AGE,
    column(
        "IP",
        "string",
        "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
        1,
    ),
    column(
        "Node",
        "string",
        "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
        1,
    ),
    column(
        "Nominated Node",
        "string",
        "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
        1,
    ),
    column(
        "Readiness Gates",
        "string",
        "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
        1,
    ),
];

/// `deploymentColumnDefinitions`.
pub const DEPLOYMENT_COLUMNS: &[Column] = &[
    NAME,
    column("Ready", "string", "Number of the pod with ready state", 0),
    column(
        "Up-to-date",
        "string",
        "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
        0,
    ),
    column(
        "Available",
        "string",
        "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
        0,
    ),
    AGE,
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
    column(
        "Selector",
        "string",
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
        1,
    ),
];

/// `replicaSetColumnDefinitions` (the descriptions are the `apps/v1` API's).
pub const REPLICASET_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Desired",
        "integer",
        "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
        0,
    ),
    column(
        "Current",
        "integer",
        "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
        0,
    ),
    column(
        "Ready",
        "integer",
        "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
        0,
    ),
    AGE,
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
    column(
        "Selector",
        "string",
        "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        1,
    ),
];

/// `leaseColumnDefinitions`.
pub const LEASE_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Holder",
        "string",
        "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
        0,
    ),
    AGE,
];

/// `namespaceColumnDefinitions`.
pub const NAMESPACE_COLUMNS: &[Column] = &[
    NAME,
    column("Status", "string", "The status of the namespace", 0),
    AGE,
];

/// `nodeColumnDefinitions`.
pub const NODE_COLUMNS: &[Column] = &[
    NAME,
    column("Status", "string", "The status of the node", 0),
    column("Roles", "string", "The roles of the node", 0),
    AGE,
    column(
        "Version",
        "string",
        "Kubelet Version reported by the node.",
        0,
    ),
    column("Internal-IP", "string", NODE_ADDRESSES_DESCRIPTION, 1),
    column("External-IP", "string", NODE_ADDRESSES_DESCRIPTION, 1),
    column(
        "OS-Image",
        "string",
        "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
        1,
    ),
    column(
        "Kernel-Version",
        "string",
        "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
        1,
    ),
    column(
        "Container-Runtime",
        "string",
        "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
        1,
    ),
];

/// `configMapColumnDefinitions`.
pub const CONFIGMAP_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Data",
        "string",
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
        0,
    ),
    AGE,
];

/// `secretColumnDefinitions`.
pub const SECRET_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Type",
        "string",
        "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
        0,
    ),
    column(
        "Data",
        "string",
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
        0,
    ),
    AGE,
];

/// `eventColumnDefinitions`.
pub const EVENT_COLUMNS: &[Column] = &[
    column(
        "Last Seen",
        "string",
        "The time at which the most recent occurrence of this event was recorded.",
        0,
    ),
    column(
        "Type",
        "string",
        "Type of this event (Normal, Warning), new types could be added in the future",
        0,
    ),
    column(
        "Reason",
        "string",
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        0,
    ),
    column(
        "Object",
        "string",
        "The object that this event is about.",
        0,
    ),
    column(
        "Subobject",
        "string",
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
        1,
    ),
    column(
        "Source",
        "string",
        "The component reporting this event. Should be a short machine understandable string.",
        1,
    ),
    column(
        "Message",
        "string",
        "A human-readable description of the status of this operation.",
        0,
    ),
    column(
        "First Seen",
        "string",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        1,
    ),
    column(
        "Count",
        "string",
        "The number of times this event has occurred.",
        1,
    ),
    Column {
        priority: 1,
        ..NAME
    },
];

/// `rest.DefaultTableConvertor`'s columns, for a kind without a printer.
pub const DEFAULT_COLUMNS: &[Column] = &[
    NAME,
    column("Created At", "date", CREATION_TIMESTAMP_DESCRIPTION, 0),
];

/// Mirrors `AddHandlers`' registration for pods: `podColumnDefinitions` and
/// `printPod`.
pub const POD: TableHandler = TableHandler {
    columns: POD_COLUMNS,
    print: print_pod,
};

/// Deployments: `deploymentColumnDefinitions` and `printDeployment`.
pub const DEPLOYMENT: TableHandler = TableHandler {
    columns: DEPLOYMENT_COLUMNS,
    print: |obj| (print_deployment(obj), Vec::new()),
};

/// ReplicaSets: `replicaSetColumnDefinitions` and `printReplicaSet`.
pub const REPLICASET: TableHandler = TableHandler {
    columns: REPLICASET_COLUMNS,
    print: |obj| (print_replica_set(obj), Vec::new()),
};

/// Leases: `leaseColumnDefinitions` and `printLease`.
pub const LEASE: TableHandler = TableHandler {
    columns: LEASE_COLUMNS,
    print: |obj| (print_lease(obj), Vec::new()),
};

/// Namespaces: `namespaceColumnDefinitions` and `printNamespace`.
pub const NAMESPACE: TableHandler = TableHandler {
    columns: NAMESPACE_COLUMNS,
    print: |obj| (print_namespace(obj), Vec::new()),
};

/// Nodes: `nodeColumnDefinitions` and `printNode`.
pub const NODE: TableHandler = TableHandler {
    columns: NODE_COLUMNS,
    print: |obj| (print_node(obj), Vec::new()),
};

/// ConfigMaps: `configMapColumnDefinitions` and `printConfigMap`.
pub const CONFIGMAP: TableHandler = TableHandler {
    columns: CONFIGMAP_COLUMNS,
    print: |obj| (print_config_map(obj), Vec::new()),
};

/// Secrets: `secretColumnDefinitions` and `printSecret`.
pub const SECRET: TableHandler = TableHandler {
    columns: SECRET_COLUMNS,
    print: |obj| (print_secret(obj), Vec::new()),
};

/// Core `v1` Events: `eventColumnDefinitions` and `printEvent`.
pub const EVENT: TableHandler = TableHandler {
    columns: EVENT_COLUMNS,
    print: |obj| (print_event(obj), Vec::new()),
};

/// `events.k8s.io/v1` Events: upstream prints both groups' Events from the one
/// internal type, so the event is printed as its core form.
pub const EVENT_V1: TableHandler = TableHandler {
    columns: EVENT_COLUMNS,
    print: |obj| (print_event(&crate::events_v1::to_core(obj)), Vec::new()),
};

/// `rest.DefaultTableConvertor`, for a kind without a printer: the name and the
/// creation time.
pub const DEFAULT: TableHandler = TableHandler {
    columns: DEFAULT_COLUMNS,
    print: |obj| (print_default(obj), Vec::new()),
};

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or_default()
}

fn items(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn time(value: &Value) -> Option<Timestamp> {
    value.as_str().and_then(|t| t.parse().ok())
}

/// Mirrors `translateTimestampSince` (and `translateMicroTimestampSince`):
/// `<unknown>` for a missing time, else apimachinery's `HumanDuration` ([`human_duration`]) of the time since it.
pub fn translate_timestamp_since(
    timestamp: Option<Timestamp>,
    now: Timestamp,
) -> String {
    match timestamp {
        None => "<unknown>".to_string(),
        Some(t) => human_duration(now.duration_since(t)),
    }
}

/// The AGE cell: the time since the object's creation, as of the answer.
fn age(obj: &Object) -> Cell {
    Cell::since(obj.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

fn name(obj: &Object) -> Value {
    Value::from(obj.name())
}

fn or_none(value: &str) -> &str {
    if value.is_empty() { "<none>" } else { value }
}

/// `podSuccessConditions`.
const POD_SUCCEEDED: RowCondition = RowCondition {
    type_: "Completed",
    status: "True",
    reason: "Succeeded",
    message: "The pod has completed successfully.",
};

/// `podFailedConditions`.
const POD_FAILED: RowCondition = RowCondition {
    type_: "Completed",
    status: "True",
    reason: "Failed",
    message: "The pod failed.",
};

/// Keeps the later of two optional times (`lastRestartDate.Before(&terminatedDate)`).
fn later(
    current: Option<Timestamp>,
    candidate: Option<Timestamp>,
) -> Option<Timestamp> {
    match (current, candidate) {
        (Some(a), Some(b)) if a < b => Some(b),
        (None, Some(b)) => Some(b),
        (current, _) => current,
    }
}

/// `isPodInitializedConditionTrue`: the first `Initialized` condition decides.
fn is_pod_initialized_condition_true(status: &Value) -> bool {
    items(&status["conditions"])
        .iter()
        .find(|c| text(&c["type"]) == "Initialized")
        .is_some_and(|c| text(&c["status"]) == "True")
}

/// `hasPodReadyCondition`.
fn has_pod_ready_condition(status: &Value) -> bool {
    items(&status["conditions"])
        .iter()
        .any(|c| text(&c["type"]) == "Ready" && text(&c["status"]) == "True")
}

/// `Signal:N` or `ExitCode:N` for a terminated state without a reason.
fn exit_reason(terminated: &Value) -> String {
    let signal = int(&terminated["signal"]);
    if signal != 0 {
        format!("Signal:{signal}")
    } else {
        format!("ExitCode:{}", int(&terminated["exitCode"]))
    }
}

/// Mirrors `printPod`: READY counts ready containers (and started restartable
/// init containers, "sidecars") against all of them; STATUS is the phase or
/// `status.reason`, overridden by the first init container still working
/// (`Init:N/M`, `Init:<reason>`), then by the last container's waiting or
/// terminated reason, `Terminating` while deleting; RESTARTS adds up restart
/// counts and says when the last one happened (`5 (3m ago)`).
fn print_pod(obj: &Object) -> (Vec<Cell>, Vec<RowCondition>) {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    let init_specs = items(&spec["initContainers"]);
    let restartable = |name: &str| {
        init_specs
            .iter()
            .rev()
            .find(|c| text(&c["name"]) == name)
            .is_some_and(|c| text(&c["restartPolicy"]) == "Always")
    };
    let mut restarts: i64 = 0;
    let mut restartable_restarts: i64 = 0;
    let total_containers = items(&spec["containers"]).len()
        + init_specs
            .iter()
            .filter(|c| text(&c["restartPolicy"]) == "Always")
            .count();
    let mut ready_containers = 0usize;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_restartable_restart: Option<Timestamp> = None;

    let phase = text(&status["phase"]);
    let mut reason = phase.to_string();
    if !text(&status["reason"]).is_empty() {
        reason = text(&status["reason"]).to_string();
    }
    for condition in items(&status["conditions"]) {
        if text(&condition["type"]) == "PodScheduled"
            && text(&condition["reason"]) == "SchedulingGated"
        {
            reason = "SchedulingGated".to_string();
        }
    }
    let conditions = match phase {
        "Succeeded" => vec![POD_SUCCEEDED],
        "Failed" => vec![POD_FAILED],
        _ => Vec::new(),
    };

    let mut initializing = false;
    for (i, container) in items(&status["initContainerStatuses"]).iter().enumerate()
    {
        let count = int(&container["restartCount"]);
        let finished = time(&container["lastState"]["terminated"]["finishedAt"]);
        restarts += count;
        last_restart = later(last_restart, finished);
        let is_restartable = restartable(text(&container["name"]));
        if is_restartable {
            restartable_restarts += count;
            last_restartable_restart = later(last_restartable_restart, finished);
        }
        let terminated = &container["state"]["terminated"];
        let waiting = &container["state"]["waiting"];
        if terminated.is_object() && int(&terminated["exitCode"]) == 0 {
            continue;
        }
        if is_restartable && container["started"].as_bool() == Some(true) {
            if container["ready"].as_bool() == Some(true) {
                ready_containers += 1;
            }
            continue;
        }
        reason = if terminated.is_object() {
            match text(&terminated["reason"]) {
                "" => format!("Init:{}", exit_reason(terminated)),
                why => format!("Init:{why}"),
            }
        } else if waiting.is_object()
            && !text(&waiting["reason"]).is_empty()
            && text(&waiting["reason"]) != "PodInitializing"
        {
            format!("Init:{}", text(&waiting["reason"]))
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }

    if !initializing || is_pod_initialized_condition_true(status) {
        restarts = restartable_restarts;
        last_restart = last_restartable_restart;
        let mut has_running = false;
        for container in items(&status["containerStatuses"]).iter().rev() {
            restarts += int(&container["restartCount"]);
            last_restart = later(
                last_restart,
                time(&container["lastState"]["terminated"]["finishedAt"]),
            );
            let state = &container["state"];
            let terminated = &state["terminated"];
            if state["waiting"].is_object()
                && !text(&state["waiting"]["reason"]).is_empty()
            {
                reason = text(&state["waiting"]["reason"]).to_string();
            } else if terminated.is_object()
                && !text(&terminated["reason"]).is_empty()
            {
                reason = text(&terminated["reason"]).to_string();
            } else if terminated.is_object() {
                reason = exit_reason(terminated);
            } else if container["ready"].as_bool() == Some(true)
                && state["running"].is_object()
            {
                has_running = true;
                ready_containers += 1;
            }
        }
        // Back to "Running" if a container still runs after one completed.
        if reason == "Completed" && has_running {
            reason = if has_pod_ready_condition(status) {
                "Running".to_string()
            } else {
                "NotReady".to_string()
            };
        }
    }

    let deleting = obj.metadata.deletion_timestamp.is_some();
    if deleting && text(&status["reason"]) == "NodeLost" {
        reason = "Unknown".to_string();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".to_string();
    }

    let restarts_text = match last_restart {
        Some(last) if restarts != 0 => Cell::Since {
            prefix: format!("{restarts} ("),
            time: Some(last),
            suffix: " ago)",
        },
        _ => Cell::from(Value::from(restarts.to_string())),
    };
    // The internal type's single list of IPs: a set `podIP` wins (the v1
    // conversion), else the first of `podIPs`.
    let pod_ip = match text(&status["podIP"]) {
        "" => items(&status["podIPs"])
            .first()
            .map(|ip| text(&ip["ip"]))
            .unwrap_or_default(),
        ip => ip,
    };
    let gates = items(&spec["readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let pod_conditions = items(&status["conditions"]);
        let true_conditions = gates
            .iter()
            .filter(|gate| {
                pod_conditions
                    .iter()
                    .find(|c| c["type"] == gate["conditionType"])
                    .is_some_and(|c| text(&c["status"]) == "True")
            })
            .count();
        format!("{true_conditions}/{}", gates.len())
    };
    let cells = cells![
        name(obj),
        Value::from(format!("{ready_containers}/{total_containers}")),
        Value::from(reason),
        restarts_text,
        age(obj),
        Value::from(or_none(pod_ip)),
        Value::from(or_none(text(&spec["nodeName"]))),
        Value::from(or_none(text(&status["nominatedNodeName"]))),
        Value::from(readiness_gates),
    ];
    (cells, conditions)
}

/// `layoutContainerCells`: the names and the images, comma-separated.
fn layout_container_cells(containers: &[Value]) -> (String, String) {
    let names: Vec<&str> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(&c["image"])).collect();
    (names.join(","), images.join(","))
}

/// Whether `metav1.LabelSelectorAsSelector` fails on `selector`: an unknown
/// operator, `In`/`NotIn` without values, `Exists`/`DoesNotExist` with some.
fn selector_is_invalid(selector: &Value) -> bool {
    items(&selector["matchExpressions"]).iter().any(|e| {
        let values = items(&e["values"]).len();
        match text(&e["operator"]) {
            "In" | "NotIn" => values == 0,
            "Exists" | "DoesNotExist" => values != 0,
            _ => true,
        }
    })
}

/// Mirrors `printDeployment`: `ready/desired`, up-to-date, available, age; wide
/// adds the containers, images and selector.
fn print_deployment(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    // `SetDefaults_Deployment`: one replica unless said otherwise.
    let desired = spec["replicas"].as_i64().unwrap_or(1);
    let (containers, images) =
        layout_container_cells(items(&spec["template"]["spec"]["containers"]));
    let selector = if selector_is_invalid(&spec["selector"]) {
        "<invalid>".to_string()
    } else {
        apimachinery::labels::selector_string(&spec["selector"])
    };
    cells![
        name(obj),
        Value::from(format!("{}/{desired}", int(&status["readyReplicas"]))),
        Value::from(int(&status["updatedReplicas"])),
        Value::from(int(&status["availableReplicas"])),
        age(obj),
        Value::from(containers),
        Value::from(images),
        Value::from(selector),
    ]
}

/// Mirrors `printReplicaSet`: desired, current and ready replicas, and with
/// `-o wide` the template's containers and images and the selector
/// (`metav1.FormatLabelSelector`: `<none>` when it selects everything).
fn print_replica_set(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    // `SetDefaults_ReplicaSet`: one replica unless said otherwise.
    let desired = spec["replicas"].as_i64().unwrap_or(1);
    let (containers, images) =
        layout_container_cells(items(&spec["template"]["spec"]["containers"]));
    let selector = apimachinery::labels::selector_string(&spec["selector"]);
    cells![
        name(obj),
        Value::from(desired),
        Value::from(int(&status["replicas"])),
        Value::from(int(&status["readyReplicas"])),
        age(obj),
        Value::from(containers),
        Value::from(images),
        Value::from(or_none(&selector)),
    ]
}

/// Mirrors `printLease`: the holder, or `<unknown>` without one.
fn print_lease(obj: &Object) -> Vec<Cell> {
    let holder = obj.data["spec"]["holderIdentity"]
        .as_str()
        .unwrap_or("<unknown>");
    cells![name(obj), Value::from(holder), age(obj)]
}

/// Mirrors `printNamespace`: the phase as it is.
fn print_namespace(obj: &Object) -> Vec<Cell> {
    cells![
        name(obj),
        Value::from(text(&obj.data["status"]["phase"])),
        age(obj),
    ]
}

/// Mirrors `findNodeRoles`: `node-role.kubernetes.io/<role>` labels and the
/// value of a `kubernetes.io/role` label, sorted, each once.
pub fn find_node_roles(obj: &Object) -> Vec<String> {
    let mut roles = BTreeSet::new();
    for (key, value) in obj.metadata.labels.iter().flatten() {
        if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role.to_string());
            }
        } else if key == "kubernetes.io/role" && !value.is_empty() {
            roles.insert(value.clone());
        }
    }
    roles.into_iter().collect()
}

/// The first address of `kind`, or `<none>` (`getNodeInternalIP`,
/// `getNodeExternalIP`).
fn node_address<'a>(status: &'a Value, kind: &str) -> &'a str {
    items(&status["addresses"])
        .iter()
        .find(|a| text(&a["type"]) == kind)
        .map_or("<none>", |a| text(&a["address"]))
}

/// Mirrors `printNode`: `Ready`/`NotReady` from the Ready condition (`Unknown`
/// without one), `SchedulingDisabled` when cordoned, the roles, the kubelet
/// version; wide adds the addresses and the system info.
fn print_node(obj: &Object) -> Vec<Cell> {
    let status = &obj.data["status"];
    // The condition map keeps the last condition of a type.
    let ready = items(&status["conditions"])
        .iter()
        .rev()
        .find(|c| text(&c["type"]) == "Ready");
    let mut states = vec![match ready {
        Some(c) if text(&c["status"]) == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if obj.data["spec"]["unschedulable"].as_bool() == Some(true) {
        states.push("SchedulingDisabled");
    }
    let roles = find_node_roles(obj).join(",");
    let info = &status["nodeInfo"];
    let unknown = |value: &Value| match text(value) {
        "" => "<unknown>".to_string(),
        v => v.to_string(),
    };
    cells![
        name(obj),
        Value::from(states.join(",")),
        Value::from(or_none(&roles)),
        age(obj),
        Value::from(text(&info["kubeletVersion"])),
        Value::from(node_address(status, "InternalIP")),
        Value::from(node_address(status, "ExternalIP")),
        Value::from(unknown(&info["osImage"])),
        Value::from(unknown(&info["kernelVersion"])),
        Value::from(unknown(&info["containerRuntimeVersion"])),
    ]
}

fn key_count(value: &Value) -> usize {
    value.as_object().map_or(0, serde_json::Map::len)
}

/// Mirrors `printConfigMap`: the number of `data` and `binaryData` keys.
fn print_config_map(obj: &Object) -> Vec<Cell> {
    let count = key_count(&obj.data["data"]) + key_count(&obj.data["binaryData"]);
    cells![name(obj), Value::from(count), age(obj)]
}

/// Mirrors `printSecret`: the type (`Opaque` by default) and the number of data
/// keys, `stringData`'s merged in as the v1 conversion merges them.
fn print_secret(obj: &Object) -> Vec<Cell> {
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for field in ["data", "stringData"] {
        if let Some(map) = obj.data[field].as_object() {
            keys.extend(map.keys().map(String::as_str));
        }
    }
    let type_ = match text(&obj.data["type"]) {
        "" => "Opaque",
        t => t,
    };
    cells![
        name(obj),
        Value::from(type_),
        Value::from(keys.len()),
        age(obj),
    ]
}

/// Mirrors `formatEventSource`: the component (or reporting controller), then
/// `, host` (or reporting instance) when there is one.
fn format_event_source(event: &Value) -> String {
    let first_non_empty = |a: &Value, b: &Value| -> String {
        match text(a) {
            "" => text(b).to_string(),
            value => value.to_string(),
        }
    };
    let component =
        first_non_empty(&event["source"]["component"], &event["reportingComponent"]);
    let instance =
        first_non_empty(&event["source"]["host"], &event["reportingInstance"]);
    if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    }
}

/// Mirrors `printEvent` (wide): last seen (the series' last observation, else
/// `lastTimestamp`, else the first seen), type, reason, `kind/name` of the
/// involved object, its field path, the source, the message, first seen
/// (`firstTimestamp`, else `eventTime`), the count (1 for a singleton), the name.
fn print_event(obj: &Object) -> Vec<Cell> {
    let event = &obj.data;
    let first = time(&event["firstTimestamp"]).or_else(|| time(&event["eventTime"]));
    let mut last = time(&event["lastTimestamp"]).or(first);
    let mut count = int(&event["count"]);
    if event["series"].is_object() {
        last = time(&event["series"]["lastObservedTime"]);
        count = int(&event["series"]["count"]);
    } else if count == 0 {
        count = 1;
    }
    let involved = &event["involvedObject"];
    let kind = text(&involved["kind"]).to_lowercase();
    let target = match text(&involved["name"]) {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    cells![
        Cell::since(last),
        Value::from(text(&event["type"])),
        Value::from(text(&event["reason"])),
        Value::from(target),
        Value::from(text(&involved["fieldPath"])),
        Value::from(format_event_source(event)),
        Value::from(text(&event["message"]).trim()),
        Cell::since(first),
        Value::from(count),
        name(obj),
    ]
}

/// Mirrors `DefaultTableConvertor.ConvertToTable`: the name and the creation
/// time in RFC 3339 (UTC).
fn print_default(obj: &Object) -> Vec<Cell> {
    let created = obj
        .metadata
        .creation_timestamp
        .as_ref()
        .map(|t| t.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_string());
    cells![name(obj), Value::from(created)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::printers::TableRow;
    use serde_json::json;
    use stage5_storage::ResourceInfo;

    const NOW: i64 = 1_700_000_000;

    fn now() -> Timestamp {
        Timestamp::from_second(NOW).unwrap()
    }

    /// The time `seconds` before [`NOW`], as the API writes it.
    fn ago(seconds: i64) -> String {
        Timestamp::from_second(NOW - seconds).unwrap().to_string()
    }

    fn object(value: Value) -> Object {
        serde_json::from_value(value).unwrap()
    }

    /// The kind's handler, as its registry strategy names it.
    fn handler(info: &ResourceInfo) -> &'static TableHandler {
        crate::registry::strategy_for(info).table_handler()
    }

    fn columns(info: &ResourceInfo) -> &'static [Column] {
        handler(info).columns
    }

    fn print(info: &ResourceInfo, obj: &Object, now: Timestamp) -> TableRow {
        handler(info).row(obj, now)
    }

    fn cells(info: &ResourceInfo, value: Value) -> Vec<Value> {
        print(info, &object(value), now()).cells
    }

    fn names(columns: &[Column]) -> Vec<(&str, i32)> {
        columns.iter().map(|c| (c.name, c.priority)).collect()
    }

    #[test]
    fn every_served_kind_has_upstreams_columns() {
        assert_eq!(
            names(columns(&ResourceInfo::PODS)),
            [
                ("Name", 0),
                ("Ready", 0),
                ("Status", 0),
                ("Restarts", 0),
                ("Age", 0),
                ("IP", 1),
                ("Node", 1),
                ("Nominated Node", 1),
                ("Readiness Gates", 1)
            ]
        );
        assert_eq!(POD_COLUMNS[0].format, "name");
        assert_eq!(POD_COLUMNS[3].type_, "string");
        assert_eq!(
            names(columns(&ResourceInfo::DEPLOYMENTS)),
            [
                ("Name", 0),
                ("Ready", 0),
                ("Up-to-date", 0),
                ("Available", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
                ("Selector", 1)
            ]
        );
        assert_eq!(
            names(columns(&ResourceInfo::NAMESPACES)),
            [("Name", 0), ("Status", 0), ("Age", 0)]
        );
        assert_eq!(
            names(columns(&ResourceInfo::NODES)),
            [
                ("Name", 0),
                ("Status", 0),
                ("Roles", 0),
                ("Age", 0),
                ("Version", 0),
                ("Internal-IP", 1),
                ("External-IP", 1),
                ("OS-Image", 1),
                ("Kernel-Version", 1),
                ("Container-Runtime", 1)
            ]
        );
        assert_eq!(
            names(columns(&ResourceInfo::CONFIGMAPS)),
            [("Name", 0), ("Data", 0), ("Age", 0)]
        );
        assert_eq!(
            names(columns(&ResourceInfo::SECRETS)),
            [("Name", 0), ("Type", 0), ("Data", 0), ("Age", 0)]
        );
        assert_eq!(
            names(columns(&ResourceInfo::EVENTS)),
            [
                ("Last Seen", 0),
                ("Type", 0),
                ("Reason", 0),
                ("Object", 0),
                ("Subobject", 1),
                ("Source", 1),
                ("Message", 0),
                ("First Seen", 1),
                ("Count", 1),
                ("Name", 1)
            ]
        );
        assert_eq!(EVENT_COLUMNS[9].format, "name");
        // The JSON a client sees.
        assert_eq!(
            serde_json::to_value(AGE).unwrap(),
            json!({"name": "Age", "type": "string", "format": "",
                   "description": CREATION_TIMESTAMP_DESCRIPTION, "priority": 0})
        );
    }

    #[test]
    fn a_pod_with_a_crash_looping_container_and_restarts() {
        let row = cells(
            &ResourceInfo::PODS,
            json!({
                "metadata": {"name": "web-0", "creationTimestamp": ago(300)},
                "spec": {"nodeName": "n1", "containers": [{"name": "a"}, {"name": "b"}]},
                "status": {
                    "phase": "Running",
                    "podIP": "10.0.0.7",
                    "containerStatuses": [
                        {"name": "a", "ready": true, "restartCount": 0,
                         "state": {"running": {"startedAt": ago(290)}}},
                        {"name": "b", "ready": false, "restartCount": 5,
                         "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                         "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(180)}}}
                    ]
                }
            }),
        );
        assert_eq!(
            row,
            [
                "web-0",
                "1/2",
                "CrashLoopBackOff",
                "5 (3m ago)",
                "5m",
                "10.0.0.7",
                "n1",
                "<none>",
                "<none>"
            ]
        );
    }

    #[test]
    fn a_new_pod_has_no_restarts_nor_ip() {
        let row = cells(
            &ResourceInfo::PODS,
            json!({
                "metadata": {"name": "p", "creationTimestamp": ago(5)},
                "spec": {"containers": [{"name": "c"}],
                         "readinessGates": [{"conditionType": "x/ready"}, {"conditionType": "x/lb"}]},
                "status": {"phase": "Pending", "nominatedNodeName": "n2",
                           "podIPs": [{"ip": "fd00::1"}],
                           "conditions": [{"type": "x/ready", "status": "True"},
                                          {"type": "x/lb", "status": "False"}]}
            }),
        );
        assert_eq!(
            row,
            [
                "p", "0/1", "Pending", "0", "5s", "fd00::1", "<none>", "n2", "1/2"
            ]
        );
        let bare = cells(&ResourceInfo::PODS, json!({"metadata": {"name": "q"}}));
        assert_eq!(bare[1], "0/0");
        assert_eq!(bare[2], "");
        assert_eq!(bare[4], "<unknown>");
        assert_eq!(bare[5], "<none>");
    }

    #[test]
    fn pod_init_containers_sidecars_and_termination() {
        let init = |state: Value| {
            cells(
                &ResourceInfo::PODS,
                json!({
                    "metadata": {"name": "p"},
                    "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}],
                             "containers": [{"name": "c"}]},
                    "status": {"phase": "Pending",
                               "initContainerStatuses": [
                                   {"name": "i1", "restartCount": 2,
                                    "state": {"terminated": {"exitCode": 0}}},
                                   {"name": "i2", "restartCount": 1, "state": state}],
                               "containerStatuses": [{"name": "c", "restartCount": 7,
                                   "state": {"waiting": {"reason": "PodInitializing"}}}]}
                }),
            )
        };
        let waiting = init(json!({"waiting": {"reason": "PodInitializing"}}));
        assert_eq!(
            (&waiting[2], &waiting[3]),
            (&json!("Init:1/2"), &json!("3"))
        );
        let pulling = init(json!({"waiting": {"reason": "ErrImagePull"}}));
        assert_eq!(pulling[2], "Init:ErrImagePull");
        let failed = init(json!({"terminated": {"exitCode": 3}}));
        assert_eq!(failed[2], "Init:ExitCode:3");
        let killed = init(json!({"terminated": {"exitCode": 137, "signal": 9}}));
        assert_eq!(killed[2], "Init:Signal:9");
        let errored =
            init(json!({"terminated": {"exitCode": 1, "reason": "Error"}}));
        assert_eq!(errored[2], "Init:Error");

        // A started sidecar (restartPolicy Always) counts as a container.
        let sidecar = cells(
            &ResourceInfo::PODS,
            json!({
                "metadata": {"name": "p"},
                "spec": {"initContainers": [{"name": "proxy", "restartPolicy": "Always"}],
                         "containers": [{"name": "c"}]},
                "status": {"phase": "Running",
                           "conditions": [{"type": "Initialized", "status": "True"}],
                           "initContainerStatuses": [{"name": "proxy", "ready": true,
                               "started": true, "restartCount": 1,
                               "state": {"running": {}}}],
                           "containerStatuses": [{"name": "c", "ready": true,
                               "restartCount": 0, "state": {"running": {}}}]}
            }),
        );
        assert_eq!(
            (&sidecar[1], &sidecar[2], &sidecar[3]),
            (&json!("2/2"), &json!("Running"), &json!("1"))
        );

        let deleting = object(json!({
            "metadata": {"name": "p", "deletionTimestamp": ago(1)},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Running"}
        }));
        assert_eq!(
            print(&ResourceInfo::PODS, &deleting, now()).cells[2],
            "Terminating"
        );
        let done = object(json!({
            "metadata": {"name": "p", "deletionTimestamp": ago(1)},
            "status": {"phase": "Succeeded", "containerStatuses": [{"name": "c",
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}
        }));
        let row = print(&ResourceInfo::PODS, &done, now());
        assert_eq!(row.cells[2], "Completed");
        assert_eq!(row.conditions, [POD_SUCCEEDED]);
        // One container completed, another still running: back to Running
        // (or NotReady without the Ready condition).
        let mixed = |conditions: Value| {
            cells(
                &ResourceInfo::PODS,
                json!({
                    "metadata": {"name": "p"},
                    "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
                    "status": {"phase": "Running", "conditions": conditions,
                               "containerStatuses": [
                                   {"name": "a", "ready": true, "state": {"running": {}}},
                                   {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}
                }),
            )[2]
                .clone()
        };
        assert_eq!(
            mixed(json!([{"type": "Ready", "status": "True"}])),
            "Running"
        );
        assert_eq!(mixed(json!([])), "NotReady");
    }

    #[test]
    fn a_deployment() {
        let row = cells(
            &ResourceInfo::DEPLOYMENTS,
            json!({
                "metadata": {"name": "web", "creationTimestamp": ago(600)},
                "spec": {"replicas": 3,
                         "selector": {"matchLabels": {"app": "web"},
                                      "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]},
                         "template": {"spec": {"containers": [
                             {"name": "c1", "image": "nginx"}, {"name": "c2", "image": "busybox"}]}}},
                "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
            }),
        );
        assert_eq!(
            row,
            [
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("10m"),
                json!("c1,c2"),
                json!("nginx,busybox"),
                json!("app=web,tier in (a,b)")
            ]
        );
        let defaulted = cells(
            &ResourceInfo::DEPLOYMENTS,
            json!({"metadata": {"name": "d"}}),
        );
        assert_eq!(
            defaulted,
            [
                json!("d"),
                json!("0/1"),
                json!(0),
                json!(0),
                json!("<unknown>"),
                json!(""),
                json!(""),
                json!("")
            ]
        );
        let invalid = cells(
            &ResourceInfo::DEPLOYMENTS,
            json!({"metadata": {"name": "d"},
                   "spec": {"selector": {"matchExpressions": [{"key": "k", "operator": "Near"}]}}}),
        );
        assert_eq!(invalid[7], "<invalid>");
    }

    #[test]
    fn a_node_with_roles() {
        let row = cells(
            &ResourceInfo::NODES,
            json!({
                "metadata": {"name": "n1", "creationTimestamp": ago(3 * 86400),
                             "labels": {"node-role.kubernetes.io/control-plane": "",
                                        "node-role.kubernetes.io/": "",
                                        "kubernetes.io/role": "worker",
                                        "kubernetes.io/hostname": "n1"}},
                "spec": {"unschedulable": true},
                "status": {
                    "conditions": [{"type": "MemoryPressure", "status": "False"},
                                   {"type": "Ready", "status": "True"}],
                    "addresses": [{"type": "Hostname", "address": "n1"},
                                  {"type": "InternalIP", "address": "10.0.0.1"}],
                    "nodeInfo": {"kubeletVersion": "v1.28.3", "kernelVersion": "6.1.0",
                                 "containerRuntimeVersion": "containerd://1.7.2"}
                }
            }),
        );
        assert_eq!(
            row,
            [
                "n1",
                "Ready,SchedulingDisabled",
                "control-plane,worker",
                "3d",
                "v1.28.3",
                "10.0.0.1",
                "<none>",
                "<unknown>",
                "6.1.0",
                "containerd://1.7.2"
            ]
        );
        let not_ready = cells(
            &ResourceInfo::NODES,
            json!({"metadata": {"name": "n2"},
                   "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}),
        );
        assert_eq!(
            (&not_ready[1], &not_ready[2]),
            (&json!("NotReady"), &json!("<none>"))
        );
        let unknown =
            cells(&ResourceInfo::NODES, json!({"metadata": {"name": "n3"}}));
        assert_eq!(unknown[1], "Unknown");
    }

    #[test]
    fn namespaces_config_maps_and_secrets() {
        assert_eq!(
            cells(
                &ResourceInfo::NAMESPACES,
                json!({"metadata": {"name": "team-a", "creationTimestamp": ago(90)},
                       "status": {"phase": "Active"}})
            ),
            ["team-a", "Active", "90s"]
        );
        assert_eq!(
            cells(
                &ResourceInfo::CONFIGMAPS,
                json!({"metadata": {"name": "cm", "creationTimestamp": ago(7200)},
                       "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}})
            ),
            [json!("cm"), json!(3), json!("120m")]
        );
        assert_eq!(
            cells(
                &ResourceInfo::SECRETS,
                json!({"metadata": {"name": "s", "creationTimestamp": ago(3 * 3600 + 600)},
                       "data": {"a": "MQ=="}, "stringData": {"a": "1", "b": "2"}})
            ),
            [json!("s"), json!("Opaque"), json!(2), json!("3h10m")]
        );
        assert_eq!(
            cells(
                &ResourceInfo::SECRETS,
                json!({"metadata": {"name": "t"}, "type": "kubernetes.io/tls"})
            )[1],
            "kubernetes.io/tls"
        );
    }

    #[test]
    fn events_as_the_event_printer_shows_them() {
        let row = cells(
            &ResourceInfo::EVENTS,
            json!({
                "metadata": {"name": "web-0.17a"},
                "involvedObject": {"kind": "Pod", "name": "web-0", "fieldPath": "spec.containers{c}"},
                "reason": "BackOff", "type": "Warning",
                "message": "  Back-off restarting failed container\n",
                "source": {"component": "kubelet", "host": "n1"},
                "firstTimestamp": ago(600), "lastTimestamp": ago(60), "count": 4
            }),
        );
        assert_eq!(
            row,
            [
                json!("60s"),
                json!("Warning"),
                json!("BackOff"),
                json!("pod/web-0"),
                json!("spec.containers{c}"),
                json!("kubelet, n1"),
                json!("Back-off restarting failed container"),
                json!("10m"),
                json!(4),
                json!("web-0.17a")
            ]
        );
        // A new-style event: eventTime, a series, the reporting controller.
        let series = cells(
            &ResourceInfo::EVENTS,
            json!({
                "metadata": {"name": "e"},
                "involvedObject": {"kind": "Node"},
                "reportingComponent": "scheduler",
                "eventTime": ago(3600),
                "series": {"count": 9, "lastObservedTime": ago(30)}
            }),
        );
        assert_eq!(
            (&series[0], &series[3], &series[5], &series[7], &series[8]),
            (
                &json!("30s"),
                &json!("node"),
                &json!("scheduler"),
                &json!("60m"),
                &json!(9)
            )
        );
        let singleton =
            cells(&ResourceInfo::EVENTS, json!({"metadata": {"name": "e"}}));
        assert_eq!(
            (&singleton[0], &singleton[8]),
            (&json!("<unknown>"), &json!(1))
        );
    }

    #[test]
    fn a_missing_time_is_unknown() {
        let now = Timestamp::from_second(1_000_000).unwrap();
        assert_eq!(translate_timestamp_since(None, now), "<unknown>");
        let then = Timestamp::from_second(1_000_000 - 300).unwrap();
        assert_eq!(translate_timestamp_since(Some(then), now), "5m");
    }
}
