//! The served resource types, their storages and their rules: mirrors the
//! apiserver's `APIGroupInfo` (`VersionedResourcesStorageMap`), the
//! `RESTStorageProvider`s that fill it, and kubernetes' `pkg/registry`, which
//! keeps each kind's rules in one `strategy.go`.
//!
//! | Go                                                        | Rust                          |
//! |-----------------------------------------------------------|-------------------------------|
//! | `APIGroupInfo.VersionedResourcesStorageMap`               | [`Registry`], [`RegisteredResource`] |
//! | `pkg/registry/rest` (the strategy interfaces, `BeforeCreate`, `BeforeUpdate`) | [`rest`] |
//! | `pkg/registry/generic/registry` (`StorageWithCacher`)    | [`generic::registry`]         |
//! | `pkg/registry/core/pod/strategy.go`                       | [`core::pod::strategy`]       |
//! | `pkg/registry/core/namespace/strategy.go`                 | [`core::namespace::strategy`] |
//! | `pkg/registry/core/node/strategy.go`                      | [`core::node::strategy`]      |
//! | `pkg/registry/core/configmap/strategy.go`                 | [`core::configmap::strategy`] |
//! | `pkg/registry/core/secret/strategy.go`                    | [`core::secret::strategy`]    |
//! | `pkg/registry/core/event/strategy.go`                     | [`core::event::strategy`]     |
//! | `pkg/registry/apps/deployment/strategy.go`                | [`apps::deployment::strategy`] |
//! | `pkg/registry/apps/replicaset/strategy.go`                | [`apps::replicaset::strategy`] |
//! | `pkg/registry/coordination/lease/strategy.go`             | [`coordination::lease::strategy`] |
//! | `pkg/registry/core/service/strategy.go` | [`core::service::strategy`] |
//! | `pkg/registry/core/endpoint/strategy.go` | [`core::endpoint::strategy`] |
//! | `pkg/registry/core/persistentvolume/strategy.go` | [`core::persistentvolume::strategy`] |
//! | `pkg/registry/core/persistentvolumeclaim/strategy.go` | [`core::persistentvolumeclaim::strategy`] |
//! | `pkg/registry/core/replicationcontroller/strategy.go` | [`core::replicationcontroller::strategy`] |
//! | `pkg/registry/core/serviceaccount/strategy.go` | [`core::serviceaccount::strategy`] |
//! | `pkg/registry/core/resourcequota/strategy.go` | [`core::resourcequota::strategy`] |
//! | `pkg/registry/apps/statefulset/strategy.go` | [`apps::statefulset::strategy`] |
//! | `pkg/registry/apps/daemonset/strategy.go` | [`apps::daemonset::strategy`] |
//! | `pkg/registry/apps/controllerrevision/strategy.go` | [`apps::controllerrevision::strategy`] |
//! | `pkg/registry/batch/job/strategy.go` | [`batch::job::strategy`] |
//! | `pkg/registry/batch/cronjob/strategy.go` | [`batch::cronjob::strategy`] |
//! | `pkg/registry/certificates/certificates/strategy.go` | [`certificates::certificates::strategy`] |
//! | `pkg/registry/discovery/endpointslice/strategy.go` | [`discovery::endpointslice::strategy`] |
//! | `pkg/registry/policy/poddisruptionbudget/strategy.go` | [`policy::poddisruptionbudget::strategy`] |
//! | `pkg/registry/storage/csidriver/strategy.go` | [`storage::csidriver::strategy`] |
//! | `pkg/registry/storage/csinode/strategy.go` | [`storage::csinode::strategy`] |
//! | `pkg/registry/storage/csistoragecapacity/strategy.go` | [`storage::csistoragecapacity::strategy`] |
//! | `pkg/registry/storage/storageclass/strategy.go` | [`storage::storageclass::strategy`] |
//! | `pkg/registry/node/runtimeclass/strategy.go` | [`node::runtimeclass::strategy`] |
//! | `pkg/registry/storage/volumeattachment/strategy.go` | [`storage::volumeattachment::strategy`] |
//! | `pkg/registry/core/service/storage/alloc.go`              | [`core::service::storage::alloc`] |
//! | `pkg/registry/core/pod/storage/eviction.go`               | [`core::pod::storage::eviction`] |
//!
//! A kind's names, etcd prefix and field labels are its [`ResourceInfo`]; every
//! other rule is its strategy's, found by [`strategy_for`]. Serving a new kind
//! is one strategy file and one row of [`STRATEGIES`].

use std::sync::Arc;

use stage5_storage::ResourceInfo;
use stage5_storage::Storage;
use stage5_storage::kv::Kv;

pub use self::generic::registry::{
    RegisteredResource, ResourceStorage, connect_backend, new_storage,
};
use self::rest::{DefaultStrategy, Strategy};

pub mod rest;

/// `pkg/registry/generic`.
pub mod generic {
    pub mod registry;
}

/// `pkg/registry/core`.: the core group's kinds.
pub mod core {
    /// `pkg/registry/core/configmap`.
    pub mod configmap {
        pub mod strategy;
    }
    /// `pkg/registry/core/endpoint`.
    pub mod endpoint {
        pub mod strategy;
    }
    /// `pkg/registry/core/event`.
    pub mod event {
        pub mod strategy;
    }
    /// `pkg/registry/core/namespace`.
    pub mod namespace {
        pub mod strategy;
    }
    /// `pkg/registry/core/node`.
    pub mod node {
        pub mod strategy;
    }
    /// `pkg/registry/core/persistentvolume`.
    pub mod persistentvolume {
        pub mod strategy;
    }
    /// `pkg/registry/core/persistentvolumeclaim`.
    pub mod persistentvolumeclaim {
        pub mod strategy;
    }
    /// `pkg/registry/core/pod`.
    pub mod pod {
        pub mod strategy;
        /// `pkg/registry/core/pod/storage`.
        pub mod storage {
            pub mod eviction;
        }
    }
    /// `pkg/registry/core/replicationcontroller`.
    pub mod replicationcontroller {
        pub mod strategy;
    }
    /// `pkg/registry/core/resourcequota`.
    pub mod resourcequota {
        pub mod strategy;
    }
    /// `pkg/registry/core/secret`.
    pub mod secret {
        pub mod strategy;
    }
    /// `pkg/registry/core/service`.
    pub mod service {
        pub mod strategy;
        /// `pkg/registry/core/service/storage`.
        pub mod storage {
            pub mod alloc;
        }
    }
    /// `pkg/registry/core/serviceaccount`.
    pub mod serviceaccount {
        pub mod strategy;
    }
}

/// `pkg/registry/apps`.
pub mod apps {
    /// `pkg/registry/apps/controllerrevision`.
    pub mod controllerrevision {
        pub mod strategy;
    }
    /// `pkg/registry/apps/daemonset`.
    pub mod daemonset {
        pub mod strategy;
    }
    /// `pkg/registry/apps/deployment`.
    pub mod deployment {
        pub mod strategy;
    }
    /// `pkg/registry/apps/replicaset`.
    pub mod replicaset {
        pub mod strategy;
    }
    /// `pkg/registry/apps/statefulset`.
    pub mod statefulset {
        pub mod strategy;
    }
}

/// `pkg/registry/batch`.
pub mod batch {
    /// `pkg/registry/batch/cronjob`.
    pub mod cronjob {
        pub mod strategy;
    }
    /// `pkg/registry/batch/job`.
    pub mod job {
        pub mod strategy;
    }
}

/// `pkg/registry/certificates`.
pub mod certificates {
    /// `pkg/registry/certificates/certificates`.
    // Upstream's path repeats the group: `certificates/certificates`.
    #[allow(clippy::module_inception)]
    pub mod certificates {
        pub mod strategy;
    }
}

/// `pkg/registry/coordination`.
pub mod coordination {
    /// `pkg/registry/coordination/lease`.
    pub mod lease {
        pub mod strategy;
    }
}

/// `pkg/registry/discovery`.
pub mod discovery {
    /// `pkg/registry/discovery/endpointslice`.
    pub mod endpointslice {
        pub mod strategy;
    }
}

/// `pkg/registry/node`.
pub mod node {
    /// `pkg/registry/node/runtimeclass`.
    pub mod runtimeclass {
        pub mod strategy;
    }
}

/// `pkg/registry/policy`.
pub mod policy {
    /// `pkg/registry/policy/poddisruptionbudget`.
    pub mod poddisruptionbudget {
        pub mod strategy;
    }
}

/// `pkg/registry/storage`.
pub mod storage {
    /// `pkg/registry/storage/csidriver`.
    pub mod csidriver {
        pub mod strategy;
    }
    /// `pkg/registry/storage/csinode`.
    pub mod csinode {
        pub mod strategy;
    }
    /// `pkg/registry/storage/csistoragecapacity`.
    pub mod csistoragecapacity {
        pub mod strategy;
    }
    /// `pkg/registry/storage/storageclass`.
    pub mod storageclass {
        pub mod strategy;
    }
    /// `pkg/registry/storage/volumeattachment`.
    pub mod volumeattachment {
        pub mod strategy;
    }
}

// ANCHOR: strategies
/// Every kind's strategy, by the resource it serves.
pub static STRATEGIES: &[(&ResourceInfo, &dyn Strategy)] = &[
    (&ResourceInfo::PODS, &core::pod::strategy::PodStrategy),
    (
        &ResourceInfo::CONFIGMAPS,
        &core::configmap::strategy::ConfigMapStrategy,
    ),
    (
        &ResourceInfo::SECRETS,
        &core::secret::strategy::SecretStrategy,
    ),
    (
        &ResourceInfo::NAMESPACES,
        &core::namespace::strategy::NamespaceStrategy,
    ),
    (&ResourceInfo::NODES, &core::node::strategy::NodeStrategy),
    (&ResourceInfo::EVENTS, &core::event::strategy::EventStrategy),
    (
        &ResourceInfo::EVENTS_V1,
        &core::event::strategy::EventsV1Strategy,
    ),
    (
        &ResourceInfo::DEPLOYMENTS,
        &apps::deployment::strategy::DeploymentStrategy,
    ),
    (
        &ResourceInfo::REPLICASETS,
        &apps::replicaset::strategy::ReplicaSetStrategy,
    ),
    (
        &ResourceInfo::LEASES,
        &coordination::lease::strategy::LeaseStrategy,
    ),
    (
        &ResourceInfo::SERVICES,
        &core::service::strategy::ServiceStrategy,
    ),
    (
        &ResourceInfo::ENDPOINTS,
        &core::endpoint::strategy::EndpointsStrategy,
    ),
    (
        &ResourceInfo::PERSISTENT_VOLUMES,
        &core::persistentvolume::strategy::PersistentVolumeStrategy,
    ),
    (
        &ResourceInfo::PERSISTENT_VOLUME_CLAIMS,
        &core::persistentvolumeclaim::strategy::PersistentVolumeClaimStrategy,
    ),
    (
        &ResourceInfo::REPLICATION_CONTROLLERS,
        &core::replicationcontroller::strategy::ReplicationControllerStrategy,
    ),
    (
        &ResourceInfo::SERVICE_ACCOUNTS,
        &core::serviceaccount::strategy::ServiceAccountStrategy,
    ),
    (
        &ResourceInfo::RESOURCE_QUOTAS,
        &core::resourcequota::strategy::ResourceQuotaStrategy,
    ),
    (
        &ResourceInfo::STATEFUL_SETS,
        &apps::statefulset::strategy::StatefulSetStrategy,
    ),
    (
        &ResourceInfo::DAEMON_SETS,
        &apps::daemonset::strategy::DaemonSetStrategy,
    ),
    (
        &ResourceInfo::CONTROLLER_REVISIONS,
        &apps::controllerrevision::strategy::ControllerRevisionStrategy,
    ),
    (&ResourceInfo::JOBS, &batch::job::strategy::JobStrategy),
    (
        &ResourceInfo::CRON_JOBS,
        &batch::cronjob::strategy::CronJobStrategy,
    ),
    (
        &ResourceInfo::CERTIFICATE_SIGNING_REQUESTS,
        &certificates::certificates::strategy::CsrStrategy,
    ),
    (
        &ResourceInfo::ENDPOINT_SLICES,
        &discovery::endpointslice::strategy::EndpointSliceStrategy,
    ),
    (
        &ResourceInfo::POD_DISRUPTION_BUDGETS,
        &policy::poddisruptionbudget::strategy::PodDisruptionBudgetStrategy,
    ),
    (
        &ResourceInfo::CSI_DRIVERS,
        &storage::csidriver::strategy::CsiDriverStrategy,
    ),
    (
        &ResourceInfo::CSI_NODES,
        &storage::csinode::strategy::CsiNodeStrategy,
    ),
    (
        &ResourceInfo::CSI_STORAGE_CAPACITIES,
        &storage::csistoragecapacity::strategy::CsiStorageCapacityStrategy,
    ),
    (
        &ResourceInfo::STORAGE_CLASSES,
        &storage::storageclass::strategy::StorageClassStrategy,
    ),
    (
        &ResourceInfo::RUNTIME_CLASSES,
        &node::runtimeclass::strategy::RuntimeClassStrategy,
    ),
    (
        &ResourceInfo::VOLUME_ATTACHMENTS,
        &storage::volumeattachment::strategy::VolumeAttachmentStrategy,
    ),
];

/// The strategy of `info`'s kind; a kind without one has no rules of its own
/// ([`DefaultStrategy`]).
pub fn strategy_for(info: &ResourceInfo) -> &'static dyn Strategy {
    STRATEGIES
        .iter()
        .find(|(served, _)| {
            served.group == info.group
                && served.version == info.version
                && served.plural == info.plural
        })
        .map_or(&DefaultStrategy, |(_, strategy)| *strategy)
}
// ANCHOR_END: strategies

/// Every served resource type, found by group, version and plural: the apiserver's
/// `APIGroupInfo.VersionedResourcesStorageMap`.
pub struct Registry {
    kv: Arc<dyn Kv>,
    resources: Vec<RegisteredResource>,
    probe: stage5_cacher::Probe,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// Storages for `resources` over `kv`.
    pub fn new(
        kv: Arc<dyn Kv>,
        resources: &[ResourceInfo],
        watch_cache: bool,
        capacity: usize,
    ) -> Registry {
        let probe = stage5_cacher::Probe::new();
        let resources = resources
            .iter()
            .map(|info| {
                let storage = new_storage(
                    Arc::clone(&kv),
                    info.clone(),
                    watch_cache,
                    capacity,
                    &probe,
                );
                RegisteredResource {
                    info: info.clone(),
                    strategy: strategy_for(info),
                    dyn_storage: storage.storage(),
                    storage,
                }
            })
            .collect::<Vec<_>>();
        // `events.k8s.io/v1` is served from the core events' storage, as
        // upstream's events REST storage provider does.
        let events_v1 = resources
            .iter()
            .find(|r| r.info == ResourceInfo::EVENTS)
            .map(|core| {
                let storage: Arc<dyn Storage> =
                    Arc::new(crate::events_v1::EventsV1Storage::new(Arc::clone(
                        &core.dyn_storage,
                    )));
                RegisteredResource {
                    info: ResourceInfo::EVENTS_V1,
                    strategy: strategy_for(&ResourceInfo::EVENTS_V1),
                    storage: ResourceStorage::Converted(Arc::clone(&storage)),
                    dyn_storage: storage,
                }
            });
        let mut resources = resources;
        resources.extend(events_v1);
        Registry {
            kv,
            resources,
            probe,
        }
    }

    /// Where the watch caches and the HTTP layer send what the live page
    /// (`/debug/ui`) draws.
    pub fn probe(&self) -> &stage5_cacher::Probe {
        &self.probe
    }

    /// The backend, e.g. to compact it in tests.
    pub fn kv(&self) -> Arc<dyn Kv> {
        Arc::clone(&self.kv)
    }

    /// Every served resource.
    pub fn resources(&self) -> &[RegisteredResource] {
        &self.resources
    }

    /// The resource `plural` of `group`/`version`.
    pub fn find(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&RegisteredResource> {
        self.resources.iter().find(|r| {
            r.info.group == group
                && r.info.version == version
                && r.info.plural == plural
        })
    }

    /// The groups other than core, with their versions, in registration order.
    pub fn groups(&self) -> Vec<(&'static str, &'static str)> {
        let mut groups: Vec<(&'static str, &'static str)> = Vec::new();
        for r in &self.resources {
            if !r.info.group.is_empty()
                && !groups.contains(&(r.info.group, r.info.version))
            {
                groups.push((r.info.group, r.info.version));
            }
        }
        groups
    }

    /// Stops every watch cache, all at once, and waits for their tasks.
    pub async fn stop(&self) {
        futures::future::join_all(self.resources.iter().map(|r| r.storage.stop()))
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::api::validation::objectmeta::NameRule;
    use apimachinery::util::strategicpatch::meta::lookup;

    #[test]
    fn every_served_kind_names_its_own_rules() {
        let patch_root =
            |info: &ResourceInfo| strategy_for(info).patch_meta().go_type;
        assert_eq!(patch_root(&ResourceInfo::PODS), "Pod");
        assert_eq!(patch_root(&ResourceInfo::DEPLOYMENTS), "Deployment");
        assert_eq!(patch_root(&ResourceInfo::NODES), "Node");
        assert_eq!(patch_root(&ResourceInfo::NAMESPACES), "Namespace");
        for info in [
            ResourceInfo::CONFIGMAPS,
            ResourceInfo::SECRETS,
            ResourceInfo::EVENTS,
        ] {
            let schema = strategy_for(&info).patch_meta();
            assert!(lookup(Some(schema), "metadata").schema.is_some());
        }
        let with_status: Vec<&str> = ResourceInfo::BUILTIN
            .iter()
            .filter(|info| strategy_for(info).has_status_subresource())
            .map(|info| info.plural)
            .collect();
        assert_eq!(
            with_status,
            [
                "pods",
                "namespaces",
                "nodes",
                "deployments",
                "replicasets",
                "services",
                "persistentvolumes",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "resourcequotas",
                "statefulsets",
                "daemonsets",
                "jobs",
                "cronjobs",
                "certificatesigningrequests",
                "poddisruptionbudgets",
                "volumeattachments"
            ]
        );
        let with_scale: Vec<&str> = ResourceInfo::BUILTIN
            .iter()
            .filter(|info| strategy_for(info).has_scale_subresource())
            .map(|info| info.plural)
            .collect();
        assert_eq!(
            with_scale,
            [
                "deployments",
                "replicasets",
                "replicationcontrollers",
                "statefulsets"
            ]
        );
        // Every served kind has a strategy of its own, whose printer and
        // patch metadata name the kind.
        for info in ResourceInfo::BUILTIN {
            assert!(
                STRATEGIES.iter().any(|(served, _)| *served == info),
                "{} has no strategy",
                info.plural
            );
            let go_type = strategy_for(info).patch_meta().go_type;
            assert!(
                go_type == info.kind || go_type == "ObjectWithMetadata",
                "{}: {go_type}",
                info.plural
            );
        }
        let no_unconditional: Vec<&str> = ResourceInfo::BUILTIN
            .iter()
            .filter(|info| !strategy_for(info).allow_unconditional_update())
            .map(|info| info.plural)
            .collect();
        assert_eq!(
            no_unconditional,
            [
                "poddisruptionbudgets",
                "csidrivers",
                "csinodes",
                "csistoragecapacities",
                "volumeattachments",
                "runtimeclasses"
            ]
        );
        assert_eq!(
            strategy_for(&ResourceInfo::NAMESPACES).name_rule(),
            NameRule::DnsLabel
        );
        assert_eq!(
            strategy_for(&ResourceInfo::PODS).name_rule(),
            NameRule::DnsSubdomain
        );
        assert!(strategy_for(&ResourceInfo::NAMESPACES).delete_terminates());
        assert!(!strategy_for(&ResourceInfo::PODS).delete_terminates());
    }

    #[test]
    fn a_kind_without_a_strategy_has_the_defaults() {
        let other = ResourceInfo {
            plural: "widgets",
            kind: "Widget",
            ..ResourceInfo::CONFIGMAPS
        };
        let strategy = strategy_for(&other);
        assert!(!strategy.has_status_subresource());
        assert_eq!(strategy.patch_meta().go_type, "ObjectWithMetadata");
        assert_eq!(strategy.table_handler().columns.len(), 2);
        assert_eq!(strategy.new_object(), serde_json::json!({}));
    }
}
