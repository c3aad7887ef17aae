//! One served resource type: its names, its etcd prefix and its selectable fields.
//!
//! Mirrors the facts a registry gives the apiserver: the `Store`'s names and key
//! prefix (`pkg/registry/generic/registry/store.go`), and the strategy's `GetAttrs`
//! and `ToSelectableFields` (each resource's `strategy.go`, e.g.
//! `pkg/registry/core/pod/strategy.go`): `metadata.name`, `metadata.namespace`, and
//! for pods `spec.nodeName` and `status.phase`.

use std::borrow::Cow;

use apimachinery::fields::Fields;
use kube::core::TypeMeta;

use crate::Object;

// ANCHOR: resource_info
/// One served resource type: what discovery reports, where its objects live in etcd,
/// and which field labels its field selectors may use. Mirrors the facts a
/// registry's `Store` and strategy give the apiserver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    /// API group; `""` for the core group.
    pub group: &'static str,
    /// API version, e.g. `v1`.
    pub version: &'static str,
    /// Kind, e.g. `Pod`.
    pub kind: &'static str,
    /// Plural resource name, e.g. `pods`: the URL segment and the etcd key segment.
    pub plural: &'static str,
    /// Singular name for discovery, e.g. `pod`.
    pub singular: &'static str,
    /// Short names for kubectl, e.g. `po`.
    pub short_names: &'static [&'static str],
    /// The categories the resource belongs to, e.g. `all` for `kubectl get all`
    /// (the registry's `CategoriesProvider`).
    pub categories: &'static [&'static str],
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Field labels beyond `metadata.name` and `metadata.namespace` that field
    /// selectors accept.
    pub field_labels: &'static [&'static str],
}
// ANCHOR_END: resource_info

impl ResourceInfo {
    /// `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group-qualified resource of errors (`schema.GroupResource.String()`):
    /// `pods`, `deployments.apps`.
    pub fn qualified_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `apiVersion` and `kind` of an object of this type.
    pub fn type_meta(&self) -> TypeMeta {
        TypeMeta {
            api_version: self.api_version(),
            kind: self.kind.to_string(),
        }
    }

    /// `apiVersion` and `kind` of a list of this type (`PodList`).
    pub fn list_type_meta(&self) -> TypeMeta {
        TypeMeta {
            api_version: self.api_version(),
            kind: format!("{}List", self.kind),
        }
    }

    /// The etcd prefix of every object of this type: `/registry/pods/`. The
    /// built-in groups keep their resources under `/registry/<resource>/`, as
    /// kube-apiserver's storage factory does (with the few older names its
    /// `ResourcePrefix` overrides keep: services and their endpoints share
    /// `/registry/services/`, replication controllers are `controllers`); any
    /// other group (a custom resource's) under `/registry/<group>/<resource>/`.
    pub fn key_prefix(&self) -> String {
        match (self.group, self.plural) {
            ("", "services") => return "/registry/services/specs/".into(),
            ("", "endpoints") => return "/registry/services/endpoints/".into(),
            ("", "replicationcontrollers") => {
                return "/registry/controllers/".into();
            }
            _ => {}
        }
        if matches!(
            self.group,
            "" | "apps"
                | "batch"
                | "certificates.k8s.io"
                | "coordination.k8s.io"
                | "discovery.k8s.io"
                | "events.k8s.io"
                | "node.k8s.io"
                | "policy"
                | "storage.k8s.io"
        ) {
            format!("/registry/{}/", self.plural)
        } else {
            format!("/registry/{}/{}/", self.group, self.plural)
        }
    }

    /// Whether `label` may appear in a field selector for this type.
    pub fn supports_field_label(&self, label: &str) -> bool {
        label == "metadata.name"
            || label == "metadata.namespace"
            || self.field_labels.contains(&label)
    }

    /// Mirrors a strategy's `GetAttrs` for fields: every supported field label and
    /// its value.
    pub fn fields(&self, obj: &Object) -> Fields {
        self.field_names()
            .map(|label| (label, self.field_of(obj, label).into_owned()))
            .collect()
    }

    /// The field labels [`fields`](Self::fields) gives, in its order:
    /// `metadata.name`, `metadata.namespace` if namespaced, then the kind's own.
    pub fn field_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        let namespace = self.namespaced.then_some("metadata.namespace");
        std::iter::once("metadata.name")
            .chain(namespace)
            .chain(self.field_labels.iter().copied())
    }

    /// The value of the field label `label` of `obj` (`""` when it has none).
    pub fn field_of<'a>(&self, obj: &'a Object, label: &str) -> Cow<'a, str> {
        match label {
            "metadata.name" => Cow::Borrowed(obj.name()),
            "metadata.namespace" => Cow::Borrowed(obj.namespace()),
            // `JobToSelectableFields`: the label's value is `status.succeeded`.
            "status.successful" if self.kind == "Job" => {
                obj.field("status.succeeded").unwrap_or(Cow::Borrowed("0"))
            }
            // `strconv.Itoa` of a count Go's `omitempty` left out: `0`.
            "status.replicas" => obj.field(label).unwrap_or(Cow::Borrowed("0")),
            other => obj.field(other).unwrap_or_default(),
        }
    }

    /// Pods: `spec.nodeName` and `status.phase` are field labels.
    pub const PODS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Pod",
        plural: "pods",
        singular: "pod",
        short_names: &["po"],
        categories: &["all"],
        namespaced: true,
        field_labels: &["spec.nodeName", "status.phase"],
    };
    /// ConfigMaps.
    pub const CONFIGMAPS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        singular: "configmap",
        short_names: &["cm"],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// Secrets: `type` is a field label.
    pub const SECRETS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
        singular: "secret",
        short_names: &[],
        categories: &[],
        namespaced: true,
        field_labels: &["type"],
    };
    /// Namespaces (cluster-scoped): `status.phase` is a field label.
    pub const NAMESPACES: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        singular: "namespace",
        short_names: &["ns"],
        categories: &[],
        namespaced: false,
        field_labels: &["status.phase"],
    };
    /// Nodes (cluster-scoped): `spec.unschedulable` is a field label.
    pub const NODES: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Node",
        plural: "nodes",
        singular: "node",
        short_names: &["no"],
        categories: &[],
        namespaced: false,
        field_labels: &["spec.unschedulable"],
    };
    /// Deployments (`apps/v1`).
    pub const DEPLOYMENTS: ResourceInfo = ResourceInfo {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        singular: "deployment",
        short_names: &["deploy"],
        categories: &["all"],
        namespaced: true,
        field_labels: &[],
    };

    /// ReplicaSets (`apps/v1`): `status.replicas` is a field label
    /// (`ReplicaSetToSelectableFields`).
    pub const REPLICASETS: ResourceInfo = ResourceInfo {
        group: "apps",
        version: "v1",
        kind: "ReplicaSet",
        plural: "replicasets",
        singular: "replicaset",
        short_names: &["rs"],
        categories: &["all"],
        namespaced: true,
        field_labels: &["status.replicas"],
    };

    /// Leases (`coordination.k8s.io/v1`): what a kubelet renews as its node's
    /// heartbeat in `kube-node-lease`, and what leader election holds.
    pub const LEASES: ResourceInfo = ResourceInfo {
        group: "coordination.k8s.io",
        version: "v1",
        kind: "Lease",
        plural: "leases",
        singular: "lease",
        short_names: &[],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };

    /// Events (core `v1`, kubectl's `get events`): the field labels of upstream's
    /// `event.ToSelectableFields` that are plain paths (`source`, which upstream
    /// reads from `source.component`, is not one).
    pub const EVENTS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        field_labels: &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "type",
        ],
    };

    /// Events as `events.k8s.io/v1`: the same objects as [`ResourceInfo::EVENTS`]
    /// in another shape (the server serves them from the core storage), with the
    /// field labels of upstream's `events.k8s.io/v1` field label conversion.
    pub const EVENTS_V1: ResourceInfo = ResourceInfo {
        group: "events.k8s.io",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        field_labels: &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reason",
            "reportingController",
            "type",
        ],
    };

    /// Services: `spec.clusterIP` and `spec.type` are field labels (`AddFieldLabelConversionsForService`). Stored under `/registry/services/specs/`.
    pub const SERVICES: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Service",
        plural: "services",
        singular: "service",
        short_names: &["svc"],
        categories: &["all"],
        namespaced: true,
        field_labels: &["spec.clusterIP", "spec.type"],
    };
    /// Endpoints: one object per service, named as it. Stored under `/registry/services/endpoints/`.
    pub const ENDPOINTS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "Endpoints",
        plural: "endpoints",
        singular: "endpoints",
        short_names: &["ep"],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// PersistentVolumes (cluster-scoped).
    pub const PERSISTENT_VOLUMES: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "PersistentVolume",
        plural: "persistentvolumes",
        singular: "persistentvolume",
        short_names: &["pv"],
        categories: &[],
        namespaced: false,
        field_labels: &[],
    };
    /// PersistentVolumeClaims.
    pub const PERSISTENT_VOLUME_CLAIMS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "PersistentVolumeClaim",
        plural: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        short_names: &["pvc"],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// ReplicationControllers: `status.replicas` is a field label. Stored under `/registry/controllers/`.
    pub const REPLICATION_CONTROLLERS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "ReplicationController",
        plural: "replicationcontrollers",
        singular: "replicationcontroller",
        short_names: &["rc"],
        categories: &["all"],
        namespaced: true,
        field_labels: &["status.replicas"],
    };
    /// ServiceAccounts.
    pub const SERVICE_ACCOUNTS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        singular: "serviceaccount",
        short_names: &["sa"],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// ResourceQuotas.
    pub const RESOURCE_QUOTAS: ResourceInfo = ResourceInfo {
        group: "",
        version: "v1",
        kind: "ResourceQuota",
        plural: "resourcequotas",
        singular: "resourcequota",
        short_names: &["quota"],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// StatefulSets (`apps/v1`).
    pub const STATEFUL_SETS: ResourceInfo = ResourceInfo {
        group: "apps",
        version: "v1",
        kind: "StatefulSet",
        plural: "statefulsets",
        singular: "statefulset",
        short_names: &["sts"],
        categories: &["all"],
        namespaced: true,
        field_labels: &[],
    };
    /// DaemonSets (`apps/v1`).
    pub const DAEMON_SETS: ResourceInfo = ResourceInfo {
        group: "apps",
        version: "v1",
        kind: "DaemonSet",
        plural: "daemonsets",
        singular: "daemonset",
        short_names: &["ds"],
        categories: &["all"],
        namespaced: true,
        field_labels: &[],
    };
    /// ControllerRevisions (`apps/v1`): the history of a StatefulSet's or DaemonSet's template.
    pub const CONTROLLER_REVISIONS: ResourceInfo = ResourceInfo {
        group: "apps",
        version: "v1",
        kind: "ControllerRevision",
        plural: "controllerrevisions",
        singular: "controllerrevision",
        short_names: &[],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// Jobs (`batch/v1`): `status.successful` is a field label, whose value is `status.succeeded` (`JobToSelectableFields`).
    pub const JOBS: ResourceInfo = ResourceInfo {
        group: "batch",
        version: "v1",
        kind: "Job",
        plural: "jobs",
        singular: "job",
        short_names: &[],
        categories: &["all"],
        namespaced: true,
        field_labels: &["status.successful"],
    };
    /// CronJobs (`batch/v1`).
    pub const CRON_JOBS: ResourceInfo = ResourceInfo {
        group: "batch",
        version: "v1",
        kind: "CronJob",
        plural: "cronjobs",
        singular: "cronjob",
        short_names: &["cj"],
        categories: &["all"],
        namespaced: true,
        field_labels: &[],
    };
    /// CertificateSigningRequests (`certificates.k8s.io/v1`, cluster-scoped): `spec.signerName` is a field label.
    pub const CERTIFICATE_SIGNING_REQUESTS: ResourceInfo = ResourceInfo {
        group: "certificates.k8s.io",
        version: "v1",
        kind: "CertificateSigningRequest",
        plural: "certificatesigningrequests",
        singular: "certificatesigningrequest",
        short_names: &["csr"],
        categories: &[],
        namespaced: false,
        field_labels: &["spec.signerName"],
    };
    /// EndpointSlices (`discovery.k8s.io/v1`).
    pub const ENDPOINT_SLICES: ResourceInfo = ResourceInfo {
        group: "discovery.k8s.io",
        version: "v1",
        kind: "EndpointSlice",
        plural: "endpointslices",
        singular: "endpointslice",
        short_names: &[],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// PodDisruptionBudgets (`policy/v1`).
    pub const POD_DISRUPTION_BUDGETS: ResourceInfo = ResourceInfo {
        group: "policy",
        version: "v1",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        short_names: &["pdb"],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// CSIDrivers (`storage.k8s.io/v1`, cluster-scoped).
    pub const CSI_DRIVERS: ResourceInfo = ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        kind: "CSIDriver",
        plural: "csidrivers",
        singular: "csidriver",
        short_names: &[],
        categories: &[],
        namespaced: false,
        field_labels: &[],
    };
    /// CSINodes (`storage.k8s.io/v1`, cluster-scoped): a kubelet registers its node's CSI drivers here.
    pub const CSI_NODES: ResourceInfo = ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        kind: "CSINode",
        plural: "csinodes",
        singular: "csinode",
        short_names: &[],
        categories: &[],
        namespaced: false,
        field_labels: &[],
    };
    /// CSIStorageCapacities (`storage.k8s.io/v1`, namespaced).
    pub const CSI_STORAGE_CAPACITIES: ResourceInfo = ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        kind: "CSIStorageCapacity",
        plural: "csistoragecapacities",
        singular: "csistoragecapacity",
        short_names: &[],
        categories: &[],
        namespaced: true,
        field_labels: &[],
    };
    /// StorageClasses (`storage.k8s.io/v1`, cluster-scoped).
    pub const STORAGE_CLASSES: ResourceInfo = ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        kind: "StorageClass",
        plural: "storageclasses",
        singular: "storageclass",
        short_names: &["sc"],
        categories: &[],
        namespaced: false,
        field_labels: &[],
    };
    /// VolumeAttachments (`storage.k8s.io/v1`, cluster-scoped).
    pub const VOLUME_ATTACHMENTS: ResourceInfo = ResourceInfo {
        group: "storage.k8s.io",
        version: "v1",
        kind: "VolumeAttachment",
        plural: "volumeattachments",
        singular: "volumeattachment",
        short_names: &[],
        categories: &[],
        namespaced: false,
        field_labels: &[],
    };
    /// RuntimeClasses (`node.k8s.io/v1`, cluster-scoped).
    pub const RUNTIME_CLASSES: ResourceInfo = ResourceInfo {
        group: "node.k8s.io",
        version: "v1",
        kind: "RuntimeClass",
        plural: "runtimeclasses",
        singular: "runtimeclass",
        short_names: &[],
        categories: &[],
        namespaced: false,
        field_labels: &[],
    };

    /// Every resource type the server stores ([`ResourceInfo::EVENTS_V1`] is
    /// served from [`ResourceInfo::EVENTS`]' storage).
    pub const BUILTIN: &'static [ResourceInfo] = &[
        ResourceInfo::PODS,
        ResourceInfo::CONFIGMAPS,
        ResourceInfo::SECRETS,
        ResourceInfo::NAMESPACES,
        ResourceInfo::NODES,
        ResourceInfo::DEPLOYMENTS,
        ResourceInfo::EVENTS,
        ResourceInfo::REPLICASETS,
        ResourceInfo::LEASES,
        ResourceInfo::SERVICES,
        ResourceInfo::ENDPOINTS,
        ResourceInfo::PERSISTENT_VOLUMES,
        ResourceInfo::PERSISTENT_VOLUME_CLAIMS,
        ResourceInfo::REPLICATION_CONTROLLERS,
        ResourceInfo::SERVICE_ACCOUNTS,
        ResourceInfo::RESOURCE_QUOTAS,
        ResourceInfo::STATEFUL_SETS,
        ResourceInfo::DAEMON_SETS,
        ResourceInfo::CONTROLLER_REVISIONS,
        ResourceInfo::JOBS,
        ResourceInfo::CRON_JOBS,
        ResourceInfo::CERTIFICATE_SIGNING_REQUESTS,
        ResourceInfo::ENDPOINT_SLICES,
        ResourceInfo::POD_DISRUPTION_BUDGETS,
        ResourceInfo::CSI_DRIVERS,
        ResourceInfo::CSI_NODES,
        ResourceInfo::CSI_STORAGE_CAPACITIES,
        ResourceInfo::STORAGE_CLASSES,
        ResourceInfo::VOLUME_ATTACHMENTS,
        ResourceInfo::RUNTIME_CLASSES,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::tests::pod;
    use apimachinery::fields::field_value;

    #[test]
    fn fields_follow_the_resource_and_read_dotted_paths() {
        let fields = ResourceInfo::PODS.fields(&pod("web-0", "node-1"));
        assert_eq!(field_value(&fields, "spec.nodeName"), Some("node-1"));
        assert_eq!(field_value(&fields, "status.phase"), Some("Running"));
        assert_eq!(field_value(&fields, "metadata.namespace"), Some("default"));
    }

    #[test]
    fn the_older_kinds_keep_upstreams_etcd_prefixes_and_field_values() {
        assert_eq!(
            ResourceInfo::SERVICES.key_prefix(),
            "/registry/services/specs/"
        );
        assert_eq!(
            ResourceInfo::ENDPOINTS.key_prefix(),
            "/registry/services/endpoints/"
        );
        assert_eq!(
            ResourceInfo::REPLICATION_CONTROLLERS.key_prefix(),
            "/registry/controllers/"
        );
        assert_eq!(ResourceInfo::JOBS.key_prefix(), "/registry/jobs/");
        assert_eq!(ResourceInfo::CSI_NODES.key_prefix(), "/registry/csinodes/");
        let job = Object::new(&ResourceInfo::JOBS, Some("ns"), "pi")
            .with_data(serde_json::json!({"status": {"succeeded": 2}}));
        let fields = ResourceInfo::JOBS.fields(&job);
        assert_eq!(field_value(&fields, "status.successful"), Some("2"));
        let rc =
            Object::new(&ResourceInfo::REPLICATION_CONTROLLERS, Some("ns"), "rc");
        let fields = ResourceInfo::REPLICATION_CONTROLLERS.fields(&rc);
        assert_eq!(field_value(&fields, "status.replicas"), Some("0"));
    }
}
