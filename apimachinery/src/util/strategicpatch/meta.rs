//! The patch metadata of a kind: mirrors apimachinery's
//! [`pkg/util/strategicpatch/meta.go`] (`PatchMetaFromStruct`,
//! `LookupPatchMetadataForStruct`, `LookupPatchMetadataForSlice`) and the
//! `patchStrategy` and `patchMergeKey` struct tags of `k8s.io/api` v0.36.0
//! (`core/v1`, `apps/v1`, `batch/v1`, `certificates/v1`, `discovery/v1`,
//! `policy/v1`, `storage/v1` and `node/v1` `types.go`, `apimachinery`'s
//! `meta/v1/types.go`), which `PatchMetaFromStruct` reads by reflection. With no
//! reflection here, the tags of the served kinds are written out below, and each
//! kind's registry strategy names its root ([`POD`], [`DEPLOYMENT`],
//! [`SERVICE`], ...).
//!
//! Go finds a field's metadata by walking the struct types from the root kind;
//! here each Go struct that leads to a tagged list is a [`StructMeta`], with only
//! the fields strategic merge needs: the tagged lists, and the struct fields on
//! the way to them. A field that is not listed has no metadata: its maps merge
//! key by key and its lists are replaced, as an untagged Go field's are.
//!
//! The source of truth is the struct tags (`patchStrategy:"merge"
//! patchMergeKey:"name"`), as the `+patchStrategy`/`+patchMergeKey` markers
//! beside them in the same files say. They are not the server-side apply
//! metadata (`+listType=map`, `+listMapKey`, which k8s-openapi's `DeepMerge`
//! impls carry as `x-kubernetes-list-map-keys`): the two differ, e.g. a
//! container's `ports` merge by `containerPort` alone for strategic merge but
//! are keyed by `containerPort` and `protocol` for apply, and a node's `taints`
//! or a pod's `tolerations` have no merge key at all (a patch replaces them),
//! although apply keys taints by `key` and `effect`.
//!
//! | Path (from the kind)                                  | Strategy           | Merge key        |
//! |-------------------------------------------------------|--------------------|------------------|
//! | `metadata.finalizers`                                 | merge (a set)      | —                |
//! | `metadata.ownerReferences`                            | merge              | `uid`            |
//! | pod `spec.containers`, `initContainers`, `ephemeralContainers` | merge     | `name`           |
//! | … a container's `ports`                               | merge              | `containerPort`  |
//! | … a container's `env`                                 | merge              | `name`           |
//! | … a container's `volumeMounts`                        | merge              | `mountPath`      |
//! | … a container's `volumeDevices`                       | merge              | `devicePath`     |
//! | pod `spec.volumes`                                    | merge, retainKeys  | `name`           |
//! | pod `spec.imagePullSecrets`, `schedulingGates`        | merge              | `name`           |
//! | pod `spec.hostAliases`                                | merge              | `ip`             |
//! | pod `spec.topologySpreadConstraints`                  | merge              | `topologyKey`    |
//! | pod `spec.resourceClaims`                             | merge, retainKeys  | `name`           |
//! | pod `status.conditions`                               | merge              | `type`           |
//! | pod `status.podIPs`, `hostIPs`                        | merge              | `ip`             |
//! | pod `status.resourceClaimStatuses`                    | merge, retainKeys  | `name`           |
//! | deployment `spec.template` (`metadata`, `spec` as a pod's) | —             | —                |
//! | deployment `spec.strategy`                            | retainKeys         | —                |
//! | deployment `status.conditions`                        | merge              | `type`           |
//! | namespace `status.conditions`                         | merge              | `type`           |
//! | node `spec.podCIDRs`                                  | merge (a set)      | —                |
//! | node `status.conditions`, `status.addresses`          | merge              | `type`           |
//! | service `spec.ports`                                  | merge              | `port`           |
//! | service `status.conditions`                           | merge              | `type`           |
//! | service account `secrets`                             | merge              | `name`           |
//! | persistent volume claim `status.conditions`           | merge              | `type`           |
//! | replication controller, stateful set, daemon set, job `spec.template` (as a deployment's) | — | — |
//! | cron job `spec.jobTemplate.spec.template` (the same)  | —                  | —                |
//! | replication controller, stateful set, daemon set, job `status.conditions` | merge | `type`   |
//! | pod disruption budget `spec.selector`                 | replace            | —                |
//! | pod disruption budget `status.conditions`             | merge              | `type`           |
//! | CSI node `spec.drivers`                               | merge              | `name`           |
//!
//! ConfigMaps, Secrets, Events, the `autoscaling/v1` `Scale`, Endpoints,
//! PersistentVolumes, ResourceQuotas, ControllerRevisions,
//! CertificateSigningRequests, EndpointSlices, CSIDrivers, CSIStorageCapacities,
//! StorageClasses, VolumeAttachments and RuntimeClasses have only their
//! `metadata`'s. Untagged, so replaced by a patch: `tolerations`, `taints`,
//! a container's `envFrom` and `resizePolicy`, `containerStatuses`, a
//! namespace's `spec.finalizers`, a selector's `matchExpressions`, an
//! Endpoints' `subsets`, an EndpointSlice's `endpoints` and `ports`, a stateful
//! set's `volumeClaimTemplates`, a CSR's `status.conditions` (keyed by `type`
//! for server-side apply only), a cron job's `status.active`.
//!
//! `retainKeys` only tells a client's diff (`kubectl apply`) to send a
//! `$retainKeys` directive; applying a patch honours that directive wherever
//! it is, whatever the field's strategy.
//!
//! [`pkg/util/strategicpatch/meta.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/strategicpatch/meta.go

/// A `patchStrategy` tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchStrategy {
    /// `patchStrategy:"merge"`: a list merges item by item (by its merge key),
    /// or as a set for a list of scalars.
    Merge,
    /// `patchStrategy:"retainKeys"`: a struct's keys missing from a patch's
    /// `$retainKeys` are cleared (the union types, e.g. a deployment's strategy).
    RetainKeys,
    /// `patchStrategy:"merge,retainKeys"`: both.
    MergeRetainKeys,
    /// `patchStrategy:"replace"`: a struct is replaced whole by a patch's, not
    /// merged key by key (`mergeMapHandler`); a pod disruption budget's
    /// `spec.selector`.
    Replace,
}

impl PatchStrategy {
    /// Mirrors `extractRetainKeysPatchStrategy`: whether lists merge (the
    /// strategy besides `retainKeys`).
    pub fn merges(self) -> bool {
        matches!(self, PatchStrategy::Merge | PatchStrategy::MergeRetainKeys)
    }
}

/// A Go struct type, with the fields strategic merge must know.
#[derive(Debug)]
pub struct StructMeta {
    /// The Go type's name (for messages and the docs).
    pub go_type: &'static str,
    /// The fields with metadata, or that lead to fields with metadata.
    pub fields: &'static [FieldMeta],
}

/// What a field holds: a struct (or a list of them), or scalars.
#[derive(Clone, Copy, Debug)]
pub enum Elem {
    /// A struct, or a list of structs.
    Struct(&'static StructMeta),
    /// A list of scalars of this Go kind (`string`).
    Scalar(&'static str),
}

/// One field of a [`StructMeta`]: its JSON name and tags.
#[derive(Clone, Copy, Debug)]
pub struct FieldMeta {
    /// The JSON name (`json:"containers"`).
    pub json: &'static str,
    /// `patchStrategy`, if tagged.
    pub strategy: Option<PatchStrategy>,
    /// `patchMergeKey`, if tagged.
    pub merge_key: Option<&'static str>,
    /// The field's type (a list's element type).
    pub elem: Elem,
}

/// What a lookup of one key answers (`LookupPatchMetadataForStruct` /
/// `LookupPatchMetadataForSlice`): the value's own metadata and the field's tags.
#[derive(Clone, Copy, Debug, Default)]
pub struct Lookup {
    /// The struct the value (or each list item) is, when known.
    pub schema: Option<&'static StructMeta>,
    /// The field's strategy.
    pub strategy: Option<PatchStrategy>,
    /// The field's merge key ("" when none, as Go's zero value).
    pub merge_key: &'static str,
    /// The Go kind of a list's items, for messages (`struct`, `string`).
    pub elem_kind: &'static str,
}

impl Lookup {
    /// Whether a list under this field merges.
    pub fn merges(&self) -> bool {
        self.strategy.is_some_and(PatchStrategy::merges)
    }

    /// Whether a map under this field is replaced whole by the patch's
    /// (`mergeMapHandler`'s `fieldPatchStrategy == replaceDirective`).
    pub fn replaces(&self) -> bool {
        self.strategy == Some(PatchStrategy::Replace)
    }
}

/// Finds `key`'s metadata in `schema` (none for an unknown struct or field).
pub fn lookup(schema: Option<&'static StructMeta>, key: &str) -> Lookup {
    let Some(field) = schema.and_then(|s| s.fields.iter().find(|f| f.json == key))
    else {
        return Lookup {
            elem_kind: "struct",
            ..Lookup::default()
        };
    };
    let (schema, elem_kind) = match field.elem {
        Elem::Struct(meta) => (Some(meta), "struct"),
        Elem::Scalar(kind) => (None, kind),
    };
    Lookup {
        schema,
        strategy: field.strategy,
        merge_key: field.merge_key.unwrap_or(""),
        elem_kind,
    }
}

const fn field(json: &'static str, meta: &'static StructMeta) -> FieldMeta {
    FieldMeta {
        json,
        strategy: None,
        merge_key: None,
        elem: Elem::Struct(meta),
    }
}

const fn merge_by(
    json: &'static str,
    key: &'static str,
    meta: &'static StructMeta,
) -> FieldMeta {
    FieldMeta {
        json,
        strategy: Some(PatchStrategy::Merge),
        merge_key: Some(key),
        elem: Elem::Struct(meta),
    }
}

const fn merge_retain_by(
    json: &'static str,
    key: &'static str,
    meta: &'static StructMeta,
) -> FieldMeta {
    FieldMeta {
        strategy: Some(PatchStrategy::MergeRetainKeys),
        ..merge_by(json, key, meta)
    }
}

const fn string_set(json: &'static str) -> FieldMeta {
    FieldMeta {
        json,
        strategy: Some(PatchStrategy::Merge),
        merge_key: None,
        elem: Elem::Scalar("string"),
    }
}

const fn leaf(go_type: &'static str) -> StructMeta {
    StructMeta {
        go_type,
        fields: &[],
    }
}

/// `metav1.ObjectMeta`.
pub static OBJECT_META: StructMeta = StructMeta {
    go_type: "ObjectMeta",
    fields: &[
        string_set("finalizers"),
        merge_by("ownerReferences", "uid", &leaf("OwnerReference")),
    ],
};

/// `core/v1.Container` (and `EphemeralContainerCommon`, inlined in
/// `EphemeralContainer`, whose tags are the same).
pub static CONTAINER: StructMeta = StructMeta {
    go_type: "Container",
    fields: &[
        merge_by("ports", "containerPort", &leaf("ContainerPort")),
        merge_by("env", "name", &leaf("EnvVar")),
        merge_by("volumeMounts", "mountPath", &leaf("VolumeMount")),
        merge_by("volumeDevices", "devicePath", &leaf("VolumeDevice")),
    ],
};

/// `core/v1.PodSpec`.
pub static POD_SPEC: StructMeta = StructMeta {
    go_type: "PodSpec",
    fields: &[
        merge_retain_by("volumes", "name", &leaf("Volume")),
        merge_by("initContainers", "name", &CONTAINER),
        merge_by("containers", "name", &CONTAINER),
        merge_by("ephemeralContainers", "name", &CONTAINER),
        merge_by("imagePullSecrets", "name", &leaf("LocalObjectReference")),
        merge_by("hostAliases", "ip", &leaf("HostAlias")),
        merge_by(
            "topologySpreadConstraints",
            "topologyKey",
            &leaf("TopologySpreadConstraint"),
        ),
        merge_by("schedulingGates", "name", &leaf("PodSchedulingGate")),
        merge_retain_by("resourceClaims", "name", &leaf("PodResourceClaim")),
    ],
};

/// `core/v1.PodStatus`.
pub static POD_STATUS: StructMeta = StructMeta {
    go_type: "PodStatus",
    fields: &[
        merge_by("conditions", "type", &leaf("PodCondition")),
        merge_by("hostIPs", "ip", &leaf("HostIP")),
        merge_by("podIPs", "ip", &leaf("PodIP")),
        merge_retain_by(
            "resourceClaimStatuses",
            "name",
            &leaf("PodResourceClaimStatus"),
        ),
    ],
};

/// `core/v1.Pod`.
pub static POD: StructMeta = StructMeta {
    go_type: "Pod",
    fields: &[
        field("metadata", &OBJECT_META),
        field("spec", &POD_SPEC),
        field("status", &POD_STATUS),
    ],
};

/// `core/v1.PodTemplateSpec`.
pub static POD_TEMPLATE_SPEC: StructMeta = StructMeta {
    go_type: "PodTemplateSpec",
    fields: &[field("metadata", &OBJECT_META), field("spec", &POD_SPEC)],
};

/// `apps/v1.ReplicaSet`.
pub static REPLICA_SET: StructMeta = StructMeta {
    go_type: "ReplicaSet",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "ReplicaSetSpec",
                fields: &[field("template", &POD_TEMPLATE_SPEC)],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "ReplicaSetStatus",
                fields: &[merge_by(
                    "conditions",
                    "type",
                    &leaf("ReplicaSetCondition"),
                )],
            },
        ),
    ],
};

/// `apps/v1.Deployment`.
pub static DEPLOYMENT: StructMeta = StructMeta {
    go_type: "Deployment",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "DeploymentSpec",
                fields: &[
                    field("template", &POD_TEMPLATE_SPEC),
                    FieldMeta {
                        strategy: Some(PatchStrategy::RetainKeys),
                        ..field("strategy", &leaf("DeploymentStrategy"))
                    },
                ],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "DeploymentStatus",
                fields: &[merge_by(
                    "conditions",
                    "type",
                    &leaf("DeploymentCondition"),
                )],
            },
        ),
    ],
};

/// `core/v1.Namespace`.
pub static NAMESPACE: StructMeta = StructMeta {
    go_type: "Namespace",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "status",
            &StructMeta {
                go_type: "NamespaceStatus",
                fields: &[merge_by(
                    "conditions",
                    "type",
                    &leaf("NamespaceCondition"),
                )],
            },
        ),
    ],
};

/// `core/v1.Node`.
pub static NODE: StructMeta = StructMeta {
    go_type: "Node",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "NodeSpec",
                fields: &[string_set("podCIDRs")],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "NodeStatus",
                fields: &[
                    merge_by("conditions", "type", &leaf("NodeCondition")),
                    merge_by("addresses", "type", &leaf("NodeAddress")),
                ],
            },
        ),
    ],
};

/// `batch/v1.JobSpec` (a job's, and a cron job's `jobTemplate`'s).
pub static JOB_SPEC: StructMeta = StructMeta {
    go_type: "JobSpec",
    fields: &[field("template", &POD_TEMPLATE_SPEC)],
};

/// The fields of a kind whose only tagged lists are its `metadata`'s.
const METADATA: &[FieldMeta] = &[field("metadata", &OBJECT_META)];

/// A kind whose only tagged lists are its `metadata`'s, under its own name.
const fn metadata_only(go_type: &'static str) -> StructMeta {
    StructMeta {
        go_type,
        fields: METADATA,
    }
}

/// `core/v1.Service`.
pub static SERVICE: StructMeta = StructMeta {
    go_type: "Service",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "ServiceSpec",
                fields: &[merge_by("ports", "port", &leaf("ServicePort"))],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "ServiceStatus",
                fields: &[merge_by("conditions", "type", &leaf("Condition"))],
            },
        ),
    ],
};

/// `core/v1.Endpoints`: its `subsets` are untagged.
pub static ENDPOINTS: StructMeta = metadata_only("Endpoints");

/// `core/v1.PersistentVolume`.
pub static PERSISTENT_VOLUME: StructMeta = metadata_only("PersistentVolume");

/// `core/v1.PersistentVolumeClaim`.
pub static PERSISTENT_VOLUME_CLAIM: StructMeta = StructMeta {
    go_type: "PersistentVolumeClaim",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "status",
            &StructMeta {
                go_type: "PersistentVolumeClaimStatus",
                fields: &[merge_by(
                    "conditions",
                    "type",
                    &leaf("PersistentVolumeClaimCondition"),
                )],
            },
        ),
    ],
};

/// `core/v1.ReplicationController`.
pub static REPLICATION_CONTROLLER: StructMeta = StructMeta {
    go_type: "ReplicationController",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "ReplicationControllerSpec",
                fields: &[field("template", &POD_TEMPLATE_SPEC)],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "ReplicationControllerStatus",
                fields: &[merge_by(
                    "conditions",
                    "type",
                    &leaf("ReplicationControllerCondition"),
                )],
            },
        ),
    ],
};

/// `core/v1.ServiceAccount`.
pub static SERVICE_ACCOUNT: StructMeta = StructMeta {
    go_type: "ServiceAccount",
    fields: &[
        field("metadata", &OBJECT_META),
        merge_by("secrets", "name", &leaf("ObjectReference")),
    ],
};

/// `core/v1.ResourceQuota`.
pub static RESOURCE_QUOTA: StructMeta = metadata_only("ResourceQuota");

/// `apps/v1.StatefulSet`.
pub static STATEFUL_SET: StructMeta = StructMeta {
    go_type: "StatefulSet",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "StatefulSetSpec",
                fields: &[field("template", &POD_TEMPLATE_SPEC)],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "StatefulSetStatus",
                fields: &[merge_by(
                    "conditions",
                    "type",
                    &leaf("StatefulSetCondition"),
                )],
            },
        ),
    ],
};

/// `apps/v1.DaemonSet`.
pub static DAEMON_SET: StructMeta = StructMeta {
    go_type: "DaemonSet",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "DaemonSetSpec",
                fields: &[field("template", &POD_TEMPLATE_SPEC)],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "DaemonSetStatus",
                fields: &[merge_by(
                    "conditions",
                    "type",
                    &leaf("DaemonSetCondition"),
                )],
            },
        ),
    ],
};

/// `apps/v1.ControllerRevision`.
pub static CONTROLLER_REVISION: StructMeta = metadata_only("ControllerRevision");

/// `batch/v1.Job`.
pub static JOB: StructMeta = StructMeta {
    go_type: "Job",
    fields: &[
        field("metadata", &OBJECT_META),
        field("spec", &JOB_SPEC),
        field(
            "status",
            &StructMeta {
                go_type: "JobStatus",
                fields: &[merge_by("conditions", "type", &leaf("JobCondition"))],
            },
        ),
    ],
};

/// `batch/v1.CronJob`.
pub static CRON_JOB: StructMeta = StructMeta {
    go_type: "CronJob",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "CronJobSpec",
                fields: &[field(
                    "jobTemplate",
                    &StructMeta {
                        go_type: "JobTemplateSpec",
                        fields: &[
                            field("metadata", &OBJECT_META),
                            field("spec", &JOB_SPEC),
                        ],
                    },
                )],
            },
        ),
    ],
};

/// `certificates/v1.CertificateSigningRequest`: its `status.conditions` are
/// untagged.
pub static CERTIFICATE_SIGNING_REQUEST: StructMeta =
    metadata_only("CertificateSigningRequest");

/// `discovery/v1.EndpointSlice`.
pub static ENDPOINT_SLICE: StructMeta = metadata_only("EndpointSlice");

/// `policy/v1.PodDisruptionBudget`.
pub static POD_DISRUPTION_BUDGET: StructMeta = StructMeta {
    go_type: "PodDisruptionBudget",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "PodDisruptionBudgetSpec",
                fields: &[FieldMeta {
                    strategy: Some(PatchStrategy::Replace),
                    ..field("selector", &leaf("LabelSelector"))
                }],
            },
        ),
        field(
            "status",
            &StructMeta {
                go_type: "PodDisruptionBudgetStatus",
                fields: &[merge_by("conditions", "type", &leaf("Condition"))],
            },
        ),
    ],
};

/// `storage/v1.CSIDriver`.
pub static CSI_DRIVER: StructMeta = metadata_only("CSIDriver");

/// `storage/v1.CSINode`.
pub static CSI_NODE: StructMeta = StructMeta {
    go_type: "CSINode",
    fields: &[
        field("metadata", &OBJECT_META),
        field(
            "spec",
            &StructMeta {
                go_type: "CSINodeSpec",
                fields: &[merge_by("drivers", "name", &leaf("CSINodeDriver"))],
            },
        ),
    ],
};

/// `storage/v1.CSIStorageCapacity`.
pub static CSI_STORAGE_CAPACITY: StructMeta = metadata_only("CSIStorageCapacity");

/// `storage/v1.StorageClass`.
pub static STORAGE_CLASS: StructMeta = metadata_only("StorageClass");

/// `storage/v1.VolumeAttachment`.
pub static VOLUME_ATTACHMENT: StructMeta = metadata_only("VolumeAttachment");

/// `node/v1.RuntimeClass`.
pub static RUNTIME_CLASS: StructMeta = metadata_only("RuntimeClass");

/// A kind whose only tagged lists are its `metadata`'s: `ConfigMap`, `Secret`,
/// `Event` (core/v1) and `autoscaling/v1.Scale`.
pub static METADATA_ONLY: StructMeta = StructMeta {
    go_type: "ObjectWithMetadata",
    fields: &[field("metadata", &OBJECT_META)],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_walk_from_the_kind() {
        let spec = lookup(Some(&DEPLOYMENT), "spec");
        let template = lookup(spec.schema, "template");
        let pod_spec = lookup(template.schema, "spec");
        let containers = lookup(pod_spec.schema, "containers");
        assert!(containers.merges());
        assert_eq!(containers.merge_key, "name");
        let ports = lookup(containers.schema, "ports");
        assert_eq!(ports.merge_key, "containerPort");
        let tolerations = lookup(pod_spec.schema, "tolerations");
        assert!(!tolerations.merges());
        assert_eq!(tolerations.merge_key, "");
        let finalizers = lookup(Some(&OBJECT_META), "finalizers");
        assert!(finalizers.merges());
        assert_eq!(finalizers.elem_kind, "string");
        let strategy = lookup(spec.schema, "strategy");
        assert_eq!(strategy.strategy, Some(PatchStrategy::RetainKeys));
        assert!(!strategy.merges());
        assert_eq!(
            lookup(Some(&POD_SPEC), "volumes").strategy,
            Some(PatchStrategy::MergeRetainKeys)
        );
        assert!(lookup(None, "anything").schema.is_none());
    }

    #[test]
    fn the_new_kinds_carry_their_tags() {
        let ports = lookup(lookup(Some(&SERVICE), "spec").schema, "ports");
        assert!(ports.merges());
        assert_eq!(ports.merge_key, "port");
        let secrets = lookup(Some(&SERVICE_ACCOUNT), "secrets");
        assert_eq!((secrets.merges(), secrets.merge_key), (true, "name"));
        let drivers = lookup(lookup(Some(&CSI_NODE), "spec").schema, "drivers");
        assert_eq!((drivers.merges(), drivers.merge_key), (true, "name"));
        assert_eq!(drivers.schema.map(|s| s.go_type), Some("CSINodeDriver"));

        // A cron job's pod template is three structs down, and its containers
        // merge by name as a pod's.
        let mut schema = Some(&CRON_JOB);
        for key in ["spec", "jobTemplate", "spec", "template", "spec"] {
            schema = lookup(schema, key).schema;
        }
        let containers = lookup(schema, "containers");
        assert_eq!((containers.merges(), containers.merge_key), (true, "name"));
        assert_eq!(
            lookup(containers.schema, "env").merge_key,
            "name",
            "a container's env"
        );

        for kind in [&STATEFUL_SET, &DAEMON_SET, &JOB, &REPLICATION_CONTROLLER] {
            let template = lookup(lookup(Some(kind), "spec").schema, "template");
            assert_eq!(template.schema.map(|s| s.go_type), Some("PodTemplateSpec"));
            let conditions =
                lookup(lookup(Some(kind), "status").schema, "conditions");
            assert_eq!(conditions.merge_key, "type", "{}", kind.go_type);
        }

        let selector = lookup(
            lookup(Some(&POD_DISRUPTION_BUDGET), "spec").schema,
            "selector",
        );
        assert!(selector.replaces());
        assert!(!selector.merges());
        assert!(!lookup(Some(&POD_SPEC), "volumes").replaces());

        // Untagged: replaced by a patch.
        assert!(!lookup(Some(&ENDPOINTS), "subsets").merges());
        let csr_status = lookup(Some(&CERTIFICATE_SIGNING_REQUEST), "status");
        assert!(!lookup(csr_status.schema, "conditions").merges());
        let finalizers = lookup(Some(&STORAGE_CLASS), "metadata");
        assert!(lookup(finalizers.schema, "finalizers").merges());
        assert_eq!(STORAGE_CLASS.go_type, "StorageClass");
    }
}
