//! The shapes server-side apply needs of the served kinds: mirrors
//! apimachinery's [`pkg/util/managedfields/typeconverter.go`]
//! (`NewTypeConverter`), which turns kube-apiserver's OpenAPI models
//! (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`, generated from `k8s.io/api`'s `+listType` and
//! `+listMapKey` markers) into structured-merge-diff schemas.
//!
//! Upstream knows every field of every type. This table names only the fields
//! whose shape is not the default; structured-merge-diff deduces the rest. What
//! is named:
//!
//! - associative lists (`listType=map`) with their keys: containers, init and
//!   ephemeral containers, volumes, image pull secrets, resource claims and
//!   scheduling gates by `name`; a container's `env` by `name`, `ports` by
//!   `containerPort` and `protocol` (default `TCP`), `volumeMounts` by
//!   `mountPath`, `volumeDevices` by `devicePath`; host aliases by `ip`;
//!   topology spread constraints by `topologyKey` and `whenUnsatisfiable`;
//!   owner references by `uid`; conditions and node addresses by `type`; pod
//!   and host IPs by `ip`; a service's `spec.ports` by `port` and `protocol`
//!   (default `TCP`); a service account's `secrets`, a CSI node's
//!   `spec.drivers` by `name`;
//! - sets (`listType=set`): `metadata.finalizers`, a node's `spec.podCIDRs`, a
//!   job's `status.uncountedTerminatedPods.succeeded` and `failed`, a CSI
//!   driver's `spec.volumeLifecycleModes`;
//! - atomic maps and structs (`mapType=atomic`, `structType=atomic`): label
//!   selectors (a workload's or a PVC's `selector`, a CSI storage capacity's
//!   `nodeTopology`), a pod's `nodeSelector`, required node affinity, the key
//!   and field references of an env var, an event's `involvedObject` and
//!   `related`, a service's and a replication controller's `selector`, the
//!   object references of a service account's `secrets`, a PVC's `dataSource`,
//!   a resource quota's `scopeSelector`, a persistent volume's
//!   `nodeAffinity.required` and the secret references of its sources, a
//!   runtime class's `scheduling.nodeSelector`.
//!
//! Where a field has no `+listType` but a `patchStrategy:"merge"` tag,
//! kube-openapi's `getListElementRelationship` (`pkg/schemaconv`) makes the list
//! associative by its `patchMergeKey`; every such field of the served kinds
//! also has a `+listType`. The two can differ: a job's `status.conditions` merge
//! by `type` in a strategic merge patch but are `listType=atomic` for apply; a
//! CSR's `status.conditions` are keyed by `type` for apply but replaced by a
//! strategic merge patch. What stays deduced (atomic lists, maps merged key by
//! key) is not named: an Endpoints' `subsets`, an EndpointSlice's `endpoints`
//! and `ports`, a stateful set's `volumeClaimTemplates`, a storage class's
//! `allowedTopologies`, a persistent volume's `claimRef` (`structType=granular`
//! on the field, over `ObjectReference`'s `atomic`).
//!
//! k8s-openapi carries the same list keys in its `DeepMerge` impls (first key
//! only); the table follows `k8s.io/api` v0.36.0's `+listMapKey` tags.

//!
//! Each kind's registry strategy names its root ([`POD`], [`DEPLOYMENT`],
//! [`SERVICE`], ...).
//!
//! [`pkg/util/managedfields/typeconverter.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/managedfields/typeconverter.go

use structured_merge_diff::schema::{ATOMIC, DEDUCED, ListKey, SET, Schema, key};

static BY_NAME: Schema = Schema::MapList {
    keys: &[key("name")],
    item: &DEDUCED,
};
static BY_NAME_ATOMIC: Schema = Schema::MapList {
    keys: &[key("name")],
    item: &ATOMIC,
};
static BY_TYPE: Schema = Schema::MapList {
    keys: &[key("type")],
    item: &DEDUCED,
};
static BY_IP: Schema = Schema::MapList {
    keys: &[key("ip")],
    item: &DEDUCED,
};

static OBJECT_META: Schema = Schema::Fields(&[
    ("finalizers", &SET),
    (
        "ownerReferences",
        &Schema::MapList {
            keys: &[key("uid")],
            item: &DEDUCED,
        },
    ),
]);

static ENV_VAR: Schema = Schema::Fields(&[(
    "valueFrom",
    &Schema::Fields(&[
        ("configMapKeyRef", &ATOMIC),
        ("secretKeyRef", &ATOMIC),
        ("fieldRef", &ATOMIC),
        ("resourceFieldRef", &ATOMIC),
    ]),
)]);

static CONTAINER: Schema = Schema::Fields(&[
    (
        "env",
        &Schema::MapList {
            keys: &[key("name")],
            item: &ENV_VAR,
        },
    ),
    (
        "ports",
        &Schema::MapList {
            keys: &[
                key("containerPort"),
                ListKey {
                    name: "protocol",
                    default: Some("TCP"),
                },
            ],
            item: &DEDUCED,
        },
    ),
    (
        "volumeMounts",
        &Schema::MapList {
            keys: &[key("mountPath")],
            item: &DEDUCED,
        },
    ),
    (
        "volumeDevices",
        &Schema::MapList {
            keys: &[key("devicePath")],
            item: &DEDUCED,
        },
    ),
    ("resources", &Schema::Fields(&[("claims", &BY_NAME)])),
]);

static CONTAINERS: Schema = Schema::MapList {
    keys: &[key("name")],
    item: &CONTAINER,
};

static POD_SPEC: Schema = Schema::Fields(&[
    ("containers", &CONTAINERS),
    ("initContainers", &CONTAINERS),
    ("ephemeralContainers", &CONTAINERS),
    ("volumes", &BY_NAME),
    ("imagePullSecrets", &BY_NAME_ATOMIC),
    ("resourceClaims", &BY_NAME),
    ("schedulingGates", &BY_NAME),
    (
        "hostAliases",
        &Schema::MapList {
            keys: &[key("ip")],
            item: &DEDUCED,
        },
    ),
    (
        "topologySpreadConstraints",
        &Schema::MapList {
            keys: &[key("topologyKey"), key("whenUnsatisfiable")],
            item: &Schema::Fields(&[("labelSelector", &ATOMIC)]),
        },
    ),
    ("nodeSelector", &ATOMIC),
    (
        "affinity",
        &Schema::Fields(&[(
            "nodeAffinity",
            &Schema::Fields(&[(
                "requiredDuringSchedulingIgnoredDuringExecution",
                &ATOMIC,
            )]),
        )]),
    ),
]);

static POD_TEMPLATE: Schema =
    Schema::Fields(&[("metadata", &OBJECT_META), ("spec", &POD_SPEC)]);

static CONDITIONS: Schema = Schema::Fields(&[("conditions", &BY_TYPE)]);

/// A Pod (`core/v1`).
pub static POD: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &POD_SPEC),
    (
        "status",
        &Schema::Fields(&[
            ("conditions", &BY_TYPE),
            ("podIPs", &BY_IP),
            ("hostIPs", &BY_IP),
        ]),
    ),
]);

/// A Deployment (`apps/v1`).
pub static DEPLOYMENT: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    (
        "spec",
        &Schema::Fields(&[("selector", &ATOMIC), ("template", &POD_TEMPLATE)]),
    ),
    ("status", &CONDITIONS),
]);

/// A ReplicaSet (`apps/v1`).
pub static REPLICA_SET: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    (
        "spec",
        &Schema::Fields(&[("selector", &ATOMIC), ("template", &POD_TEMPLATE)]),
    ),
    ("status", &CONDITIONS),
]);

/// A Node (`core/v1`).
pub static NODE: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &Schema::Fields(&[("podCIDRs", &SET)])),
    (
        "status",
        &Schema::Fields(&[("addresses", &BY_TYPE), ("conditions", &BY_TYPE)]),
    ),
]);

/// A Namespace (`core/v1`).
pub static NAMESPACE: Schema =
    Schema::Fields(&[("metadata", &OBJECT_META), ("status", &CONDITIONS)]);

/// An Event (`core/v1`).
pub static EVENT: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("involvedObject", &ATOMIC),
    ("related", &ATOMIC),
]);

/// ConfigMaps, Secrets and anything else: metadata, and the rest deduced
/// (`data`, `binaryData` and `stringData` are maps merged key by key).
pub static PLAIN: Schema = Schema::Fields(&[("metadata", &OBJECT_META)]);

/// `TCP`, the `+default` of a port's `protocol`, which keys it.
const PROTOCOL: ListKey = ListKey {
    name: "protocol",
    default: Some("TCP"),
};

/// A workload's spec: a label selector and a pod template (a stateful set's, a
/// daemon set's, a job's and a cron job's `jobTemplate`'s).
static WORKLOAD_SPEC: Schema =
    Schema::Fields(&[("selector", &ATOMIC), ("template", &POD_TEMPLATE)]);

/// A `*SecretReference` (or `*ObjectReference`) of a persistent volume source,
/// `structType=atomic`.
static SECRET_REF: Schema = Schema::Fields(&[("secretRef", &ATOMIC)]);

/// `core/v1.PersistentVolumeSpec` (a PV's, and a volume attachment's
/// `inlineVolumeSpec`), with the sources of `PersistentVolumeSource` inlined.
static PERSISTENT_VOLUME_SPEC: Schema = Schema::Fields(&[
    ("nodeAffinity", &Schema::Fields(&[("required", &ATOMIC)])),
    ("rbd", &SECRET_REF),
    ("iscsi", &SECRET_REF),
    ("cinder", &SECRET_REF),
    ("cephfs", &SECRET_REF),
    ("flexVolume", &SECRET_REF),
    ("scaleIO", &SECRET_REF),
    ("storageos", &SECRET_REF),
    (
        "csi",
        &Schema::Fields(&[
            ("controllerPublishSecretRef", &ATOMIC),
            ("nodeStageSecretRef", &ATOMIC),
            ("nodePublishSecretRef", &ATOMIC),
            ("controllerExpandSecretRef", &ATOMIC),
            ("nodeExpandSecretRef", &ATOMIC),
        ]),
    ),
]);

/// A Service (`core/v1`).
pub static SERVICE: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    (
        "spec",
        &Schema::Fields(&[
            (
                "ports",
                &Schema::MapList {
                    keys: &[key("port"), PROTOCOL],
                    item: &DEDUCED,
                },
            ),
            ("selector", &ATOMIC),
        ]),
    ),
    ("status", &CONDITIONS),
]);

/// Endpoints (`core/v1`): `subsets` and their lists are atomic, as deduced.
pub static ENDPOINTS: Schema = Schema::Fields(&[("metadata", &OBJECT_META)]);

/// A PersistentVolume (`core/v1`).
pub static PERSISTENT_VOLUME: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &PERSISTENT_VOLUME_SPEC),
]);

/// A PersistentVolumeClaim (`core/v1`).
pub static PERSISTENT_VOLUME_CLAIM: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    (
        "spec",
        &Schema::Fields(&[("selector", &ATOMIC), ("dataSource", &ATOMIC)]),
    ),
    ("status", &CONDITIONS),
]);

/// A ReplicationController (`core/v1`): its `selector` is a map, `mapType=atomic`.
pub static REPLICATION_CONTROLLER: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &WORKLOAD_SPEC),
    ("status", &CONDITIONS),
]);

/// A ServiceAccount (`core/v1`).
pub static SERVICE_ACCOUNT: Schema =
    Schema::Fields(&[("metadata", &OBJECT_META), ("secrets", &BY_NAME_ATOMIC)]);

/// A ResourceQuota (`core/v1`).
pub static RESOURCE_QUOTA: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &Schema::Fields(&[("scopeSelector", &ATOMIC)])),
]);

/// A StatefulSet (`apps/v1`).
pub static STATEFUL_SET: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &WORKLOAD_SPEC),
    ("status", &CONDITIONS),
]);

/// A DaemonSet (`apps/v1`).
pub static DAEMON_SET: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &WORKLOAD_SPEC),
    ("status", &CONDITIONS),
]);

/// A ControllerRevision (`apps/v1`): `data` is deduced.
pub static CONTROLLER_REVISION: Schema =
    Schema::Fields(&[("metadata", &OBJECT_META)]);

/// A Job (`batch/v1`): its `status.conditions` are `listType=atomic`.
pub static JOB: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &WORKLOAD_SPEC),
    (
        "status",
        &Schema::Fields(&[(
            "uncountedTerminatedPods",
            &Schema::Fields(&[("succeeded", &SET), ("failed", &SET)]),
        )]),
    ),
]);

/// A CronJob (`batch/v1`).
pub static CRON_JOB: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    (
        "spec",
        &Schema::Fields(&[(
            "jobTemplate",
            &Schema::Fields(&[("metadata", &OBJECT_META), ("spec", &WORKLOAD_SPEC)]),
        )]),
    ),
]);

/// A CertificateSigningRequest (`certificates.k8s.io/v1`).
pub static CERTIFICATE_SIGNING_REQUEST: Schema =
    Schema::Fields(&[("metadata", &OBJECT_META), ("status", &CONDITIONS)]);

/// An EndpointSlice (`discovery.k8s.io/v1`): `endpoints` and `ports` are
/// atomic, as deduced.
pub static ENDPOINT_SLICE: Schema = Schema::Fields(&[("metadata", &OBJECT_META)]);

/// A PodDisruptionBudget (`policy/v1`).
pub static POD_DISRUPTION_BUDGET: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &Schema::Fields(&[("selector", &ATOMIC)])),
    ("status", &CONDITIONS),
]);

/// A CSIDriver (`storage.k8s.io/v1`).
pub static CSI_DRIVER: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &Schema::Fields(&[("volumeLifecycleModes", &SET)])),
]);

/// A CSINode (`storage.k8s.io/v1`).
pub static CSI_NODE: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("spec", &Schema::Fields(&[("drivers", &BY_NAME)])),
]);

/// A CSIStorageCapacity (`storage.k8s.io/v1`).
pub static CSI_STORAGE_CAPACITY: Schema =
    Schema::Fields(&[("metadata", &OBJECT_META), ("nodeTopology", &ATOMIC)]);

/// A StorageClass (`storage.k8s.io/v1`): `parameters` merge key by key,
/// `mountOptions` and `allowedTopologies` are atomic, as deduced.
pub static STORAGE_CLASS: Schema = Schema::Fields(&[("metadata", &OBJECT_META)]);

/// A VolumeAttachment (`storage.k8s.io/v1`).
pub static VOLUME_ATTACHMENT: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    (
        "spec",
        &Schema::Fields(&[(
            "source",
            &Schema::Fields(&[("inlineVolumeSpec", &PERSISTENT_VOLUME_SPEC)]),
        )]),
    ),
]);

/// A RuntimeClass (`node.k8s.io/v1`).
pub static RUNTIME_CLASS: Schema = Schema::Fields(&[
    ("metadata", &OBJECT_META),
    ("scheduling", &Schema::Fields(&[("nodeSelector", &ATOMIC)])),
]);

#[cfg(test)]
mod tests {
    use serde_json::json;
    use structured_merge_diff::fieldpath::PathElement;

    use super::*;

    #[test]
    fn service_ports_are_keyed_by_port_and_protocol_tcp_by_default() {
        let ports = SERVICE.field("spec").field("ports");
        assert!(ports.is_granular_list());
        assert_eq!(
            ports.item_element(&json!({"port": 443, "name": "https"})),
            Ok(PathElement::Key(vec![
                ("port".into(), json!(443)),
                ("protocol".into(), json!("TCP")),
            ]))
        );
        assert!(!SERVICE.field("spec").field("selector").is_granular_map());
    }

    #[test]
    fn the_new_kinds_name_their_shapes() {
        let drivers = CSI_NODE.field("spec").field("drivers");
        assert_eq!(
            drivers
                .item_element(&json!({"name": "ebs.csi.aws.com", "nodeID": "i-1"})),
            Ok(PathElement::Key(vec![(
                "name".into(),
                json!("ebs.csi.aws.com")
            )]))
        );

        // A cron job's pod template is three structs down.
        let pod_spec = CRON_JOB
            .field("spec")
            .field("jobTemplate")
            .field("spec")
            .field("template")
            .field("spec");
        let containers = pod_spec.field("containers");
        assert_eq!(
            containers.item_element(&json!({"name": "backup"})),
            Ok(PathElement::Key(vec![("name".into(), json!("backup"))]))
        );
        assert!(containers.item().field("env").is_granular_list());
        assert!(
            !CRON_JOB
                .field("spec")
                .field("jobTemplate")
                .field("spec")
                .field("selector")
                .is_granular_map()
        );

        // A job's conditions are atomic for apply; a stateful set's are keyed.
        assert!(!JOB.field("status").field("conditions").is_granular_list());
        assert!(
            STATEFUL_SET
                .field("status")
                .field("conditions")
                .is_granular_list()
        );
        assert!(matches!(
            JOB.field("status")
                .field("uncountedTerminatedPods")
                .field("failed"),
            Schema::SetList
        ));

        // An object reference in a service account's secrets is owned whole.
        let secrets = SERVICE_ACCOUNT.field("secrets");
        assert!(secrets.is_granular_list());
        assert!(!secrets.item().is_granular_map());

        // An EndpointSlice's endpoints are replaced whole.
        assert!(!ENDPOINT_SLICE.field("endpoints").is_granular_list());
        let csi = VOLUME_ATTACHMENT
            .field("spec")
            .field("source")
            .field("inlineVolumeSpec")
            .field("csi");
        assert!(!csi.field("nodePublishSecretRef").is_granular_map());
        assert!(
            PERSISTENT_VOLUME
                .field("spec")
                .field("claimRef")
                .is_granular_map()
        );
    }
}
