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
//!   and host IPs by `ip`;
//! - sets (`listType=set`): `metadata.finalizers`, a node's `spec.podCIDRs`;
//! - atomic maps and structs (`mapType=atomic`, `structType=atomic`): label
//!   selectors, a pod's `nodeSelector`, required node affinity, the key and
//!   field references of an env var, an event's `involvedObject` and `related`.
//!
//! k8s-openapi carries the same list keys in its `DeepMerge` impls (first key
//! only); the table follows `k8s.io/api`'s `+listMapKey` tags.

//!
//! Each kind's registry strategy names its root ([`POD`], [`DEPLOYMENT`], ...).
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
