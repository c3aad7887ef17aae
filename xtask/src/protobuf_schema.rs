//! `cargo xtask protobuf-schema [--check]`: writes the table the server's protobuf
//! decoder reads (`apimachinery/src/runtime/serializer/protobuf/schema.rs`).
//!
//! kube-apiserver decodes a protobuf body with the `Unmarshal` methods that
//! `go-to-protobuf` generated next to each Go type (`generated.pb.go`), into the Go
//! struct, and writes JSON from that struct. The server here keeps objects as JSON
//! and has no Go structs, so it decodes the wire format straight into JSON, driven
//! by a table with, for every message reachable from a served kind, each field's
//! number, wire type, JSON name and whether a zero value is written.
//!
//! The table comes from two well-kept crates, read as source:
//! - `k8s-pb` (kube-rs's prost bindings of the Kubernetes `.proto` files): field
//!   numbers, scalar types, `repeated`, maps and the message each field holds;
//! - `k8s-openapi` (the OpenAPI bindings): the JSON name of each field (prost
//!   snake-cases `podIP` to `pod_ip`; k8s-openapi's deserializer maps `"podIP"` to
//!   the same Rust name) and whether the field is required (not an `Option`).
//!
//! Go writes a zero scalar in JSON unless the field is `omitempty`, and gogo
//! protobuf writes every non-pointer field, zero or not. So a zero that arrives on
//! the wire is dropped for an optional field unless the Go field is a pointer, for
//! which a zero is a value the client chose (`replicas: 0`,
//! `automountServiceAccountToken: false`, `storageClassName: ""`).
//! [`POINTER_SCALARS`] lists those fields of the served kinds' messages; neither
//! crate records it. Nor does k8s-openapi's `required` always mean "no
//! `omitempty`": a field marked `+optional` whose JSON tag lacks `omitempty`
//! (`disruptionsAllowed`) is optional in the OpenAPI but Go writes its zero;
//! [`ZERO_WRITTEN`] lists those.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The kinds a protobuf body may hold, as `(apiVersion, kind, k8s-pb path)`.
/// `DeleteOptions` is registered in every group version, as
/// `metav1.AddToGroupVersion` registers it.
const ROOTS: &[(&str, &str, &str)] = &[
    ("v1", "Pod", "api::core::v1::Pod"),
    ("v1", "ConfigMap", "api::core::v1::ConfigMap"),
    ("v1", "Secret", "api::core::v1::Secret"),
    ("v1", "Namespace", "api::core::v1::Namespace"),
    ("v1", "Node", "api::core::v1::Node"),
    ("v1", "Event", "api::core::v1::Event"),
    ("v1", "Binding", "api::core::v1::Binding"),
    ("v1", "Service", "api::core::v1::Service"),
    ("v1", "Endpoints", "api::core::v1::Endpoints"),
    ("v1", "PersistentVolume", "api::core::v1::PersistentVolume"),
    (
        "v1",
        "PersistentVolumeClaim",
        "api::core::v1::PersistentVolumeClaim",
    ),
    (
        "v1",
        "ReplicationController",
        "api::core::v1::ReplicationController",
    ),
    ("v1", "ServiceAccount", "api::core::v1::ServiceAccount"),
    ("v1", "ResourceQuota", "api::core::v1::ResourceQuota"),
    ("apps/v1", "Deployment", "api::apps::v1::Deployment"),
    ("apps/v1", "ReplicaSet", "api::apps::v1::ReplicaSet"),
    ("apps/v1", "StatefulSet", "api::apps::v1::StatefulSet"),
    ("apps/v1", "DaemonSet", "api::apps::v1::DaemonSet"),
    (
        "apps/v1",
        "ControllerRevision",
        "api::apps::v1::ControllerRevision",
    ),
    ("batch/v1", "Job", "api::batch::v1::Job"),
    ("batch/v1", "CronJob", "api::batch::v1::CronJob"),
    (
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        "api::certificates::v1::CertificateSigningRequest",
    ),
    (
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "api::discovery::v1::EndpointSlice",
    ),
    (
        "policy/v1",
        "PodDisruptionBudget",
        "api::policy::v1::PodDisruptionBudget",
    ),
    ("policy/v1", "Eviction", "api::policy::v1::Eviction"),
    (
        "storage.k8s.io/v1",
        "CSIDriver",
        "api::storage::v1::CSIDriver",
    ),
    ("storage.k8s.io/v1", "CSINode", "api::storage::v1::CSINode"),
    (
        "storage.k8s.io/v1",
        "CSIStorageCapacity",
        "api::storage::v1::CSIStorageCapacity",
    ),
    (
        "storage.k8s.io/v1",
        "StorageClass",
        "api::storage::v1::StorageClass",
    ),
    (
        "storage.k8s.io/v1",
        "VolumeAttachment",
        "api::storage::v1::VolumeAttachment",
    ),
    (
        "node.k8s.io/v1",
        "RuntimeClass",
        "api::node::v1::RuntimeClass",
    ),
    (
        "coordination.k8s.io/v1",
        "Lease",
        "api::coordination::v1::Lease",
    ),
    ("autoscaling/v1", "Scale", "api::autoscaling::v1::Scale"),
    ("events.k8s.io/v1", "Event", "api::events::v1::Event"),
    (
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        "api::authorization::v1::SelfSubjectAccessReview",
    ),
    (
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
        "api::authorization::v1::SelfSubjectRulesReview",
    ),
    (
        "*",
        "DeleteOptions",
        "apimachinery::pkg::apis::meta::v1::DeleteOptions",
    ),
    // What the server answers in protobuf besides the kinds: an error, and an
    // object's metadata alone.
    ("v1", "Status", "apimachinery::pkg::apis::meta::v1::Status"),
    (
        "meta.k8s.io/v1",
        "PartialObjectMetadata",
        "apimachinery::pkg::apis::meta::v1::PartialObjectMetadata",
    ),
    (
        "meta.k8s.io/v1beta1",
        "PartialObjectMetadata",
        "apimachinery::pkg::apis::meta::v1::PartialObjectMetadata",
    ),
];

/// Messages whose JSON form is not their fields: apimachinery's types with their
/// own `MarshalJSON`.
const SPECIAL: &[(&str, &str)] = &[
    ("apimachinery::pkg::apis::meta::v1::Time", "Time"),
    ("apimachinery::pkg::apis::meta::v1::MicroTime", "MicroTime"),
    ("apimachinery::pkg::apis::meta::v1::Duration", "Duration"),
    ("apimachinery::pkg::apis::meta::v1::FieldsV1", "FieldsV1"),
    ("apimachinery::pkg::runtime::RawExtension", "RawExtension"),
    (
        "apimachinery::pkg::util::intstr::IntOrString",
        "IntOrString",
    ),
    ("apimachinery::pkg::api::resource::Quantity", "Quantity"),
    // A Go `[]string` (`certificates/v1.ExtraValue`), a message of one repeated
    // field in protobuf and a list in JSON.
    ("api::certificates::v1::ExtraValue", "StringList"),
];

/// Optional scalar fields that are Go pointers (`*int32`, `*int64`, `*bool`,
/// `*string` and pointers to named string types such as `*PersistentVolumeMode`)
/// in the served kinds' messages, as `Message.jsonName` with k8s-pb's message
/// name, or `module::Message.jsonName` where two modules have a message of that
/// name: a zero on the wire is kept (`storageClassName: ""` asks for no storage
/// class, `suspend: false` is a choice). From kubernetes/api v0.36.0
/// `core/v1/types.go`, `apps/v1/types.go`, `batch/v1/types.go`,
/// `certificates/v1/types.go`, `coordination/v1/types.go`,
/// `discovery/v1/types.go`, `policy/v1/types.go`, `storage/v1/types.go` and
/// apimachinery's `meta/v1/types.go`. Each entry must name a field of the
/// table; the generator fails on one that does not.
const POINTER_SCALARS: &[&str] = &[
    // meta/v1
    "ObjectMeta.deletionGracePeriodSeconds",
    "OwnerReference.controller",
    "OwnerReference.blockOwnerDeletion",
    "ListMeta.remainingItemCount",
    "DeleteOptions.gracePeriodSeconds",
    "DeleteOptions.orphanDependents",
    "DeleteOptions.propagationPolicy",
    "DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
    "Preconditions.uid",
    "Preconditions.resourceVersion",
    // core/v1: pods and their templates
    "PodSpec.terminationGracePeriodSeconds",
    "PodSpec.activeDeadlineSeconds",
    "PodSpec.automountServiceAccountToken",
    "PodSpec.shareProcessNamespace",
    "PodSpec.priority",
    "PodSpec.preemptionPolicy",
    "PodSpec.runtimeClassName",
    "PodSpec.enableServiceLinks",
    "PodSpec.setHostnameAsFQDN",
    "PodSpec.hostUsers",
    "PodSpec.hostnameOverride",
    "PodDnsConfigOption.value",
    "PodResourceClaim.resourceClaimName",
    "PodResourceClaim.resourceClaimTemplateName",
    "PodResourceClaimStatus.resourceClaimName",
    "Container.restartPolicy",
    "EphemeralContainerCommon.restartPolicy",
    "Lifecycle.stopSignal",
    "Probe.terminationGracePeriodSeconds",
    "GrpcAction.service",
    "VolumeMount.mountPropagation",
    "VolumeMount.recursiveReadOnly",
    "SecurityContext.privileged",
    "SecurityContext.runAsUser",
    "SecurityContext.runAsGroup",
    "SecurityContext.runAsNonRoot",
    "SecurityContext.readOnlyRootFilesystem",
    "SecurityContext.allowPrivilegeEscalation",
    "SecurityContext.procMount",
    "PodSecurityContext.runAsUser",
    "PodSecurityContext.runAsGroup",
    "PodSecurityContext.runAsNonRoot",
    "PodSecurityContext.fsGroup",
    "PodSecurityContext.fsGroupChangePolicy",
    "PodSecurityContext.supplementalGroupsPolicy",
    "PodSecurityContext.seLinuxChangePolicy",
    "SeccompProfile.localhostProfile",
    "AppArmorProfile.localhostProfile",
    "WindowsSecurityContextOptions.gmsaCredentialSpecName",
    "WindowsSecurityContextOptions.gmsaCredentialSpec",
    "WindowsSecurityContextOptions.runAsUserName",
    "WindowsSecurityContextOptions.hostProcess",
    "SecretVolumeSource.defaultMode",
    "SecretVolumeSource.optional",
    "ConfigMapVolumeSource.defaultMode",
    "ConfigMapVolumeSource.optional",
    "ProjectedVolumeSource.defaultMode",
    "DownwardAPIVolumeSource.defaultMode",
    "DownwardAPIVolumeFile.mode",
    "KeyToPath.mode",
    "ServiceAccountTokenProjection.expirationSeconds",
    "ConfigMapProjection.optional",
    "SecretProjection.optional",
    "ClusterTrustBundleProjection.name",
    "ClusterTrustBundleProjection.signerName",
    "ClusterTrustBundleProjection.optional",
    "PodCertificateProjection.maxExpirationSeconds",
    "ConfigMapKeySelector.optional",
    "SecretKeySelector.optional",
    "FileKeySelector.optional",
    "ConfigMapEnvSource.optional",
    "SecretEnvSource.optional",
    "CSIVolumeSource.readOnly",
    "CSIVolumeSource.fsType",
    "HostPathVolumeSource.type",
    "IscsiVolumeSource.initiatorName",
    "FcVolumeSource.lun",
    "AzureDiskVolumeSource.cachingMode",
    "AzureDiskVolumeSource.fsType",
    "AzureDiskVolumeSource.readOnly",
    "AzureDiskVolumeSource.kind",
    "Toleration.tolerationSeconds",
    "TopologySpreadConstraint.minDomains",
    "TopologySpreadConstraint.nodeAffinityPolicy",
    "TopologySpreadConstraint.nodeTaintsPolicy",
    "ContainerStatus.started",
    "ContainerStatus.stopSignal",
    "VolumeMountStatus.recursiveReadOnly",
    // core/v1: the other kinds
    "ConfigMap.immutable",
    "Secret.immutable",
    "NodeFeatures.supplementalGroupsPolicy",
    "NodeSwapStatus.capacity",
    "NodeRuntimeHandlerFeatures.recursiveReadOnlyMounts",
    "NodeRuntimeHandlerFeatures.userNamespaces",
    "ServiceSpec.ipFamilyPolicy",
    "ServiceSpec.allocateLoadBalancerNodePorts",
    "ServiceSpec.loadBalancerClass",
    "ServiceSpec.internalTrafficPolicy",
    "ServiceSpec.trafficDistribution",
    "ServicePort.appProtocol",
    "ClientIpConfig.timeoutSeconds",
    "LoadBalancerIngress.ipMode",
    "PortStatus.error",
    "EndpointAddress.nodeName",
    // Both `core/v1.EndpointPort`'s and `discovery/v1.EndpointPort`'s.
    "EndpointPort.appProtocol",
    "ServiceAccount.automountServiceAccountToken",
    "ReplicationControllerSpec.replicas",
    "PersistentVolumeSpec.volumeMode",
    "PersistentVolumeSpec.volumeAttributesClassName",
    "GlusterfsPersistentVolumeSource.endpointsNamespace",
    "IscsiPersistentVolumeSource.initiatorName",
    "AzureFilePersistentVolumeSource.secretNamespace",
    "LocalVolumeSource.fsType",
    "PersistentVolumeClaimSpec.storageClassName",
    "PersistentVolumeClaimSpec.volumeMode",
    "PersistentVolumeClaimSpec.volumeAttributesClassName",
    "PersistentVolumeClaimStatus.currentVolumeAttributesClassName",
    "TypedLocalObjectReference.apiGroup",
    "TypedObjectReference.apiGroup",
    "TypedObjectReference.namespace",
    // apps/v1
    "DeploymentSpec.replicas",
    "DeploymentSpec.revisionHistoryLimit",
    "DeploymentSpec.progressDeadlineSeconds",
    "DeploymentStatus.collisionCount",
    "DeploymentStatus.terminatingReplicas",
    "ReplicaSetSpec.replicas",
    "ReplicaSetStatus.terminatingReplicas",
    "StatefulSetSpec.replicas",
    "StatefulSetSpec.revisionHistoryLimit",
    "StatefulSetStatus.collisionCount",
    "RollingUpdateStatefulSetStrategy.partition",
    "DaemonSetSpec.revisionHistoryLimit",
    "DaemonSetStatus.collisionCount",
    // batch/v1
    "JobSpec.parallelism",
    "JobSpec.completions",
    "JobSpec.activeDeadlineSeconds",
    "JobSpec.backoffLimit",
    "JobSpec.backoffLimitPerIndex",
    "JobSpec.maxFailedIndexes",
    "JobSpec.manualSelector",
    "JobSpec.ttlSecondsAfterFinished",
    "JobSpec.completionMode",
    "JobSpec.suspend",
    "JobSpec.podReplacementPolicy",
    "JobSpec.managedBy",
    "JobStatus.ready",
    "JobStatus.terminating",
    "JobStatus.failedIndexes",
    "SuccessPolicyRule.succeededIndexes",
    "SuccessPolicyRule.succeededCount",
    "PodFailurePolicyOnExitCodesRequirement.containerName",
    "CronJobSpec.timeZone",
    "CronJobSpec.startingDeadlineSeconds",
    "CronJobSpec.suspend",
    "CronJobSpec.successfulJobsHistoryLimit",
    "CronJobSpec.failedJobsHistoryLimit",
    // certificates/v1
    "CertificateSigningRequestSpec.expirationSeconds",
    // coordination/v1
    "LeaseSpec.holderIdentity",
    "LeaseSpec.leaseDurationSeconds",
    "LeaseSpec.leaseTransitions",
    "LeaseSpec.strategy",
    "LeaseSpec.preferredHolder",
    // discovery/v1
    "Endpoint.hostname",
    "Endpoint.nodeName",
    "Endpoint.zone",
    "EndpointConditions.ready",
    "EndpointConditions.serving",
    "EndpointConditions.terminating",
    "api::discovery::v1::EndpointPort.name",
    "api::discovery::v1::EndpointPort.protocol",
    "api::discovery::v1::EndpointPort.port",
    // policy/v1
    "PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy",
    // storage/v1
    "StorageClass.reclaimPolicy",
    "StorageClass.allowVolumeExpansion",
    "StorageClass.volumeBindingMode",
    "CSIDriverSpec.attachRequired",
    "CSIDriverSpec.podInfoOnMount",
    "CSIDriverSpec.storageCapacity",
    "CSIDriverSpec.fsGroupPolicy",
    "CSIDriverSpec.requiresRepublish",
    "CSIDriverSpec.seLinuxMount",
    "CSIDriverSpec.nodeAllocatableUpdatePeriodSeconds",
    "CSIDriverSpec.serviceAccountTokenInSecrets",
    "TokenRequest.expirationSeconds",
    "VolumeAttachmentSource.persistentVolumeName",
    "VolumeError.errorCode",
    "VolumeNodeResources.count",
];

/// Optional fields (not required in k8s-openapi's newest version, whose
/// OpenAPI follows the `+optional` markers) whose Go JSON tag has no
/// `omitempty`, so that Go writes their zero (`disruptionsAllowed: 0`,
/// `serviceName: ""`): a zero on the wire is kept. Named as
/// [`POINTER_SCALARS`] are; from the same files.
const ZERO_WRITTEN: &[&str] = &[
    "api::core::v1::Event.reportingComponent",
    "api::core::v1::Event.reportingInstance",
    "NodeRuntimeHandler.name",
    "DeploymentCondition.type",
    "DeploymentCondition.status",
    "ReplicaSetCondition.type",
    "ReplicaSetCondition.status",
    "StatefulSetSpec.serviceName",
    "StatefulSetStatus.availableReplicas",
    "StatefulSetCondition.type",
    "StatefulSetCondition.status",
    "StatefulSetOrdinals.start",
    "DaemonSetCondition.type",
    "DaemonSetCondition.status",
    "ControllerRevision.revision",
    "PodFailurePolicyOnPodConditionsPattern.status",
    "PodDisruptionBudgetStatus.disruptionsAllowed",
    "PodDisruptionBudgetStatus.currentHealthy",
    "PodDisruptionBudgetStatus.desiredHealthy",
    "PodDisruptionBudgetStatus.expectedPods",
];

/// k8s-pb messages that k8s-openapi has no struct for, because Go embeds them
/// inline: their fields carry the JSON names of the struct they are embedded in.
const OPENAPI_ALIASES: &[(&str, &str)] = &[
    ("VolumeSource", "Volume"),
    ("EphemeralContainerCommon", "EphemeralContainer"),
    ("ProbeHandler", "Probe"),
    ("PersistentVolumeSource", "PersistentVolumeSpec"),
];

/// Go structs embedded with `json:",inline"` in the served kinds' messages.
const INLINE: &[&str] = &[
    "LocalObjectReference",
    "VolumeSource",
    "EphemeralContainerCommon",
    "ProbeHandler",
    "PersistentVolumeSource",
];

/// Where the generated table goes, from the workspace root.
const OUTPUT: &str = "apimachinery/src/runtime/serializer/protobuf/schema.rs";

/// A field of a k8s-pb message, as its `#[prost(...)]` attribute says.
#[derive(Debug, Clone)]
struct PbField {
    rust_name: String,
    tag: u32,
    /// `string`, `bytes`, `bool`, `int32`, `int64`, `message`, or `map:V` with V one
    /// of `string`, `bytes`, `message`.
    scalar: String,
    repeated: bool,
    /// The absolute path of the message this field holds (or a map's values).
    message: Option<String>,
}

/// What k8s-openapi says of a struct: Rust field name → (JSON name, required).
type OpenApiStruct = BTreeMap<String, (String, bool)>;

/// Writes the table, or with `check` fails if the committed one differs.
pub fn run(root: &Path, check: bool) -> Result<(), Error> {
    let pb_src = crate_src(root, "k8s-pb")?;
    let openapi_src = crate_src(root, "k8s-openapi")?;
    let openapi_version = newest_openapi_version(&openapi_src)?;
    let text = generate(&pb_src, &openapi_src.join(&openapi_version))?;
    let output = root.join(OUTPUT);
    if check {
        let current = std::fs::read_to_string(&output).unwrap_or_default();
        if current != text {
            return Err(Error::Check(format!(
                "{OUTPUT} is not what `cargo xtask protobuf-schema` writes; run it and commit the result"
            )));
        }
        println!("{OUTPUT} is up to date");
        return Ok(());
    }
    std::fs::write(&output, text)
        .map_err(|e| Error::Check(format!("cannot write {OUTPUT}: {e}")))?;
    println!("wrote {OUTPUT}");
    Ok(())
}

/// The `src` folder of a dependency: its version from `Cargo.lock`, its source
/// where cargo unpacked it for the build
/// (`$CARGO_HOME/registry/src/<index>/<name>-<version>/src`).
///
/// Not `cargo metadata`: it resolves every package of `Cargo.lock`, the Windows
/// and macOS ones too, which a Linux build never downloads, so `--offline` fails
/// on a machine that has only ever built here. This crate's dev-dependencies
/// name both crates the generator reads, so `cargo test -p xtask` has them
/// unpacked.
fn crate_src(root: &Path, name: &str) -> Result<PathBuf, Error> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock"))
        .map_err(|e| Error::Check(format!("cannot read Cargo.lock: {e}")))?;
    let lock: toml::Table = toml::from_str(&lock)
        .map_err(|e| Error::Check(format!("cannot parse Cargo.lock: {e}")))?;
    let versions: Vec<&str> = lock
        .get("package")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p.get("name").and_then(toml::Value::as_str) == Some(name))
        .filter_map(|p| p.get("version").and_then(toml::Value::as_str))
        .collect();
    let [version] = versions[..] else {
        return Err(Error::Check(format!(
            "Cargo.lock has {} version(s) of {name}, not one",
            versions.len()
        )));
    };
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo"))
        })
        .ok_or_else(|| Error::Check("neither CARGO_HOME nor HOME is set".into()))?;
    let registries = cargo_home.join("registry").join("src");
    std::fs::read_dir(&registries)
        .into_iter()
        .flatten()
        .flatten()
        .map(|index| index.path().join(format!("{name}-{version}")).join("src"))
        .find(|src| src.is_dir())
        .ok_or_else(|| {
            Error::Check(format!(
                "{name} {version} is not unpacked under {}; build the workspace \
                 (or `cargo fetch`) first",
                registries.display()
            ))
        })
}

/// The newest `v1_NN` folder of k8s-openapi (the workspace enables `latest`).
fn newest_openapi_version(src: &Path) -> Result<String, Error> {
    let mut versions: Vec<(u32, String)> = read_dir(src)?
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let minor = name.strip_prefix("v1_")?.parse().ok()?;
            Some((minor, name))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, name)| name)
        .ok_or_else(|| Error::Check("k8s-openapi has no v1_NN folder".into()))
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::Check(format!("cannot read {}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    Ok(entries)
}

/// Builds the table's text.
fn generate(pb_src: &Path, openapi_src: &Path) -> Result<String, Error> {
    let mut pb_modules: BTreeMap<String, BTreeMap<String, Vec<PbField>>> =
        BTreeMap::new();
    let mut openapi_modules: BTreeMap<String, BTreeMap<String, OpenApiStruct>> =
        BTreeMap::new();
    let specials: BTreeMap<&str, &str> = SPECIAL.iter().copied().collect();
    let zero_kept: BTreeSet<&str> = POINTER_SCALARS
        .iter()
        .chain(ZERO_WRITTEN)
        .copied()
        .collect();
    let mut zero_kept_used: BTreeSet<String> = BTreeSet::new();

    // Every message reachable from the roots, breadth first.
    let mut order: Vec<String> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<String> =
        ROOTS.iter().map(|r| r.2.to_string()).collect();
    let mut fields_of: BTreeMap<String, Vec<PbField>> = BTreeMap::new();
    while let Some(path) = queue.pop_front() {
        if !seen.insert(path.clone()) || specials.contains_key(path.as_str()) {
            continue;
        }
        let (module, name) = split_path(&path);
        if !pb_modules.contains_key(module) {
            let structs = parse_pb_module(pb_src, module)?;
            pb_modules.insert(module.to_string(), structs);
        }
        let fields = pb_modules[module]
            .get(name)
            .cloned()
            .ok_or_else(|| Error::Check(format!("k8s-pb has no message {path}")))?;
        for field in &fields {
            if let Some(message) = &field.message {
                queue.push_back(message.clone());
            }
        }
        order.push(path.clone());
        fields_of.insert(path, fields);
    }

    let index: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let mut out = String::new();
    out.push_str(
        "// @generated by `cargo xtask protobuf-schema` from the k8s-pb and k8s-openapi\n\
         // sources; do not edit. See xtask/src/protobuf_schema.rs.\n\n\
         //! The messages of the served kinds: each field's number, JSON name and type.\n\n\
         use super::wire::{Field, Message, Root, Special, Ty};\n\n",
    );
    out.push_str(
        "/// The kinds a protobuf body may hold: `(apiVersion, kind, message)`;\n",
    );
    out.push_str("/// `*` matches every apiVersion.\n");
    out.push_str("pub(super) static ROOTS: &[Root] = &[\n");
    for (api_version, kind, path) in ROOTS {
        let _ = writeln!(
            out,
            "    Root {{ api_version: {api_version:?}, kind: {kind:?}, message: {} }},",
            index[path]
        );
    }
    out.push_str("];\n\n");
    out.push_str("/// The messages, by the index [`Ty::Message`] holds.\n");
    out.push_str("pub(super) static MESSAGES: &[Message] = &[\n");
    for path in &order {
        let (module, name) = split_path(path);
        if !openapi_modules.contains_key(module) {
            let structs = parse_openapi_module(openapi_src, module)?;
            openapi_modules.insert(module.to_string(), structs);
        }
        let openapi_name = OPENAPI_ALIASES
            .iter()
            .find(|(pb, _)| *pb == name)
            .map_or(name, |(_, openapi)| openapi);
        let openapi = openapi_modules[module]
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(openapi_name))
            .map(|(_, s)| s);
        let mut fields = fields_of[path].clone();
        fields.sort_by_key(|f| f.tag);
        let _ = writeln!(out, "    // {path}");
        let _ = writeln!(out, "    Message {{ name: {name:?}, fields: &[");
        for field in fields {
            let known = openapi.and_then(|s| s.get(&normalize(&field.rust_name)));
            // A message field the JSON form does not name is a Go struct embedded
            // with `json:",inline"` (`VolumeSource` in `Volume`, `ProbeHandler` in
            // `Probe`): its fields belong to the parent object.
            let inline = known.is_none()
                && field
                    .message
                    .as_deref()
                    .is_some_and(|m| INLINE.contains(&split_path(m).1));
            let (json, required) = known
                .cloned()
                .or_else(|| inline.then(|| (String::new(), true)))
                .unwrap_or_else(|| {
                    eprintln!(
                        "note: {path}.{} is not in k8s-openapi; its JSON name is guessed",
                        field.rust_name
                    );
                    (lower_camel(&field.rust_name), false)
                });
            let ty = match (field.scalar.as_str(), &field.message) {
                (_, Some(message)) if field.scalar.starts_with("map:") => {
                    format!(
                        "Ty::MapMessage(&{})",
                        message_ty(message, &index, &specials)
                    )
                }
                ("map:string", None) => "Ty::MapString".to_string(),
                ("map:bytes", None) => "Ty::MapBytes".to_string(),
                ("message", Some(message)) => message_ty(message, &index, &specials),
                ("string", None) => "Ty::String".to_string(),
                ("bytes", None) => "Ty::Bytes".to_string(),
                ("bool", None) => "Ty::Bool".to_string(),
                ("int32", None) => "Ty::Int32".to_string(),
                ("int64", None) => "Ty::Int64".to_string(),
                (other, _) => {
                    return Err(Error::Check(format!(
                        "{path}.{}: unexpected type {other}",
                        field.rust_name
                    )));
                }
            };
            // Listed by message name, or by path where a name is ambiguous.
            let mut listed = false;
            for key in [format!("{name}.{json}"), format!("{path}.{json}")] {
                if zero_kept.contains(key.as_str()) {
                    listed = true;
                    zero_kept_used.insert(key);
                }
            }
            let keep_zero = required || listed;
            let _ = writeln!(
                out,
                "        Field {{ tag: {}, json: {json:?}, ty: {ty}, repeated: {}, keep_zero: {keep_zero} }},",
                field.tag, field.repeated
            );
        }
        out.push_str("    ] },\n");
    }
    out.push_str("];\n");
    let unused: Vec<&str> = zero_kept
        .iter()
        .copied()
        .filter(|key| !zero_kept_used.contains(*key))
        .collect();
    if !unused.is_empty() {
        return Err(Error::Check(format!(
            "POINTER_SCALARS or ZERO_WRITTEN name fields the table does not have: {}",
            unused.join(", ")
        )));
    }
    Ok(out)
}

fn message_ty(
    message: &str,
    index: &BTreeMap<&str, usize>,
    specials: &BTreeMap<&str, &str>,
) -> String {
    match specials.get(message) {
        Some(special) => format!("Ty::Special(Special::{special})"),
        None => format!("Ty::Message({})", index[message]),
    }
}

/// `a::b::C` → (`a::b`, `C`).
fn split_path(path: &str) -> (&str, &str) {
    path.rsplit_once("::").unwrap_or(("", path))
}

/// A Rust field name without `r#`, underscores and case, so that prost's and
/// k8s-openapi's snake-casings of the same Go name meet.
fn normalize(rust_name: &str) -> String {
    rust_name
        .trim_start_matches("r#")
        .trim_end_matches('_')
        .replace('_', "")
        .to_ascii_lowercase()
}

fn lower_camel(rust_name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in rust_name.trim_start_matches("r#").chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The messages of one k8s-pb module (`api::core::v1` is `src/api/core/v1/mod.rs`).
fn parse_pb_module(
    src: &Path,
    module: &str,
) -> Result<BTreeMap<String, Vec<PbField>>, Error> {
    let file = src.join(module.replace("::", "/")).join("mod.rs");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::Check(format!("cannot read {}: {e}", file.display())))?;
    let segments: Vec<&str> = module.split("::").collect();
    let mut structs = BTreeMap::new();
    let mut current: Option<(String, Vec<PbField>)> = None;
    let mut attr: Option<String> = None;
    let mut decl = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("pub struct ") {
            let name = rest.trim_end_matches('{').trim().to_string();
            current = Some((name, Vec::new()));
            continue;
        }
        if line == "}" {
            if let Some((name, fields)) = current.take() {
                structs.insert(name, fields);
            }
            continue;
        }
        if current.is_none() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("#[prost(") {
            attr = Some(rest.trim_end_matches(")]").to_string());
            decl.clear();
            continue;
        }
        if attr.is_some() {
            decl.push_str(line);
            let open = decl.matches('<').count();
            let close = decl.matches('>').count();
            if !line.ends_with(',') || open != close {
                continue;
            }
            let attr_text = attr.take().unwrap_or_default();
            let field =
                parse_pb_field(&attr_text, &decl, &segments).ok_or_else(|| {
                    Error::Check(format!("{module}: cannot read field {decl}"))
                })?;
            if let Some((_, fields)) = current.as_mut() {
                fields.push(field);
            }
        }
    }
    Ok(structs)
}

fn parse_pb_field(attr: &str, decl: &str, module: &[&str]) -> Option<PbField> {
    let tag = attr
        .split("tag = \"")
        .nth(1)?
        .split('"')
        .next()?
        .parse()
        .ok()?;
    let (name, ty) = decl.strip_prefix("pub ")?.split_once(':')?;
    let ty = ty.trim().trim_end_matches(',').replace(' ', "");
    let repeated = attr.contains("repeated");
    let (scalar, message_ty) = if let Some(map) = attr.strip_prefix("btree_map = \"")
    {
        let value = map.split('"').next()?.split(", ").nth(1)?.to_string();
        // `BTreeMap<K,V>`: the value type is after the first top-level comma.
        let inner = ty.split_once("BTreeMap<")?.1.trim_end_matches(['>', ',']);
        let value_ty = inner.split_once(',')?.1.trim_end_matches(',').to_string();
        (
            format!("map:{value}"),
            (value == "message").then_some(value_ty),
        )
    } else {
        let scalar = attr.split(',').next()?.trim();
        let scalar = if scalar.starts_with("bytes") {
            "bytes"
        } else {
            scalar
        };
        let inner = ty
            .trim_start_matches("::core::option::Option<")
            .trim_start_matches("::prost::alloc::vec::Vec<")
            .trim_end_matches(['>', ','])
            .to_string();
        (scalar.to_string(), (scalar == "message").then_some(inner))
    };
    let message = message_ty.map(|ty| resolve(&ty, module));
    Some(PbField {
        rust_name: name.trim().to_string(),
        tag,
        scalar,
        repeated,
        message,
    })
}

/// A path relative to `module` (`super::super::x::Y` or `Y`) made absolute.
fn resolve(ty: &str, module: &[&str]) -> String {
    let mut base: Vec<&str> = module.to_vec();
    let mut rest = ty;
    while let Some(r) = rest.strip_prefix("super::") {
        base.pop();
        rest = r;
    }
    base.push(rest);
    base.join("::")
}

/// The structs of one k8s-openapi module (`api::core::v1` is the folder
/// `api/core/v1`, one file a struct): each field's JSON name and whether it is
/// required.
fn parse_openapi_module(
    src: &Path,
    module: &str,
) -> Result<BTreeMap<String, OpenApiStruct>, Error> {
    let dir = src.join(module.replace("::", "/"));
    let mut structs = BTreeMap::new();
    if !dir.is_dir() {
        return Ok(structs);
    }
    for file in read_dir(&dir)? {
        if file.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|e| {
            Error::Check(format!("cannot read {}: {e}", file.display()))
        })?;
        let Some(name) = text
            .lines()
            .find_map(|l| l.strip_prefix("pub struct "))
            .map(|r| r.trim_end_matches('{').trim().to_string())
        else {
            continue;
        };
        let mut optional: BTreeMap<String, bool> = BTreeMap::new();
        let mut in_struct = false;
        for line in text.lines() {
            if line.starts_with("pub struct ") {
                in_struct = true;
                continue;
            }
            if in_struct && line.starts_with('}') {
                break;
            }
            if let Some((field, ty)) = line
                .trim()
                .strip_prefix("pub ")
                .and_then(|r| r.split_once(':'))
                && in_struct
            {
                optional.insert(normalize(field), ty.trim().starts_with("Option<"));
            }
        }
        let mut fields = OpenApiStruct::new();
        for line in text.lines() {
            let line = line.trim();
            let Some((json, key)) = line.split_once("\" => Field::Key_") else {
                continue;
            };
            let json = json.trim_start_matches('"').to_string();
            let key = normalize(key.trim_end_matches(','));
            let required = optional.get(&key).is_some_and(|o| !o);
            fields.insert(key, (json, required));
        }
        structs.insert(name, fields);
    }
    Ok(structs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_table_is_what_the_generator_writes() {
        let root = crate::workspace_root();
        run(&root, true).expect(
            "apimachinery/src/runtime/serializer/protobuf/schema.rs is up to date",
        );
    }

    #[test]
    fn relative_paths_resolve_against_their_module() {
        let module = ["api", "core", "v1"];
        assert_eq!(
            resolve(
                "super::super::super::apimachinery::pkg::apis::meta::v1::ObjectMeta",
                &module
            ),
            "apimachinery::pkg::apis::meta::v1::ObjectMeta"
        );
        assert_eq!(resolve("PodSpec", &module), "api::core::v1::PodSpec");
    }

    #[test]
    fn both_snake_casings_of_a_go_name_meet() {
        assert_eq!(normalize("pod_ips"), normalize("pod_i_ps"));
        assert_eq!(normalize("r#type"), normalize("type_"));
        assert_eq!(lower_camel("host_ipc"), "hostIpc");
    }

    #[test]
    fn a_prost_field_attribute_reads_as_its_parts() {
        let module = ["api", "core", "v1"];
        let field = parse_pb_field(
            "message, repeated, tag = \"2\"",
            "pub containers: ::prost::alloc::vec::Vec<Container>,",
            &module,
        )
        .unwrap();
        assert_eq!(field.tag, 2);
        assert!(field.repeated);
        assert_eq!(field.message.as_deref(), Some("api::core::v1::Container"));
        let map = parse_pb_field(
            "btree_map = \"string, message\", tag = \"4\"",
            "pub limits: ::prost::alloc::collections::BTreeMap<::prost::alloc::string::String, super::super::super::apimachinery::pkg::api::resource::Quantity>,",
            &module,
        )
        .unwrap();
        assert_eq!(map.scalar, "map:message");
        assert_eq!(
            map.message.as_deref(),
            Some("apimachinery::pkg::api::resource::Quantity")
        );
    }
}
