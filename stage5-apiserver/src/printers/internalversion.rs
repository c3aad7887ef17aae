//! The printers of the served kinds: mirrors kubernetes'
//! `pkg/printers/internalversion/printers.go` (`AddHandlers`' column
//! definitions, `printPod`, `printDeployment`, `printNamespace`, `printNode`,
//! `printConfigMap`, `printSecret`, `printEvent`, `printService`,
//! `printEndpoints`, `printPersistentVolume(Claim)`, `printJob`, `printCronJob`,
//! `printStatefulSet`, `printDaemonSet`, the storage, certificates, discovery,
//! policy and node kinds' printers, `printScale`) and, for any other kind,
//! apiserver's `rest.DefaultTableConvertor` (`Name`, `Created At`).
//!
//! Upstream prints the internal (defaulted, converted) type; the objects here are
//! the stored v1 JSON, so a printer reads the v1 fields and applies the few
//! defaults and conversions that change a cell: a deployment, replication
//! controller or stateful set without `spec.replicas` wants 1, a secret without
//! `type` is `Opaque` and its `stringData` keys count as data, a pod's
//! `status.podIP` wins over `status.podIPs`, a service is `ClusterIP` and its
//! ports `TCP`, a persistent volume `Retain`s and is `Pending`, a cron job is
//! not suspended, a CSI driver needs attaching, a storage class `Delete`s.
//! The columns' descriptions are upstream's: its literals, or the API field's
//! documentation (`SwaggerDoc()`) of the version it names, as k8s.io/api v0.36
//! generates it.

use std::collections::BTreeSet;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::Value;
use stage5_storage::Object;

use super::{Cell, Column, RowCondition, TableHandler};
use crate::apis::{items, text};
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

/// `serviceColumnDefinitions`.
pub const SERVICE_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Type",
        "string",
        "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types",
        0,
    ),
    column(
        "Cluster-IP",
        "string",
        "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
        0,
    ),
    column(
        "External-IP",
        "string",
        "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.",
        0,
    ),
    column(
        "Port(s)",
        "string",
        "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
        0,
    ),
    AGE,
    column(
        "Selector",
        "string",
        "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
        1,
    ),
];

/// `endpointColumnDefinitions`.
pub const ENDPOINTS_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Endpoints",
        "string",
        "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.",
        0,
    ),
    AGE,
];

/// `persistentVolumeColumnDefinitions`.
pub const PERSISTENT_VOLUME_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Capacity",
        "string",
        "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
        0,
    ),
    column(
        "Access Modes",
        "string",
        "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes",
        0,
    ),
    column(
        "Reclaim Policy",
        "string",
        "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming",
        0,
    ),
    column(
        "Status",
        "string",
        "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase",
        0,
    ),
    column(
        "Claim",
        "string",
        "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding",
        0,
    ),
    column("StorageClass", "string", "StorageClass of the pv", 0),
    column(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pv",
        0,
    ),
    column(
        "Reason",
        "string",
        "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
        0,
    ),
    AGE,
    column(
        "VolumeMode",
        "string",
        "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.",
        1,
    ),
];

/// `persistentVolumeClaimColumnDefinitions`.
pub const PERSISTENT_VOLUME_CLAIM_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Status",
        "string",
        "phase represents the current phase of PersistentVolumeClaim.",
        0,
    ),
    column(
        "Volume",
        "string",
        "volumeName is the binding reference to the PersistentVolume backing this claim.",
        0,
    ),
    column(
        "Capacity",
        "string",
        "capacity represents the actual resources of the underlying volume.",
        0,
    ),
    column(
        "Access Modes",
        "string",
        "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
        0,
    ),
    column("StorageClass", "string", "StorageClass of the pvc", 0),
    column(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pvc",
        0,
    ),
    AGE,
    column(
        "VolumeMode",
        "string",
        "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.",
        1,
    ),
];

/// `replicationControllerColumnDefinitions`.
pub const REPLICATION_CONTROLLER_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Desired",
        "integer",
        "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
        0,
    ),
    column(
        "Current",
        "integer",
        "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
        0,
    ),
    column(
        "Ready",
        "integer",
        "The number of ready replicas for this replication controller.",
        0,
    ),
    AGE,
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
    column(
        "Selector",
        "string",
        "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        1,
    ),
];

/// `serviceAccountColumnDefinitions`.
pub const SERVICE_ACCOUNT_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Secrets",
        "string",
        "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret",
        0,
    ),
    AGE,
];

/// `resourceQuotaColumnDefinitions`.
pub const RESOURCE_QUOTA_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Request",
        "string",
        "Request represents a minimum amount of cpu/memory that a container may consume.",
        0,
    ),
    column(
        "Limit",
        "string",
        "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
        0,
    ),
    AGE,
];

/// `statefulSetColumnDefinitions`.
pub const STATEFUL_SET_COLUMNS: &[Column] = &[
    NAME,
    column("Ready", "string", "Number of the pod with ready state", 0),
    AGE,
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
];

/// `daemonSetColumnDefinitions`.
pub const DAEMON_SET_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Desired",
        "integer",
        "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
        0,
    ),
    column(
        "Current",
        "integer",
        "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
        0,
    ),
    column(
        "Ready",
        "integer",
        "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
        0,
    ),
    column(
        "Up-to-date",
        "integer",
        "The total number of nodes that are running updated daemon pod",
        0,
    ),
    column(
        "Available",
        "integer",
        "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
        0,
    ),
    column(
        "Node Selector",
        "string",
        "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
        0,
    ),
    AGE,
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
    column(
        "Selector",
        "string",
        "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        1,
    ),
];

/// `controllerRevisionColumnDefinition`.
pub const CONTROLLER_REVISION_COLUMNS: &[Column] = &[
    NAME,
    column("Controller", "string", "Controller of the object", 0),
    column(
        "Revision",
        "string",
        "revision indicates the revision of the state represented by Data.",
        0,
    ),
    AGE,
];

/// `jobColumnDefinitions`.
pub const JOB_COLUMNS: &[Column] = &[
    NAME,
    column("Status", "string", "Status of the job.", 0),
    column(
        "Completions",
        "string",
        "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
        0,
    ),
    column(
        "Duration",
        "string",
        "Time required to complete the job.",
        0,
    ),
    AGE,
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
    column(
        "Selector",
        "string",
        "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        1,
    ),
];

/// `cronJobColumnDefinitions`.
pub const CRON_JOB_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Schedule",
        "string",
        "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
        0,
    ),
    column(
        "Timezone",
        "string",
        "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
        0,
    ),
    column(
        "Suspend",
        "boolean",
        "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
        0,
    ),
    column(
        "Active",
        "integer",
        "A list of pointers to currently running jobs.",
        0,
    ),
    column(
        "Last Schedule",
        "string",
        "Information when was the last time the job was successfully scheduled.",
        0,
    ),
    AGE,
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
    column(
        "Selector",
        "string",
        "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        1,
    ),
];

/// `certificateSigningRequestColumnDefinitions`.
pub const CERTIFICATE_SIGNING_REQUEST_COLUMNS: &[Column] = &[
    NAME,
    AGE,
    column(
        "SignerName",
        "string",
        "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.",
        0,
    ),
    column("Requestor", "string", "Base64-encoded PKCS#10 CSR data", 0),
    column(
        "RequestedDuration",
        "string",
        "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.",
        0,
    ),
    column(
        "Condition",
        "string",
        "Conditions applied to the request, such as approval or denial.",
        0,
    ),
];

/// `endpointSliceColumnDefinitions`.
pub const ENDPOINT_SLICE_COLUMNS: &[Column] = &[
    NAME,
    column(
        "AddressType",
        "string",
        "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.",
        0,
    ),
    column(
        "Ports",
        "string",
        "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.",
        0,
    ),
    column(
        "Endpoints",
        "string",
        "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.",
        0,
    ),
    AGE,
];

/// `podDisruptionBudgetColumnDefinitions`.
pub const POD_DISRUPTION_BUDGET_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Min Available",
        "string",
        "The minimum number of pods that must be available.",
        0,
    ),
    column(
        "Max Unavailable",
        "string",
        "The maximum number of pods that may be unavailable.",
        0,
    ),
    column(
        "Allowed Disruptions",
        "integer",
        "Calculated number of pods that may be disrupted at this time.",
        0,
    ),
    AGE,
];

/// `csiDriverColumnDefinitions`.
pub const CSI_DRIVER_COLUMNS: &[Column] = &[
    NAME,
    column(
        "AttachRequired",
        "boolean",
        "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.",
        0,
    ),
    column(
        "PodInfoOnMount",
        "boolean",
        "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.",
        0,
    ),
    column(
        "StorageCapacity",
        "boolean",
        "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.",
        0,
    ),
    column(
        "TokenRequests",
        "string",
        "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.",
        0,
    ),
    column(
        "RequiresRepublish",
        "boolean",
        "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.",
        0,
    ),
    column(
        "Modes",
        "string",
        "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.",
        0,
    ),
    AGE,
];

/// `csiNodeColumnDefinitions`.
pub const CSI_NODE_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Drivers",
        "integer",
        "Drivers indicates the number of CSI drivers registered on the node",
        0,
    ),
    AGE,
];

/// `csiStorageCapacityColumnDefinitions`.
pub const CSI_STORAGE_CAPACITY_COLUMNS: &[Column] = &[
    NAME,
    column(
        "StorageClassName",
        "string",
        "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.",
        0,
    ),
    column(
        "Capacity",
        "string",
        "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.",
        0,
    ),
];

/// `storageClassColumnDefinitions`.
pub const STORAGE_CLASS_COLUMNS: &[Column] = &[
    NAME,
    column(
        "Provisioner",
        "string",
        "provisioner indicates the type of the provisioner.",
        0,
    ),
    column(
        "ReclaimPolicy",
        "string",
        "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
        0,
    ),
    column(
        "VolumeBindingMode",
        "string",
        "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.",
        0,
    ),
    column(
        "AllowVolumeExpansion",
        "string",
        "allowVolumeExpansion shows whether the storage class allow volume expand.",
        0,
    ),
    AGE,
];

/// `volumeAttachmentColumnDefinitions`.
pub const VOLUME_ATTACHMENT_COLUMNS: &[Column] = &[
    NAME,
    // Upstream gives the attacher the `name` format too.
    Column {
        name: "Attacher",
        description: "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().",
        ..NAME
    },
    column(
        "PV",
        "string",
        "persistentVolumeName represents the name of the persistent volume to attach.",
        0,
    ),
    column(
        "Node",
        "string",
        "nodeName represents the node that the volume should be attached to.",
        0,
    ),
    column(
        "Attached",
        "boolean",
        "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
        0,
    ),
    AGE,
];

/// `runtimeClassColumnDefinitions`.
pub const RUNTIME_CLASS_COLUMNS: &[Column] = &[
    NAME,
    // Upstream looks the description up in `ObjectMeta`'s docs, which have no
    // `handler`: it is empty.
    column("Handler", "string", "", 0),
    AGE,
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

/// Services: `serviceColumnDefinitions` and `printService`.
pub const SERVICE: TableHandler = TableHandler {
    columns: SERVICE_COLUMNS,
    print: |obj| (print_service(obj), Vec::new()),
};

/// Endpoints: `endpointColumnDefinitions` and `printEndpoints`.
pub const ENDPOINTS: TableHandler = TableHandler {
    columns: ENDPOINTS_COLUMNS,
    print: |obj| (print_endpoints(obj), Vec::new()),
};

/// PersistentVolumes: `persistentVolumeColumnDefinitions` and
/// `printPersistentVolume`.
pub const PERSISTENT_VOLUME: TableHandler = TableHandler {
    columns: PERSISTENT_VOLUME_COLUMNS,
    print: |obj| (print_persistent_volume(obj), Vec::new()),
};

/// PersistentVolumeClaims: `persistentVolumeClaimColumnDefinitions` and
/// `printPersistentVolumeClaim`.
pub const PERSISTENT_VOLUME_CLAIM: TableHandler = TableHandler {
    columns: PERSISTENT_VOLUME_CLAIM_COLUMNS,
    print: |obj| (print_persistent_volume_claim(obj), Vec::new()),
};

/// ReplicationControllers: `replicationControllerColumnDefinitions` and
/// `printReplicationController`.
pub const REPLICATION_CONTROLLER: TableHandler = TableHandler {
    columns: REPLICATION_CONTROLLER_COLUMNS,
    print: |obj| (print_replication_controller(obj), Vec::new()),
};

/// ServiceAccounts: `serviceAccountColumnDefinitions` and
/// `printServiceAccount`.
pub const SERVICE_ACCOUNT: TableHandler = TableHandler {
    columns: SERVICE_ACCOUNT_COLUMNS,
    print: |obj| (print_service_account(obj), Vec::new()),
};

/// ResourceQuotas: `resourceQuotaColumnDefinitions` and `printResourceQuota`.
pub const RESOURCE_QUOTA: TableHandler = TableHandler {
    columns: RESOURCE_QUOTA_COLUMNS,
    print: |obj| (print_resource_quota(obj), Vec::new()),
};

/// StatefulSets: `statefulSetColumnDefinitions` and `printStatefulSet`.
pub const STATEFUL_SET: TableHandler = TableHandler {
    columns: STATEFUL_SET_COLUMNS,
    print: |obj| (print_stateful_set(obj), Vec::new()),
};

/// DaemonSets: `daemonSetColumnDefinitions` and `printDaemonSet`.
pub const DAEMON_SET: TableHandler = TableHandler {
    columns: DAEMON_SET_COLUMNS,
    print: |obj| (print_daemon_set(obj), Vec::new()),
};

/// ControllerRevisions: `controllerRevisionColumnDefinition` and
/// `printControllerRevision`.
pub const CONTROLLER_REVISION: TableHandler = TableHandler {
    columns: CONTROLLER_REVISION_COLUMNS,
    print: |obj| (print_controller_revision(obj), Vec::new()),
};

/// Jobs: `jobColumnDefinitions` and `printJob`.
pub const JOB: TableHandler = TableHandler {
    columns: JOB_COLUMNS,
    print: |obj| (print_job(obj), Vec::new()),
};

/// CronJobs: `cronJobColumnDefinitions` and `printCronJob`.
pub const CRON_JOB: TableHandler = TableHandler {
    columns: CRON_JOB_COLUMNS,
    print: |obj| (print_cron_job(obj), Vec::new()),
};

/// CertificateSigningRequests: `certificateSigningRequestColumnDefinitions`
/// and `printCertificateSigningRequest`.
pub const CERTIFICATE_SIGNING_REQUEST: TableHandler = TableHandler {
    columns: CERTIFICATE_SIGNING_REQUEST_COLUMNS,
    print: |obj| (print_certificate_signing_request(obj), Vec::new()),
};

/// EndpointSlices: `endpointSliceColumnDefinitions` and `printEndpointSlice`.
pub const ENDPOINT_SLICE: TableHandler = TableHandler {
    columns: ENDPOINT_SLICE_COLUMNS,
    print: |obj| (print_endpoint_slice(obj), Vec::new()),
};

/// PodDisruptionBudgets: `podDisruptionBudgetColumnDefinitions` and
/// `printPodDisruptionBudget`.
pub const POD_DISRUPTION_BUDGET: TableHandler = TableHandler {
    columns: POD_DISRUPTION_BUDGET_COLUMNS,
    print: |obj| (print_pod_disruption_budget(obj), Vec::new()),
};

/// CSIDrivers: `csiDriverColumnDefinitions` and `printCSIDriver`.
pub const CSI_DRIVER: TableHandler = TableHandler {
    columns: CSI_DRIVER_COLUMNS,
    print: |obj| (print_csi_driver(obj), Vec::new()),
};

/// CSINodes: `csiNodeColumnDefinitions` and `printCSINode`.
pub const CSI_NODE: TableHandler = TableHandler {
    columns: CSI_NODE_COLUMNS,
    print: |obj| (print_csi_node(obj), Vec::new()),
};

/// CSIStorageCapacities: `csiStorageCapacityColumnDefinitions` and
/// `printCSIStorageCapacity` (no Age column).
pub const CSI_STORAGE_CAPACITY: TableHandler = TableHandler {
    columns: CSI_STORAGE_CAPACITY_COLUMNS,
    print: |obj| (print_csi_storage_capacity(obj), Vec::new()),
};

/// StorageClasses: `storageClassColumnDefinitions` and `printStorageClass`.
pub const STORAGE_CLASS: TableHandler = TableHandler {
    columns: STORAGE_CLASS_COLUMNS,
    print: |obj| (print_storage_class(obj), Vec::new()),
};

/// VolumeAttachments: `volumeAttachmentColumnDefinitions` and
/// `printVolumeAttachment`.
pub const VOLUME_ATTACHMENT: TableHandler = TableHandler {
    columns: VOLUME_ATTACHMENT_COLUMNS,
    print: |obj| (print_volume_attachment(obj), Vec::new()),
};

/// RuntimeClasses: `runtimeClassColumnDefinitions` and `printRuntimeClass`.
pub const RUNTIME_CLASS: TableHandler = TableHandler {
    columns: RUNTIME_CLASS_COLUMNS,
    print: |obj| (print_runtime_class(obj), Vec::new()),
};

/// `rest.DefaultTableConvertor`, for a kind without a printer: the name and the
/// creation time.
pub const DEFAULT: TableHandler = TableHandler {
    columns: DEFAULT_COLUMNS,
    print: |obj| (print_default(obj), Vec::new()),
};

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or_default()
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
pub(crate) fn has_pod_ready_condition(status: &Value) -> bool {
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

/// Mirrors `labels.FormatLabels`: the `key=value` pairs sorted (as strings)
/// and comma-separated, `<none>` without any.
fn format_labels(labels: &Value) -> String {
    let mut pairs: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| format!("{key}={}", text(value)))
        .collect();
    pairs.sort_unstable();
    or_none(&pairs.join(",")).to_string()
}

/// Mirrors `metav1.FormatLabelSelector`: the selector as
/// `LabelSelectorAsSelector(…).String()` prints it, `<none>` when that is empty
/// (no selector, or one that selects everything), `<error>` for one it refuses.
fn format_label_selector(selector: &Value) -> String {
    if selector_is_invalid(selector) {
        return "<error>".to_string();
    }
    or_none(&apimachinery::labels::selector_string(selector)).to_string()
}

/// A quantity as `Quantity.String()` prints it. The workspace keeps the
/// strings users write (no canonical form), so the stored text; the zero
/// quantity (`0`) for a missing one.
fn quantity(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        _ => "0".to_string(),
    }
}

/// `intstr.IntOrString.String()`: the number, or the string (`50%`).
fn int_or_string(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => int(other).to_string(),
    }
}

/// `text`, or `default` when it is empty (a `SetDefaults_*` for a string
/// field).
fn or_default<'a>(value: &'a Value, default: &'a str) -> &'a str {
    match text(value) {
        "" => default,
        value => value,
    }
}

fn annotation<'a>(obj: &'a Object, key: &str) -> Option<&'a str> {
    obj.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// `core.BetaStorageClassAnnotation`.
const BETA_STORAGE_CLASS_ANNOTATION: &str =
    "volume.beta.kubernetes.io/storage-class";

/// Mirrors `helper.GetAccessModesAsString`: `RWO`, `ROX`, `RWX`, `RWOP`, in
/// that order, each once.
fn access_modes(modes: &Value) -> String {
    let modes = items(modes);
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .into_iter()
    .filter(|(mode, _)| modes.iter().any(|m| text(m) == *mode))
    .map(|(_, short)| short)
    .collect::<Vec<_>>()
    .join(",")
}

/// Mirrors `getServiceExternalIP` as the server calls it, wide: a load
/// balancer's addresses are not cut to 16 characters
/// (`loadBalancerStatusStringer`).
fn service_external_ip(type_: &str, spec: &Value, status: &Value) -> String {
    let external_ips: Vec<&str> =
        items(&spec["externalIPs"]).iter().map(text).collect();
    match type_ {
        "ClusterIP" | "NodePort" if external_ips.is_empty() => "<none>".to_string(),
        "ClusterIP" | "NodePort" => external_ips.join(","),
        "LoadBalancer" => {
            // `loadBalancerStatusStringer`: each ingress' IP, else its
            // hostname, sorted, each once.
            let ingress: BTreeSet<&str> = items(&status["loadBalancer"]["ingress"])
                .iter()
                .map(|i| match text(&i["ip"]) {
                    "" => text(&i["hostname"]),
                    ip => ip,
                })
                .filter(|address| !address.is_empty())
                .collect();
            let all: Vec<&str> = ingress.into_iter().chain(external_ips).collect();
            if all.is_empty() {
                "<pending>".to_string()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => text(&spec["externalName"]).to_string(),
        _ => "<unknown>".to_string(),
    }
}

/// Mirrors `makePortString`: `port/PROTOCOL`, or `port:nodePort/PROTOCOL` with
/// a node port, comma-separated.
fn make_port_string(ports: &[Value]) -> String {
    ports
        .iter()
        .map(|port| {
            // `SetDefaults_Service`: TCP unless said otherwise.
            let protocol = or_default(&port["protocol"], "TCP");
            match int(&port["nodePort"]) {
                node_port if node_port > 0 => {
                    format!("{}:{node_port}/{protocol}", int(&port["port"]))
                }
                _ => format!("{}/{protocol}", int(&port["port"])),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Mirrors `printService`: the type (`ClusterIP` by default), the first
/// cluster IP, the external IPs, the ports; wide adds the selector.
fn print_service(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    // `SetDefaults_Service`: a service without a type is a ClusterIP one.
    let type_ = or_default(&spec["type"], "ClusterIP");
    let cluster_ip = match items(&spec["clusterIPs"]).first() {
        Some(ip) => text(ip),
        // The registry keeps `clusterIPs` in step with `clusterIP`
        // (`normalizeClusterIPs`): an object stored without the list has the
        // one.
        None => or_none(text(&spec["clusterIP"])),
    };
    let ports = make_port_string(items(&spec["ports"]));
    cells![
        name(obj),
        Value::from(type_),
        Value::from(cluster_ip),
        Value::from(service_external_ip(type_, spec, &obj.data["status"])),
        Value::from(or_none(&ports)),
        age(obj),
        Value::from(format_labels(&spec["selector"])),
    ]
}

/// `net.JoinHostPort`: an IPv6 host in brackets.
fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// At most this many addresses or ports in a cell (`formatEndpoints`'s and
/// `listWithMoreString`'s `max`).
const LIST_MAX: usize = 3;

/// Mirrors `formatEndpoints` (every port): the first three `ip:port` (just
/// `ip` in a subset without ports), then ` + N more...`, N counting every
/// address of every port; `<none>` without subsets.
fn format_endpoints(subsets: &[Value]) -> String {
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0;
    for subset in subsets {
        let addresses = items(&subset["addresses"]);
        let ports = items(&subset["ports"]);
        if ports.is_empty() {
            // A headless service's endpoints may have no ports.
            count += addresses.len();
            for address in addresses {
                if list.len() == LIST_MAX {
                    more = true;
                    break;
                }
                list.push(text(&address["ip"]).to_string());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for address in addresses {
                if list.len() == LIST_MAX {
                    more = true;
                    break;
                }
                list.push(join_host_port(text(&address["ip"]), int(&port["port"])));
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - LIST_MAX)
    } else {
        joined
    }
}

/// Mirrors `printEndpoints`.
fn print_endpoints(obj: &Object) -> Vec<Cell> {
    cells![
        name(obj),
        Value::from(format_endpoints(items(&obj.data["subsets"]))),
        age(obj),
    ]
}

/// Mirrors `printPersistentVolume`: capacity, access modes, reclaim policy,
/// phase (`Terminating` while deleting), `namespace/name` of the claim, the
/// storage class (the beta annotation first, `GetPersistentVolumeClass`), the
/// volume attributes class, the reason, age, and the volume mode.
fn print_persistent_volume(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    let claim_ref = &spec["claimRef"];
    let claim = if claim_ref.is_object() {
        format!(
            "{}/{}",
            text(&claim_ref["namespace"]),
            text(&claim_ref["name"])
        )
    } else {
        String::new()
    };
    // `SetDefaults_PersistentVolume`: Retain, Pending, Filesystem.
    let phase = if obj.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else {
        or_default(&status["phase"], "Pending")
    };
    let class = annotation(obj, BETA_STORAGE_CLASS_ANNOTATION)
        .unwrap_or_else(|| text(&spec["storageClassName"]));
    cells![
        name(obj),
        Value::from(quantity(&spec["capacity"]["storage"])),
        Value::from(access_modes(&spec["accessModes"])),
        Value::from(or_default(&spec["persistentVolumeReclaimPolicy"], "Retain")),
        Value::from(phase),
        Value::from(claim),
        Value::from(class),
        Value::from(
            spec["volumeAttributesClassName"]
                .as_str()
                .unwrap_or("<unset>")
        ),
        Value::from(text(&status["reason"])),
        age(obj),
        Value::from(spec["volumeMode"].as_str().unwrap_or("Filesystem")),
    ]
}

/// Mirrors `printPersistentVolumeClaim`: phase (`Terminating` while deleting),
/// the volume, and once bound its capacity and access modes, the storage class
/// (`GetPersistentVolumeClaimClass`), the volume attributes class, age, and
/// the volume mode.
fn print_persistent_volume_claim(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    // `SetDefaults_PersistentVolumeClaim(Spec)`: Pending, Filesystem.
    let phase = if obj.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else {
        or_default(&status["phase"], "Pending")
    };
    let volume = text(&spec["volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(&status["capacity"]["storage"]),
            access_modes(&status["accessModes"]),
        )
    };
    let class = annotation(obj, BETA_STORAGE_CLASS_ANNOTATION)
        .unwrap_or_else(|| text(&spec["storageClassName"]));
    cells![
        name(obj),
        Value::from(phase),
        Value::from(volume),
        Value::from(capacity),
        Value::from(modes),
        Value::from(class),
        Value::from(
            spec["volumeAttributesClassName"]
                .as_str()
                .unwrap_or("<unset>")
        ),
        age(obj),
        Value::from(spec["volumeMode"].as_str().unwrap_or("Filesystem")),
    ]
}

/// Mirrors `printReplicationController`: desired, current and ready replicas;
/// wide adds the template's containers and images and the selector
/// (`labels.FormatLabels`).
fn print_replication_controller(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    // `SetDefaults_ReplicationController`: one replica, and the template's
    // labels as the selector when it has none.
    let selector = if key_count(&spec["selector"]) == 0 {
        &spec["template"]["metadata"]["labels"]
    } else {
        &spec["selector"]
    };
    let (containers, images) =
        layout_container_cells(items(&spec["template"]["spec"]["containers"]));
    cells![
        name(obj),
        Value::from(spec["replicas"].as_i64().unwrap_or(1)),
        Value::from(int(&status["replicas"])),
        Value::from(int(&status["readyReplicas"])),
        age(obj),
        Value::from(containers),
        Value::from(images),
        Value::from(format_labels(selector)),
    ]
}

/// Mirrors `printServiceAccount`: the number of secrets.
fn print_service_account(obj: &Object) -> Vec<Cell> {
    cells![
        name(obj),
        Value::from(items(&obj.data["secrets"]).len()),
        age(obj),
    ]
}

/// Mirrors `printResourceQuota`: for each resource of `status.hard`, sorted,
/// `resource: used/hard`; those named `limits.*` in the Limit cell, the others
/// in the Request cell.
fn print_resource_quota(obj: &Object) -> Vec<Cell> {
    let status = &obj.data["status"];
    let mut resources: Vec<&str> = status["hard"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(resource, _)| resource.as_str())
        .collect();
    resources.sort_unstable();
    let mut requests = Vec::new();
    let mut limits = Vec::new();
    for resource in resources {
        let entry = format!(
            "{resource}: {}/{}",
            quantity(&status["used"][resource]),
            quantity(&status["hard"][resource])
        );
        if resource.starts_with("limits.") {
            limits.push(entry);
        } else {
            requests.push(entry);
        }
    }
    cells![
        name(obj),
        Value::from(requests.join(", ")),
        Value::from(limits.join(", ")),
        age(obj),
    ]
}

/// Mirrors `printStatefulSet`: `ready/desired`; wide adds the template's
/// containers and images.
fn print_stateful_set(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    // `SetDefaults_StatefulSet`: one replica unless said otherwise.
    let desired = spec["replicas"].as_i64().unwrap_or(1);
    let (containers, images) =
        layout_container_cells(items(&spec["template"]["spec"]["containers"]));
    cells![
        name(obj),
        Value::from(format!(
            "{}/{desired}",
            int(&obj.data["status"]["readyReplicas"])
        )),
        age(obj),
        Value::from(containers),
        Value::from(images),
    ]
}

/// Mirrors `printDaemonSet`: desired, current, ready, up-to-date and available
/// numbers scheduled, the template's node selector; wide adds the containers,
/// images and the selector.
fn print_daemon_set(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    let template = &spec["template"]["spec"];
    let (containers, images) =
        layout_container_cells(items(&template["containers"]));
    cells![
        name(obj),
        Value::from(int(&status["desiredNumberScheduled"])),
        Value::from(int(&status["currentNumberScheduled"])),
        Value::from(int(&status["numberReady"])),
        Value::from(int(&status["updatedNumberScheduled"])),
        Value::from(int(&status["numberAvailable"])),
        Value::from(format_labels(&template["nodeSelector"])),
        age(obj),
        Value::from(containers),
        Value::from(images),
        Value::from(format_label_selector(&spec["selector"])),
    ]
}

/// Mirrors `formatResourceName` with a kind: `kind.group/name` lower-cased
/// (`kind/name` in the core group), the bare name without a group nor kind.
fn format_resource_name(group: &str, kind: &str, name: &str) -> String {
    match (group, kind) {
        ("", "") => name.to_string(),
        ("", kind) => format!("{}/{name}", kind.to_lowercase()),
        (group, kind) => {
            format!("{}/{name}", format!("{kind}.{group}").to_lowercase())
        }
    }
}

/// Mirrors `printControllerRevision`: the controller (`metav1.GetControllerOf`)
/// as `statefulset.apps/web`, `<none>` without one, and the revision.
fn print_controller_revision(obj: &Object) -> Vec<Cell> {
    let controller = obj
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))
        .map_or_else(
            || "<none>".to_string(),
            |owner| {
                // `schema.ParseGroupVersion`: the group is before the slash;
                // `v1` has none.
                let group = owner.api_version.split_once('/').map_or("", |(g, _)| g);
                format_resource_name(group, &owner.kind, &owner.name)
            },
        );
    cells![
        name(obj),
        Value::from(controller),
        Value::from(int(&obj.data["revision"])),
        age(obj),
    ]
}

/// `hasJobCondition`: the first condition of the type decides.
fn has_job_condition(status: &Value, type_: &str) -> bool {
    items(&status["conditions"])
        .iter()
        .find(|c| text(&c["type"]) == type_)
        .is_some_and(|c| text(&c["status"]) == "True")
}

/// Mirrors `printJob`: the status (`Complete`, `Failed`, `Terminating`,
/// `Suspended`, `FailureTarget`, else `Running`), `succeeded/completions`
/// (`n/1 of p` for a work queue with parallelism), the duration (running: the
/// time since the start; finished: start to completion); wide adds the
/// containers, images and the selector.
fn print_job(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    let succeeded = int(&status["succeeded"]);
    // `SetDefaults_Job`: without completions nor parallelism both are 1;
    // parallelism alone is 1.
    let completions = match spec["completions"].as_i64() {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match spec["parallelism"].as_i64().unwrap_or(1) {
            parallelism if parallelism > 1 => {
                format!("{succeeded}/1 of {parallelism}")
            }
            _ => format!("{succeeded}/1"),
        },
    };
    let duration =
        match (time(&status["startTime"]), time(&status["completionTime"])) {
            (None, _) => Cell::from(Value::from("")),
            (Some(start), None) => Cell::since(Some(start)),
            (Some(start), Some(completion)) => Cell::from(Value::from(
                human_duration(completion.duration_since(start)),
            )),
        };
    let job_status = if has_job_condition(status, "Complete") {
        "Complete"
    } else if has_job_condition(status, "Failed") {
        "Failed"
    } else if obj.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else if has_job_condition(status, "Suspended") {
        "Suspended"
    } else if has_job_condition(status, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (containers, images) =
        layout_container_cells(items(&spec["template"]["spec"]["containers"]));
    cells![
        name(obj),
        Value::from(job_status),
        Value::from(completions),
        duration,
        age(obj),
        Value::from(containers),
        Value::from(images),
        Value::from(format_label_selector(&spec["selector"])),
    ]
}

/// Mirrors `printCronJob`: schedule, time zone (`<none>`), suspended
/// (`printBoolPtr`: `True`/`False`), the number of active jobs, the time since
/// the last schedule (`<none>`); wide adds the job template's containers,
/// images and selector.
fn print_cron_job(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let status = &obj.data["status"];
    let last_schedule = match time(&status["lastScheduleTime"]) {
        Some(last) => Cell::since(Some(last)),
        None => Cell::from(Value::from("<none>")),
    };
    // `SetDefaults_CronJob`: not suspended unless said otherwise, so never
    // `<unset>`.
    let suspend = if spec["suspend"].as_bool() == Some(true) {
        "True"
    } else {
        "False"
    };
    let job_spec = &spec["jobTemplate"]["spec"];
    let (containers, images) =
        layout_container_cells(items(&job_spec["template"]["spec"]["containers"]));
    cells![
        name(obj),
        Value::from(text(&spec["schedule"])),
        Value::from(spec["timeZone"].as_str().unwrap_or("<none>")),
        Value::from(suspend),
        Value::from(items(&status["active"]).len()),
        last_schedule,
        age(obj),
        Value::from(containers),
        Value::from(images),
        Value::from(format_label_selector(&job_spec["selector"])),
    ]
}

/// Mirrors `extractCSRStatus`: `Denied`, else `Approved`, else `Pending`
/// (whatever the conditions' status), then `,Failed` and `,Issued`.
fn extract_csr_status(status: &Value) -> String {
    let has = |type_: &str| {
        items(&status["conditions"])
            .iter()
            .any(|c| text(&c["type"]) == type_)
    };
    let mut summary = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has("Failed") {
        summary.push_str(",Failed");
    }
    if !text(&status["certificate"]).is_empty() {
        summary.push_str(",Issued");
    }
    summary
}

/// Mirrors `printCertificateSigningRequest`: age (second), the signer
/// (`<none>`), the requesting user, the requested duration (`<none>`), the
/// condition.
fn print_certificate_signing_request(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let requested = spec["expirationSeconds"].as_i64().map_or_else(
        || "<none>".to_string(),
        |seconds| human_duration(SignedDuration::from_secs(seconds)),
    );
    cells![
        name(obj),
        age(obj),
        Value::from(or_none(text(&spec["signerName"]))),
        Value::from(text(&spec["username"])),
        Value::from(requested),
        Value::from(extract_csr_status(&obj.data["status"])),
    ]
}

/// Mirrors `listWithMoreString`: ` + N more...` after the first three,
/// `<unset>` for none.
fn list_with_more(list: &[String], count: usize) -> String {
    let joined = list.join(",");
    if count > LIST_MAX {
        format!("{joined} + {} more...", count - LIST_MAX)
    } else if joined.is_empty() {
        "<unset>".to_string()
    } else {
        joined
    }
}

/// Mirrors `formatDiscoveryPorts`: each port's number, else its name. (`*`
/// for neither cannot happen in v1: `SetDefaults_EndpointPort` gives every
/// port a name, `""`.)
fn format_discovery_ports(ports: &[Value]) -> String {
    let list: Vec<String> = ports
        .iter()
        .take(LIST_MAX)
        .map(|port| match port["port"].as_i64() {
            Some(number) => number.to_string(),
            None => text(&port["name"]).to_string(),
        })
        .collect();
    list_with_more(&list, ports.len())
}

/// Mirrors `formatDiscoveryEndpoints`: the addresses of all the endpoints.
fn format_discovery_endpoints(endpoints: &[Value]) -> String {
    let addresses: Vec<&Value> = endpoints
        .iter()
        .flat_map(|endpoint| items(&endpoint["addresses"]))
        .collect();
    let list: Vec<String> = addresses
        .iter()
        .take(LIST_MAX)
        .map(|address| text(address).to_string())
        .collect();
    list_with_more(&list, addresses.len())
}

/// Mirrors `printEndpointSlice`: the address type, the ports, the endpoints.
fn print_endpoint_slice(obj: &Object) -> Vec<Cell> {
    cells![
        name(obj),
        Value::from(text(&obj.data["addressType"])),
        Value::from(format_discovery_ports(items(&obj.data["ports"]))),
        Value::from(format_discovery_endpoints(items(&obj.data["endpoints"]))),
        age(obj),
    ]
}

/// Mirrors `printPodDisruptionBudget`: min available and max unavailable
/// (`N/A` when unset), the disruptions allowed.
fn print_pod_disruption_budget(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let bound = |value: &Value| {
        if value.is_null() {
            "N/A".to_string()
        } else {
            int_or_string(value)
        }
    };
    cells![
        name(obj),
        Value::from(bound(&spec["minAvailable"])),
        Value::from(bound(&spec["maxUnavailable"])),
        Value::from(int(&obj.data["status"]["disruptionsAllowed"])),
        age(obj),
    ]
}

/// Mirrors `printCSIDriver`, with `SetDefaults_CSIDriver`'s values for unset
/// fields (attach required; no pod info, capacity nor republish; `Persistent`
/// volumes): the token requests' audiences (`<unset>` without the list) and
/// the lifecycle modes.
fn print_csi_driver(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    let flag = |field: &str, default: bool| spec[field].as_bool().unwrap_or(default);
    let token_requests = match spec["tokenRequests"].as_array() {
        Some(requests) => requests
            .iter()
            .map(|r| text(&r["audience"]))
            .collect::<Vec<_>>()
            .join(","),
        None => "<unset>".to_string(),
    };
    let modes: Vec<&str> = items(&spec["volumeLifecycleModes"])
        .iter()
        .map(text)
        .collect();
    let modes = if modes.is_empty() {
        "Persistent".to_string()
    } else {
        modes.join(",")
    };
    cells![
        name(obj),
        Value::from(flag("attachRequired", true)),
        Value::from(flag("podInfoOnMount", false)),
        Value::from(flag("storageCapacity", false)),
        Value::from(token_requests),
        Value::from(flag("requiresRepublish", false)),
        Value::from(modes),
        age(obj),
    ]
}

/// Mirrors `printCSINode`: the number of drivers.
fn print_csi_node(obj: &Object) -> Vec<Cell> {
    cells![
        name(obj),
        Value::from(items(&obj.data["spec"]["drivers"]).len()),
        age(obj),
    ]
}

/// Mirrors `printCSIStorageCapacity`: the storage class and the capacity
/// (`<unset>`); no age.
fn print_csi_storage_capacity(obj: &Object) -> Vec<Cell> {
    let capacity = match &obj.data["capacity"] {
        Value::Null => "<unset>".to_string(),
        capacity => quantity(capacity),
    };
    cells![
        name(obj),
        Value::from(text(&obj.data["storageClassName"])),
        Value::from(capacity),
    ]
}

/// `storageutil.IsDefaultAnnotation`: the GA or the beta annotation is
/// `"true"`.
fn is_default_storage_class(obj: &Object) -> bool {
    [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .into_iter()
    .any(|key| annotation(obj, key) == Some("true"))
}

/// Mirrors `printStorageClass`: the name (` (default)` for the default class),
/// the provisioner, the reclaim policy (`Delete`), the binding mode
/// (`Immediate`), whether volumes may expand (a boolean cell).
fn print_storage_class(obj: &Object) -> Vec<Cell> {
    let mut name = obj.name().to_string();
    if is_default_storage_class(obj) {
        name.push_str(" (default)");
    }
    cells![
        Value::from(name),
        Value::from(text(&obj.data["provisioner"])),
        Value::from(obj.data["reclaimPolicy"].as_str().unwrap_or("Delete")),
        Value::from(
            obj.data["volumeBindingMode"]
                .as_str()
                .unwrap_or("Immediate")
        ),
        Value::from(obj.data["allowVolumeExpansion"].as_bool().unwrap_or(false)),
        age(obj),
    ]
}

/// Mirrors `printVolumeAttachment`: the attacher, the persistent volume, the
/// node, whether it is attached.
fn print_volume_attachment(obj: &Object) -> Vec<Cell> {
    let spec = &obj.data["spec"];
    cells![
        name(obj),
        Value::from(text(&spec["attacher"])),
        Value::from(text(&spec["source"]["persistentVolumeName"])),
        Value::from(text(&spec["nodeName"])),
        Value::from(obj.data["status"]["attached"].as_bool().unwrap_or(false)),
        age(obj),
    ]
}

/// Mirrors `printRuntimeClass`: the handler.
fn print_runtime_class(obj: &Object) -> Vec<Cell> {
    cells![name(obj), Value::from(text(&obj.data["handler"])), age(obj)]
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

    /// The cells `handler` prints for `value`, as of [`NOW`].
    fn row(handler: &TableHandler, value: Value) -> Vec<Value> {
        handler.row(&object(value), now()).cells
    }

    /// Every handler of the kinds added for the controllers, with its Go name.
    const ADDED: &[(&str, TableHandler)] = &[
        ("service", SERVICE),
        ("endpoints", ENDPOINTS),
        ("persistentVolume", PERSISTENT_VOLUME),
        ("persistentVolumeClaim", PERSISTENT_VOLUME_CLAIM),
        ("replicationController", REPLICATION_CONTROLLER),
        ("serviceAccount", SERVICE_ACCOUNT),
        ("resourceQuota", RESOURCE_QUOTA),
        ("statefulSet", STATEFUL_SET),
        ("daemonSet", DAEMON_SET),
        ("controllerRevision", CONTROLLER_REVISION),
        ("job", JOB),
        ("cronJob", CRON_JOB),
        ("certificateSigningRequest", CERTIFICATE_SIGNING_REQUEST),
        ("endpointSlice", ENDPOINT_SLICE),
        ("podDisruptionBudget", POD_DISRUPTION_BUDGET),
        ("csiDriver", CSI_DRIVER),
        ("csiNode", CSI_NODE),
        ("csiStorageCapacity", CSI_STORAGE_CAPACITY),
        ("storageClass", STORAGE_CLASS),
        ("volumeAttachment", VOLUME_ATTACHMENT),
        ("runtimeClass", RUNTIME_CLASS),
    ];

    #[test]
    fn the_added_kinds_print_a_cell_per_column() {
        for (kind, handler) in ADDED {
            let cells = row(handler, json!({"metadata": {"name": "x"}}));
            assert_eq!(cells.len(), handler.columns.len(), "{kind}");
            assert_eq!(handler.columns[0].name, "Name", "{kind}");
            assert!(
                handler.columns.iter().all(|c| !c.description.is_empty()
                    || (c.name == "Handler" && *kind == "runtimeClass")),
                "{kind}"
            );
        }
        assert_eq!(
            names(SERVICE_COLUMNS),
            [
                ("Name", 0),
                ("Type", 0),
                ("Cluster-IP", 0),
                ("External-IP", 0),
                ("Port(s)", 0),
                ("Age", 0),
                ("Selector", 1)
            ]
        );
        assert_eq!(
            names(CERTIFICATE_SIGNING_REQUEST_COLUMNS)[..2],
            [("Name", 0), ("Age", 0)]
        );
        assert_eq!(
            CSI_STORAGE_CAPACITY_COLUMNS
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>(),
            ["Name", "StorageClassName", "Capacity"]
        );
        assert_eq!(VOLUME_ATTACHMENT_COLUMNS[1].format, "name");
        assert_eq!(CRON_JOB_COLUMNS[3].type_, "boolean");
        assert_eq!(
            DAEMON_SET_COLUMNS
                .iter()
                .filter(|c| c.priority == 1)
                .count(),
            3
        );
    }

    #[test]
    fn a_load_balancer_service_with_node_ports() {
        let cells = row(
            &SERVICE,
            json!({
                "metadata": {"name": "web", "creationTimestamp": ago(600)},
                "spec": {
                    "type": "LoadBalancer",
                    "clusterIP": "10.96.0.10",
                    "clusterIPs": ["10.96.0.10", "fd00::a"],
                    "externalIPs": ["192.0.2.9"],
                    "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                              {"port": 53, "nodePort": 30053, "protocol": "UDP"},
                              {"port": 8443}],
                    "selector": {"app": "web", "app.kubernetes.io/name": "web"}
                },
                "status": {"loadBalancer": {"ingress": [
                    {"ip": "203.0.113.7"}, {"hostname": "lb.example.com"},
                    {"ip": "203.0.113.7"}, {"ip": "198.51.100.2", "hostname": "x"}]}}
            }),
        );
        assert_eq!(
            cells,
            [
                "web",
                "LoadBalancer",
                "10.96.0.10",
                "198.51.100.2,203.0.113.7,lb.example.com,192.0.2.9",
                "80:30080/TCP,53:30053/UDP,8443/TCP",
                "10m",
                // Sorted as `key=value` strings: `.` before `=`.
                "app.kubernetes.io/name=web,app=web"
            ]
        );
        let pending = row(
            &SERVICE,
            json!({"metadata": {"name": "lb"},
                   "spec": {"type": "LoadBalancer", "clusterIPs": ["10.96.0.11"],
                            "ports": [{"port": 443, "nodePort": 31443}]}}),
        );
        assert_eq!(pending[3], "<pending>");
        // No type: ClusterIP; a headless one; no ports nor selector.
        let headless = row(
            &SERVICE,
            json!({"metadata": {"name": "db"}, "spec": {"clusterIPs": ["None"]}}),
        );
        assert_eq!(
            headless,
            [
                "db",
                "ClusterIP",
                "None",
                "<none>",
                "<none>",
                "<unknown>",
                "<none>"
            ]
        );
        let external = row(
            &SERVICE,
            json!({"metadata": {"name": "ext"},
                   "spec": {"type": "ExternalName", "externalName": "db.example.com"}}),
        );
        assert_eq!(
            (&external[2], &external[3]),
            (&json!("<none>"), &json!("db.example.com"))
        );
        let node_port = row(
            &SERVICE,
            json!({"metadata": {"name": "np"},
                   "spec": {"type": "NodePort", "clusterIP": "10.96.0.12",
                            "externalIPs": ["192.0.2.1", "192.0.2.2"]}}),
        );
        assert_eq!(
            (&node_port[2], &node_port[3]),
            (&json!("10.96.0.12"), &json!("192.0.2.1,192.0.2.2"))
        );
    }

    #[test]
    fn endpoints_show_three_and_count_the_rest() {
        let cells = row(
            &ENDPOINTS,
            json!({
                "metadata": {"name": "web", "creationTimestamp": ago(30)},
                "subsets": [
                    {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
                     "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]},
                    {"addresses": [{"ip": "fd00::5"}], "ports": [{"port": 8080}]}
                ]
            }),
        );
        assert_eq!(
            cells,
            [
                "web",
                "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...",
                "30s"
            ]
        );
        let ipv6 = row(
            &ENDPOINTS,
            json!({"metadata": {"name": "v6"},
                   "subsets": [{"addresses": [{"ip": "fd00::5"}], "ports": [{"port": 8080}]},
                               {"addresses": [{"ip": "10.0.0.9"}]}]}),
        );
        assert_eq!(ipv6[1], "[fd00::5]:8080,10.0.0.9");
        let none = row(&ENDPOINTS, json!({"metadata": {"name": "e"}}));
        assert_eq!(none[1], "<none>");
    }

    #[test]
    fn persistent_volumes_and_claims() {
        let pv = row(
            &PERSISTENT_VOLUME,
            json!({
                "metadata": {"name": "pv1", "creationTimestamp": ago(300),
                             "annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}},
                "spec": {"capacity": {"storage": "10Gi"},
                         "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce",
                                         "ReadWriteOncePod"],
                         "claimRef": {"namespace": "default", "name": "data"},
                         "storageClassName": "slow", "volumeMode": "Block"},
                "status": {"phase": "Bound"}
            }),
        );
        assert_eq!(
            pv,
            [
                "pv1",
                "10Gi",
                "RWO,RWX,RWOP",
                "Retain",
                "Bound",
                "default/data",
                "fast",
                "<unset>",
                "",
                "5m",
                "Block"
            ]
        );
        let deleting = row(
            &PERSISTENT_VOLUME,
            json!({"metadata": {"name": "pv2", "deletionTimestamp": ago(1)},
                   "spec": {"persistentVolumeReclaimPolicy": "Delete",
                            "volumeAttributesClassName": "gold"},
                   "status": {"phase": "Released", "reason": "Reclaiming"}}),
        );
        assert_eq!(
            deleting,
            [
                "pv2",
                "0",
                "",
                "Delete",
                "Terminating",
                "",
                "",
                "gold",
                "Reclaiming",
                "<unknown>",
                "Filesystem"
            ]
        );
        let bound = row(
            &PERSISTENT_VOLUME_CLAIM,
            json!({
                "metadata": {"name": "data", "creationTimestamp": ago(300)},
                "spec": {"volumeName": "pv1", "storageClassName": "standard",
                         "accessModes": ["ReadWriteMany"],
                         "resources": {"requests": {"storage": "5Gi"}}},
                "status": {"phase": "Bound", "capacity": {"storage": "10Gi"},
                           "accessModes": ["ReadWriteOnce"]}
            }),
        );
        assert_eq!(
            bound,
            [
                "data",
                "Bound",
                "pv1",
                "10Gi",
                "RWO",
                "standard",
                "<unset>",
                "5m",
                "Filesystem"
            ]
        );
        // Unbound: no capacity nor modes yet, whatever was requested.
        let pending = row(
            &PERSISTENT_VOLUME_CLAIM,
            json!({"metadata": {"name": "new",
                                "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
                   "spec": {"storageClassName": "standard", "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}}),
        );
        assert_eq!(
            pending[1..6],
            [
                json!("Pending"),
                json!(""),
                json!(""),
                json!(""),
                json!("beta")
            ]
        );
    }

    #[test]
    fn jobs_statuses_completions_and_durations() {
        let running = row(
            &JOB,
            json!({
                "metadata": {"name": "pi", "creationTimestamp": ago(180)},
                "spec": {"completions": 5, "parallelism": 2,
                         "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "abc"}},
                         "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}},
                "status": {"startTime": ago(120), "succeeded": 2, "active": 2}
            }),
        );
        assert_eq!(
            running,
            [
                "pi",
                "Running",
                "2/5",
                "2m",
                "3m",
                "pi",
                "perl",
                "batch.kubernetes.io/controller-uid=abc"
            ]
        );
        let complete = row(
            &JOB,
            json!({
                "metadata": {"name": "q"},
                "spec": {"parallelism": 3},
                "status": {"startTime": ago(3600), "completionTime": ago(3600 - 95),
                           "succeeded": 1,
                           "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                                          {"type": "Complete", "status": "True"}]}
            }),
        );
        assert_eq!(
            complete[1..4],
            [json!("Complete"), json!("1/1 of 3"), json!("95s")]
        );
        let status = |metadata: Value, conditions: Value| {
            row(
                &JOB,
                json!({"metadata": metadata, "status": {"conditions": conditions}}),
            )
        };
        let suspended = status(
            json!({"name": "s"}),
            json!([{"type": "Complete", "status": "False"},
                   {"type": "Suspended", "status": "True"}]),
        );
        assert_eq!(
            suspended[1..4],
            [json!("Suspended"), json!("0/1"), json!("")]
        );
        // Failed wins over Terminating, Terminating over the others.
        let deleting = json!({"name": "d", "deletionTimestamp": ago(1)});
        assert_eq!(
            status(
                deleting.clone(),
                json!([{"type": "Failed", "status": "True"}])
            )[1],
            "Failed"
        );
        assert_eq!(
            status(
                deleting,
                json!([{"type": "FailureTarget", "status": "True"}])
            )[1],
            "Terminating"
        );
        assert_eq!(
            status(
                json!({"name": "f"}),
                json!([{"type": "FailureTarget", "status": "True"}])
            )[1],
            "FailureTarget"
        );
    }

    #[test]
    fn a_cron_job() {
        let cells = row(
            &CRON_JOB,
            json!({
                "metadata": {"name": "backup", "creationTimestamp": ago(2 * 86400)},
                "spec": {"schedule": "*/5 * * * *", "timeZone": "Etc/UTC", "suspend": true,
                         "jobTemplate": {"spec": {"template": {"spec": {"containers": [
                             {"name": "dump", "image": "postgres:16"},
                             {"name": "upload", "image": "rclone"}]}}}}},
                "status": {"active": [{"name": "backup-1"}, {"name": "backup-2"}],
                           "lastScheduleTime": ago(240)}
            }),
        );
        assert_eq!(
            cells,
            [
                json!("backup"),
                json!("*/5 * * * *"),
                json!("Etc/UTC"),
                json!("True"),
                json!(2),
                json!("4m"),
                json!("2d"),
                json!("dump,upload"),
                json!("postgres:16,rclone"),
                json!("<none>")
            ]
        );
        let defaulted = row(
            &CRON_JOB,
            json!({"metadata": {"name": "c"}, "spec": {"schedule": "@hourly"}}),
        );
        assert_eq!(
            defaulted[2..6],
            [json!("<none>"), json!("False"), json!(0), json!("<none>")]
        );
    }

    #[test]
    fn certificate_signing_request_conditions() {
        let issued = row(
            &CERTIFICATE_SIGNING_REQUEST,
            json!({
                "metadata": {"name": "csr-abc", "creationTimestamp": ago(600)},
                "spec": {"signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                         "username": "system:node:n1", "expirationSeconds": 86400,
                         "request": "LS0t"},
                "status": {"conditions": [{"type": "Approved", "status": "True"}],
                           "certificate": "LS0tLS1CRUdJTg=="}
            }),
        );
        assert_eq!(
            issued,
            [
                "csr-abc",
                "10m",
                "kubernetes.io/kube-apiserver-client-kubelet",
                "system:node:n1",
                "24h",
                "Approved,Issued"
            ]
        );
        let condition = |conditions: Value| {
            row(
                &CERTIFICATE_SIGNING_REQUEST,
                json!({"metadata": {"name": "c"}, "status": {"conditions": conditions}}),
            )[5]
                .clone()
        };
        assert_eq!(
            condition(json!([{"type": "Approved", "status": "True"},
                             {"type": "Denied", "status": "True"},
                             {"type": "Failed", "status": "True"}])),
            "Denied,Failed"
        );
        assert_eq!(condition(json!([])), "Pending");
        let bare = row(
            &CERTIFICATE_SIGNING_REQUEST,
            json!({"metadata": {"name": "c"}}),
        );
        assert_eq!(bare[2..5], [json!("<none>"), json!(""), json!("<none>")]);
    }

    #[test]
    fn resource_quota_requests_and_limits() {
        let cells = row(
            &RESOURCE_QUOTA,
            json!({
                "metadata": {"name": "compute", "creationTimestamp": ago(3600)},
                "spec": {"hard": {"pods": "10"}},
                "status": {
                    "hard": {"pods": "10", "requests.cpu": "1", "limits.memory": "2Gi",
                             "requests.memory": "1Gi", "limits.cpu": "2",
                             "count/deployments.apps": "5"},
                    "used": {"pods": "3", "requests.cpu": "500m", "limits.cpu": "1",
                             "requests.memory": "512Mi"}
                }
            }),
        );
        assert_eq!(
            cells,
            [
                "compute",
                "count/deployments.apps: 0/5, pods: 3/10, requests.cpu: 500m/1, \
                 requests.memory: 512Mi/1Gi",
                "limits.cpu: 1/2, limits.memory: 0/2Gi",
                "60m"
            ]
        );
        // Before the quota controller fills the status: nothing.
        let new = row(
            &RESOURCE_QUOTA,
            json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "10"}}}),
        );
        assert_eq!(new[1..3], [json!(""), json!("")]);
    }

    #[test]
    fn an_endpoint_slice() {
        let cells = row(
            &ENDPOINT_SLICE,
            json!({
                "metadata": {"name": "web-abcde", "creationTimestamp": ago(45)},
                "addressType": "IPv4",
                "ports": [{"name": "http", "port": 80}, {"name": "metrics"},
                          {"port": 443}, {"port": 8080}],
                "endpoints": [{"addresses": ["10.0.0.1"]},
                              {"addresses": ["10.0.0.2", "10.0.0.3"]},
                              {"addresses": ["10.0.0.4"]}]
            }),
        );
        assert_eq!(
            cells,
            [
                "web-abcde",
                "IPv4",
                "80,metrics,443 + 1 more...",
                "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...",
                "45s"
            ]
        );
        let empty = row(
            &ENDPOINT_SLICE,
            json!({"metadata": {"name": "e"}, "addressType": "IPv6",
                   "ports": [{"name": "http", "port": 80}]}),
        );
        assert_eq!(empty[2..4], [json!("80"), json!("<unset>")]);
    }

    #[test]
    fn a_daemon_set_and_a_stateful_set() {
        let ds = row(
            &DAEMON_SET,
            json!({
                "metadata": {"name": "kube-proxy", "creationTimestamp": ago(600)},
                "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
                         "template": {"spec": {
                             "nodeSelector": {"kubernetes.io/os": "linux"},
                             "containers": [{"name": "kube-proxy",
                                             "image": "registry.k8s.io/kube-proxy:v1.36.0"}]}}},
                "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3,
                           "numberReady": 2, "updatedNumberScheduled": 3,
                           "numberAvailable": 2}
            }),
        );
        assert_eq!(
            ds,
            [
                json!("kube-proxy"),
                json!(3),
                json!(3),
                json!(2),
                json!(3),
                json!(2),
                json!("kubernetes.io/os=linux"),
                json!("10m"),
                json!("kube-proxy"),
                json!("registry.k8s.io/kube-proxy:v1.36.0"),
                json!("k8s-app=kube-proxy")
            ]
        );
        let bare = row(&DAEMON_SET, json!({"metadata": {"name": "d"}}));
        assert_eq!((&bare[6], &bare[10]), (&json!("<none>"), &json!("<none>")));
        let invalid = row(
            &DAEMON_SET,
            json!({"metadata": {"name": "d"},
                   "spec": {"selector": {"matchExpressions": [{"key": "k", "operator": "In"}]}}}),
        );
        assert_eq!(invalid[10], "<error>");

        let sts = row(
            &STATEFUL_SET,
            json!({
                "metadata": {"name": "web", "creationTimestamp": ago(7200)},
                "spec": {"replicas": 3, "template": {"spec": {"containers": [
                    {"name": "nginx", "image": "nginx:1.27"}]}}},
                "status": {"replicas": 3, "readyReplicas": 2}
            }),
        );
        assert_eq!(sts, ["web", "2/3", "120m", "nginx", "nginx:1.27"]);
        let defaulted = row(&STATEFUL_SET, json!({"metadata": {"name": "s"}}));
        assert_eq!(defaulted[1], "0/1");
    }

    #[test]
    fn the_simpler_kinds() {
        let rc = row(
            &REPLICATION_CONTROLLER,
            json!({"metadata": {"name": "rc"},
                   "spec": {"template": {"metadata": {"labels": {"app": "rc", "tier": "web"}},
                                         "spec": {"containers": [{"name": "c", "image": "i"}]}}},
                   "status": {"replicas": 1, "readyReplicas": 1}}),
        );
        assert_eq!(
            rc,
            [
                json!("rc"),
                json!(1),
                json!(1),
                json!(1),
                json!("<unknown>"),
                json!("c"),
                json!("i"),
                json!("app=rc,tier=web")
            ]
        );
        assert_eq!(
            row(
                &SERVICE_ACCOUNT,
                json!({"metadata": {"name": "default"}, "secrets": [{"name": "t"}]})
            )[1],
            1
        );
        let pdb = row(
            &POD_DISRUPTION_BUDGET,
            json!({"metadata": {"name": "pdb"}, "spec": {"maxUnavailable": "25%"},
                   "status": {"disruptionsAllowed": 1}}),
        );
        assert_eq!(pdb[1..4], [json!("N/A"), json!("25%"), json!(1)]);
        let min = row(
            &POD_DISRUPTION_BUDGET,
            json!({"metadata": {"name": "pdb"}, "spec": {"minAvailable": 2}}),
        );
        assert_eq!(min[1..4], [json!("2"), json!("N/A"), json!(0)]);
        let revision = row(
            &CONTROLLER_REVISION,
            json!({"metadata": {"name": "web-7d9f", "ownerReferences": [
                       {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "1"},
                       {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                        "uid": "2", "controller": true}]},
                   "revision": 3}),
        );
        assert_eq!(revision[1..3], [json!("statefulset.apps/web"), json!(3)]);
        let core = row(
            &CONTROLLER_REVISION,
            json!({"metadata": {"name": "r", "ownerReferences": [
                {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc",
                 "uid": "3", "controller": true}]}}),
        );
        assert_eq!(core[1], "replicationcontroller/rc");
        assert_eq!(
            row(&CONTROLLER_REVISION, json!({"metadata": {"name": "r"}}))[1],
            "<none>"
        );
        let class = row(
            &STORAGE_CLASS,
            json!({"metadata": {"name": "standard", "annotations":
                       {"storageclass.kubernetes.io/is-default-class": "true"}},
                   "provisioner": "rancher.io/local-path",
                   "volumeBindingMode": "WaitForFirstConsumer"}),
        );
        assert_eq!(
            class[..5],
            [
                json!("standard (default)"),
                json!("rancher.io/local-path"),
                json!("Delete"),
                json!("WaitForFirstConsumer"),
                json!(false)
            ]
        );
        let driver = row(
            &CSI_DRIVER,
            json!({"metadata": {"name": "hostpath.csi.k8s.io"},
                   "spec": {"podInfoOnMount": true,
                            "tokenRequests": [{"audience": "vault"}, {"audience": ""}]}}),
        );
        assert_eq!(
            driver[1..7],
            [
                json!(true),
                json!(true),
                json!(false),
                json!("vault,"),
                json!(false),
                json!("Persistent")
            ]
        );
        assert_eq!(
            row(
                &CSI_DRIVER,
                json!({"metadata": {"name": "d"},
                       "spec": {"volumeLifecycleModes": ["Persistent", "Ephemeral"]}})
            )[4..7],
            [
                json!("<unset>"),
                json!(false),
                json!("Persistent,Ephemeral")
            ]
        );
        assert_eq!(
            row(
                &CSI_NODE,
                json!({"metadata": {"name": "n1"}, "spec": {"drivers": [{"name": "a"}]}})
            )[1],
            1
        );
        assert_eq!(
            row(
                &CSI_STORAGE_CAPACITY,
                json!({"metadata": {"name": "csisc-1"}, "storageClassName": "fast",
                       "capacity": "100Gi"})
            ),
            ["csisc-1", "fast", "100Gi"]
        );
        assert_eq!(
            row(&CSI_STORAGE_CAPACITY, json!({"metadata": {"name": "c"}}))[2],
            "<unset>"
        );
        let attachment = row(
            &VOLUME_ATTACHMENT,
            json!({"metadata": {"name": "csi-123"},
                   "spec": {"attacher": "hostpath.csi.k8s.io", "nodeName": "n1",
                            "source": {"persistentVolumeName": "pv1"}},
                   "status": {"attached": true}}),
        );
        assert_eq!(
            attachment[..5],
            [
                json!("csi-123"),
                json!("hostpath.csi.k8s.io"),
                json!("pv1"),
                json!("n1"),
                json!(true)
            ]
        );
        assert_eq!(
            row(
                &RUNTIME_CLASS,
                json!({"metadata": {"name": "gvisor"}, "handler": "runsc"})
            )[..2],
            ["gvisor", "runsc"]
        );
    }
}
